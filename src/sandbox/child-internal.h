/* SPDX-License-Identifier: MIT */
/* What the two halves of the sandbox's child (child.c, child-mount.c) share. */
#ifndef HEAL_SANDBOX_CHILD_INTERNAL_H
#define HEAL_SANDBOX_CHILD_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "sandbox-internal.h"

/* Short names inside these two files; the library exports only the heal_child_ ones. */
#define P            heal_child_plan
#define fail         heal_child_fail
#define join         heal_child_join
#define setup_mounts heal_child_setup_mounts

/* The plan of this child, set first thing by child_main(). */
extern const struct child_plan *P;

/* Report step @step failed with @err (positive errno) on plan entry @entry, and exit. */
_Noreturn void fail(int step, int err, int entry, const char *path);
/* Concatenate @a and @b into @dst (capacity @cap); false when it does not fit. */
bool join(char *dst, size_t cap, const char *a, const char *b);
/* Make / private, pivot into a staging tmpfs, apply every plan entry, pivot into /newroot. */
void setup_mounts(void);

#endif
