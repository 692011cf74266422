/* SPDX-License-Identifier: MIT */
/*
 * Line diffs of the input's two halves: the unified diff, applied by the small applier below to
 * the first half, gives the second exactly; its '+' and '-' lines are those heal_diff_lines()
 * lists; only the documented errors.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heal/diff.h"

#include "fuzz.h"

/* @len bytes as a C string (cut at a NUL byte, as heal_diff_*() would read it); strndup(3)
 * would do, but ASan's strict_string_checks reads it as a whole string. */
static char *copy(const uint8_t *data, size_t len)
{
        char *s = malloc(len + 1);

        if (s) {
                memcpy(s, data, len);
                s[len] = '\0';
        }
        return s;
}

struct cursor {
        const char *s; /* the rest of the text */
};

/* The next line of @c (without '\n'), or false at the end. */
static bool next_line(struct cursor *c, const char **ret, size_t *ret_len, bool *ret_nl)
{
        size_t k;

        if (!*c->s)
                return false;
        k = strcspn(c->s, "\n");
        *ret = c->s;
        *ret_len = k;
        *ret_nl = c->s[k] == '\n';
        c->s += k + *ret_nl;
        return true;
}

static void copy_until(heal_buf *out, struct cursor *old, size_t *at, size_t line)
{
        const char *l;
        size_t n;
        bool nl;

        while (*at < line) {
                FUZZ_ASSERT(next_line(old, &l, &n, &nl));
                heal_buf_append(out, l, n + nl);
                (*at)++;
        }
}

/* Apply @diff (heal_diff_unified()'s output for one file) to @before; counts its lines. */
static char *apply(const char *before, const char *diff, size_t *added, size_t *removed)
{
        heal_buf out = HEAL_BUF_INIT((size_t)-1);
        struct cursor old = { before }, d = { diff };
        const char *l;
        size_t n, at = 0;
        bool nl, hunks = false;

        while (next_line(&d, &l, &n, &nl)) {
                unsigned long os, oc = 1;
                bool bare = strncmp(d.s, "\\ No newline at end of file\n", 28) == 0;
                const char *o;
                size_t on;
                bool onl;

                if (bare)
                        d.s += 28;
                if (!hunks && (strncmp(l, "--- ", 4) == 0 || strncmp(l, "+++ ", 4) == 0))
                        continue; /* file header */
                if (l[0] == '@') {
                        FUZZ_ASSERT(sscanf(l, "@@ -%lu,%lu", &os, &oc) >= 1);
                        copy_until(&out, &old, &at, oc ? os - 1 : os);
                        hunks = true;
                        continue;
                }
                FUZZ_ASSERT(l[0] == ' ' || l[0] == '-' || l[0] == '+');
                if (l[0] != '+') { /* the old file must hold this very line */
                        FUZZ_ASSERT(next_line(&old, &o, &on, &onl));
                        FUZZ_ASSERT(on == n - 1 && memcmp(o, l + 1, on) == 0 && onl == !bare);
                        at++;
                }
                if (l[0] != '-')
                        heal_buf_append(&out, l + 1, n - 1 + !bare);
                *added += l[0] == '+';
                *removed += l[0] == '-';
        }
        heal_buf_puts(&out, old.s);
        return heal_buf_detach(&out, NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        heal_buf diff = HEAL_BUF_INIT(64u << 20);
        heal_error err = HEAL_ERROR_INIT;
        size_t half = size / 2, added = 0, removed = 0, n_lines, plus = 0;
        char *a = copy(data, half), *b = copy(data + half, size - half);
        heal_diff_line *v;
        int r;

        FUZZ_ASSERT(a && b);
        r = heal_diff_unified(&diff, "f", a, b, (unsigned)(size % 5), &err);
        FUZZ_ASSERT(r >= 0 || r == -ENOMEM);
        if (r >= 0) {
                char *got = apply(a, diff.data ? diff.data : "", &added, &removed);

                FUZZ_ASSERT(got && strcmp(got, b) == 0);
                free(got);
                FUZZ_ASSERT((r == 0) == (diff.len == 0));
        }
        r = heal_diff_lines(&v, &n_lines, a, b, &err);
        FUZZ_ASSERT(r >= 0 || r == -ENOMEM);
        if (r >= 0) {
                for (size_t i = 0; i < n_lines; i++)
                        plus += v[i].op == '+';
                FUZZ_ASSERT(plus == added && n_lines - plus == removed);
                for (size_t i = 0; i < n_lines; i++) /* a removed line maps nowhere */
                        FUZZ_ASSERT(v[i].op == '+' ||
                                    heal_diff_line_map(v, n_lines, v[i].old_line) == 0);
                free(v);
        }
        heal_buf_release(&diff);
        free(a);
        free(b);
        return 0;
}
