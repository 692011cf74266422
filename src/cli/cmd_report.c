/* SPDX-License-Identifier: MIT */
/* heal report TRACE: a repair search's trace (heal --trace) drawn as a tree, by Graphviz. */
#include <errno.h>
#include <jansson.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "heal/buf.h"

#include "cli/cli.h"

static const char report_usage[] =
        "usage: heal report [-o FILE] [--format html|svg|dot] TRACE\n"
        "\n"
        "Draw the search tree of a repair run from its trace (heal --trace TRACE -- CMD): one box\n"
        "per candidate with its outcome, reward, the gaming rules that fired and its first new\n"
        "error, edges from each candidate to the ones made from its failure. The page opens in\n"
        "any browser; the SVG and DOT are for other tools. Graphviz's dot draws it (Debian's\n"
        "graphviz package); --format dot needs nothing.\n"
        "\n"
        "options:\n"
        "  -o, --output FILE   where to write (default: TRACE with .html, .svg or .dot)\n"
        "  --format FORMAT     html (default: the SVG in a page with a table of candidates),\n"
        "                      svg or dot\n"
        "\n"
        "exit status: 0 written, 1 the trace could not be read or drawn, 2 usage error.\n";

#define NODES_MAX 4096

struct rnode {
        json_t *j;
        int id, parent;
};

static const char *str(json_t *o, const char *key)
{
        const char *s = json_string_value(json_object_get(o, key));

        return s ? s : "";
}

static const char *color_of(const char *outcome)
{
        static const char *const map[][2] = {
                { "passes", "#b7e4c7" },         { "new_failure", "#ffe8a3" },
                { "build_fails", "#f6c6a8" },    { "same_failure", "#e0e0e0" },
                { "does_not_apply", "#f4f4f4" }, { "rejected", "#f4a6a6" },
                { "pruned", "#d0d7e6" },
        };

        for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
                if (!strcmp(outcome, map[i][0]))
                        return map[i][1];
        return "#ffffff";
}

/* @s as a DOT string's content: quotes and backslashes escaped, cut at @max bytes, one line. */
static void dot_text(heal_buf *b, const char *s, size_t max)
{
        size_t n = strcspn(s, "\n");

        for (size_t i = 0; i < n && i < max; i++) {
                if (s[i] == '"' || s[i] == '\\')
                        heal_buf_puts(b, "\\");
                heal_buf_append(b, (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? "?" : &s[i], 1);
        }
        if (n > max)
                heal_buf_puts(b, "...");
}

static void dot_node(heal_buf *b, const struct rnode *x)
{
        json_t *rules = json_object_get(x->j, "rules"), *rule;
        size_t i;

        heal_buf_printf(b, "  n%d [fillcolor=\"%s\", label=\"#%d ", x->id,
                        color_of(str(x->j, "outcome")), x->id);
        dot_text(b, str(x->j, "source"), 20);
        heal_buf_puts(b, "\\n");
        dot_text(b, str(x->j, "outcome"), 20);
        heal_buf_printf(b, "  reward %.2f", json_real_value(json_object_get(x->j, "reward")));
        json_array_foreach(rules, i, rule) {
                heal_buf_puts(b, i ? ", " : "\\nrules: ");
                dot_text(b, json_string_value(rule) ? json_string_value(rule) : "", 40);
        }
        if (*str(x->j, "why")) {
                heal_buf_puts(b, "\\n");
                dot_text(b, str(x->j, "why"), 60);
        }
        heal_buf_puts(b, "\"];\n");
}

static void make_dot(heal_buf *b, const struct rnode *v, size_t n)
{
        bool has_root = false;

        heal_buf_puts(b,
                      "digraph heal {\n  rankdir=TB;\n  node [shape=box, style=\"rounded,filled\", "
                      "fontname=\"monospace\", fontsize=10];\n");
        for (size_t i = 0; i < n; i++)
                has_root |= v[i].id == 0;
        if (!has_root)
                heal_buf_puts(b, "  n0 [fillcolor=\"#ffffff\", label=\"#0 the failing tree\"];\n");
        for (size_t i = 0; i < n; i++) {
                dot_node(b, &v[i]);
                if (v[i].parent >= 0)
                        heal_buf_printf(b, "  n%d -> n%d;\n", v[i].parent, v[i].id);
        }
        heal_buf_puts(b, "}\n");
}

static int load_trace(const char *path, struct rnode *v, size_t *n)
{
        FILE *f = fopen(path, "re");
        char *line = NULL;
        size_t cap = 0, lineno = 0;
        int r = 0;

        if (!f) {
                log_error("report: '%s': %s", path, strerror(errno));
                return -errno;
        }
        while (getline(&line, &cap, f) > 0 && *n < NODES_MAX) {
                json_error_t e;
                json_t *j;

                lineno++;
                if (line[strspn(line, " \t\r\n")] == '\0')
                        continue;
                j = json_loads(line, 0, &e);
                if (!json_is_object(j) || !json_is_integer(json_object_get(j, "id"))) {
                        /* a run killed mid-line leaves half a line: say so, draw the rest */
                        log_error("report: %s:%zu: not a trace line of heal --trace (%s); "
                                  "skipped",
                                  path, lineno, j ? "no \"id\"" : e.text);
                        json_decref(j);
                        continue;
                }
                v[*n].j = j;
                v[*n].id = (int)json_integer_value(json_object_get(j, "id"));
                v[*n].parent = (int)json_integer_value(json_object_get(j, "parent"));
                (*n)++;
        }
        free(line);
        fclose(f);
        if (r == 0 && *n == 0) {
                log_error("report: '%s' holds no candidate (the search evaluated none)", path);
                r = -ENODATA;
        }
        return r;
}

static int write_file(const char *path, const char *data, size_t len)
{
        FILE *f = fopen(path, "we");

        if (!f || fwrite(data, 1, len, f) != len || fclose(f) != 0) {
                log_error("report: cannot write '%s': %s", path, strerror(errno));
                return -EIO;
        }
        return 0;
}

/* dot -Tsvg @dot_path -o @svg_path; an error says what to install. */
static int run_dot(const char *dot_path, const char *svg_path)
{
        char dot[] = "dot", tsvg[] = "-Tsvg", o[] = "-o", svg[4096], in[4096];
        char *argv[] = { dot, tsvg, o, svg, in, NULL };
        extern char **environ;
        pid_t pid;
        int st, r;

        snprintf(svg, sizeof(svg), "%s", svg_path);
        snprintf(in, sizeof(in), "%s", dot_path);
        r = posix_spawnp(&pid, "dot", NULL, NULL, argv, environ);

        if (r == ENOENT) {
                log_error("report: Graphviz's dot is not installed (apt-get install graphviz); "
                          "--format dot writes the graph without it");
                return -ENOENT;
        }
        if (r || waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st)) {
                log_error("report: dot failed to draw the graph");
                return -EIO;
        }
        return 0;
}

static void html_text(heal_buf *b, const char *s)
{
        for (; *s; s++)
                if (*s == '<')
                        heal_buf_puts(b, "&lt;");
                else if (*s == '>')
                        heal_buf_puts(b, "&gt;");
                else if (*s == '&')
                        heal_buf_puts(b, "&amp;");
                else if (*s == '"')
                        heal_buf_puts(b, "&quot;");
                else
                        heal_buf_append(b, s, 1);
}

static void make_html(heal_buf *b, const char *svg, const struct rnode *v, size_t n,
                      const char *trace)
{
        heal_buf_puts(b, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>heal: ");
        html_text(b, trace);
        heal_buf_puts(b, "</title><style>body{font-family:sans-serif}td,th{padding:2px 8px;"
                         "text-align:left;vertical-align:top;font-family:monospace}"
                         "pre{white-space:pre-wrap;margin:0}</style></head><body>\n<h1>heal "
                         "search: ");
        html_text(b, trace);
        heal_buf_puts(b, "</h1>\n");
        heal_buf_puts(b, strstr(svg, "<svg") ? strstr(svg, "<svg") : ""); /* no XML prolog */
        heal_buf_puts(b, "\n<table><tr><th>#</th><th>parent</th><th>source</th><th>outcome"
                         "</th><th>reward</th><th>rules</th><th>why</th></tr>\n");
        for (size_t i = 0; i < n; i++) {
                json_t *rules = json_object_get(v[i].j, "rules"), *rule;
                size_t k;

                heal_buf_printf(b, "<tr><td>%d</td><td>%d</td><td>", v[i].id, v[i].parent);
                html_text(b, str(v[i].j, "source"));
                heal_buf_printf(b, "</td><td style=\"background:%s\">",
                                color_of(str(v[i].j, "outcome")));
                html_text(b, str(v[i].j, "outcome"));
                heal_buf_printf(b, "</td><td>%.3f</td><td>",
                                json_real_value(json_object_get(v[i].j, "reward")));
                json_array_foreach(rules, k, rule) {
                        html_text(b, k ? ", " : "");
                        html_text(b, json_string_value(rule) ? json_string_value(rule) : "");
                }
                heal_buf_puts(b, "</td><td><pre>");
                html_text(b, str(v[i].j, "why"));
                heal_buf_puts(b, "</pre></td></tr>\n");
        }
        heal_buf_puts(b, "</table></body></html>\n");
}

static int draw(const char *trace, const char *out, const char *format)
{
        static struct rnode v[NODES_MAX];
        heal_buf dot = HEAL_BUF_INIT(64u << 20), page = HEAL_BUF_INIT(128u << 20);
        char tmp_dot[] = "/tmp/heal-report-XXXXXX", tmp_svg[64] = "";
        size_t n = 0;
        char *svg = NULL;
        int r = load_trace(trace, v, &n), fd;

        if (r == 0)
                make_dot(&dot, v, n);
        if (r == 0 && !strcmp(format, "dot")) {
                r = write_file(out, dot.data, dot.len);
        } else if (r == 0) {
                fd = mkstemp(tmp_dot);
                r = fd < 0 ? -errno : 0;
                if (fd >= 0)
                        close(fd);
                snprintf(tmp_svg, sizeof(tmp_svg), "%s.svg", tmp_dot);
                if (r == 0)
                        r = write_file(tmp_dot, dot.data, dot.len);
                if (r == 0)
                        r = run_dot(tmp_dot, !strcmp(format, "svg") ? out : tmp_svg);
                if (r == 0 && !strcmp(format, "html")) {
                        FILE *f = fopen(tmp_svg, "re");
                        heal_buf s = HEAL_BUF_INIT(64u << 20);
                        char chunk[65536];
                        size_t k;

                        while (f && (k = fread(chunk, 1, sizeof(chunk), f)) > 0)
                                heal_buf_append(&s, chunk, k);
                        if (f)
                                fclose(f);
                        svg = heal_buf_detach(&s, NULL);
                        make_html(&page, svg ? svg : "", v, n, trace);
                        r = write_file(out, page.data, page.len);
                }
                unlink(tmp_dot);
                unlink(tmp_svg);
        }
        for (size_t i = 0; i < n; i++)
                json_decref(v[i].j);
        free(svg);
        heal_buf_release(&dot);
        heal_buf_release(&page);
        return r;
}

int cmd_report(int argc, char **argv)
{
        const char *trace = NULL, *out = NULL, *format = "html";
        char def[4096];

        for (int i = 1; i < argc; i++) {
                const char *a = argv[i];

                if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
                        fputs(report_usage, stdout);
                        return 0;
                } else if ((!strcmp(a, "-o") || !strcmp(a, "--output")) && i + 1 < argc) {
                        out = argv[++i];
                } else if (!strcmp(a, "--format") && i + 1 < argc) {
                        format = argv[++i];
                        if (strcmp(format, "html") && strcmp(format, "svg") &&
                            strcmp(format, "dot")) {
                                log_error("report: --format '%s': html, svg or dot", format);
                                return EXIT_USAGE;
                        }
                } else if (a[0] == '-' || trace) {
                        log_error("report: unexpected '%s'; see 'heal report --help'", a);
                        return EXIT_USAGE;
                } else {
                        trace = a;
                }
        }
        if (!trace) {
                fputs(report_usage, stderr);
                return EXIT_USAGE;
        }
        if (!out) {
                snprintf(def, sizeof(def), "%.*s.%s", (int)strcspn(trace, "\n"), trace, format);
                out = def;
        }
        if (draw(trace, out, format) < 0)
                return 1;
        printf("%s\n", out);
        return 0;
}
