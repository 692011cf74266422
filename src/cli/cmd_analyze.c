/* SPDX-License-Identifier: MIT */
/* heal analyze: run a command in the sandbox (or read a recorded log) and explain its failure:
 * diagnostics, fingerprints, tests; no model is called. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "heal/analyze.h"
#include "heal/buf.h"
#include "heal/prompt.h"

#include "cli/cli.h"
#include "core/parse.h"

static const char analyze_usage[] =
        "usage: heal analyze [options] [--] CMD [ARG...]\n"
        "       heal analyze --log FILE [--exit-code N] [--command CMD] [options]\n"
        "\n"
        "Run CMD in a throwaway sandbox, as 'heal run --overlay-cwd' does (same options and\n"
        "limits: what CMD writes in the current directory vanishes), and\n"
        "explain how it failed, without calling any model: each diagnostic (kind, file:line,\n"
        "enclosing function, message, the stack in your code), the exact and cause\n"
        "fingerprints heal uses to recognise a failure that comes back, and the tests that\n"
        "passed and failed. Formats: Go (build, vet, go test -v and -json, panics, deadlocks,\n"
        "races, timeouts), C (gcc, clang, ld, ASan, UBSan, assert, signals), Python tracebacks.\n"
        "\n"
        "analysis options:\n"
        "  --json              one JSON document on stdout (docs/analysis.md)\n"
        "  --log FILE          analyze the recorded output in FILE ('-': stdin); run nothing\n"
        "  --exit-code N       with --log: the command's exit status (default 1)\n"
        "  --command CMD       with --log: the command line (tells go vet from a build error)\n"
        "  --tree DIR          the tree the paths are in (default: the working directory)\n"
        "  --alias PATH        a path that also meant the tree where the output was made\n"
        "                      (another checkout, a CI runner); may be repeated\n"
        "  --normalized        print the output as the exact fingerprint sees it, and stop\n"
        "  --prompt            also print the source windows and the exact prompt heal would\n"
        "                      send a model (nothing is sent)\n"
        "  --budget TOKENS     tokens of source the prompt may carry (estimate; default 6000)\n"
        "\n"
        "sandbox options: all of 'heal run' (see 'heal run --help'), e.g. --timeout 30s,\n"
        "--memory 1G, --share-net. A command stopped by --timeout is analyzed from the stacks\n"
        "it printed on SIGQUIT (Go) or the process snapshot.\n"
        "\n"
        "exit status: 0 CMD passed (nothing to explain), 1 CMD failed and was analyzed,\n"
        "2 usage error, 125 the sandbox could not run CMD, 130 interrupted.\n"
        "\n"
        "examples:\n"
        "  heal analyze -- go test ./...\n"
        "  heal analyze --timeout 10s --json -- go run .\n"
        "  go test ./... 2>&1 | heal analyze --log - --exit-code 1 --command 'go test ./...'\n";

#define ALIASES_MAX 16

struct analyze_opts {
        bool normalized;
        bool exit_code_given;
        bool prompt;
        uint64_t budget;
        const char *log;
        const char *command;
        const char *tree;
        int exit_code;
        const char *aliases[ALIASES_MAX + 1];
        size_t n_aliases;
        char tree_abs[PATH_MAX];
        char cmdline[4096];
};

static heal_sandbox *running;

static void on_signal(int sig)
{
        (void)sig;
        heal_sandbox_cancel(running);
}

static int extra_option(struct run_opts *o, int argc, char **argv, int *i)
{
        struct analyze_opts *a = o->extra_data;
        const char *name = argv[*i];
        static const char *const valued[] = { "--log",  "--exit-code", "--command",
                                              "--tree", "--alias",     "--budget" };
        const char *v = NULL;
        uint64_t n;

        if (strcmp(name, "--normalized") == 0 || strcmp(name, "--prompt") == 0) {
                *(name[2] == 'n' ? &a->normalized : &a->prompt) = true;
                return 1;
        }
        for (size_t k = 0; k < sizeof(valued) / sizeof(valued[0]) && !v; k++)
                if (strcmp(name, valued[k]) == 0) {
                        if (*i + 1 >= argc) {
                                fprintf(stderr, "heal analyze: %s needs a value\n", name);
                                return -EINVAL;
                        }
                        v = argv[++*i];
                }
        if (!v)
                return 0;
        if (strcmp(name, "--log") == 0) {
                a->log = v;
                o->command_optional = true;
        } else if (strcmp(name, "--command") == 0) {
                a->command = v;
        } else if (strcmp(name, "--tree") == 0) {
                a->tree = v;
        } else if (strcmp(name, "--alias") == 0) {
                if (a->n_aliases == ALIASES_MAX || v[0] != '/') {
                        fprintf(stderr, "heal analyze: --alias takes an absolute path (at most "
                                        "16 of them)\n");
                        return -EINVAL;
                }
                a->aliases[a->n_aliases++] = v;
        } else if (strcmp(name, "--budget") == 0) {
                if (parse_uint(v, &a->budget) < 0 || a->budget < 100) {
                        fprintf(stderr,
                                "heal analyze: --budget '%s': expected a number of "
                                "tokens, at least 100\n",
                                v);
                        return -EINVAL;
                }
        } else if (parse_uint(v, &n) < 0 || n > 255) {
                fprintf(stderr, "heal analyze: --exit-code '%s': expected 0 to 255\n", v);
                return -EINVAL;
        } else {
                a->exit_code = (int)n;
                a->exit_code_given = true;
        }
        return 1;
}

static int read_log(const char *path, heal_buf *b)
{
        struct stat st;
        FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "re");
        char chunk[65536];
        size_t n;

        if (!f) {
                log_error("analyze: --log '%s': %s", path, strerror(errno));
                return -errno;
        }
        if (f != stdin && fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
                log_error("analyze: --log '%s' is a directory", path);
                fclose(f);
                return -EISDIR;
        }
        while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
                if (heal_buf_append(b, chunk, n) == -ENOMEM)
                        break;
        if (f != stdin)
                fclose(f);
        return 0;
}

void join_argv(char *out, size_t len, char **argv)
{
        size_t o = 0;

        out[0] = '\0';
        for (size_t i = 0; argv && argv[i] && o + 4 < len; i++) {
                const char *a = argv[i];
                bool quote = !*a || strpbrk(a, " \t\n'\"\\$`;&|<>*?()[]{}~#!");

                if (i)
                        out[o++] = ' ';
                if (quote)
                        out[o++] = '\'';
                for (; *a && o + 6 < len; a++) {
                        if (*a == '\'' && quote) {
                                memcpy(out + o, "'\\''", 4);
                                o += 4;
                        } else {
                                out[o++] = *a;
                        }
                }
                if (quote)
                        out[o++] = '\'';
                out[o] = '\0';
        }
}

static json_t *strings_json(char *const *v, size_t n)
{
        json_t *a = json_array();

        for (size_t i = 0; i < n; i++)
                json_array_append_new(a, json_string_bytes(v[i], strlen(v[i])));
        return a;
}

static json_t *str_or_null(const char *s)
{
        return s ? json_string_bytes(s, strlen(s)) : json_null();
}

static json_t *fixits_json(const heal_diag *d)
{
        json_t *v = json_array();

        for (size_t i = 0; i < d->n_fixits; i++) {
                const heal_fixit *f = &d->fixits[i];

                json_array_append_new(
                        v, json_pack("{s:o,s:i,s:i,s:i,s:i,s:o,s:b}", "file", str_or_null(f->file),
                                     "line", (int)f->line, "column", (int)f->col, "end_line",
                                     (int)f->end_line, "end_column", (int)f->end_col, "text",
                                     str_or_null(f->text), "from_note", f->from_note));
        }
        return v;
}

static json_t *diag_json(const heal_diag *d)
{
        json_t *frames = json_array(), *o;

        for (size_t i = 0; i < d->n_frames; i++)
                json_array_append_new(frames, json_pack("{s:o,s:o,s:i,s:b}", "function",
                                                        str_or_null(d->frames[i].function), "file",
                                                        str_or_null(d->frames[i].file), "line",
                                                        (int)d->frames[i].line, "in_tree",
                                                        d->frames[i].in_tree));
        o = json_pack("{s:s,s:s,s:o,s:i,s:i,s:o,s:o,s:o,s:o,s:o}", "kind",
                      heal_diag_kind_name(d->kind), "severity",
                      d->severity == HEAL_SEVERITY_ERROR     ? "error"
                      : d->severity == HEAL_SEVERITY_WARNING ? "warning"
                                                             : "note",
                      "file", str_or_null(d->file), "line", (int)d->line, "column", (int)d->column,
                      "function", str_or_null(d->function), "message", str_or_null(d->message),
                      "test", str_or_null(d->test), "frames", frames, "notes",
                      strings_json(d->notes, d->n_notes));
        if (o)
                json_object_set_new(o, "fixits", fixits_json(d));
        return o;
}

static json_t *outlines_json(const heal_context *ctx)
{
        json_t *v = json_array();

        for (size_t i = 0; ctx && i < ctx->n_outlines; i++)
                json_array_append_new(v, json_pack("{s:o,s:s,s:o}", "file",
                                                   str_or_null(ctx->outlines[i].file), "source",
                                                   ctx->outlines[i].source, "text",
                                                   str_or_null(ctx->outlines[i].text)));
        return v;
}

static json_t *context_json(const heal_context *ctx)
{
        json_t *v = json_array();

        for (size_t i = 0; ctx && i < ctx->n_windows; i++) {
                const heal_window *w = &ctx->windows[i];

                json_array_append_new(v, json_pack("{s:o,s:i,s:i,s:o,s:i}", "file",
                                                   str_or_null(w->file), "first", (int)w->first,
                                                   "last", (int)w->last, "why", str_or_null(w->why),
                                                   "priority", (int)w->priority));
        }
        return v;
}

static void report_json(const heal_analysis *a, const char *command, int exit_code,
                        const heal_sandbox_result *res, const heal_context *ctx,
                        const heal_prompt *prompt)
{
        json_t *diags = json_array(), *doc;

        for (size_t i = 0; i < a->n_diags; i++)
                json_array_append_new(diags, diag_json(&a->diags[i]));
        doc = json_pack("{s:o,s:i,s:s,s:o,s:{s:s,s:s},s:{s:o,s:o,s:o},s:o}", "command",
                        str_or_null(command), "exit_code", exit_code, "status",
                        res ? heal_sandbox_status_to_string(res->status) : "recorded",
                        "diagnostics", diags, "fingerprints", "exact", a->exact, "cause", a->cause,
                        "tests", "passed", strings_json(a->tests_passed, a->n_tests_passed),
                        "failed", strings_json(a->tests_failed, a->n_tests_failed), "skipped",
                        strings_json(a->tests_skipped, a->n_tests_skipped), "tail",
                        str_or_null(a->tail));
        if (doc && prompt && prompt->system) {
                json_object_set_new(doc, "context", context_json(ctx));
                json_object_set_new(doc, "outlines", outlines_json(ctx));
                json_object_set_new(
                        doc, "prompt",
                        json_pack("{s:o,s:o,s:I}", "system", str_or_null(prompt->system), "user",
                                  str_or_null(prompt->user), "tokens", (json_int_t)prompt->tokens));
        }
        json_print(doc);
}

/* --prompt: the windows and the exact prompt, after the diagnostics. */
static void print_prompt(const heal_context *ctx, const heal_prompt *p)
{
        printf("\nsource windows (%zu, %zu tokens, %zu left out for the budget):\n", ctx->n_windows,
               ctx->tokens, ctx->dropped);
        for (size_t i = 0; i < ctx->n_windows; i++)
                printf("  %s:%u-%u  %s\n", ctx->windows[i].file, ctx->windows[i].first,
                       ctx->windows[i].last, ctx->windows[i].why);
        for (size_t i = 0; i < ctx->n_outlines; i++)
                printf("  %s  outline (%s)\n", ctx->outlines[i].file, ctx->outlines[i].source);
        printf("\nprompt (%zu tokens, estimated):\n--- system ---\n%s--- user ---\n%s", p->tokens,
               p->system, p->user);
}

static void report_human(const heal_analysis *a, const char *command, int exit_code)
{
        printf("$ %s\nfailed (exit %d): %zu diagnostic%s\n", command ? command : "(command)",
               exit_code, a->n_diags, a->n_diags == 1 ? "" : "s");
        for (size_t i = 0; i < a->n_diags; i++) {
                const heal_diag *d = &a->diags[i];
                size_t shown = 0;

                printf("\n%s", heal_diag_kind_name(d->kind));
                if (d->file)
                        printf(" %s", d->file);
                if (d->file && d->line)
                        printf(":%u", d->line);
                if (d->file && d->line && d->column)
                        printf(":%u", d->column);
                if (d->function)
                        printf(" in %s", d->function);
                if (d->test)
                        printf(" (test %s)", d->test);
                printf("\n    %s\n", d->message);
                for (size_t k = 0; k < d->n_frames && shown < 6; k++)
                        if (d->frames[k].in_tree && d->frames[k].file) {
                                printf("    %s %s %s:%u\n", shown ? "  " : "at",
                                       d->frames[k].function, d->frames[k].file, d->frames[k].line);
                                shown++;
                        }
                for (size_t k = 0; k < d->n_notes; k++)
                        printf("    note: %s\n", d->notes[k]);
                for (size_t k = 0; k < d->n_fixits; k++)
                        printf("    fix-it%s: %s:%u:%u-%u:%u -> \"%s\"\n",
                               d->fixits[k].from_note ? " (a note's)" : "", d->fixits[k].file,
                               d->fixits[k].line, d->fixits[k].col, d->fixits[k].end_line,
                               d->fixits[k].end_col, d->fixits[k].text);
        }
        printf("\nfingerprints: exact %s, cause %s\n", a->exact, a->cause);
        if (a->n_tests_passed || a->n_tests_failed || a->n_tests_skipped) {
                printf("tests: %zu passed, %zu failed, %zu skipped", a->n_tests_passed,
                       a->n_tests_failed, a->n_tests_skipped);
                for (size_t i = 0; i < a->n_tests_failed && i < 10; i++)
                        printf("%s%s", i ? ", " : " (", a->tests_failed[i]);
                printf("%s\n", a->n_tests_failed ? ")" : "");
        }
}

/* Run o->argv in the sandbox with its output captured. */
static int run(struct run_opts *o, heal_sandbox_result *res, heal_error *err)
{
        struct sigaction sa = { .sa_handler = on_signal };
        heal_sandbox *sb = NULL;
        int r;

        /* Explaining a failure must not change the tree: in the default view the working
         * directory is an overlay whose writes (build outputs, a.out) vanish. */
        if (!o->n_mounts && !(o->flags & HEAL_SANDBOX_ISOLATION_NONE))
                o->flags |= HEAL_SANDBOX_CWD_OVERLAY;
        r = run_opts_check(o, err);
        if (r >= 0)
                r = heal_sandbox_new(&sb, err);
        if (r >= 0)
                r = run_opts_build(sb, o, NULL, err);
        if (r >= 0) {
                running = sb;
                sigaction(SIGINT, &sa, NULL);
                sigaction(SIGTERM, &sa, NULL);
                r = heal_sandbox_run(sb, (const char *const *)o->argv, res, err);
                running = NULL;
        }
        heal_sandbox_free(sb);
        return r;
}

/* --normalized with a command: its output (stdout, then stderr) as the fingerprint sees it. */
static int print_normalized(const heal_sandbox_result *res, const heal_analyze_opts *ao)
{
        heal_buf both = HEAL_BUF_INIT((size_t)-1);
        heal_error err = HEAL_ERROR_INIT;
        char *norm = NULL;
        int r;

        heal_buf_append(&both, res->out ? res->out : "", res->out_len);
        heal_buf_append(&both, res->err ? res->err : "", res->err_len);
        r = heal_fingerprint_normalize(&norm, both.data ? both.data : "", both.len, ao, &err);
        if (r == 0)
                fputs(norm, stdout);
        else
                log_error("analyze: %s", err.msg);
        free(norm);
        heal_buf_release(&both);
        return r == 0 ? 0 : EXIT_SETUP;
}

static int analyze(struct run_opts *o, struct analyze_opts *a, heal_analysis *an,
                   heal_sandbox_result *res, int *exit_code)
{
        heal_analyze_opts ao = { .aliases = a->aliases, .exit_code = a->exit_code };
        heal_buf log = HEAL_BUF_INIT(256u << 20);
        heal_error err = HEAL_ERROR_INIT;
        struct stat st;
        const char *tree = a->tree ? a->tree : o->chdir ? o->chdir : ".";
        int r;

        errno = 0;
        if (!realpath(tree, a->tree_abs) || stat(a->tree_abs, &st) < 0 || !S_ISDIR(st.st_mode)) {
                log_error("analyze: the tree '%s': %s", tree,
                          errno ? strerror(errno) : "not a directory");
                return EXIT_USAGE;
        }
        ao.tree = a->tree_abs;
        join_argv(a->cmdline, sizeof(a->cmdline), o->argv);
        ao.command = a->log ? a->command : a->cmdline;
        if (a->log) {
                if (read_log(a->log, &log) < 0)
                        return EXIT_USAGE;
                if (a->normalized) {
                        char *norm = NULL;

                        r = heal_fingerprint_normalize(&norm, log.data ? log.data : "", log.len,
                                                       &ao, &err);
                        if (r == 0)
                                fputs(norm, stdout);
                        free(norm);
                        heal_buf_release(&log);
                        return r == 0 ? 0 : EXIT_SETUP;
                }
                *exit_code = a->exit_code;
                r = *exit_code == 0
                            ? 0
                            : heal_analyze(an, log.data ? log.data : "", log.len, &ao, &err);
                heal_buf_release(&log);
        } else {
                r = run(o, res, &err);
                if (r >= 0 && res->status == HEAL_STATUS_SETUP_ERROR) {
                        log_error("%s", res->message);
                        return res->exit_code ? res->exit_code : EXIT_SETUP;
                }
                if (r >= 0 && res->status == HEAL_STATUS_CANCELED)
                        return EXIT_CANCELED;
                *exit_code = res->status == HEAL_STATUS_TIMEOUT ? EXIT_TIMEOUT : res->exit_code;
                if (r >= 0 && a->normalized)
                        return print_normalized(res, &ao);
                if (r >= 0 && res->status != HEAL_STATUS_OK)
                        r = heal_analyze_result(an, res, &ao, &err);
        }
        if (r < 0) {
                log_error("analyze: %s", err.msg);
                return EXIT_SETUP;
        }
        return -1;
}

/* "go" or "c" for the first error's file, for its language server; NULL for none. */
static const char *language_of(const heal_analysis *an)
{
        for (size_t i = 0; i < an->n_diags; i++) {
                const char *f = an->diags[i].file, *dot = f ? strrchr(f, '.') : NULL;

                if (an->diags[i].severity != HEAL_SEVERITY_ERROR || !dot)
                        continue;
                if (strcmp(dot, ".go") == 0)
                        return "go";
                if (strcmp(dot, ".c") == 0 || strcmp(dot, ".h") == 0)
                        return "c";
                return NULL;
        }
        return NULL;
}

/* The windows and the prompt; -1 when built, else the exit code of the failure. A language
 * server that cannot start is not an error: ctags, then the windows alone, stand in. */
static int build_prompt(struct analyze_opts *a, const heal_analysis *an, const char *command,
                        int exit_code, heal_context *ctx, heal_prompt *prompt)
{
        heal_context_opts co = { .tree = a->tree_abs, .token_budget = (size_t)a->budget };
        heal_prompt_opts po = { .command = command ? command : "(unknown command)",
                                .exit_code = exit_code,
                                .tree = a->tree_abs,
                                .aliases = a->aliases };
        heal_error err = HEAL_ERROR_INIT;
        const char *lang = language_of(an);
        heal_lsp *server = NULL, *servers[2] = { NULL, NULL };
        int r;

        if (lang && heal_lsp_start(&server, lang, a->tree_abs, 10000, &err) == 0)
                servers[0] = server;
        else if (lang)
                fprintf(stderr, "heal analyze: %s; outlines come from ctags\n", err.msg);
        co.servers = servers;
        err = (heal_error)HEAL_ERROR_INIT;
        r = heal_context_build(ctx, an, &co, &err);
        if (r == 0)
                r = heal_prompt_build(prompt, an, ctx, &po, &err);
        heal_lsp_free(server);
        if (r < 0) {
                log_error("analyze: %s", err.msg);
                return EXIT_SETUP;
        }
        return -1;
}

int cmd_analyze(int argc, char **argv)
{
        struct run_opts *o = calloc(1, sizeof(*o));
        struct analyze_opts a = { .exit_code = 1 };
        heal_sandbox_result res = { 0 };
        heal_analysis an = { 0 };
        heal_context ctx = { 0 };
        heal_prompt prompt = { 0 };
        int code, exit_code = 0;

        if (!o || !(o->env_ops = calloc((size_t)argc * 2, sizeof(char *)))) {
                log_error("out of memory");
                free(o);
                return EXIT_SETUP;
        }
        o->limits = (heal_sandbox_limits)HEAL_SANDBOX_LIMITS_INIT;
        o->limits.out_max_bytes = HEAL_DEFAULT_OUT_MAX_BYTES;
        o->command = "heal analyze";
        o->usage = analyze_usage;
        o->extra = extra_option;
        o->extra_data = &a;
        if (run_opts_parse(o, argc, argv) < 0) {
                code = EXIT_USAGE;
                goto out;
        }
        if (a.log && o->argv) {
                log_error("analyze: --log analyzes a recorded output: give no command");
                code = EXIT_USAGE;
                goto out;
        }
        if (!a.log && (a.exit_code_given || a.command)) {
                log_error("analyze: --exit-code and --command describe a recorded output: use "
                          "them with --log");
                code = EXIT_USAGE;
                goto out;
        }
        code = analyze(o, &a, &an, &res, &exit_code);
        if (code >= 0)
                goto out;
        if (exit_code != 0 && a.prompt &&
            (code = build_prompt(&a, &an, a.log ? a.command : a.cmdline, exit_code, &ctx,
                                 &prompt)) >= 0)
                goto out;
        if (exit_code == 0) {
                if (o->json)
                        report_json(&an, a.log ? a.command : a.cmdline, 0, a.log ? NULL : &res,
                                    NULL, NULL);
                else
                        printf("$ %s\npassed: nothing to analyze\n",
                               a.log ? (a.command ? a.command : "(recorded command)") : a.cmdline);
                code = 0;
        } else {
                if (o->json)
                        report_json(&an, a.log ? a.command : a.cmdline, exit_code,
                                    a.log ? NULL : &res, &ctx, &prompt);
                else
                        report_human(&an, a.log ? a.command : a.cmdline, exit_code);
                if (!o->json && a.prompt)
                        print_prompt(&ctx, &prompt);
                code = 1;
        }
out:
        heal_prompt_release(&prompt);
        heal_context_release(&ctx);
        heal_analysis_release(&an);
        heal_sandbox_result_release(&res);
        free(o->env_ops);
        free(o);
        return code;
}
