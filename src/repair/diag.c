/* SPDX-License-Identifier: MIT */
/* Building diagnostics: bounded lists, owned strings, paths made relative to the tree. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/util.h"
#include "repair/repair-internal.h"

static const char *const kind_names[] = {
        [HEAL_DIAG_COMPILE_ERROR] = "compile_error",
        [HEAL_DIAG_VET] = "vet",
        [HEAL_DIAG_TEST_FAILURE] = "test_failure",
        [HEAL_DIAG_PANIC] = "panic",
        [HEAL_DIAG_FATAL_ERROR] = "fatal_error",
        [HEAL_DIAG_DEADLOCK] = "deadlock",
        [HEAL_DIAG_DATA_RACE] = "data_race",
        [HEAL_DIAG_TIMEOUT] = "timeout",
        [HEAL_DIAG_SANITIZER] = "sanitizer",
        [HEAL_DIAG_CRASH] = "crash",
        [HEAL_DIAG_UNKNOWN] = "unknown",
};

const char *heal_diag_kind_name(heal_diag_kind kind)
{
        return (unsigned)kind < _HEAL_DIAG_KIND_MAX ? kind_names[kind] : "unknown";
}

bool starts_with(const char *s, const char *prefix)
{
        return strncmp(s, prefix, strlen(prefix)) == 0;
}

char *xstrndup(struct actx *x, const char *s, size_t n)
{
        char *p = strndup(s, n);

        if (!p)
                x->error = -ENOMEM;
        return p;
}

int lines_split(struct lines *l, const char *text, size_t len)
{
        size_t n = 1, at = 0;

        memset(l, 0, sizeof(*l));
        for (size_t i = 0; i < len; i++)
                n += text[i] == '\n';
        l->v = calloc(n, sizeof(*l->v));
        l->store = malloc(len + n + 1);
        if (!l->v || !l->store) {
                lines_release(l);
                return -ENOMEM;
        }
        for (size_t i = 0; i < len;) {
                const char *nl = memchr(text + i, '\n', len - i);
                size_t end = nl ? (size_t)(nl - text) : len, keep = end - i;
                const char *nul = memchr(text + i, '\0', keep);

                if (nul)
                        keep = (size_t)(nul - (text + i));
                if (keep > 0 && text[i + keep - 1] == '\r')
                        keep--;
                if (keep > LINE_MAX_PARSED)
                        keep = LINE_MAX_PARSED;
                memcpy(l->store + at, text + i, keep);
                l->store[at + keep] = '\0';
                l->v[l->n++] = l->store + at;
                at += keep + 1;
                i = end + 1;
        }
        return 0;
}

void lines_release(struct lines *l)
{
        free(l->v);
        free(l->store);
        memset(l, 0, sizeof(*l));
}

heal_diag *diag_add(struct actx *x, heal_diag_kind kind, heal_diag_severity severity,
                    const char *message)
{
        heal_analysis *a = x->a;
        heal_diag *v, *d;

        if (x->error || a->n_diags >= DIAGS_MAX)
                return NULL;
        v = realloc(a->diags, (a->n_diags + 1) * sizeof(*v));
        if (!v) {
                x->error = -ENOMEM;
                return NULL;
        }
        a->diags = v;
        d = &v[a->n_diags];
        memset(d, 0, sizeof(*d));
        d->kind = kind;
        d->severity = severity;
        d->message = xstrndup(x, message, strlen(message));
        if (!d->message)
                return NULL;
        a->n_diags++;
        return d;
}

static bool under(const char *root, const char *path, size_t len, size_t *ret_skip)
{
        size_t n = root ? strlen(root) : 0;

        while (n > 1 && root[n - 1] == '/')
                n--;
        if (n == 0 || len <= n || strncmp(path, root, n) != 0 || path[n] != '/')
                return false;
        *ret_skip = n + 1;
        return true;
}

char *path_in_tree(const heal_analyze_opts *o, const char *path, size_t len, bool *in_tree)
{
        size_t skip = 0;

        *in_tree = false;
        if (len >= 2 && path[0] == '.' && path[1] == '/') { /* go: "./main.go" */
                skip = 2;
                *in_tree = true;
        } else if (o && under(o->tree, path, len, &skip)) {
                *in_tree = true;
        } else {
                for (size_t i = 0; o && o->aliases && o->aliases[i]; i++)
                        if (under(o->aliases[i], path, len, &skip)) {
                                *in_tree = true;
                                break;
                        }
        }
        if (!*in_tree && len > 0 && path[0] != '/' && !(len >= 3 && strncmp(path, "../", 3) == 0))
                *in_tree = true;        /* relative to the command's directory, the tree */
        if (*in_tree && o && o->tree) { /* "_testmain.go" and the like are not the user's */
                char full[PATH_MAX];
                struct stat st;

                *in_tree = str_printf(full, sizeof(full), "%s/%.*s", o->tree, (int)(len - skip),
                                      path + skip) == 0 &&
                           stat(full, &st) == 0 && S_ISREG(st.st_mode);
        }
        return strndup(path + skip, len - skip);
}

void diag_set_loc(struct actx *x, heal_diag *d, const char *file, unsigned line, unsigned col)
{
        bool in_tree;

        if (!d || !file)
                return;
        free(d->file);
        d->file = path_in_tree(x->opts, file, strlen(file), &in_tree);
        if (!d->file)
                x->error = -ENOMEM;
        d->line = line;
        d->column = col;
}

void diag_set_function(struct actx *x, heal_diag *d, const char *fn, size_t len)
{
        if (!d || !fn)
                return;
        free(d->function);
        d->function = xstrndup(x, fn, len);
}

void diag_set_test(struct actx *x, heal_diag *d, const char *test)
{
        if (!d || !test || d->test)
                return;
        d->test = xstrndup(x, test, strlen(test));
}

void diag_add_note(struct actx *x, heal_diag *d, const char *note)
{
        char **v;

        if (!d || d->n_notes >= NOTES_MAX)
                return;
        v = realloc(d->notes, (d->n_notes + 1) * sizeof(*v));
        if (!v) {
                x->error = -ENOMEM;
                return;
        }
        d->notes = v;
        if ((v[d->n_notes] = xstrndup(x, note, strlen(note))))
                d->n_notes++;
}

heal_frame *diag_add_frame(struct actx *x, heal_diag *d, const char *fn, size_t fn_len,
                           const char *file, size_t file_len, unsigned line)
{
        heal_frame *v, *f;

        if (!d || d->n_frames >= FRAMES_MAX)
                return NULL;
        v = realloc(d->frames, (d->n_frames + 1) * sizeof(*v));
        if (!v) {
                x->error = -ENOMEM;
                return NULL;
        }
        d->frames = v;
        f = &v[d->n_frames];
        memset(f, 0, sizeof(*f));
        f->function = xstrndup(x, fn, fn_len);
        if (file) {
                f->file = path_in_tree(x->opts, file, file_len, &f->in_tree);
                if (!f->file)
                        x->error = -ENOMEM;
        }
        f->line = line;
        d->n_frames++;
        return f;
}

const heal_frame *diag_first_in_tree(const heal_diag *d)
{
        for (size_t i = 0; d && i < d->n_frames; i++)
                if (d->frames[i].in_tree && d->frames[i].file)
                        return &d->frames[i];
        return NULL;
}

void diag_locate_from_frames(struct actx *x, heal_diag *d)
{
        const heal_frame *f = diag_first_in_tree(d);

        if (!d || !f)
                return;
        if (!d->file) {
                d->file = xstrndup(x, f->file, strlen(f->file));
                d->line = f->line;
        }
        if (!d->function && f->function)
                d->function = xstrndup(x, f->function, strlen(f->function));
}

void test_list_add(struct actx *x, char ***v, size_t *n, const char *name, size_t len)
{
        char **grown;

        for (size_t i = 0; i < *n; i++)
                if (strlen((*v)[i]) == len && strncmp((*v)[i], name, len) == 0)
                        return;
        if (*n >= 4096)
                return;
        grown = realloc(*v, (*n + 1) * sizeof(*grown));
        if (!grown) {
                x->error = -ENOMEM;
                return;
        }
        *v = grown;
        if ((grown[*n] = xstrndup(x, name, len)))
                (*n)++;
}

static void diag_release(heal_diag *d)
{
        free(d->file);
        free(d->function);
        free(d->message);
        free(d->test);
        for (size_t i = 0; i < d->n_frames; i++) {
                free(d->frames[i].function);
                free(d->frames[i].file);
        }
        free(d->frames);
        for (size_t i = 0; i < d->n_notes; i++)
                free(d->notes[i]);
        free(d->notes);
}

void heal_analysis_release(heal_analysis *a)
{
        if (!a)
                return;
        for (size_t i = 0; i < a->n_diags; i++)
                diag_release(&a->diags[i]);
        free(a->diags);
        for (size_t i = 0; i < a->n_tests_passed; i++)
                free(a->tests_passed[i]);
        free(a->tests_passed);
        for (size_t i = 0; i < a->n_tests_failed; i++)
                free(a->tests_failed[i]);
        free(a->tests_failed);
        free(a->tail);
        memset(a, 0, sizeof(*a));
}

bool parse_loc(const char *s, struct loc *l, const char *const *exts)
{
        const char *p = s;

        /* FILE runs to the first ":DIGITS:" (paths with ':' followed by digits are rare). */
        while ((p = strchr(p, ':'))) {
                const char *q = p + 1;
                unsigned line = 0, col = 0;

                while (*q >= '0' && *q <= '9' && line < 100000000)
                        line = line * 10 + (unsigned)(*q++ - '0');
                if (q > p + 1 && *q == ':') {
                        const char *r = q + 1;

                        while (*r >= '0' && *r <= '9' && col < 100000)
                                col = col * 10 + (unsigned)(*r++ - '0');
                        if (r > q + 1 && *r == ':')
                                q = r;
                        else
                                col = 0;
                        l->file = s;
                        l->file_len = (size_t)(p - s);
                        l->line = line;
                        l->col = col;
                        l->rest = q + 1 + (q[1] == ' ');
                        if (l->file_len == 0 || memchr(s, ' ', l->file_len))
                                return false;
                        for (size_t i = 0; exts && exts[i]; i++) {
                                size_t e = strlen(exts[i]);

                                if (l->file_len > e &&
                                    strncmp(s + l->file_len - e, exts[i], e) == 0)
                                        return true;
                        }
                        return exts == NULL;
                }
                p++;
        }
        return false;
}
