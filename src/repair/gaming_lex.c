/* SPDX-License-Identifier: MIT */
/*
 * A lexer just deep enough for the gaming rules: each byte of a Go or C file is code, part of a
 * literal ("...", '...', Go `...`) or part of a comment (// and block comments), so that
 * "t.Skip" in a string or a comment is not a call; the functions defined at column 0 with the
 * lines of their bodies (braces matched in code only); the literals a line holds.
 * See: The Go Programming Language Specification ("Comments", "String literals"); C11 6.4.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "repair/gaming-internal.h"
#include "repair/repair-internal.h"

static bool has_suffix(const char *s, const char *suffix)
{
        size_t n = strlen(s), k = strlen(suffix);

        return n >= k && strcmp(s + n - k, suffix) == 0;
}

enum lang lang_of(const char *file, const char *hint)
{
        if (has_suffix(file, ".go"))
                return LANG_GO;
        if (has_suffix(file, ".c") || has_suffix(file, ".h"))
                return LANG_C;
        if (hint && strcmp(hint, "go") == 0)
                return LANG_GO;
        if (hint && strcmp(hint, "c") == 0)
                return LANG_C;
        return LANG_NONE;
}

enum { S_CODE, S_LINE, S_BLOCK, S_STR, S_CHAR, S_RAW };

/* The class of each byte: one pass, a state per construct. */
static void classify(struct lexed *l)
{
        const char *t = l->text;
        int s = S_CODE;

        for (size_t i = 0; i < l->len; i++) {
                char c = t[i], next = i + 1 < l->len ? t[i + 1] : '\0';

                switch (s) {
                case S_CODE:
                        if (c == '/' && (next == '/' || next == '*'))
                                s = next == '/' ? S_LINE : S_BLOCK, l->cls[i++] = LEX_COMMENT;
                        else if (c == '"' || c == '\'' || (c == '`' && l->lang == LANG_GO))
                                s = c == '"' ? S_STR : c == '\'' ? S_CHAR : S_RAW;
                        l->cls[i] = s == S_CODE ? LEX_CODE : s >= S_STR ? LEX_STRING : LEX_COMMENT;
                        break;
                case S_LINE:
                        s = c == '\n' ? S_CODE : S_LINE;
                        l->cls[i] = s == S_CODE ? LEX_CODE : LEX_COMMENT;
                        break;
                case S_BLOCK:
                        l->cls[i] = LEX_COMMENT;
                        if (c == '*' && next == '/')
                                l->cls[++i] = LEX_COMMENT, s = S_CODE;
                        break;
                case S_STR:
                case S_CHAR:
                        l->cls[i] = c == '\n' ? LEX_CODE : LEX_STRING; /* unterminated: ends */
                        if (c == '\\' && next && next != '\n')
                                l->cls[++i] = LEX_STRING;
                        else if (c == '\n' || c == (s == S_STR ? '"' : '\''))
                                s = S_CODE;
                        break;
                default: /* S_RAW */
                        l->cls[i] = LEX_STRING;
                        s = c == '`' ? S_CODE : S_RAW;
                }
        }
}

/* A brace or semicolon of code at the top level: '{' from depth 0, '}' back to 0, ';' at 0. */
struct top_event {
        size_t pos;
        unsigned line;
        char c;
};

/* Every top-level event, in order: one pass over the code bytes (a '}' too many is ignored). */
static int top_events(const struct lexed *l, struct top_event **ret, size_t *ret_n)
{
        struct top_event *v = NULL;
        size_t n = 0, cap = 0, depth = 0;
        unsigned line = 1;

        for (size_t i = 0; i < l->len; i++) {
                char ch = l->text[i];
                bool top;

                line += ch == '\n';
                if (l->cls[i] != LEX_CODE || (ch != '{' && ch != '}' && ch != ';'))
                        continue;
                top = ch == '{' ? depth++ == 0 : ch == '}' ? depth && --depth == 0 : depth == 0;
                if (!top)
                        continue;
                if (n == cap) {
                        struct top_event *grown =
                                realloc(v, (cap = cap ? 2 * cap : 64) * sizeof(*v));

                        if (!grown) {
                                free(v);
                                return -ENOMEM;
                        }
                        v = grown;
                }
                v[n++] = (struct top_event){ i, line, ch };
        }
        *ret = v;
        *ret_n = n;
        return 0;
}

/* A definition line (source_definition() at column 0) whose next top-level event opens a body
 * is a function up to the event that closes it; linear in the file. */
static int find_funcs(struct lexed *l)
{
        const char *ext = l->lang == LANG_GO ? "x.go" : "x.c";
        char buf[LINE_MAX_PARSED], name[128];
        struct top_event *ev;
        size_t n_ev, j = 0;

        if (top_events(l, &ev, &n_ev) < 0)
                return -ENOMEM;
        for (unsigned n = 1; n <= l->n_lines; n++) {
                struct func_range *grown;

                while (j < n_ev && ev[j].pos < l->starts[n - 1])
                        j++;
                lex_view(l, n, LEX_CODE, buf, sizeof(buf));
                source_definition(buf, ext, name, sizeof(name));
                if (!name[0] || buf[0] == '#' || j + 1 >= n_ev || ev[j].c != '{' ||
                    ev[j + 1].c != '}')
                        continue;
                grown = realloc(l->funcs, (l->n_funcs + 1) * sizeof(*grown));
                if (!grown) {
                        free(ev);
                        return -ENOMEM;
                }
                l->funcs = grown;
                grown[l->n_funcs] = (struct func_range){ .start = n, .end = ev[j + 1].line };
                snprintf(grown[l->n_funcs++].name, sizeof(grown->name), "%s", name);
                n = ev[j + 1].line;
        }
        free(ev);
        return 0;
}

int lex_file(struct lexed *l, const char *text, enum lang lang)
{
        size_t len = text ? strlen(text) : 0, n = 1;

        *l = (struct lexed){ .text = text ? text : "", .len = len, .lang = lang };
        for (size_t i = 0; i < len; i++)
                n += text[i] == '\n' && i + 1 < len;
        l->n_lines = len ? (unsigned)n : 0;
        l->cls = calloc(len + 1, 1);
        l->starts = calloc(n + 1, sizeof(*l->starts));
        if (!l->cls || !l->starts) {
                lex_release(l);
                return -ENOMEM;
        }
        for (size_t i = 0, k = 1; i + 1 < len; i++)
                if (text[i] == '\n')
                        l->starts[k++] = i + 1;
        l->starts[l->n_lines] = len;
        if (lang == LANG_NONE) {
                memset(l->cls, LEX_CODE, len);
                return 0;
        }
        classify(l);
        if (find_funcs(l) < 0) {
                lex_release(l);
                return -ENOMEM;
        }
        return 0;
}

void lex_release(struct lexed *l)
{
        free(l->cls);
        free(l->starts);
        free(l->funcs);
        *l = (struct lexed){ 0 };
}

const char *lex_view(const struct lexed *l, unsigned n, unsigned mask, char *buf, size_t len)
{
        size_t from, to, k = 0;

        buf[0] = '\0';
        if (n == 0 || n > l->n_lines || len == 0)
                return buf;
        from = l->starts[n - 1];
        to = l->starts[n];
        for (size_t i = from; i < to && l->text[i] != '\n' && k + 1 < len; i++)
                buf[k++] = (l->cls[i] & mask) ? l->text[i] : ' ';
        buf[k] = '\0';
        return buf;
}

const struct func_range *lex_func_at(const struct lexed *l, unsigned line)
{
        size_t lo = 0, hi = l->n_funcs; /* in line order and disjoint: binary search */

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;

                if (l->funcs[mid].end < line)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return lo < l->n_funcs && l->funcs[lo].start <= line ? &l->funcs[lo] : NULL;
}

const struct func_range *lex_func_named(const struct lexed *l, const char *name)
{
        for (size_t i = 0; i < l->n_funcs; i++)
                if (strcmp(l->funcs[i].name, name) == 0)
                        return &l->funcs[i];
        return NULL;
}

static bool ident_char(char c)
{
        return isalnum((unsigned char)c) || c == '_';
}

/* A number token at @s (in code): its length; 0 and 1 in any spelling are trivial. */
static size_t number_at(const char *s, size_t max, bool *trivial)
{
        size_t k = 0, o = 0;
        char tmp[64];
        double v;

        while (k < max && (ident_char(s[k]) || s[k] == '.'))
                k++;
        for (size_t i = 0; i < k && o + 1 < sizeof(tmp); i++)
                if (s[i] != '_')
                        tmp[o++] = s[i];
        tmp[o] = '\0';
        v = strtod(tmp, NULL);
        *trivial = v == 0.0 || v == 1.0;
        return k;
}

void lex_literals(const struct lexed *l, unsigned from, unsigned to, lex_literal_fn fn,
                  void *userdata)
{
        unsigned line = from;

        if (from == 0 || from > l->n_lines)
                return;
        to = MIN(to, l->n_lines);
        for (size_t i = l->starts[from - 1], end = l->starts[to]; i < end;) {
                size_t k = i + 1;

                while (line < to && l->starts[line] <= i)
                        line++;
                if (l->cls[i] == LEX_STRING) { /* the whole literal, as classify() found it */
                        char q = l->text[i];

                        while (k < l->len && l->cls[k] == LEX_STRING &&
                               !(l->text[k - 1] == q && k - 1 > i && l->text[k - 2] != '\\'))
                                k++;
                        if ((q == '"' || q == '`') && k - i >= 5 && l->text[k - 1] == q)
                                fn(l->text + i + 1, k - i - 2, line, userdata);
                        i = k;
                } else if (l->cls[i] == LEX_CODE && isdigit((unsigned char)l->text[i]) &&
                           (i == 0 || !ident_char(l->text[i - 1]))) {
                        bool trivial;

                        k = number_at(l->text + i, end - i, &trivial);
                        if (!trivial)
                                fn(l->text + i, k, line, userdata);
                        i += k;
                } else {
                        i++;
                }
        }
}

const char *find_call(const char *s, const char *callee, char *recv, size_t recv_len)
{
        size_t n = strlen(callee);

        for (const char *p = s; (p = strstr(p, callee)); p++) {
                const char *after = p + n, *r = p;

                if (callee[0] == '.') {
                        while (r > s && ident_char(r[-1]))
                                r--;
                        if (r == p)
                                continue;
                } else if (p > s && (ident_char(p[-1]) || p[-1] == '.')) {
                        continue;
                }
                while (*after == ' ' || *after == '\t')
                        after++;
                if (*after != '(' || (n && ident_char(callee[n - 1]) && ident_char(p[n])))
                        continue;
                if (recv)
                        snprintf(recv, recv_len, "%.*s", (int)(p - r), r);
                return after;
        }
        return NULL;
}
