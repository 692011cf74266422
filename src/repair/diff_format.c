/* SPDX-License-Identifier: MIT */
/*
 * What diff.c's changes become: the list of added and removed lines, the line map, unified
 * diffs and counts. Unified format as GNU diff prints it (diffutils manual, "Detailed
 * Description of Unified Format"): changes closer than twice the context share a hunk; an empty
 * range is given as the line before it, ",0"; a range of one line has no count; a last line
 * without '\n' is followed by "\ No newline at end of file".
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heal/diff.h"

#include "core/util.h"
#include "repair/diff-internal.h"

static int lines_error(heal_error *err, int r)
{
        if (r == -EFBIG)
                return heal_error_set(err, r, "file over %u bytes", HEAL_DIFF_FILE_MAX_BYTES);
        return heal_error_set(err, r, "out of memory");
}

static heal_diff_line line_of(char op, unsigned old_line, unsigned new_line,
                              const struct diff_line_ref *l)
{
        bool nl = l->len && l->s[l->len - 1] == '\n';

        return (heal_diff_line){ op, old_line, new_line, l->s, l->len - nl, !nl };
}

int heal_diff_lines(heal_diff_line **ret, size_t *ret_n, const char *before, const char *after,
                    heal_error *err)
{
        heal_diff_line *v = NULL;
        struct diff d;
        size_t n = 0;
        int r;

        if (!ret || !ret_n)
                return heal_error_set(err, -EINVAL, "invalid argument");
        r = diff_compute(&d, before, after);
        if (r < 0)
                return lines_error(err, r);
        if (d.added + d.removed > 0 && !(v = calloc(d.added + d.removed, sizeof(*v)))) {
                diff_release(&d);
                return lines_error(err, -ENOMEM);
        }
        for (size_t i = 0; i < d.n_changes; i++) {
                const struct diff_change *c = &d.changes[i];

                for (size_t k = 0; k < c->del; k++)
                        v[n++] = line_of('-', (unsigned)(c->a + k + 1), (unsigned)c->b,
                                         &d.a.v[c->a + k]);
                for (size_t k = 0; k < c->ins; k++)
                        v[n++] = line_of('+', (unsigned)(c->a + c->del), (unsigned)(c->b + k + 1),
                                         &d.b.v[c->b + k]);
        }
        diff_release(&d);
        *ret = v;
        *ret_n = n;
        return (int)MIN(n, (size_t)INT32_MAX);
}

unsigned heal_diff_line_map(const heal_diff_line *v, size_t n, unsigned old_line)
{
        long shift = 0;

        if (old_line == 0)
                return 0;
        for (size_t i = 0; i < n; i++) {
                if (v[i].op == '-' && v[i].old_line == old_line)
                        return 0;
                if (v[i].old_line < old_line)
                        shift += v[i].op == '+' ? 1 : -1;
        }
        return (unsigned)((long)old_line + shift);
}

/* Appends with a sticky error: the first failure is kept in *r. */
static void put(heal_buf *out, int *r, const char *s, size_t len)
{
        int k = heal_buf_append(out, s, len);

        if (k < 0 && *r == 0)
                *r = k;
}

static void put_line(heal_buf *out, int *r, char op, const struct diff_line_ref *l)
{
        put(out, r, &op, 1);
        put(out, r, l->s, l->len);
        if (!l->len || l->s[l->len - 1] != '\n')
                put(out, r, "\n\\ No newline at end of file\n", 29);
}

static void put_range(heal_buf *out, int *r, char sign, size_t start, size_t count)
{
        char s[64];
        int n;

        if (count == 1)
                n = snprintf(s, sizeof(s), "%c%zu", sign, start + 1);
        else
                n = snprintf(s, sizeof(s), "%c%zu,%zu", sign, count ? start + 1 : start, count);
        put(out, r, s, (size_t)n);
}

/* Changes [first, last] as one hunk with @ctx lines of context. */
static void put_hunk(heal_buf *out, int *r, const struct diff *d, size_t first, size_t last,
                     size_t ctx)
{
        const struct diff_change *f = &d->changes[first], *l = &d->changes[last];
        size_t os = f->a > ctx ? f->a - ctx : 0, oe = MIN(d->a.n, l->a + l->del + ctx);
        size_t ns = f->b - (f->a - os), ne = l->b + l->ins + (oe - (l->a + l->del));
        size_t i = os;

        put(out, r, "@@ ", 3);
        put_range(out, r, '-', os, oe - os);
        put(out, r, " ", 1);
        put_range(out, r, '+', ns, ne - ns);
        put(out, r, " @@\n", 4);
        for (size_t c = first; c <= last; c++) {
                const struct diff_change *ch = &d->changes[c];

                for (; i < ch->a; i++)
                        put_line(out, r, ' ', &d->a.v[i]);
                for (size_t k = 0; k < ch->del; k++)
                        put_line(out, r, '-', &d->a.v[ch->a + k]);
                for (size_t k = 0; k < ch->ins; k++)
                        put_line(out, r, '+', &d->b.v[ch->b + k]);
                i = ch->a + ch->del;
        }
        for (; i < oe; i++)
                put_line(out, r, ' ', &d->a.v[i]);
}

static void put_header(heal_buf *out, int *r, const char *path, bool before, bool after)
{
        put(out, r, before ? "--- a/" : "--- /dev/null", before ? 6 : 13);
        if (before)
                put(out, r, path, strlen(path));
        put(out, r, after ? "\n+++ b/" : "\n+++ /dev/null", after ? 7 : 14);
        if (after)
                put(out, r, path, strlen(path));
        put(out, r, "\n", 1);
}

int heal_diff_unified(heal_buf *out, const char *path, const char *before, const char *after,
                      unsigned context_lines, heal_error *err)
{
        size_t hunks = 0, ctx = context_lines;
        struct diff d;
        int r;

        if (!out || !path || path[strcspn(path, "\n\t")])
                return heal_error_set(err, -EINVAL, "invalid argument");
        r = diff_compute(&d, before, after);
        if (r < 0)
                return lines_error(err, r);
        if (d.n_changes)
                put_header(out, &r, path, before != NULL, after != NULL);
        for (size_t first = 0, last; first < d.n_changes; first = last + 1, hunks++) {
                last = first;
                while (last + 1 < d.n_changes &&
                       d.changes[last + 1].a - (d.changes[last].a + d.changes[last].del) <= 2 * ctx)
                        last++;
                put_hunk(out, &r, &d, first, last, ctx);
        }
        diff_release(&d);
        if (r == -E2BIG)
                return heal_error_set(err, r, "diff of '%s' over %zu bytes", path, out->max);
        if (r < 0)
                return heal_error_set(err, r, "out of memory");
        return (int)MIN(hunks, (size_t)INT32_MAX);
}

int heal_patch_diff(heal_buf *out, const heal_patch *p, heal_error *err)
{
        int total = 0;

        if (!out || !p)
                return heal_error_set(err, -EINVAL, "invalid argument");
        for (size_t i = 0; i < p->n_files; i++) {
                const heal_file_change *f = &p->files[i];
                int r = heal_diff_unified(out, f->file, f->before, f->after, 3, err);

                if (r < 0)
                        return heal_error_prefix(err, r, "'%s'", f->file);
                total += MIN(r, INT32_MAX - total);
        }
        return total;
}

int heal_patch_diff_stat(heal_diff_stat *ret, const heal_patch *p, heal_error *err)
{
        heal_diff_stat s = { 0 };

        if (!ret || !p)
                return heal_error_set(err, -EINVAL, "invalid argument");
        for (size_t i = 0; i < p->n_files; i++) {
                struct diff d;
                int r = diff_compute(&d, p->files[i].before, p->files[i].after);

                if (r < 0)
                        return heal_error_prefix(err, lines_error(err, r), "'%s'",
                                                 p->files[i].file);
                s.files_changed += d.n_changes > 0;
                s.lines_added += d.added;
                s.lines_removed += d.removed;
                diff_release(&d);
        }
        *ret = s;
        return 0;
}
