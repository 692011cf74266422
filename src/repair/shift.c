/* SPDX-License-Identifier: MIT */
/*
 * "Only new errors count": a candidate's diagnostics against its parent's. The parent's error
 * locations are first moved by the candidate's edit (the line map of the diff between the two
 * workspaces' versions of the file, Myers 1986 via heal_diff_lines()), then matched one to one
 * with the candidate's by kind, severity, file, message and moved line. A parent error left
 * unmatched was removed; a candidate error left unmatched is new. An edit that only shifts the
 * lines below it is therefore neither credited nor blamed for the errors it moved, and the
 * same message at two places counts twice.
 */
#include <stdlib.h>
#include <string.h>

#include "heal/diff.h"

#include "repair/search-internal.h"

#define SHIFT_FILES 16

struct shift_file {
        const char *file;
        heal_diff_line *v;
        size_t n;
        bool identity;
};

struct shift {
        const heal_patch *from, *to;
        struct shift_file f[SHIFT_FILES];
        size_t n;
};

static const heal_file_change *change_of(const heal_patch *p, const char *file)
{
        for (size_t i = 0; p && i < p->n_files; i++)
                if (!strcmp(p->files[i].file, file))
                        return &p->files[i];
        return NULL;
}

/* @line of @file in the parent's workspace, as a line of the candidate's; 0 when removed. */
static unsigned shift_line(struct shift *s, const char *file, unsigned line)
{
        const heal_file_change *to, *from;
        struct shift_file *f = NULL;

        if (!file || !line || !(to = change_of(s->to, file)))
                return line;
        for (size_t i = 0; i < s->n && !f; i++)
                if (!strcmp(s->f[i].file, file))
                        f = &s->f[i];
        if (!f && s->n == SHIFT_FILES)
                return line;
        if (!f) {
                const char *before;

                f = &s->f[s->n++];
                f->file = file;
                from = change_of(s->from, file);
                before = from ? from->after : to->before;
                f->identity = (!before && !to->after) ||
                              (before && to->after && !strcmp(before, to->after));
                if (!f->identity && heal_diff_lines(&f->v, &f->n, before, to->after, NULL) < 0)
                        f->identity = true; /* too big to diff: compare as they are */
        }
        return f->identity ? line : heal_diff_line_map(f->v, f->n, line);
}

static bool same(const heal_diag *a, unsigned a_line, const heal_diag *b)
{
        return a->kind == b->kind && a->severity == b->severity &&
               !strcmp(a->message, b->message) &&
               !strcmp(a->file ? a->file : "", b->file ? b->file : "") &&
               (!a_line || !b->line || a_line == b->line);
}

void diag_compare(struct diag_delta *ret, const heal_analysis *from, const heal_patch *from_p,
                  const heal_analysis *to, const heal_patch *to_p)
{
        struct shift s = { .from = from_p, .to = to_p };
        bool *used = calloc(to->n_diags ? to->n_diags : 1, sizeof(bool));

        memset(ret, 0, sizeof(*ret));
        for (size_t i = 0; used && i < from->n_diags; i++) {
                const heal_diag *d = &from->diags[i];
                unsigned line = shift_line(&s, d->file, d->line);
                bool found = false;

                if (d->severity != HEAL_SEVERITY_ERROR)
                        continue;
                for (size_t j = 0; j < to->n_diags && !found; j++)
                        if (!used[j] && same(d, line, &to->diags[j]))
                                used[j] = found = true;
                ret->removed += !found;
        }
        for (size_t j = 0; j < to->n_diags; j++)
                if (to->diags[j].severity == HEAL_SEVERITY_ERROR && !(used && used[j])) {
                        ret->added++;
                        if (!ret->first_new)
                                ret->first_new = &to->diags[j];
                }
        for (size_t i = 0; i < s.n; i++)
                free(s.f[i].v);
        free(used);
}
