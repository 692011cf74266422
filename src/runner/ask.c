/* SPDX-License-Identifier: MIT */
/*
 * heal_ask_run(): the tool-calling loop. Each model turn sees the whole conversation and the
 * run_code tool; every call it makes runs in the sandbox and its result goes back as the
 * tool's message; a call that cannot run gets an error message instead, never an abort, since
 * models fix their own calls when told what was wrong (broken JSON arguments are common with
 * small models). The loop ends at the first turn without tool calls.
 */
#include "heal/ask.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "core/util.h"
#include "runner/tool.h"

#define TURNS_DEFAULT      8
#define TURNS_MAX          100
#define TIMEOUT_DEFAULT_MS 10000
#define TAIL_MAX           (8u << 10) /* bytes of each output in a tool message */
#define CALLS_PER_TURN_MAX 16         /* calls run in one turn; the rest are told to wait */

static const char default_system[] =
        "You can run code with the run_code tool: it builds and runs one program in a sandbox "
        "without network access and returns its status, output and errors. Use it to compute "
        "or check what your answer depends on instead of guessing; when a run fails, read the "
        "error and try again. When you know the answer, reply in plain text, briefly.";

static const char *const ask_keys[] = { "language", "code", "stdin", "timeout_ms", NULL };

static char tool_schema[1024];
static heal_llm_tool tool = { .name = "run_code" };
static pthread_once_t tool_once = PTHREAD_ONCE_INIT;

/* The language enum comes from the driver table, so a new driver is offered at once. */
static void tool_init(void)
{
        char langs[256];
        size_t o = 0;
        const char *l = heal_runner_langs();

        for (const char *p = l; *p && o + 8 < sizeof(langs);) {
                size_t n = strcspn(p, ",");

                o += (size_t)snprintf(langs + o, sizeof(langs) - o, "%s\"%.*s\"", o ? "," : "",
                                      (int)n, p);
                p += n;
                p += strspn(p, ", ");
        }
        snprintf(tool_schema, sizeof(tool_schema),
                 "{\"type\":\"object\",\"properties\":{"
                 "\"language\":{\"type\":\"string\",\"enum\":[%s],"
                 "\"description\":\"the program's language\"},"
                 "\"code\":{\"type\":\"string\",\"description\":\"the whole program: Go package "
                 "main with func main, C with main, or a script\"},"
                 "\"stdin\":{\"type\":\"string\",\"description\":\"the program's standard "
                 "input\"},"
                 "\"timeout_ms\":{\"type\":\"integer\",\"minimum\":1,\"description\":\"wall-time "
                 "limit of the run, ms\"}},"
                 "\"required\":[\"language\",\"code\"],\"additionalProperties\":false}",
                 langs);
        tool.description = "Build and run one program in a sandbox (no network, time and "
                           "memory limits) and return its status, exit code, stdout, stderr "
                           "and compiler output.";
        tool.parameters = tool_schema;
}

const heal_llm_tool *heal_ask_run_code_tool(void)
{
        pthread_once(&tool_once, tool_init);
        return &tool;
}

const char *heal_ask_verdict_name(heal_ask_verdict v)
{
        static const char *const names[] = {
                [HEAL_ASK_ANSWERED] = "answered", [HEAL_ASK_TURN_LIMIT] = "turn_limit",
                [HEAL_ASK_BUDGET] = "budget",     [HEAL_ASK_MODEL_ERROR] = "model_error",
                [HEAL_ASK_CANCELED] = "canceled",
        };

        return (unsigned)v < ELEMENTSOF(names) ? names[v] : "?";
}

struct ask {
        const heal_ask_opts *o;
        heal_ask_result *res;
        heal_llm_message *msgs;
        size_t n_msgs, cap_msgs;
        heal_llm_response *resps; /* every turn's answer: the messages borrow from them */
        size_t n_resps;
        size_t cap_calls;
        struct run_code_caps caps;
};

static int push_msg(struct ask *a, heal_llm_message m)
{
        if (a->n_msgs == a->cap_msgs) {
                size_t cap = a->cap_msgs ? 2 * a->cap_msgs : 16;
                heal_llm_message *v = realloc(a->msgs, cap * sizeof(*v));

                if (!v)
                        return -ENOMEM;
                a->msgs = v;
                a->cap_msgs = cap;
        }
        a->msgs[a->n_msgs++] = m;
        return 0;
}

static heal_ask_call *new_call(struct ask *a, unsigned turn, const heal_llm_tool_call *tc)
{
        heal_ask_result *res = a->res;
        heal_ask_call *c;

        if (res->n_calls == a->cap_calls) {
                size_t cap = a->cap_calls ? 2 * a->cap_calls : 8;
                heal_ask_call *v = realloc(res->calls, cap * sizeof(*v));

                if (!v)
                        return NULL;
                res->calls = v;
                a->cap_calls = cap;
        }
        c = &res->calls[res->n_calls];
        *c = (heal_ask_call){ .turn = turn,
                              .id = strdup(tc->id ? tc->id : ""),
                              .name = strdup(tc->name ? tc->name : ""),
                              .arguments = strdup(tc->arguments ? tc->arguments : "") };
        res->n_calls++;
        return c->id && c->name && c->arguments ? c : NULL;
}

static char *error_result(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static char *error_result(const char *fmt, ...)
{
        char msg[HEAL_ERROR_MSG_MAX + 256];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        return json_text_take(json_pack("{s:o}", "error", json_string_bytes(msg, strlen(msg))));
}

/* Run one call (or say why not) into @c->result. */
static void run_call(struct ask *a, heal_ask_call *c, const heal_llm_tool_call *tc)
{
        struct run_code_call rc;
        heal_runner_result rr = { 0 };
        heal_error err = HEAL_ERROR_INIT;
        json_t *args;

        if (strcmp(c->name, "run_code") != 0) {
                c->result =
                        error_result("there is no tool '%s': the only tool is run_code", c->name);
                return;
        }
        args = tc->arguments_valid ? json_loads(tc->arguments, JSON_ALLOW_NUL, NULL) : NULL;
        if (!args) {
                c->result = error_result(
                        "the arguments are not a JSON object (%.200s): call run_code again with "
                        "{\"language\": \"python3\", \"code\": \"print(1)\"} and your program",
                        c->arguments);
                return;
        }
        if (run_code_parse(&rc, args, &a->o->limits, &a->o->compile_limits, &a->caps, &err) < 0) {
                json_decref(args);
                c->result = error_result("%s", err.msg);
                return;
        }
        json_decref(args);
        if (heal_runner_exec(&rr, a->o->runner, &rc.ro, &err) < 0) {
                c->result = error_result("heal could not run it: %s", err.msg);
        } else {
                c->ran = true;
                c->status = rr.status;
                c->wall_ms = rr.compile.res.wall_ms + rr.run.res.wall_ms;
                c->result = json_text_take(run_code_brief(&rr, TAIL_MAX));
        }
        heal_runner_result_release(&rr);
        run_code_release(&rc);
}

static void tell(const struct ask *a, heal_ask_event ev, const heal_ask_call *c)
{
        if (a->o->on_event)
                a->o->on_event(ev, c, a->o->userdata);
}

/* A call without an id (some servers leave it out) gets one, so that its answer can name it. */
static int name_call(heal_llm_tool_call *tc, unsigned turn, size_t i)
{
        char id[48];

        if (tc->id && *tc->id)
                return 0;
        snprintf(id, sizeof(id), "call_%u_%zu", turn, i);
        free(tc->id);
        tc->id = strdup(id);
        return tc->id ? 0 : -ENOMEM;
}

/* The calls of one turn, each answered by a tool message. 1 when canceled. */
static int run_calls(struct ask *a, unsigned turn, heal_llm_choice *ch)
{
        for (size_t i = 0; i < ch->n_tool_calls; i++) {
                heal_ask_call *c;

                if (name_call(&ch->tool_calls[i], turn, i) < 0 ||
                    !(c = new_call(a, turn, &ch->tool_calls[i])))
                        return -ENOMEM;
                tell(a, HEAL_ASK_CALLING, c);
                if (i < CALLS_PER_TURN_MAX)
                        run_call(a, c, &ch->tool_calls[i]);
                else
                        c->result = error_result("not run: at most %d calls run in one turn; "
                                                 "call it again in the next",
                                                 CALLS_PER_TURN_MAX);
                if (!c->result)
                        return -ENOMEM;
                tell(a, HEAL_ASK_CALLED, c);
                if (push_msg(a, (heal_llm_message){ .role = HEAL_LLM_TOOL,
                                                    .content = c->result,
                                                    .tool_call_id = ch->tool_calls[i].id }) < 0)
                        return -ENOMEM;
                if (c->ran && c->status == HEAL_EXEC_CANCELED)
                        return 1;
        }
        return 0;
}

/* Ask turn @turn into a->resps[a->n_resps]. 0, or 1 with the verdict set. */
static int ask_turn(struct ask *a, unsigned turn)
{
        heal_llm_request req = HEAL_LLM_REQUEST_INIT;
        heal_error err = HEAL_ERROR_INIT;
        heal_llm_response *resp = &a->resps[a->n_resps];
        int r;

        req.model = a->o->model;
        req.system = a->o->system ? a->o->system : default_system;
        req.messages = a->msgs;
        req.n_messages = a->n_msgs;
        req.tools = heal_ask_run_code_tool();
        req.n_tools = 1;
        req.temperature = a->o->temperature;
        req.max_tokens = a->o->max_tokens;
        tell(a, HEAL_ASK_ASKING, NULL);
        a->res->turns = turn;
        r = heal_llm_complete(a->o->llm, &req, resp, &err);
        if (r == 0 && resp->n_choices == 0)
                r = heal_error_set(&err, -EPROTO, "the model gave no answer");
        if (r < 0) {
                heal_llm_response_release(resp);
                a->res->verdict = r == -EDQUOT ? HEAL_ASK_BUDGET : HEAL_ASK_MODEL_ERROR;
                snprintf(a->res->message, sizeof(a->res->message), "%s", err.msg);
                return 1;
        }
        a->n_resps++;
        return 0;
}

static int remember_text(heal_ask_result *res, const char *text)
{
        if (!text || !*text)
                return 0;
        free(res->answer);
        res->answer = strdup(text);
        return res->answer ? 0 : -ENOMEM;
}

static int loop(struct ask *a, unsigned max_turns)
{
        for (unsigned turn = 1; turn <= max_turns; turn++) {
                heal_llm_choice *ch;
                int r;

                if (ask_turn(a, turn))
                        return 0;
                ch = &a->resps[a->n_resps - 1].choices[0];
                if (ch->n_tool_calls == 0) {
                        a->res->verdict = HEAL_ASK_ANSWERED;
                        free(a->res->answer);
                        a->res->answer = strdup(ch->text ? ch->text : "");
                        return a->res->answer ? 0 : -ENOMEM;
                }
                if (remember_text(a->res, ch->text) < 0)
                        return -ENOMEM;
                if (push_msg(a, (heal_llm_message){ .role = HEAL_LLM_ASSISTANT,
                                                    .content = ch->text,
                                                    .tool_calls = ch->tool_calls,
                                                    .n_tool_calls = ch->n_tool_calls }) < 0)
                        return -ENOMEM;
                r = run_calls(a, turn, ch);
                if (r < 0)
                        return r;
                if (r > 0) {
                        a->res->verdict = HEAL_ASK_CANCELED;
                        snprintf(a->res->message, sizeof(a->res->message), "canceled");
                        return 0;
                }
        }
        a->res->verdict = HEAL_ASK_TURN_LIMIT;
        snprintf(a->res->message, sizeof(a->res->message),
                 "the model still called tools after %u turns (--max-turns)", max_turns);
        return 0;
}

int heal_ask_run(heal_ask_result *ret, const heal_ask_opts *o, heal_error *err)
{
        heal_ask_result res = { .verdict = HEAL_ASK_TURN_LIMIT };
        struct ask a = { .o = o, .res = &res };
        unsigned max_turns;
        int r = -ENOMEM;

        if (!ret || !o || !o->llm || !o->model || !o->runner || !o->question)
                return heal_error_set(err, -EINVAL,
                                      "invalid argument: a model, a runner and a "
                                      "question are needed");
        max_turns = o->max_turns ? o->max_turns : TURNS_DEFAULT;
        if (max_turns > TURNS_MAX)
                return heal_error_set(err, -EINVAL, "at most %d turns", TURNS_MAX);
        a.caps = (struct run_code_caps){
                .default_wall_ms = o->max_timeout_ms ? o->max_timeout_ms : TIMEOUT_DEFAULT_MS,
                .max_wall_ms = o->max_timeout_ms ? o->max_timeout_ms : TIMEOUT_DEFAULT_MS,
                .max_mem_bytes = o->limits.mem_max_bytes,
                .share_net = o->share_net,
                .keys = ask_keys, /* what the tool's schema offers, nothing more */
        };
        a.resps = calloc(max_turns, sizeof(*a.resps));
        if (a.resps &&
            push_msg(&a, (heal_llm_message){ .role = HEAL_LLM_USER, .content = o->question }) == 0)
                r = loop(&a, max_turns);
        for (size_t i = 0; i < a.n_resps; i++)
                heal_llm_response_release(&a.resps[i]);
        free(a.resps);
        free(a.msgs);
        if (r < 0) {
                heal_ask_result_release(&res);
                return heal_error_set(err, r, "out of memory");
        }
        heal_llm_client_tally(o->llm, &res.tally);
        *ret = res;
        return 0;
}

void heal_ask_result_release(heal_ask_result *r)
{
        if (!r)
                return;
        for (size_t i = 0; i < r->n_calls; i++) {
                free(r->calls[i].id);
                free(r->calls[i].name);
                free(r->calls[i].arguments);
                free(r->calls[i].result);
        }
        free(r->calls);
        free(r->answer);
        memset(r, 0, sizeof(*r));
}
