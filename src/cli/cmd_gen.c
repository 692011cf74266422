/* SPDX-License-Identifier: MIT */
/* heal gen "TASK": a model writes the program, heal runs it, failures go back to the model. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "heal/gen.h"

#include "cli/agent.h"
#include "core/json.h"
#include "core/util.h"
#include "runner/result-json.h"

static const char gen_usage[] =
        "usage: heal gen [options] \"TASK\" [-- ARG...]\n"
        "\n"
        "Ask a model to write a program for TASK, run it in the sandbox (as 'heal exec' does),\n"
        "and when it does not compile, fails, or hangs, send the error back in the same\n"
        "conversation and ask for a corrected program, up to --retries times. Prints what the\n"
        "program printed; progress and the final status go to stderr. The code is extracted\n"
        "from the answer's Markdown (tagged or untagged fences, several blocks, prose around\n"
        "them, an answer cut off at its length limit) and written as a file, never pasted into\n"
        "a shell command. ARGs after -- go to the program.\n"
        "\n"
        "options:\n"
        "  --lang LANG              go (default), c, python3, sh or bash\n"
        "  --retries N              corrected programs asked after the first, 1 to 20\n"
        "                           (default 3)\n"
        "  --show-code              print the final program on stderr before its output\n"
        "  --keep DIR               save the final program's file into DIR (made if missing)\n"
        "  --stdin FILE             the program's stdin ('-': heal's own; default: empty)\n"
        "  --json                   a report on stdout: every attempt's answer, code and\n"
        "                           result (docs/exec.md)\n"
        "  -v, --verbose            show each attempt's program and its output\n"
        "  -q, --quiet              no progress, only errors\n"
        "  --share-net              the program may use the host's network\n"
        "\n"
        "model options:\n" AGENT_OPTS_HELP "\n"
        "limits of each run (as 'heal exec'): --timeout (default 10s), --cpu-time, --memory\n"
        "(default 512M), --output-limit (default 1M), --compile-timeout, --compile-memory,\n"
        "--compile-output-limit.\n"
        "\n"
        "exit status: 0 a program ran and exited 0; 3 no working program after the retries (the\n"
        "last error is shown); 4 the model budget ran out; 5 the model could not be asked; 2\n"
        "usage error or no model configured; 125 heal could not run the program (sandbox,\n"
        "missing toolchain); 130 interrupted (docs/exit-codes.md).\n"
        "\n"
        "examples:\n"
        "  heal gen \"print the first 20 prime numbers\"\n"
        "  heal gen --lang python3 --show-code \"read numbers from stdin, print their median\" \\\n"
        "      --stdin data.txt\n"
        "  heal gen --keep ./out --model openai:gpt-4.1-mini \"an HTTP status code table\"\n";

struct gen_cli {
        struct agent_opts a;
        const char *lang, *keep, *task;
        unsigned retries;
        bool show_code;
        const char *const *args;
};

static int parse(struct gen_cli *g, int argc, char **argv)
{
        for (int i = 1; i < argc; i++) {
                const char *s = argv[i];
                int r;

                if (!strcmp(s, "--")) {
                        g->args = (const char *const *)argv + i + 1;
                        break;
                }
                if (!strcmp(s, "-h") || !strcmp(s, "--help")) {
                        fputs(gen_usage, stdout);
                        exit(0);
                }
                if (s[0] != '-' || !s[1]) {
                        if (g->task)
                                return fprintf(stderr, "heal gen: one TASK only (quote it); "
                                                       "program arguments go after --\n"),
                                       -1;
                        g->task = s;
                        continue;
                }
                if (!strcmp(s, "--show-code")) {
                        g->show_code = true;
                        continue;
                }
                if (!strcmp(s, "--lang") || !strcmp(s, "--keep") || !strcmp(s, "--retries")) {
                        const char *v = i + 1 < argc ? argv[++i] : NULL;

                        if (!v)
                                return fprintf(stderr, "heal gen: %s needs a value\n", s), -1;

                        if (s[2] == 'l' && !(g->lang = heal_runner_lang_canonical(v)))
                                return fprintf(stderr, "heal gen: --lang '%s': heal runs %s\n", v,
                                               heal_runner_langs()),
                                       -1;
                        if (s[2] == 'k')
                                g->keep = v;
                        if (s[2] == 'r') {
                                char *end;
                                long n = strtol(v, &end, 10);

                                if (*end || end == v || n < 1 || n > 20)
                                        return fprintf(stderr,
                                                       "heal gen: --retries '%s': expected a "
                                                       "number from 1 to 20 (the first program "
                                                       "is not a retry)\n",
                                                       v),
                                               -1;
                                g->retries = (unsigned)n;
                        }
                        continue;
                }
                r = agent_opt(&g->a, argc, argv, &i);
                if (r < 0)
                        return -1;
                if (r == 0)
                        return fprintf(stderr,
                                       "heal gen: unknown option '%s'; see 'heal gen "
                                       "--help'\n",
                                       s),
                               -1;
        }
        if (!g->task || !*g->task)
                return fprintf(stderr, "heal gen: what should the program do? give a TASK: heal "
                                       "gen \"print the first 10 primes\"\n"),
                       -1;
        return 0;
}

struct view {
        const struct gen_cli *g;
        struct agent *a;
        unsigned max;
};

#define SHOWN_LINES 12

/* The first (@head) or last @n whole lines of @s. */
static void put_lines(const char *s, size_t len, size_t n, bool head)
{
        size_t start = 0, end = len, k = 0;

        if (!s || !len)
                return;
        if (head) {
                for (end = 0; end < len && k < n; end++)
                        k += s[end] == '\n';
        } else {
                for (start = len - (s[len - 1] == '\n'); start > 0 && k < n; start--)
                        k += s[start - 1] == '\n';
                start += start > 0;
        }
        if (start > 0 || end < len)
                fprintf(stderr, "  [%s %zu lines; -v shows all]\n", head ? "first" : "last", n);
        agent_put_text(stderr, s + start, end - start, false);
        if (end > start && s[end - 1] != '\n')
                fputc('\n', stderr);
}

/* What a failed attempt printed: the compiler's first lines; a timeout's first lines (Go's
 * dump starts with the goroutine that ran); otherwise the end of stderr (a traceback ends
 * with the error). */
static void show_output(const heal_runner_result *res, bool full)
{
        const heal_sandbox_result *c = &res->compile.res, *r = &res->run.res;
        size_t n = full ? SIZE_MAX : SHOWN_LINES;

        if (res->compile.ran && res->status == HEAL_EXEC_COMPILE_ERROR) {
                put_lines(c->err, c->err_len, n, true);
                put_lines(c->out, c->out_len, n, true);
        }
        if (res->run.ran && full)
                put_lines(r->out, r->out_len, n, true);
        if (res->run.ran)
                put_lines(r->err, r->err_len, n, res->status == HEAL_EXEC_TIMEOUT);
}

static void on_event(heal_gen_event ev, const heal_gen_attempt *at, unsigned n, void *userdata)
{
        struct view *v = userdata;
        const struct gen_cli *g = v->g;

        agent_waiting_for_model(ev == HEAL_GEN_ASKING);
        if (g->a.quiet || g->a.json)
                return;
        if (ev == HEAL_GEN_ASKING) {
                fprintf(stderr, "heal gen: [%5.1fs] attempt %u/%u: asking %s%s\n",
                        agent_elapsed_s(v->a), n, v->max, v->a->model,
                        n > 1 ? " for a corrected program" : "");
        } else if (ev == HEAL_GEN_ANSWERED && !at->code.code) {
                fprintf(stderr, "heal gen: [%5.1fs] attempt %u: no program in the answer: ",
                        agent_elapsed_s(v->a), n);
                agent_put_text(stderr, at->extract_error, strlen(at->extract_error), true);
                fputc('\n', stderr);
        } else if (ev == HEAL_GEN_ANSWERED && g->a.verbose) {
                fprintf(stderr, "heal gen: attempt %u's program (%zu bytes):\n", n, at->code.len);
                agent_put_text(stderr, at->code.code, at->code.len, false);
        } else if (ev == HEAL_GEN_RAN) {
                fprintf(stderr, "heal gen: [%5.1fs] attempt %u: %s%s", agent_elapsed_s(v->a), n,
                        heal_exec_status_to_string(at->result.status),
                        *at->result.message ? ": " : "");
                agent_put_text(stderr, at->result.message, strlen(at->result.message), true);
                fputc('\n', stderr);
                if (at->result.status != HEAL_EXEC_OK || g->a.verbose)
                        show_output(&at->result, g->a.verbose);
        }
}

static const heal_gen_attempt *last_with_code(const heal_gen_result *res)
{
        for (size_t i = res->n_attempts; i > 0; i--)
                if (res->attempts[i - 1].code.code)
                        return &res->attempts[i - 1];
        return NULL;
}

/* --keep DIR, checked before the model is asked: a directory (or none yet) without the file
 * heal would write, which it never overwrites. */
static int keep_check(const char *dir, const char *lang)
{
        char path[PATH_MAX];
        struct stat st;

        if (stat(dir, &st) == 0 && !S_ISDIR(st.st_mode))
                return fprintf(stderr, "heal gen: --keep '%s' is not a directory\n", dir), -1;
        snprintf(path, sizeof(path), "%s/%s", dir, heal_runner_lang_main_file(lang));
        if (lstat(path, &st) == 0)
                return fprintf(stderr,
                               "heal gen: --keep: '%s' exists, and heal does not overwrite it: "
                               "remove it or name another directory\n",
                               path),
                       -1;
        return 0;
}

/* --keep DIR: the final program's file, as the runner names it; *@msg says what happened. */
static int keep(char *msg, size_t len, const char *dir, const char *lang, const heal_gen_code *code)
{
        char path[PATH_MAX];
        int fd;
        ssize_t w;

        if (mkdir(dir, 0755) < 0 && errno != EEXIST)
                return snprintf(msg, len, "--keep '%s': %s", dir, strerror(errno)), -1;
        snprintf(path, sizeof(path), "%s/%s", dir, heal_runner_lang_main_file(lang));
        fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
        if (fd < 0)
                return snprintf(msg, len, "--keep: '%s': %s", path, strerror(errno)), -1;
        w = write(fd, code->code, code->len);
        if (close(fd) < 0 || w != (ssize_t)code->len)
                return snprintf(msg, len, "--keep: writing '%s' failed", path), -1;
        snprintf(msg, len, "%s", path);
        return 0;
}

static json_t *attempt_json(const heal_gen_attempt *at)
{
        return json_pack("{s:o,s:o,s:o,s:o}", "answer", json_string_or_null(at->answer), "code",
                         json_string_or_null(at->code.code), "extract_error",
                         *at->extract_error ? json_string_or_null(at->extract_error) : json_null(),
                         "result", at->ran ? runner_result_json(&at->result) : json_null());
}

static void report_json(const struct gen_cli *g, const struct agent *a, const heal_gen_result *res,
                        const char *kept, const char *keep_error)
{
        const heal_gen_attempt *last = last_with_code(res);
        json_t *attempts = json_array();

        for (size_t i = 0; i < res->n_attempts; i++)
                json_array_append_new(attempts, attempt_json(&res->attempts[i]));
        json_print(json_pack("{s:s,s:s,s:s,s:o,s:o,s:o,s:o,s:o,s:o}", "verdict",
                             heal_gen_verdict_name(res->verdict), "language", g->lang, "model",
                             a->model, "message", json_string_or_null(res->message), "program",
                             json_string_or_null(last ? last->code.code : NULL), "kept",
                             json_string_or_null(kept), "keep_error",
                             json_string_or_null(keep_error), "attempts", attempts, "usage",
                             agent_tally_json(&res->tally)));
}

static int exit_code(const heal_gen_result *res)
{
        switch (res->verdict) {
        case HEAL_GEN_OK:
                return 0;
        case HEAL_GEN_BUDGET:
                return EXIT_AGENT_BUDGET;
        case HEAL_GEN_MODEL_ERROR:
                return EXIT_AGENT_MODEL_ERROR;
        case HEAL_GEN_SETUP_ERROR:
                return EXIT_SETUP;
        case HEAL_GEN_CANCELED:
                return EXIT_CANCELED;
        case HEAL_GEN_FAILED:
        default:
                return EXIT_AGENT_FAILED;
        }
}

static void report_human(const struct gen_cli *g, const struct agent *a, const heal_gen_result *res)
{
        const heal_gen_attempt *last = last_with_code(res);
        char tally[256];

        if (g->show_code && last) {
                fprintf(stderr, "--- %s ---\n", heal_runner_lang_main_file(g->lang));
                agent_put_text(stderr, last->code.code, last->code.len, false);
                fprintf(stderr, "---\n");
        }
        if (res->verdict == HEAL_GEN_OK) {
                const heal_sandbox_result *r = &res->attempts[res->n_attempts - 1].result.run.res;

                fwrite(r->out, 1, r->out_len, stdout);
                fflush(stdout);
                if (!g->a.verbose)
                        agent_put_text(stderr, r->err, r->err_len, false);
        }
        if (g->a.quiet && res->verdict == HEAL_GEN_OK)
                return;
        heal_llm_tally_format(&res->tally, tally, sizeof(tally));
        if (res->verdict == HEAL_GEN_OK)
                fprintf(stderr, "heal gen: ok after %zu attempt%s\n", res->n_attempts,
                        res->n_attempts == 1 ? "" : "s");
        else if (res->verdict == HEAL_GEN_FAILED)
                fprintf(stderr, "heal gen: no working program after %zu attempt%s; the last: %s\n",
                        res->n_attempts, res->n_attempts == 1 ? "" : "s", res->message);
        else if (res->verdict == HEAL_GEN_BUDGET)
                fprintf(stderr, "heal gen: %s (raise --max-requests or --max-cost)\n",
                        res->message);
        else if (res->verdict == HEAL_GEN_CANCELED)
                fprintf(stderr, "heal gen: interrupted\n");
        else
                fprintf(stderr, "heal gen: %s\n", res->message);
        fprintf(stderr, "heal gen: model %s: %s\n", a->model, tally);
}

int cmd_gen(int argc, char **argv)
{
        struct gen_cli g = { .a = AGENT_OPTS_INIT("heal gen"), .lang = "go" };
        heal_gen_opts go = HEAL_GEN_OPTS_INIT;
        heal_gen_result res = { 0 };
        heal_error err = HEAL_ERROR_INIT;
        struct agent a;
        struct view v = { .g = &g, .a = &a };
        const heal_gen_attempt *last;
        char keep_msg[PATH_MAX + 128] = "";
        bool kept = false;
        int code;

        if (parse(&g, argc, argv) < 0 || (g.keep && keep_check(g.keep, g.lang) < 0))
                return EXIT_USAGE;
        if (!g.a.max_requests_set) /* every attempt may be asked for */
                g.a.max_requests = MAX(g.a.max_requests, 1 + (g.retries ? g.retries : 3));
        code = agent_open(&a, &g.a);
        if (code) {
                agent_close(&a);
                return code;
        }
        go.llm = a.llm;
        go.model = a.sel.model;
        go.runner = a.runner;
        go.task = g.task;
        go.lang = g.lang;
        go.retries = g.retries;
        go.run.args = g.args;
        go.run.stdin_data = a.stdin_data;
        go.run.stdin_len = a.stdin_len;
        go.run.run_limits = g.a.run;
        go.run.compile_limits = g.a.compile;
        go.run.share_net = g.a.share_net;
        go.on_event = on_event;
        go.userdata = &v;
        v.max = 1 + (g.retries ? g.retries : 3);
        if (heal_gen_run(&res, &go, &err) < 0) {
                fprintf(stderr, "heal gen: %s\n", err.msg);
                agent_close(&a);
                return EXIT_SETUP;
        }
        agent_waiting_for_model(false);
        last = last_with_code(&res);
        if (g.keep && last)
                kept = keep(keep_msg, sizeof(keep_msg), g.keep, g.lang, &last->code) == 0;
        if (g.a.json)
                report_json(&g, &a, &res, kept ? keep_msg : NULL,
                            g.keep && last && !kept ? keep_msg : NULL);
        else
                report_human(&g, &a, &res);
        if (!g.a.json && g.keep && last)
                fprintf(stderr, kept ? "heal gen: the program is in %s\n" : "heal gen: %s\n",
                        keep_msg);
        code = exit_code(&res);
        if (g.keep && last && !kept && code == 0)
                code = EXIT_SETUP; /* the output was shown; what was asked to stay did not */
        heal_gen_result_release(&res);
        agent_close(&a);
        return code;
}
