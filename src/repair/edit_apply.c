/* SPDX-License-Identifier: MIT */
/*
 * Applying edits in memory (see include/heal/edit.h): the path checked (inside the tree, no
 * symlink on the way, not .git, not protected), the file read beneath the tree, then the search
 * text found exactly once: as written; else line by line ignoring trailing whitespace; else
 * ignoring indentation too, the replacement then shifted by the indentation the file has there.
 */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "heal/buf.h"
#include "heal/edit.h"

#include "core/util.h"
#include "repair/repair-internal.h"

#define FILE_MAX (4u << 20)

/* Tests and their data in Go, C and Python conventions, and hidden files and directories
 * (.github, .envrc, .bashrc: configuration that runs things). */
const char *const repair_default_protected[] = { "*_test.go",   "*_test.*", "test_*",
                                                 "testdata",    "tests",    "test",
                                                 "conftest.py", ".*",       NULL };

/* @file made relative and clean ("./a//b.go" -> "a/b.go"), or why it may not be edited. */
static int check_path(const heal_apply_opts *o, const char *file, char *out, size_t len,
                      heal_error *err)
{
        const char *const *prot = o->protected ? o->protected : repair_default_protected;
        char walk[PATH_MAX];
        size_t n = 0;

        if (!file[0] || file[0] == '/')
                return heal_error_set(err, -EPERM, "'%s': an absolute path leaves the tree", file);
        out[0] = '\0';
        for (const char *p = file; *p;) {
                size_t k = strcspn(p, "/");

                if (k == 2 && !strncmp(p, "..", 2))
                        return heal_error_set(err, -EPERM, "'%s': '..' leaves the tree", file);
                if (k == 4 && !strncasecmp(p, ".git", 4))
                        return heal_error_set(err, -EPERM, "'%s': .git is not edited", file);
                if (k == 5 && !strncmp(p, ".heal", 5))
                        return heal_error_set(err, -EPERM,
                                              "'%s': .heal is heal's own (undo records)", file);
                if (k && !(k == 1 && *p == '.')) {
                        if (n + k + 2 > len)
                                return heal_error_set(err, -ENAMETOOLONG, "'%s': too long", file);
                        if (n)
                                out[n++] = '/';
                        memcpy(out + n, p, k);
                        out[n += k] = '\0';
                        for (size_t i = 0; prot[i]; i++) {
                                char part[PATH_MAX];

                                snprintf(part, sizeof(part), "%.*s", (int)k, p);
                                if (!fnmatch(prot[i], out, 0) || !fnmatch(prot[i], part, 0))
                                        return heal_error_set(err, -EPERM,
                                                              "'%s' is protected ('%s'): tests "
                                                              "and their data are read-only",
                                                              file, prot[i]);
                        }
                        if (str_printf(walk, sizeof(walk), "%s/%s", o->tree, out) == 0) {
                                struct stat st;

                                if (lstat(walk, &st) == 0 && S_ISLNK(st.st_mode))
                                        return heal_error_set(err, -EPERM,
                                                              "'%s': '%s' is a symlink; heal "
                                                              "edits no file through one",
                                                              file, out);
                        }
                }
                p += k + (p[k] == '/');
        }
        if (!n)
                return heal_error_set(err, -EPERM, "'%s' names no file", file);
        return 0;
}

static char *read_tree_file(const char *tree, const char *rel, int *r)
{
        FILE *f = tree_open(tree, rel, FILE_MAX);
        heal_buf b = HEAL_BUF_INIT(FILE_MAX);
        char chunk[65536], *s;
        size_t n, len;

        if (!f) {
                *r = -ENOENT;
                return NULL;
        }
        while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
                heal_buf_append(&b, chunk, n);
        fclose(f);
        len = b.len;
        s = b.truncated ? NULL : heal_buf_detach(&b, NULL);
        *r = b.truncated ? -EFBIG : s ? 0 : -ENOMEM;
        heal_buf_release(&b);
        if (s && strlen(s) != len) { /* NUL bytes: a binary file, which edits would cut */
                free(s);
                s = NULL;
                *r = -EMEDIUMTYPE;
        }
        return s;
}

struct lines_of {
        char **v;
        size_t n;
        char *store;
};

/* @s's lines, as they are (no cap, no cleaning: this is the file to edit), without their
 * newlines; a final newline ends the last line rather than starting an empty one. */
static int lines_of(struct lines_of *l, const char *s)
{
        size_t len = strlen(s), n = 1, k = 0;

        for (size_t i = 0; i < len; i++)
                n += s[i] == '\n';
        l->v = calloc(n, sizeof(*l->v));
        l->store = malloc(len + 1);
        l->n = 0;
        if (!l->v || !l->store)
                return -ENOMEM;
        memcpy(l->store, s, len + 1);
        for (size_t i = 0; i <= len && len; i++)
                if (i == len || l->store[i] == '\n') {
                        if (i == len && k == len)
                                break; /* after a final newline */
                        l->store[i] = '\0';
                        l->v[l->n++] = l->store + k;
                        k = i + 1;
                }
        return 0;
}

static void lines_free(struct lines_of *l)
{
        free(l->v);
        free(l->store);
}

static const char *skip_ws(const char *s)
{
        return s + strspn(s, " \t");
}

static size_t rtrim_len(const char *s)
{
        size_t n = strlen(s);

        while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
                n--;
        return n;
}

static bool line_eq(const char *a, const char *b, bool indent)
{
        size_t na, nb;

        if (indent)
                a = skip_ws(a), b = skip_ws(b);
        na = rtrim_len(a), nb = rtrim_len(b);
        return na == nb && !strncmp(a, b, na);
}

/* Where @s's lines match @c's (at most 2 places recorded); the number of places. */
static size_t find_lines(const struct lines_of *c, const struct lines_of *s, bool indent,
                         size_t at[2])
{
        size_t found = 0;

        for (size_t i = 0; s->n && i + s->n <= c->n; i++) {
                size_t k = 0;

                while (k < s->n && line_eq(c->v[i + k], s->v[k], indent))
                        k++;
                if (k == s->n && found < 2)
                        at[found] = i;
                found += k == s->n;
        }
        return found;
}

/* The file's lines nearest the search's first nonblank line, for the model's next try. */
static void nearest(heal_buf *b, const struct lines_of *c, const struct lines_of *s)
{
        const char *want = NULL;
        size_t best = 0, best_len = 0;

        for (size_t i = 0; i < s->n && !want; i++)
                if (*skip_ws(s->v[i]))
                        want = skip_ws(s->v[i]);
        for (size_t i = 0; want && i < c->n; i++) {
                const char *have = skip_ws(c->v[i]);
                size_t k = 0;

                while (have[k] && have[k] == want[k])
                        k++;
                if (k > best_len)
                        best = i, best_len = k;
        }
        if (!want || !best_len) {
                heal_buf_puts(b, " (no line of the file resembles it)");
                return;
        }
        heal_buf_puts(b, "; the nearest lines are:");
        for (size_t i = best > 3 ? best - 3 : 0; i < c->n && i <= best + 3; i++)
                heal_buf_printf(b, "\n%4zu| %s", i + 1, c->v[i]);
}

static void shift(heal_buf *out, const char *line, const char *from, const char *to)
{
        size_t nf = strlen(from);

        if (*skip_ws(line) && !strncmp(line, from, nf))
                heal_buf_printf(out, "%s%s\n", to, line + nf);
        else
                heal_buf_printf(out, "%s\n", line);
}

/* Replace @s (a search text) in @content; the new content, or NULL with @r and @why set. */
static char *replace_in(const char *content, const heal_edit *ed, int *r, heal_buf *why)
{
        const char *hit = strstr(content, ed->search), *again;
        struct lines_of c = { 0 }, s = { 0 }, rep = { 0 };
        heal_buf out = HEAL_BUF_INIT((size_t)-1);
        size_t at[2] = { 0, 0 }, found = 0;
        bool indent = false;

        if (hit && !(again = strstr(hit + 1, ed->search))) {
                heal_buf_append(&out, content, (size_t)(hit - content));
                heal_buf_puts(&out, ed->replace);
                heal_buf_puts(&out, hit + strlen(ed->search));
                *r = 0;
                return heal_buf_detach(&out, NULL);
        }
        if ((*r = lines_of(&c, content)) < 0 || (*r = lines_of(&s, ed->search)) < 0 ||
            (*r = lines_of(&rep, ed->replace)) < 0)
                goto done;
        found = find_lines(&c, &s, false, at);
        if (found == 0) {
                indent = true;
                found = find_lines(&c, &s, true, at);
        }
        if (found != 1) {
                *r = found ? -EEXIST : -ENOENT;
                if (found)
                        heal_buf_printf(why,
                                        "the search text matches %zu places (lines %zu and %zu): "
                                        "give more lines around the change",
                                        found, at[0] + 1, at[1] + 1);
                else {
                        heal_buf_puts(why, "the search text matches no place of the file");
                        nearest(why, &c, &s);
                }
                goto done;
        }
        for (size_t i = 0; i < at[0]; i++)
                heal_buf_printf(&out, "%s\n", c.v[i]);
        {
                /* the indentation the file has where the search's first line has its own */
                size_t k = 0;
                char from[256] = "", to[256] = "";

                while (k < s.n && !*skip_ws(s.v[k]))
                        k++;
                if (indent && k < s.n) {
                        snprintf(from, sizeof(from), "%.*s", (int)(skip_ws(s.v[k]) - s.v[k]),
                                 s.v[k]);
                        snprintf(to, sizeof(to), "%.*s",
                                 (int)(skip_ws(c.v[at[0] + k]) - c.v[at[0] + k]), c.v[at[0] + k]);
                }
                for (size_t i = 0; i < rep.n; i++)
                        shift(&out, rep.v[i], from, to);
        }
        for (size_t i = at[0] + s.n; i < c.n; i++)
                heal_buf_printf(&out, "%s\n", c.v[i]);
        if (content[0] && content[strlen(content) - 1] != '\n' && out.len)
                out.data[--out.len] = '\0'; /* the file had no final newline: keep it so */
        *r = 0;
done:
        lines_free(&c), lines_free(&s), lines_free(&rep);
        if (*r < 0) {
                heal_buf_release(&out);
                return NULL;
        }
        return heal_buf_detach(&out, NULL);
}

static int change_of(heal_patch *p, const char *file, const heal_apply_opts *o,
                     heal_file_change **ret)
{
        heal_file_change *v;
        int r;

        for (size_t i = 0; i < p->n_files; i++)
                if (!strcmp(p->files[i].file, file)) {
                        *ret = &p->files[i];
                        return 0;
                }
        v = realloc(p->files, (p->n_files + 1) * sizeof(*v));
        if (!v)
                return -ENOMEM;
        p->files = v;
        v = &v[p->n_files];
        memset(v, 0, sizeof(*v));
        v->file = strdup(file);
        if (!v->file)
                return -ENOMEM;
        v->before = read_tree_file(o->tree, file, &r);
        if (r < 0 && r != -ENOENT) {
                free(v->file);
                return r;
        }
        v->after = v->before ? strdup(v->before) : NULL;
        if (v->before && !v->after) {
                free(v->file), free(v->before);
                return -ENOMEM;
        }
        p->n_files++;
        *ret = v;
        return 0;
}

static int apply_one(heal_patch *p, const heal_edit *ed, size_t idx, const heal_apply_opts *o,
                     heal_error *err)
{
        heal_buf why = HEAL_BUF_INIT(8192);
        heal_file_change *fc;
        char file[PATH_MAX], *next;
        int r = check_path(o, ed->file, file, sizeof(file), err);

        if (r < 0)
                return heal_error_prefix(err, r, "edit %zu", idx + 1);
        if ((r = change_of(p, file, o, &fc)) < 0)
                return heal_error_set(err, r, "edit %zu ('%s'): %s", idx + 1, file,
                                      r == -EFBIG         ? "the file is over 4 MiB"
                                      : r == -EMEDIUMTYPE ? "a binary file (it holds NUL "
                                                            "bytes): heal edits text only"
                                                          : strerror(-r));
        if (ed->whole_file || (!fc->after && !ed->search[0])) {
                next = strdup(ed->replace); /* a whole file, or a new one */
                r = next ? 0 : -ENOMEM;
        } else if (!fc->after) {
                r = -ENOENT;
                heal_buf_puts(&why, "the file does not exist (an empty SEARCH creates it)");
                next = NULL;
        } else if (!ed->search[0]) {
                r = -EEXIST;
                heal_buf_puts(&why,
                              "the file exists: give the lines to replace, or the whole file");
                next = NULL;
        } else {
                next = replace_in(fc->after, ed, &r, &why);
        }
        if (r < 0) {
                r = heal_error_set(err, r, "edit %zu ('%s'): %s", idx + 1, file,
                                   why.data ? why.data : strerror(-r));
                heal_buf_release(&why);
                return r;
        }
        heal_buf_release(&why);
        free(fc->after);
        fc->after = next;
        return 0;
}

int heal_edits_apply(const heal_edits *e, const heal_apply_opts *o, heal_patch *ret,
                     heal_error *err)
{
        heal_patch p = { 0 };
        int r = 0;

        if (!e || !o || !o->tree || !ret)
                return heal_error_set(err, -EINVAL, "invalid argument");
        if (o->base && heal_patch_copy(&p, o->base) < 0)
                return heal_error_set(err, -ENOMEM, "out of memory");
        for (size_t i = 0; r == 0 && i < e->n; i++)
                r = apply_one(&p, &e->v[i], i, o, err);
        if (r < 0) {
                heal_patch_release(&p);
                return r;
        }
        *ret = p;
        return 0;
}

static char *dup_or_null(const char *s, bool *failed)
{
        char *d = s ? strdup(s) : NULL;

        *failed |= s && !d;
        return d;
}

int heal_patch_copy(heal_patch *ret, const heal_patch *p)
{
        bool failed = false;

        memset(ret, 0, sizeof(*ret));
        if (!p->n_files)
                return 0;
        ret->files = calloc(p->n_files, sizeof(*ret->files));
        if (!ret->files)
                return -ENOMEM;
        ret->n_files = p->n_files;
        for (size_t i = 0; i < p->n_files; i++) {
                ret->files[i].file = dup_or_null(p->files[i].file, &failed);
                ret->files[i].before = dup_or_null(p->files[i].before, &failed);
                ret->files[i].after = dup_or_null(p->files[i].after, &failed);
        }
        if (failed) {
                heal_patch_release(ret);
                return -ENOMEM;
        }
        return 0;
}

void heal_patch_release(heal_patch *p)
{
        if (!p)
                return;
        for (size_t i = 0; i < p->n_files; i++) {
                free(p->files[i].file);
                free(p->files[i].before);
                free(p->files[i].after);
        }
        free(p->files);
        memset(p, 0, sizeof(*p));
}
