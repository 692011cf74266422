/* SPDX-License-Identifier: MIT */
/*
 * Edits out of a model's free text (see include/heal/edit.h): search/replace blocks under the
 * line that names their file (fences and `backticks` around the name are allowed), unified diffs
 * (each hunk a search/replace pair of its context and removed lines against its context and
 * added lines), and a whole file in a fence under its path. Everything else is prose.
 * See: aider's "edit formats" (docs/more/edit-formats.md) for why search/replace comes first;
 *      GNU diff's unified format ("Detailed Description of Unified Format").
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heal/buf.h"
#include "heal/edit.h"

#include "core/util.h"
#include "repair/repair-internal.h"

struct text_lines {
        const char **v; /* start of each line in the answer */
        size_t *len;    /* its length without the newline (and without a trailing \r) */
        size_t n;
};

static int split(struct text_lines *t, const char *s)
{
        size_t cap = 1;

        for (const char *p = s; *p; p++)
                cap += *p == '\n';
        t->v = calloc(cap, sizeof(*t->v));
        t->len = calloc(cap, sizeof(*t->len));
        t->n = 0;
        if (!t->v || !t->len)
                return -ENOMEM;
        while (*s) {
                size_t n = strcspn(s, "\n");

                t->v[t->n] = s;
                t->len[t->n++] = n > 0 && s[n - 1] == '\r' ? n - 1 : n;
                s += n + (s[n] == '\n');
        }
        return 0;
}

static bool is(const struct text_lines *t, size_t i, const char *what)
{
        const char *s = t->v[i];
        size_t n = t->len[i];

        while (n > 0 && (*s == ' ' || *s == '\t'))
                s++, n--;
        while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
                n--;
        return n == strlen(what) && strncmp(s, what, n) == 0;
}

static bool fence(const struct text_lines *t, size_t i)
{
        const char *s = t->v[i];

        while (*s == ' ')
                s++;
        return strncmp(s, "```", 3) == 0;
}

/* The file a line names: "path/x.go", "`path/x.go`", "**x.go**", "File: x.go", "x.go:". */
/* File names without a dot or a slash that are still files: build scripts and the like. */
static bool bare_name(const char *s, size_t n)
{
        static const char *const names[] = { "Makefile",    "GNUmakefile",   "makefile",
                                             "Dockerfile",  "Containerfile", "Jenkinsfile",
                                             "Vagrantfile", "Rakefile",      "Gemfile",
                                             "Procfile",    "BUILD",         "WORKSPACE",
                                             "LICENSE",     "README" };

        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
                if (strlen(names[i]) == n && !memcmp(s, names[i], n))
                        return true;
        return false;
}

static bool path_of(const struct text_lines *t, size_t i, char *out, size_t len)
{
        const char *s = t->v[i];
        size_t n = t->len[i];

        while (n > 0 && strchr(" \t#*`'\"", *s))
                s++, n--;
        for (const char *pre = "File:", *pre2 = "file:";
             n > 5 && (!strncmp(s, pre, 5) || !strncmp(s, pre2, 5));) {
                s += 5, n -= 5;
                while (n > 0 && strchr(" \t`*", *s))
                        s++, n--;
                break;
        }
        while (n > 0 && strchr(" \t*`'\":", s[n - 1]))
                n--;
        if (n == 0 || n >= len || memchr(s, ' ', n) ||
            (!memchr(s, '.', n) && !memchr(s, '/', n) && !bare_name(s, n)))
                return false;
        snprintf(out, len, "%.*s", (int)n, s);
        return true;
}

static int add(heal_edits *e, const char *file, heal_buf *search, heal_buf *replace, bool whole)
{
        heal_edit *v = realloc(e->v, (e->n + 1) * sizeof(*v));

        if (!v)
                return -ENOMEM;
        e->v = v;
        v[e->n].file = strdup(file);
        v[e->n].search = heal_buf_detach(search, NULL);
        v[e->n].replace = heal_buf_detach(replace, NULL);
        v[e->n].whole_file = whole;
        if (!v[e->n].file || !v[e->n].search || !v[e->n].replace) {
                free(v[e->n].file), free(v[e->n].search), free(v[e->n].replace);
                return -ENOMEM;
        }
        e->n++;
        return 0;
}

static void put_line(heal_buf *b, const struct text_lines *t, size_t i, size_t skip)
{
        heal_buf_append(b, t->v[i] + skip, t->len[i] > skip ? t->len[i] - skip : 0);
        heal_buf_append(b, "\n", 1);
}

/* "<<<<<<< SEARCH" at @i: its file is the nearest line above that names one (fences skipped). */
static int search_replace(heal_edits *e, const struct text_lines *t, size_t *i, heal_error *err)
{
        heal_buf search = HEAL_BUF_INIT(16u << 20), replace = HEAL_BUF_INIT(16u << 20);
        char file[1024] = "";
        size_t k = *i, start = *i;
        int r;

        while (k > 0 && !file[0]) {
                k--;
                if (t->len[k] == 0 || fence(t, k))
                        continue;
                if (!path_of(t, k, file, sizeof(file)))
                        break;
        }
        for (k = *i + 1; k < t->n && !is(t, k, "======="); k++)
                put_line(&search, t, k, 0);
        for (k++; k < t->n && !is(t, k, ">>>>>>> REPLACE"); k++)
                put_line(&replace, t, k, 0);
        if (k >= t->n || !file[0]) {
                heal_buf_release(&search), heal_buf_release(&replace);
                if (!file[0])
                        return heal_error_set(err, -EBADMSG,
                                              "the search/replace block at line %zu of the "
                                              "answer names no file on the line above it",
                                              start + 1);
                return heal_error_set(err, -EBADMSG,
                                      "the search/replace block for '%s' at line %zu of the "
                                      "answer never ends (no '>>>>>>> REPLACE')",
                                      file, start + 1);
        }
        r = add(e, file, &search, &replace, false);
        heal_buf_release(&search), heal_buf_release(&replace);
        *i = k;
        return r < 0 ? heal_error_set(err, r, "out of memory") : 0;
}

/* "--- a/x.go" "+++ b/x.go" then hunks; returns after the last hunk line. */
static int diff(heal_edits *e, const struct text_lines *t, size_t *i, heal_error *err)
{
        char file[1024];
        const char *p = t->v[*i + 1] + 4;
        size_t n = t->len[*i + 1] - 4, k = *i + 2;

        if (n >= 2 && p[1] == '/' && (p[0] == 'b' || p[0] == 'a'))
                p += 2, n -= 2;
        n = strcspn(p, "\t\r\n") < n ? strcspn(p, "\t\r\n") : n;
        snprintf(file, sizeof(file), "%.*s", (int)n, p);
        while (k < t->n && strncmp(t->v[k], "@@", 2) == 0) {
                heal_buf search = HEAL_BUF_INIT(16u << 20), replace = HEAL_BUF_INIT(16u << 20);
                int r;

                for (k++; k < t->n; k++) {
                        char c = t->len[k] ? t->v[k][0] : ' ';

                        if (c == '\\')
                                continue; /* "\ No newline at end of file" */
                        if (c != ' ' && c != '-' && c != '+')
                                break;
                        if (c == '-' && t->len[k] >= 3 && !strncmp(t->v[k], "---", 3) &&
                            k + 1 < t->n && !strncmp(t->v[k + 1], "+++", 3))
                                break; /* the next file's header */
                        if (c != '+')
                                put_line(&search, t, k, t->len[k] ? 1 : 0);
                        if (c != '-')
                                put_line(&replace, t, k, t->len[k] ? 1 : 0);
                }
                r = add(e, file, &search, &replace, false);
                heal_buf_release(&search), heal_buf_release(&replace);
                if (r < 0)
                        return heal_error_set(err, r, "out of memory");
        }
        *i = k - 1;
        return 0;
}

/* A fence under a path line, holding neither search/replace blocks nor a diff: a whole file. */
static bool whole_file(heal_edits *e, const struct text_lines *t, size_t *i, int *r)
{
        heal_buf content = HEAL_BUF_INIT(16u << 20), none = HEAL_BUF_INIT(1);
        char file[1024];
        size_t k = *i, end;

        while (k > 0 && t->len[k - 1] == 0)
                k--;
        if (k == 0 || !path_of(t, k - 1, file, sizeof(file)))
                return false;
        for (end = *i + 1; end < t->n && !fence(t, end); end++)
                if (is(t, end, "<<<<<<< SEARCH") ||
                    (end == *i + 1 && !strncmp(t->v[end], "--- ", 4)))
                        return false;
        if (end >= t->n)
                return false;
        for (k = *i + 1; k < end; k++)
                put_line(&content, t, k, 0);
        heal_buf_puts(&none, "");
        *r = add(e, file, &none, &content, true);
        heal_buf_release(&content), heal_buf_release(&none);
        *i = end;
        return true;
}

int heal_edits_parse(heal_edits *ret, const char *answer, heal_error *err)
{
        heal_edits e = { 0 };
        struct text_lines t = { 0 };
        int r;

        if (!ret || !answer)
                return heal_error_set(err, -EINVAL, "invalid argument");
        r = split(&t, answer) < 0 ? heal_error_set(err, -ENOMEM, "out of memory") : 0;
        for (size_t i = 0; r == 0 && i < t.n; i++) {
                if (is(&t, i, "<<<<<<< SEARCH"))
                        r = search_replace(&e, &t, &i, err);
                else if (!strncmp(t.v[i], "--- ", 4) && i + 1 < t.n &&
                         !strncmp(t.v[i + 1], "+++ ", 4))
                        r = diff(&e, &t, &i, err);
                else if (fence(&t, i) && whole_file(&e, &t, &i, &r) && r < 0)
                        r = heal_error_set(err, r, "out of memory");
        }
        free(t.v);
        free(t.len);
        if (r < 0) {
                heal_edits_release(&e);
                return r;
        }
        *ret = e;
        return 0;
}

void heal_edits_release(heal_edits *e)
{
        if (!e)
                return;
        for (size_t i = 0; i < e->n; i++) {
                free(e->v[i].file);
                free(e->v[i].search);
                free(e->v[i].replace);
        }
        free(e->v);
        memset(e, 0, sizeof(*e));
}
