/* SPDX-License-Identifier: MIT */
/* heal ask "QUESTION": a tool-calling conversation in which the model may run code. */
#include <stdlib.h>
#include <string.h>

#include "heal/ask.h"

#include "cli/agent.h"
#include "core/json.h"
#include "core/util.h"

static const char ask_usage[] =
        "usage: heal ask [options] \"QUESTION\"\n"
        "\n"
        "Ask a model a question and let it run code to answer it: heal offers the model a\n"
        "run_code tool (language, code, stdin, timeout_ms), runs each call in the sandbox as\n"
        "'heal exec' does (no network, time and memory limits, nothing written on the host),\n"
        "sends the result back, and asks again until the model answers in text. A call that\n"
        "cannot run (broken JSON arguments, an unknown language) gets an error the model can\n"
        "correct. Prints the answer on stdout.\n"
        "\n"
        "options:\n"
        "  --max-turns N            model turns at most, each with any number of tool calls\n"
        "                           (default 8)\n"
        "  --max-timeout TIME       the longest run a call may ask for, and the default\n"
        "                           (default 10s)\n"
        "  --system TEXT            the system prompt (default: use run_code to check what the\n"
        "                           answer depends on, then answer briefly)\n"
        "  -v, --verbose            show each tool call (its code) and its result on stderr\n"
        "  -q, --quiet              no progress, only errors\n"
        "  --json                   a report on stdout: the answer and every call\n"
        "  --share-net              runs may use the host's network\n"
        "\n"
        "model options:\n" AGENT_OPTS_HELP "\n"
        "limits of each run: --memory (default 512M), --cpu-time, --output-limit (default 1M),\n"
        "--compile-timeout, --compile-memory, --compile-output-limit.\n"
        "\n"
        "exit status: 0 answered; 3 the model still called tools after --max-turns; 4 the model\n"
        "budget ran out; 5 the model could not be asked; 2 usage error or no model configured;\n"
        "125 heal could not start; 130 interrupted (docs/exit-codes.md).\n"
        "\n"
        "examples:\n"
        "  heal ask \"what is the 30th Fibonacci number?\"\n"
        "  heal ask -v --model anthropic:claude-sonnet-4-5 \"is 2^61-1 prime?\"\n";

struct ask_cli {
        struct agent_opts a;
        const char *question, *system;
        unsigned max_turns;
        uint64_t max_timeout_ms;
};

static int value_opt(struct ask_cli *q, const char *name, const char *v)
{
        if (!strcmp(name, "--system")) {
                q->system = v;
                return 0;
        }
        if (!strcmp(name, "--max-turns")) {
                char *end;
                long n = strtol(v, &end, 10);

                if (*end || end == v || n < 1 || n > 100)
                        return fprintf(stderr,
                                       "heal ask: --max-turns '%s': expected a number "
                                       "from 1 to 100\n",
                                       v),
                               -1;
                q->max_turns = (unsigned)n;
                return 0;
        }
        {
                heal_runner_limits l = { 0 };
                int r = limit_opt(&l, NULL, "heal ask", "--timeout", v);

                q->max_timeout_ms = l.wall_ms;
                return r;
        }
}

static int parse(struct ask_cli *q, int argc, char **argv)
{
        for (int i = 1; i < argc; i++) {
                const char *s = argv[i];
                int r;

                if (!strcmp(s, "-h") || !strcmp(s, "--help")) {
                        fputs(ask_usage, stdout);
                        exit(0);
                }
                if (s[0] != '-' || !s[1]) {
                        if (q->question)
                                return fprintf(stderr, "heal ask: one QUESTION only (quote "
                                                       "it)\n"),
                                       -1;
                        q->question = s;
                        continue;
                }
                if ((!strcmp(s, "--system") || !strcmp(s, "--max-turns") ||
                     !strcmp(s, "--max-timeout")) &&
                    i + 1 < argc) {
                        if (value_opt(q, s, argv[++i]) < 0)
                                return -1;
                        continue;
                }
                if (!strcmp(s, "--timeout") || !strncmp(s, "--timeout=", 10))
                        return fprintf(stderr, "heal ask: the model chooses each run's timeout; "
                                               "--max-timeout TIME bounds it\n"),
                               -1;
                r = agent_opt(&q->a, argc, argv, &i);
                if (r < 0)
                        return -1;
                if (r == 0)
                        return fprintf(stderr,
                                       "heal ask: unknown option '%s'; see 'heal ask "
                                       "--help'\n",
                                       s),
                               -1;
        }
        if (q->a.stdin_path)
                return fprintf(stderr, "heal ask: --stdin: each call brings its own stdin\n"), -1;
        if (!q->question || !*q->question)
                return fprintf(stderr, "heal ask: give a QUESTION: heal ask \"what is 2^100?\"\n"),
                       -1;
        return 0;
}

struct view {
        const struct ask_cli *q;
        struct agent *a;
};

static void show_call(const heal_ask_call *c, bool verbose)
{
        json_t *args = json_loads(c->arguments, 0, NULL);
        const char *lang = json_string_value(json_object_get(args, "language"));
        const char *code = json_string_value(json_object_get(args, "code"));

        fprintf(stderr, "heal ask:   call %s(%s)\n", c->name, lang ? lang : "?");
        if (verbose && code)
                agent_put_text(stderr, code, strlen(code), false), fputc('\n', stderr);
        json_decref(args);
}

static void on_event(heal_ask_event ev, const heal_ask_call *c, void *userdata)
{
        struct view *v = userdata;
        bool verbose = v->q->a.verbose;

        agent_waiting_for_model(ev == HEAL_ASK_ASKING);
        if (v->q->a.quiet || v->q->a.json)
                return;
        if (ev == HEAL_ASK_ASKING) {
                fprintf(stderr, "heal ask: [%5.1fs] asking %s\n", agent_elapsed_s(v->a),
                        v->a->model);
        } else if (ev == HEAL_ASK_CALLING) {
                show_call(c, verbose);
        } else {
                fprintf(stderr, "heal ask: [%5.1fs]   -> %s ", agent_elapsed_s(v->a),
                        c->ran ? heal_exec_status_to_string(c->status) : "refused");
                agent_put_text(stderr, c->result,
                               verbose ? strlen(c->result) : MIN(strlen(c->result), 200), !verbose);
                fputc('\n', stderr);
        }
}

static json_t *call_json(const heal_ask_call *c)
{
        json_t *result = json_loads(c->result, 0, NULL);

        return json_pack("{s:i,s:o,s:o,s:o,s:o,s:b,s:o}", "turn", (int)c->turn, "id",
                         json_string_or_null(c->id), "name", json_string_or_null(c->name),
                         "arguments", json_string_or_null(c->arguments), "result",
                         result ? result : json_string_or_null(c->result), "ran", c->ran, "status",
                         c->ran ? json_string(heal_exec_status_to_string(c->status)) : json_null());
}

static int exit_code(heal_ask_verdict v)
{
        return v == HEAL_ASK_ANSWERED      ? 0
               : v == HEAL_ASK_BUDGET      ? EXIT_AGENT_BUDGET
               : v == HEAL_ASK_MODEL_ERROR ? EXIT_AGENT_MODEL_ERROR
               : v == HEAL_ASK_CANCELED    ? EXIT_CANCELED
                                           : EXIT_AGENT_FAILED;
}

static void report(const struct ask_cli *q, const struct agent *a, const heal_ask_result *res)
{
        char tally[256];

        if (q->a.json) {
                json_t *calls = json_array();

                for (size_t i = 0; i < res->n_calls; i++)
                        json_array_append_new(calls, call_json(&res->calls[i]));
                json_print(json_pack("{s:s,s:o,s:o,s:s,s:i,s:o,s:o}", "verdict",
                                     heal_ask_verdict_name(res->verdict), "answer",
                                     json_string_or_null(res->answer), "message",
                                     json_string_or_null(res->message), "model", a->model, "turns",
                                     (int)res->turns, "calls", calls, "usage",
                                     agent_tally_json(&res->tally)));
                return;
        }
        if (res->verdict == HEAL_ASK_ANSWERED && res->answer) {
                fputs(res->answer, stdout);
                if (!*res->answer || res->answer[strlen(res->answer) - 1] != '\n')
                        fputc('\n', stdout);
                fflush(stdout);
        }
        heal_llm_tally_format(&res->tally, tally, sizeof(tally));
        if (res->verdict == HEAL_ASK_BUDGET)
                fprintf(stderr, "heal ask: %s (raise --max-requests or --max-cost)\n",
                        res->message);
        else if (res->verdict == HEAL_ASK_CANCELED)
                fprintf(stderr, "heal ask: interrupted\n");
        else if (res->verdict != HEAL_ASK_ANSWERED)
                fprintf(stderr, "heal ask: %s\n", res->message);
        else if (!q->a.quiet)
                fprintf(stderr, "heal ask: answered in %u turn%s, %zu tool call%s\n", res->turns,
                        res->turns == 1 ? "" : "s", res->n_calls, res->n_calls == 1 ? "" : "s");
        if (res->verdict != HEAL_ASK_ANSWERED || !q->a.quiet)
                fprintf(stderr, "heal ask: model %s: %s\n", a->model, tally);
}

int cmd_ask(int argc, char **argv)
{
        struct ask_cli q = { .a = AGENT_OPTS_INIT("heal ask") };
        heal_ask_opts ao = HEAL_ASK_OPTS_INIT;
        heal_ask_result res = { 0 };
        heal_error err = HEAL_ERROR_INIT;
        struct agent a;
        struct view v = { .q = &q, .a = &a };
        int code;

        if (parse(&q, argc, argv) < 0)
                return EXIT_USAGE;
        code = agent_open(&a, &q.a);
        if (code) {
                agent_close(&a);
                return code;
        }
        ao.llm = a.llm;
        ao.model = a.sel.model;
        ao.runner = a.runner;
        ao.question = q.question;
        ao.system = q.system;
        ao.max_turns = q.max_turns;
        ao.max_timeout_ms = q.max_timeout_ms;
        ao.limits = q.a.run;
        ao.compile_limits = q.a.compile;
        ao.share_net = q.a.share_net;
        ao.on_event = on_event;
        ao.userdata = &v;
        if (heal_ask_run(&res, &ao, &err) < 0) {
                fprintf(stderr, "heal ask: %s\n", err.msg);
                agent_close(&a);
                return EXIT_SETUP;
        }
        agent_waiting_for_model(false);
        report(&q, &a, &res);
        code = exit_code(res.verdict);
        heal_ask_result_release(&res);
        agent_close(&a);
        return code;
}
