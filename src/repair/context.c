/* SPDX-License-Identifier: MIT */
/*
 * Source windows for a failure (see include/heal/prompt.h): candidates from the diagnostics,
 * merged per file, ordered, and cut to the token budget. A window is a whole function when the
 * function is short enough to read whole; the function of a Go or C place runs from the nearest
 * definition above it to the next "}" at column 0.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "heal/buf.h"
#include "heal/prompt.h"

#include "core/util.h"
#include "repair/repair-internal.h"

#define SOURCE_MAX     (4u << 20)
#define DIAGS_SHOWN    8
#define FRAMES_SHOWN   3
#define FUNCTION_WHOLE 60 /* longer functions are shown around the place only */

struct srcfile {
        char *data;
        size_t *off; /* start of line i (0-based); off[n] = end */
        size_t n;
};

struct cand {
        char file[512];
        unsigned first, last, priority;
        unsigned anchor; /* the place itself: what a window too big for the budget keeps */
        char why[256];
};

struct cands {
        struct cand *v;
        size_t n;
};

static bool ends_with(const char *s, const char *suffix)
{
        size_t n = strlen(s), m = strlen(suffix);

        return n >= m && strcmp(s + n - m, suffix) == 0;
}

static void src_release(struct srcfile *f)
{
        free(f->data);
        free(f->off);
        memset(f, 0, sizeof(*f));
}

static bool src_load(struct srcfile *f, const char *tree, const char *rel)
{
        FILE *fp = tree_open(tree, rel, SOURCE_MAX);
        heal_buf b = HEAL_BUF_INIT(SOURCE_MAX);
        char chunk[65536];
        size_t n, len, k = 0;

        memset(f, 0, sizeof(*f));
        if (!fp)
                return false;
        while ((n = fread(chunk, 1, sizeof(chunk), fp)) > 0)
                heal_buf_append(&b, chunk, n);
        fclose(fp);
        f->data = heal_buf_detach(&b, &len);
        heal_buf_release(&b);
        if (!f->data)
                return false;
        for (size_t i = 0; i < len; i++)
                f->n += f->data[i] == '\n';
        f->n += len > 0 && f->data[len - 1] != '\n';
        f->off = malloc((f->n + 1) * sizeof(*f->off));
        if (!f->off) {
                src_release(f);
                return false;
        }
        f->off[0] = 0;
        for (size_t i = 0; i < len && k < f->n; i++)
                if (f->data[i] == '\n')
                        f->off[++k] = i + 1;
        f->off[f->n] = len;
        return true;
}

/* Line @i (1-based) copied into @buf. */
static const char *src_line(const struct srcfile *f, unsigned i, char *buf, size_t len)
{
        size_t a = f->off[i - 1], b = f->off[i];

        while (b > a && (f->data[b - 1] == '\n' || f->data[b - 1] == '\r'))
                b--;
        snprintf(buf, len, "%.*s", (int)(b - a), f->data + a);
        return buf;
}

/* The Go or C function around @line: from its definition to the next "}" at column 0. */
static bool func_range(const struct srcfile *f, const char *file, unsigned line, unsigned *start,
                       unsigned *end)
{
        char buf[LINE_MAX_PARSED], name[256];
        unsigned s = 0;

        if (ends_with(file, ".py") || line == 0 || line > f->n)
                return false;
        for (unsigned i = 1; i <= line; i++) {
                source_definition(src_line(f, i, buf, sizeof(buf)), file, name, sizeof(name));
                if (name[0])
                        s = i;
                else if (buf[0] == '}' && i < line)
                        s = 0;
        }
        for (unsigned i = line; s && i <= f->n; i++)
                if (src_line(f, i, buf, sizeof(buf))[0] == '}') {
                        *start = s;
                        *end = i;
                        return true;
                }
        return false;
}

static void add(struct cands *c, const char *file, unsigned first, unsigned last, unsigned anchor,
                unsigned priority, const char *why, int *error)
{
        struct cand *v;

        if (*error || c->n >= 256)
                return;
        v = realloc(c->v, (c->n + 1) * sizeof(*v));
        if (!v) {
                *error = -ENOMEM;
                return;
        }
        c->v = v;
        v = &c->v[c->n++];
        snprintf(v->file, sizeof(v->file), "%s", file);
        v->first = first;
        v->last = last;
        v->priority = priority;
        v->anchor = anchor;
        snprintf(v->why, sizeof(v->why), "%s", why);
}

/* The place @line of @file: its function when short, else lines around it. */
static void add_place(struct cands *c, const heal_context_opts *o, const char *file, unsigned line,
                      unsigned priority, unsigned around, const char *why, int *error)
{
        struct srcfile f;
        unsigned s, e;

        if (!src_load(&f, o->tree, file))
                return;
        if (line > f.n)
                line = (unsigned)f.n;
        if (func_range(&f, file, line, &s, &e) && e - s < FUNCTION_WHOLE)
                add(c, file, s, e, line, priority, why, error);
        else if (line > 0)
                add(c, file, line > around ? line - around : 1,
                    line + around > f.n ? (unsigned)f.n : line + around, line, priority, why,
                    error);
        src_release(&f);
}

/* "func TestX(" in the *_test.go files of @dir (sorted, for the same answer every time). */
static void add_test(struct cands *c, const heal_context_opts *o, const char *dir, const char *test,
                     unsigned priority, int *error)
{
        char path[PATH_MAX], want[300], why[300], buf[LINE_MAX_PARSED];
        struct dirent **names;
        int n;
        bool found = false;
        int len = (int)strcspn(test, "/"); /* once: gcc 12 with ASan saw a null "%.*s" */

        snprintf(want, sizeof(want), "func %.*s(", len, test);
        snprintf(why, sizeof(why), "test %.*s", len, test);
        if (str_printf(path, sizeof(path), "%s/%s", o->tree, dir) < 0 ||
            (n = scandir(path, &names, NULL, alphasort)) < 0)
                return;
        for (int i = 0; i < n; i++) {
                char rel[PATH_MAX];
                struct srcfile f;

                if (!found && ends_with(names[i]->d_name, "_test.go") &&
                    str_printf(rel, sizeof(rel), "%s%s%s", dir, dir[0] ? "/" : "",
                               names[i]->d_name) == 0 &&
                    src_load(&f, o->tree, rel)) {
                        for (unsigned k = 1; k <= f.n && !found; k++) {
                                unsigned s, e;

                                if (starts_with(src_line(&f, k, buf, sizeof(buf)), want) &&
                                    func_range(&f, rel, k, &s, &e)) {
                                        add(c, rel, s, MIN(e, s + 3 * FUNCTION_WHOLE), k, priority,
                                            why, error);
                                        found = true;
                                }
                        }
                        src_release(&f);
                }
                free(names[i]);
        }
        free(names);
}

static void collect(struct cands *c, const heal_analysis *a, const heal_context_opts *o, int *error)
{
        size_t shown = 0;

        for (size_t i = 0; i < a->n_diags && shown < DIAGS_SHOWN; i++) {
                const heal_diag *d = &a->diags[i];
                char why[256], dir[512] = "";
                size_t frames = 0;

                if (d->severity != HEAL_SEVERITY_ERROR)
                        continue;
                snprintf(why, sizeof(why), "%s at line %u", heal_diag_kind_name(d->kind), d->line);
                if (d->file && d->line)
                        add_place(c, o, d->file, d->line, shown ? 1 : 0, o->lines_around, why,
                                  error);
                for (size_t k = 0; k < d->n_frames && frames < FRAMES_SHOWN; k++) {
                        const heal_frame *f = &d->frames[k];

                        if (!f->in_tree || !f->file || !f->line ||
                            (d->file && strcmp(f->file, d->file) == 0 && f->line == d->line))
                                continue;
                        snprintf(why, sizeof(why), "frame %s", f->function);
                        add_place(c, o, f->file, f->line, 2, 4, why, error);
                        frames++;
                }
                if (d->test) {
                        if (d->file && strrchr(d->file, '/'))
                                snprintf(dir, sizeof(dir), "%.*s",
                                         (int)(strrchr(d->file, '/') - d->file), d->file);
                        add_test(c, o, dir, d->test, 1, error);
                }
                shown++;
        }
}

static heal_lsp *server_for(const heal_context_opts *o, const char *file)
{
        for (size_t k = 0; o->servers && o->servers[k]; k++) {
                const char *lang = heal_lsp_language(o->servers[k]);

                if (strcmp(lang, "go") == 0 ? ends_with(file, ".go")
                                            : ends_with(file, ".c") || ends_with(file, ".h"))
                        return o->servers[k];
        }
        return NULL;
}

/* The 1-based column of @word as a whole word in @text, or 0. */
static unsigned word_column(const char *text, const char *word, size_t n)
{
        for (const char *p = text; (p = strstr(p, word)); p++)
                if ((p == text || !(isalnum((unsigned char)p[-1]) || p[-1] == '_')) &&
                    !(isalnum((unsigned char)p[n]) || p[n] == '_'))
                        return (unsigned)(p - text) + 1;
        return 0;
}

/*
 * Where the names an error mentions are declared: for each identifier of the message that
 * also stands on the error's line (BackoffMillis in "c.BackoffMillis * time.Millisecond"),
 * the language server's definition, when it is in the tree and away from the place: a field
 * of a struct in another file, the function a call went to.
 */
static void add_definitions(struct cands *c, const heal_analysis *a, const heal_context_opts *o,
                            int *error)
{
        size_t diags = 0;

        for (size_t i = 0; i < a->n_diags && diags < 3 && !*error; i++) {
                const heal_diag *d = &a->diags[i];
                heal_lsp *server;
                struct srcfile f;
                char line[LINE_MAX_PARSED];
                unsigned asked = 0;

                if (d->severity != HEAL_SEVERITY_ERROR || !d->file || !d->line ||
                    !(server = server_for(o, d->file)))
                        continue;
                diags++;
                if (!src_load(&f, o->tree, d->file) || d->line > f.n) {
                        src_release(&f);
                        continue;
                }
                src_line(&f, d->line, line, sizeof(line));
                src_release(&f);
                for (const char *m = d->message; *m && asked < 3;) {
                        char word[128], file[512], why[300];
                        size_t n = 0;
                        unsigned col, dline;

                        if (!(isalpha((unsigned char)*m) || *m == '_')) {
                                m++;
                                continue;
                        }
                        while (isalnum((unsigned char)m[n]) || m[n] == '_')
                                n++;
                        snprintf(word, sizeof(word), "%.*s", (int)MIN(n, sizeof(word) - 1), m);
                        m += n;
                        if (n < 3 || !(col = word_column(line, word, strlen(word))))
                                continue;
                        asked++;
                        if (lsp_definition(server, d->file, d->line, col, file, sizeof(file),
                                           &dline) < 0 ||
                            (strcmp(file, d->file) == 0 && dline + 8 >= d->line &&
                             dline <= d->line + 8))
                                continue;
                        snprintf(why, sizeof(why), "definition of %s", word);
                        add_place(c, o, file, dline, 1, 4, why, error);
                }
        }
}

static int by_file_line(const void *x, const void *y)
{
        const struct cand *a = x, *b = y;
        int r = strcmp(a->file, b->file);

        return r ? r : (a->first > b->first) - (a->first < b->first);
}

static int by_priority(const void *x, const void *y)
{
        const struct cand *a = x, *b = y;

        if (a->priority != b->priority)
                return (a->priority > b->priority) - (a->priority < b->priority);
        return by_file_line(x, y);
}

/* Overlapping or adjacent windows of a file become one (the highest priority, both reasons). */
static void merge(struct cands *c)
{
        size_t out = 0;

        if (c->n > 1)
                qsort(c->v, c->n, sizeof(*c->v), by_file_line);
        for (size_t i = 0; i < c->n; i++) {
                struct cand *p = out ? &c->v[out - 1] : NULL;

                if (p && strcmp(p->file, c->v[i].file) == 0 && c->v[i].first <= p->last + 2) {
                        p->last = MAX(p->last, c->v[i].last);
                        if (c->v[i].priority < p->priority)
                                p->anchor = c->v[i].anchor;
                        p->priority = MIN(p->priority, c->v[i].priority);
                        if (!strstr(p->why, c->v[i].why)) {
                                size_t l = strlen(p->why), k = strlen(c->v[i].why);

                                if (l + 2 + k < sizeof(p->why)) { /* else the first reasons do */
                                        memcpy(p->why + l, "; ", 2);
                                        memcpy(p->why + l + 2, c->v[i].why, k + 1);
                                }
                        }
                        continue;
                }
                c->v[out++] = c->v[i];
        }
        c->n = out;
        if (c->n > 1)
                qsort(c->v, c->n, sizeof(*c->v), by_priority);
}

static int materialize(heal_window *w, const struct cand *cd, const char *tree)
{
        struct srcfile f;

        memset(w, 0, sizeof(*w));
        if (!src_load(&f, tree, cd->file))
                return 1;
        w->first = cd->first;
        w->last = MIN(cd->last, (unsigned)f.n);
        w->priority = cd->priority;
        w->file = strdup(cd->file);
        w->why = strdup(cd->why);
        w->text = w->first <= w->last ? strndup(f.data + f.off[w->first - 1],
                                                f.off[w->last] - f.off[w->first - 1])
                                      : strdup("");
        src_release(&f);
        return w->file && w->why && w->text ? 0 : -ENOMEM;
}

/* Outlines of the files of the first errors, while the budget has room. */
static int add_outlines(heal_context *ctx, const heal_analysis *a, const heal_context_opts *o)
{
        for (size_t i = 0; i < a->n_diags && ctx->n_outlines < 2; i++) {
                const heal_diag *d = &a->diags[i];
                heal_outline *v;
                const char *source;
                char *text;
                size_t t;
                bool seen = false;

                if (d->severity != HEAL_SEVERITY_ERROR || !d->file ||
                    ends_with(d->file, "_test.go"))
                        continue;
                for (size_t k = 0; k < ctx->n_outlines; k++)
                        seen |= strcmp(ctx->outlines[k].file, d->file) == 0;
                source = NULL;
                for (size_t k = 0; !seen && o->servers && o->servers[k] && !source; k++) {
                        const char *lang = heal_lsp_language(o->servers[k]);
                        bool match = strcmp(lang, "go") == 0
                                             ? ends_with(d->file, ".go")
                                             : ends_with(d->file, ".c") || ends_with(d->file, ".h");

                        if (match && lsp_outline(o->servers[k], d->file, &text) == 0)
                                source = strcmp(lang, "go") == 0 ? "gopls" : "clangd";
                }
                if (!seen && !source && skeleton_outline(o->tree, d->file, &text) == 0)
                        source = "ctags";
                if (seen || !source)
                        continue;
                t = heal_token_estimate(strlen(text));
                if (ctx->tokens + t > o->token_budget) {
                        free(text);
                        continue;
                }
                v = realloc(ctx->outlines, (ctx->n_outlines + 1) * sizeof(*v));
                if (!v || !(v[ctx->n_outlines].file = strdup(d->file))) {
                        free(text);
                        if (v)
                                ctx->outlines = v;
                        return -ENOMEM;
                }
                ctx->outlines = v;
                v[ctx->n_outlines].text = text;
                v[ctx->n_outlines].source = source;
                ctx->n_outlines++;
                ctx->tokens += t;
        }
        return 0;
}

void heal_context_release(heal_context *c)
{
        if (!c)
                return;
        for (size_t i = 0; i < c->n_outlines; i++) {
                free(c->outlines[i].file);
                free(c->outlines[i].text);
        }
        free(c->outlines);
        for (size_t i = 0; i < c->n_windows; i++) {
                free(c->windows[i].file);
                free(c->windows[i].text);
                free(c->windows[i].why);
        }
        free(c->windows);
        memset(c, 0, sizeof(*c));
}

size_t heal_token_estimate(size_t len)
{
        return (len + 3) / 4;
}

int heal_context_build(heal_context *ret, const heal_analysis *a, const heal_context_opts *opts,
                       heal_error *err)
{
        heal_context_opts o = opts ? *opts : (heal_context_opts){ 0 };
        struct cands c = { 0 };
        heal_context ctx = { 0 };
        int error = 0;

        if (!ret || !a || !o.tree || !o.tree[0])
                return heal_error_set(err, -EINVAL, "invalid argument");
        if (!o.token_budget)
                o.token_budget = 6000;
        if (!o.lines_around)
                o.lines_around = 8;
        collect(&c, a, &o, &error);
        if (!error)
                add_definitions(&c, a, &o, &error);
        if (!error)
                merge(&c);
        ctx.windows = calloc(c.n ? c.n : 1, sizeof(*ctx.windows));
        if (!ctx.windows)
                error = -ENOMEM;
        for (size_t i = 0; !error && i < c.n; i++) {
                heal_window *w = &ctx.windows[ctx.n_windows];
                size_t t;
                int r;

                r = materialize(w, &c.v[i], o.tree);
                if (r > 0)
                        continue; /* the file went away */
                if (r == 0 && i == 0 && heal_token_estimate(strlen(w->text)) > o.token_budget) {
                        /* The most needed window alone over the budget: its place and the
                         * lines around it. */
                        free(w->file), free(w->text), free(w->why);
                        c.v[i].first =
                                c.v[i].anchor > o.lines_around ? c.v[i].anchor - o.lines_around : 1;
                        c.v[i].last = c.v[i].anchor + o.lines_around;
                        r = materialize(w, &c.v[i], o.tree);
                }
                if (r > 0)
                        continue;
                if (r < 0) {
                        error = r;
                        break;
                }
                t = heal_token_estimate(strlen(w->text));
                if (ctx.tokens + t > o.token_budget) {
                        free(w->file), free(w->text), free(w->why);
                        ctx.dropped++;
                        continue;
                }
                ctx.tokens += t;
                ctx.n_windows++;
        }
        free(c.v);
        if (!error)
                error = add_outlines(&ctx, a, &o);
        if (error) {
                heal_context_release(&ctx);
                return heal_error_set(err, -ENOMEM, "out of memory");
        }
        *ret = ctx;
        return 0;
}
