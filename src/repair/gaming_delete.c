/* SPDX-License-Identifier: MIT */
/*
 * Two rules that compare a file's versions as a whole:
 *
 * delete_failing_code: the Kali pattern (Qi, Long, Achour, Rinard, ISSTA 2015: "plausible"
 * patches that only delete functionality). The failing place is the baseline's first error
 * diagnostic and its first in-tree stack frame; when it lies in the file, the function around
 * it must survive, keep more than a bare return, and not only lose lines.
 *
 * test_literals: the "return the expected value" pattern (Claude 3.7 Sonnet system card,
 * section 6.2): a string or number newly written into non-test code that the protected tests
 * next to it also spell out.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "heal/diff.h"

#include "core/util.h"
#include "repair/gaming-internal.h"
#include "repair/repair-internal.h"

#define PENALTY_DELETION 0.5
#define PENALTY_LITERAL  0.15
#define TEST_FILE_MAX    (4u << 20)
#define TEST_FILES_MAX   64

/* The function body of @f as code and literals, whitespace collapsed; false when longer than
 * @len or without braces. */
static bool body_text(const struct lexed *l, const struct func_range *f, char *out, size_t len)
{
        size_t from = l->starts[f->start - 1], to = l->starts[MIN(f->end, l->n_lines)], k = 0;
        bool open = false, space = false;

        for (size_t i = from; i < to; i++) {
                char ch = l->text[i];

                if (l->cls[i] == LEX_COMMENT)
                        continue;
                if (!open) {
                        open = ch == '{' && l->cls[i] == LEX_CODE;
                        continue;
                }
                if (isspace((unsigned char)ch)) {
                        space = k > 0;
                        continue;
                }
                if (k + 2 >= len)
                        return false;
                if (space)
                        out[k++] = ' ', space = false;
                out[k++] = ch;
        }
        while (k > 0 && out[k - 1] == '}') /* the closing brace */
                k--;
        while (k > 0 && (out[k - 1] == ' ' || out[k - 1] == ';'))
                k--;
        out[k] = '\0';
        return open;
}

/* Nothing, or "return" with zero values only: nil, 0, "", false, NULL, -1, T{}. */
static bool trivial_body(const struct lexed *l, const struct func_range *f)
{
        char body[256], *tok, *save = NULL;

        if (!body_text(l, f, body, sizeof(body)))
                return false;
        if (!body[0] || strcmp(body, "return") == 0)
                return true;
        if (strncmp(body, "return ", 7) != 0)
                return false;
        for (tok = strtok_r(body + 7, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
                size_t n;

                tok += strspn(tok, " ");
                n = strcspn(tok, " ");
                if (!(n == 3 && strncmp(tok, "nil", 3) == 0) && !(n == 1 && tok[0] == '0') &&
                    !(n == 2 && strncmp(tok, "\"\"", 2) == 0) &&
                    !(n == 5 && strncmp(tok, "false", 5) == 0) &&
                    !(n == 4 && strncmp(tok, "NULL", 4) == 0) &&
                    !(n == 2 && strncmp(tok, "-1", 2) == 0) &&
                    !(n >= 2 && strncmp(tok + n - 2, "{}", 2) == 0))
                        return false;
        }
        return true;
}

static void deleted_at(struct file_check *c, const char *file, unsigned line, const char *fn)
{
        const struct func_range *of = NULL, *nf;
        char base[128] = "";
        size_t removed = 0, added = 0;

        if (!file || strcmp(file, c->file) != 0)
                return;
        if (line)
                of = lex_func_at(c->old, line);
        if (!of && fn) {
                const char *dot = strrchr(fn, '.');

                snprintf(base, sizeof(base), "%s", dot ? dot + 1 : fn);
                of = lex_func_named(c->old, base);
        }
        if (!of)
                return;
        nf = lex_func_named(c->new, of->name);
        if (!nf) {
                hit_add(c->h, "delete_failing_code", true, 0, c->file, of->start,
                        "the failing function %s was removed", of->name);
                return;
        }
        if (trivial_body(c->new, nf) && !trivial_body(c->old, of)) {
                hit_add(c->h, "delete_failing_code", true, 0, c->file, nf->start,
                        "the failing function %s was reduced to a bare return", of->name);
                return;
        }
        for (size_t i = 0; i < c->n_lines; i++) {
                const heal_diff_line *v = &c->lines[i];

                removed += v->op == '-' && v->old_line >= of->start && v->old_line <= of->end;
                added += v->op == '+' && v->new_line >= nf->start && v->new_line <= nf->end;
        }
        if (removed > 0 && added == 0)
                hit_add(c->h, "delete_failing_code", false, PENALTY_DELETION, c->file, nf->start,
                        "%zu line%s deleted from the failing function %s, none added", removed,
                        removed == 1 ? "" : "s", of->name);
}

void check_deleted_code(struct file_check *c)
{
        const heal_analysis *a = c->o ? c->o->baseline : NULL;

        for (size_t i = 0; a && c->old->n_lines && i < a->n_diags; i++) {
                const heal_diag *d = &a->diags[i];
                const heal_frame *f = NULL;

                if (d->severity != HEAL_SEVERITY_ERROR)
                        continue;
                for (size_t k = 0; k < d->n_frames && !f; k++)
                        if (d->frames[k].in_tree)
                                f = &d->frames[k];
                deleted_at(c, d->file, d->line, d->function);
                if (f &&
                    !(d->file && f->file && strcmp(d->file, f->file) == 0 && d->line == f->line))
                        deleted_at(c, f->file, f->line, f->function);
                break; /* the first error diagnostic only */
        }
}

/* A set of literals: open addressing on XXH3-64, at most STRINGS_MAX (more are ignored). */
#define STRINGS_MAX (1u << 16)

struct strings {
        char **slot;
        size_t cap, n;
        int error;
};

static bool strings_has(const struct strings *s, const char *x, size_t len)
{
        for (size_t i = s->cap ? XXH3_64bits(x, len) & (s->cap - 1) : 0; s->cap && s->slot[i];
             i = (i + 1) & (s->cap - 1))
                if (strlen(s->slot[i]) == len && memcmp(s->slot[i], x, len) == 0)
                        return true;
        return false;
}

static void strings_put(char **slot, size_t cap, char *x)
{
        size_t i = XXH3_64bits(x, strlen(x)) & (cap - 1);

        while (slot[i])
                i = (i + 1) & (cap - 1);
        slot[i] = x;
}

static int strings_grow(struct strings *s)
{
        size_t cap = s->cap ? 2 * s->cap : 64;
        char **slot = calloc(cap, sizeof(*slot));

        if (!slot)
                return -ENOMEM;
        for (size_t i = 0; i < s->cap; i++)
                if (s->slot[i])
                        strings_put(slot, cap, s->slot[i]);
        free(s->slot);
        s->slot = slot;
        s->cap = cap;
        return 0;
}

static void strings_add(const char *x, size_t len, unsigned line, void *userdata)
{
        struct strings *s = userdata;
        char *copy;

        (void)line;
        if (s->error || s->n >= STRINGS_MAX || strings_has(s, x, len))
                return;
        if (2 * (s->n + 1) > s->cap && strings_grow(s) < 0) {
                s->error = -ENOMEM;
                return;
        }
        if (!(copy = strndup(x, len))) {
                s->error = -ENOMEM;
                return;
        }
        strings_put(s->slot, s->cap, copy);
        s->n++;
}

static void strings_release(struct strings *s)
{
        for (size_t i = 0; i < s->cap; i++)
                free(s->slot[i]);
        free(s->slot);
}

static bool is_test_file(const char *name)
{
        const char *base = strrchr(name, '/') ? strrchr(name, '/') + 1 : name;

        return fnmatch("*_test.go", base, 0) == 0 || fnmatch("*_test.c", base, 0) == 0 ||
               fnmatch("test_*.c", base, 0) == 0;
}

/* The literals of one test file, added to @s; a file that cannot be read is passed over. */
static void test_file_literals(const char *tree, const char *rel, enum lang lang, struct strings *s)
{
        FILE *f = tree_open(tree, rel, TEST_FILE_MAX);
        char *text = f ? calloc(TEST_FILE_MAX + 1, 1) : NULL;
        struct lexed l;

        if (f && !text)
                s->error = -ENOMEM;
        if (text && fread(text, 1, TEST_FILE_MAX, f) > 0) {
                if (lex_file(&l, text, lang) < 0) {
                        s->error = -ENOMEM;
                } else {
                        lex_literals(&l, 1, l.n_lines, strings_add, s);
                        lex_release(&l);
                }
        }
        free(text);
        if (f)
                fclose(f);
}

/* The literals of the tests in @file's directory. */
static void tests_literals(const char *tree, const char *file, enum lang lang, struct strings *s)
{
        const char *slash = strrchr(file, '/');
        int dir_len = slash ? (int)(slash - file) : 0;
        char path[4096], rel[4096];
        struct dirent **names;
        int n;

        if (str_printf(path, sizeof(path), "%s/%.*s", tree, dir_len, file) < 0 ||
            (n = scandir(path, &names, NULL, alphasort)) < 0)
                return;
        for (int i = 0, read = 0; i < n; i++) {
                if (is_test_file(names[i]->d_name) && read++ < TEST_FILES_MAX &&
                    str_printf(rel, sizeof(rel), "%.*s%s%s", dir_len, file, dir_len ? "/" : "",
                               names[i]->d_name) == 0)
                        test_file_literals(tree, rel, lang, s);
                free(names[i]);
        }
        free(names);
}

struct literal_ctx {
        struct file_check *c;
        const struct strings *tests, *old;
        struct strings seen;
};

static void literal_added(const char *x, size_t len, unsigned line, void *userdata)
{
        struct literal_ctx *k = userdata;
        size_t shown;

        if (!strings_has(k->tests, x, len) || strings_has(k->old, x, len) ||
            strings_has(&k->seen, x, len))
                return;
        strings_add(x, len, line, &k->seen);
        shown = MIN(len, 80);
        for (size_t i = 0; i < shown; i++) /* the detail is one line */
                if (x[i] == '\n' || x[i] == '\r')
                        shown = i;
        hit_add(k->c->h, "test_literals", false, PENALTY_LITERAL, k->c->file, line,
                "literal '%.*s%s' of the tests next to it written into non-test code", (int)shown,
                x, shown < len ? "..." : "");
}

void check_test_literals(struct file_check *c)
{
        struct strings tests = { 0 }, old = { 0 };
        struct literal_ctx k = { c, &tests, &old, { 0 } };

        if (!c->o || !c->o->tree || is_test_file(c->file) || !rule_enabled(c->h, "test_literals"))
                return;
        tests_literals(c->o->tree, c->file, c->new->lang, &tests);
        if (tests.n)
                lex_literals(c->old, 1, c->old->n_lines, strings_add, &old);
        for (size_t i = 0; tests.n && i < c->n_lines && !tests.error && !old.error; i++)
                if (c->lines[i].op == '+')
                        lex_literals(c->new, c->lines[i].new_line, c->lines[i].new_line,
                                     literal_added, &k);
        if (tests.error || old.error || k.seen.error)
                c->h->error = -ENOMEM;
        strings_release(&tests);
        strings_release(&old);
        strings_release(&k.seen);
}
