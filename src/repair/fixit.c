/* SPDX-License-Identifier: MIT */
/*
 * Free candidates: the compiler's own fix-its (gcc and clang -fdiagnostics-parseable-fixits)
 * for the root's errors, all of them as one candidate that costs no model call. A fix-it of a
 * note is an alternative, not a fix, and is left out. Ranges are 1-based lines and byte
 * columns, the end excluded; they apply from the end of each file backwards so that earlier
 * offsets stay valid, and overlapping ones make the candidate invalid.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heal/buf.h"
#include "heal/repair.h"

#include "repair/repair-internal.h"
#include "repair/search-internal.h"

/* The byte offset of @line:@col in @s, or -1 when it is outside. */
static long offset_of(const char *s, unsigned line, unsigned col)
{
        size_t off = 0, len = strlen(s);

        if (line == 0 || col == 0)
                return -1;
        for (unsigned l = 1; l < line; l++) {
                const char *nl = memchr(s + off, '\n', len - off);

                if (!nl)
                        return -1;
                off = (size_t)(nl - s) + 1;
        }
        if (off + col - 1 > len)
                return -1;
        return (long)(off + col - 1);
}

struct fix {
        long from, to;
        const char *text;
};

static int by_start_desc(const void *a, const void *b)
{
        const struct fix *x = a, *y = b;

        return x->from < y->from ? 1 : x->from > y->from ? -1 : 0;
}

/* @content with the fix-its of @file applied; NULL when none or they do not fit. */
static char *apply_file(const heal_analysis *a, const char *file, const char *content)
{
        struct fix fixes[64];
        size_t n = 0;
        heal_buf out = HEAL_BUF_INIT(8u << 20);
        long end;

        for (size_t i = 0; i < a->n_diags; i++) {
                const heal_diag *d = &a->diags[i];

                for (size_t j = 0; d->severity == HEAL_SEVERITY_ERROR && j < d->n_fixits; j++) {
                        const heal_fixit *f = &d->fixits[j];

                        if (f->from_note || strcmp(f->file, file) != 0 || n == 64 || !d->file ||
                            strcmp(d->file, f->file) != 0)
                                continue;
                        fixes[n] = (struct fix){ offset_of(content, f->line, f->col),
                                                 offset_of(content, f->end_line, f->end_col),
                                                 f->text };
                        if (fixes[n].from < 0 || fixes[n].to < fixes[n].from)
                                return NULL;
                        n++;
                }
        }
        if (!n)
                return NULL;
        qsort(fixes, n, sizeof(*fixes), by_start_desc);
        end = (long)strlen(content);
        for (size_t i = 0; i < n; i++) {
                if (fixes[i].to > end) /* overlaps the one after it */
                        return NULL;
                end = fixes[i].from;
        }
        end = 0;
        for (size_t i = n; i-- > 0;) {
                heal_buf_append(&out, content + end, (size_t)(fixes[i].from - end));
                heal_buf_puts(&out, fixes[i].text);
                end = fixes[i].to;
        }
        heal_buf_puts(&out, content + end);
        if (out.truncated) {
                heal_buf_release(&out);
                return NULL;
        }
        return heal_buf_detach(&out, NULL);
}

/* A fix-it is only believed for the file its own diagnostic is in, and a C-family source: the
 * output it comes from is the sandboxed command's, which could print any "fix-it:" line. */
static bool fixit_file_ok(const heal_diag *d, const heal_fixit *f)
{
        static const char *const exts[] = { ".c",  ".h",   ".cc",  ".cpp", ".cxx",
                                            ".hh", ".hpp", ".hxx", ".m",   ".mm" };
        const char *dot = strrchr(f->file, '.');

        if (!d->file || strcmp(d->file, f->file) != 0 || !dot)
                return false;
        for (size_t i = 0; i < sizeof(exts) / sizeof(exts[0]); i++)
                if (!strcmp(dot, exts[i]))
                        return true;
        return false;
}

int search_fixits(struct search *s, heal_error *err)
{
        const heal_analysis *a = &s->v[0].an;
        heal_edits edits = { 0 };
        heal_edit ev[16];
        heal_patch patch = { 0 };
        heal_error e = HEAL_ERROR_INIT;
        heal_apply_opts ao = { .tree = s->o->tree, .protected = s->o->protected };
        const char *files[16];
        size_t nf = 0;
        int r, id;

        for (size_t i = 0; i < a->n_diags; i++)
                for (size_t j = 0; j < a->diags[i].n_fixits && nf < 16; j++) {
                        const heal_fixit *f = &a->diags[i].fixits[j];
                        size_t k = 0;

                        while (k < nf && strcmp(files[k], f->file) != 0)
                                k++;
                        if (k == nf && !f->from_note &&
                            a->diags[i].severity == HEAL_SEVERITY_ERROR &&
                            fixit_file_ok(&a->diags[i], f))
                                files[nf++] = f->file;
                }
        if (!nf)
                return -1;
        /* Read each file through the edit machinery (its path rules), as a whole-file edit. */
        static char empty[1];
        char names[16][PATH_MAX];

        for (size_t i = 0; i < nf; i++) {
                snprintf(names[i], sizeof(names[i]), "%s", files[i]);
                ev[edits.n++] = (heal_edit){
                        .file = names[i], .search = empty, .replace = empty, .whole_file = true
                };
        }
        edits.v = ev;
        r = heal_edits_apply(&edits, &ao, &patch, &e);
        for (size_t i = 0; r >= 0 && i < patch.n_files; i++) {
                heal_file_change *fc = &patch.files[i];
                char *fixed = fc->before ? apply_file(a, fc->file, fc->before) : NULL;

                free(fc->after);
                fc->after = fixed;
                if (!fixed)
                        r = -EINVAL;
        }
        if (r < 0) {
                heal_patch_release(&patch);
                return -1;
        }
        id = search_add_node(s, 0, "fixit", &patch, NULL);
        if (id < 0) {
                heal_patch_release(&patch);
                return heal_error_set(err, id, "out of memory");
        }
        search_preclassify(s, id, 0, &e);
        r = node_check_gaming(s, &s->v[id], err);
        return r < 0 ? r : id;
}
