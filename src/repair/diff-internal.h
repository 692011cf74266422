/* SPDX-License-Identifier: MIT */
#ifndef HEAL_DIFF_INTERNAL_H
#define HEAL_DIFF_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

/* A line of a side: @len bytes from @s, its '\n' included when it has one. */
struct diff_line_ref {
        const char *s;
        size_t len;
};

struct diff_side {
        struct diff_line_ref *v;
        size_t n;
};

/* At line @a of before (0-based) remove @del lines; at line @b of after, @ins lines appear.
 * Changes are in order and never touch: an equal line separates two. */
struct diff_change {
        size_t a, b, del, ins;
};

struct diff {
        struct diff_side a, b;
        struct diff_change *changes;
        size_t n_changes;
        size_t added, removed;
};

/* diff.c: the changes from @before to @after (either may be NULL: empty); 0, -EFBIG, -ENOMEM.
 * On failure @d is zeroed. */
int diff_compute(struct diff *d, const char *before, const char *after);
void diff_release(struct diff *d);

#endif
