/* SPDX-License-Identifier: MIT */
/*
 * heal_gen_run(): one conversation with the model. The task goes out with a system prompt that
 * asks for one complete program in one fenced block; each answer's program runs in the
 * sandbox; a failure goes back as the next user turn (feedback.c says what to tell) and the
 * whole corrected program is asked for, until a run is ok or the retries are spent.
 */
#include "heal/gen.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "runner/runner-internal.h"

#define RETRIES_DEFAULT   3
#define RETRIES_MAX       50
#define FEEDBACK_MAX      (24u << 10) /* bytes of a feedback turn */
#define FEEDBACK_TAIL_MAX (6u << 10)  /* bytes of one quoted output */

struct lang_words {
        const char *name, *display, *tag, *rules;
};

static const struct lang_words langs[] = {
        { "go", "Go", "go",
          "It is one file of package main with a func main(), built with 'go build' as a module "
          "named main (Go 1.19 or later); use only the standard library: nothing can be "
          "downloaded." },
        { "c", "C", "c",
          "It is one C11 file with a main function, built with 'cc -O2 -Wall -lm'; use only "
          "the C standard library and POSIX." },
        { "python3", "Python 3", "python",
          "It is one Python 3 file run with 'python3'; use only the standard library." },
        { "sh", "POSIX sh", "sh", "It is one script run with 'sh' (POSIX shell, no bashisms)." },
        { "bash", "bash", "bash", "It is one script run with 'bash'." },
};

static const struct lang_words *words_for(const char *canon)
{
        for (size_t i = 0; i < ELEMENTSOF(langs); i++)
                if (!strcmp(langs[i].name, canon))
                        return &langs[i];
        return NULL;
}

const char *heal_gen_verdict_name(heal_gen_verdict v)
{
        static const char *const names[] = {
                [HEAL_GEN_OK] = "ok",
                [HEAL_GEN_FAILED] = "failed",
                [HEAL_GEN_BUDGET] = "budget",
                [HEAL_GEN_MODEL_ERROR] = "model_error",
                [HEAL_GEN_SETUP_ERROR] = "setup_error",
                [HEAL_GEN_CANCELED] = "canceled",
        };

        return (unsigned)v < ELEMENTSOF(names) ? names[v] : "?";
}

struct gen {
        const heal_gen_opts *o;
        const struct lang_words *w;
        heal_gen_result *res;
        char *system;
        heal_llm_message *msgs; /* the task, then (answer, feedback) per failed attempt */
        char **feedback;
        size_t n_msgs, max_attempts;
};

static char *system_prompt(const struct gen *g)
{
        heal_runner_limits def = { 0 }, lim = g->o->run.run_limits, *l = &lim;
        heal_buf b = HEAL_BUF_INIT(8192);

        heal_runner_lang_limits(g->w->name, NULL, &def); /* what the run gets: given or default */
        if (!lim.wall_ms)
                lim.wall_ms = def.wall_ms;
        if (!lim.mem_max_bytes)
                lim.mem_max_bytes = def.mem_max_bytes;

        heal_buf_printf(&b,
                        "You write programs that run in a sandbox. Write one complete, "
                        "self-contained %s program that does what the user asks. %s\n"
                        "Answer with exactly one fenced code block (```%s ... ```) holding "
                        "the whole program; put nothing else in code blocks.\n"
                        "The program runs without network access",
                        g->w->display, g->w->rules, g->w->tag);
        if (l->wall_ms)
                heal_buf_printf(&b, ", for at most %.1f s", (double)l->wall_ms / 1000);
        if (l->mem_max_bytes)
                heal_buf_printf(&b, ", with %llu MiB of memory",
                                (unsigned long long)(l->mem_max_bytes >> 20));
        heal_buf_printf(&b,
                        "; its standard input is %s, and what it prints on standard output "
                        "is shown to the user.\n"
                        "When told that the program failed, find the cause and answer with "
                        "the whole corrected program, not a diff.",
                        g->o->run.stdin_data || g->o->run.stdin_fd >= 0 ? "given to it" : "empty");
        return heal_buf_detach(&b, NULL);
}

/* The next user turn after a failed attempt. */
static char *feedback(const struct gen *g, const heal_gen_attempt *a, const char *finish)
{
        heal_buf b = HEAL_BUF_INIT(FEEDBACK_MAX);

        if (!a->code.code)
                heal_buf_printf(&b, "I could not run your answer: %s.\n", a->extract_error);
        else
                feedback_describe(&b, &a->result, FEEDBACK_TAIL_MAX);
        if (!strcmp(finish, "length"))
                heal_buf_puts(&b, "\nYour answer was cut off at the length limit: make the "
                                  "program shorter.\n");
        heal_buf_printf(&b,
                        "\nFix the program and answer with the whole corrected %s program "
                        "in one ```%s block.",
                        g->w->display, g->w->tag);
        return heal_buf_detach(&b, NULL);
}

static void tell(const struct gen *g, heal_gen_event ev, size_t i)
{
        if (g->o->on_event)
                g->o->on_event(ev, &g->res->attempts[i], (unsigned)i + 1, g->o->userdata);
}

static void set_message(heal_gen_result *res, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));

static void set_message(heal_gen_result *res, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(res->message, sizeof(res->message), fmt, ap);
        va_end(ap);
}

/* Ask for attempt @i. 0, or < 0 with the verdict and message set. */
static int ask(struct gen *g, size_t i, char *finish, size_t finish_len)
{
        heal_llm_request req = HEAL_LLM_REQUEST_INIT;
        heal_llm_response resp = { 0 };
        heal_error err = HEAL_ERROR_INIT;
        heal_gen_attempt *a = &g->res->attempts[i];
        int r;

        req.model = g->o->model;
        req.system = g->system;
        req.messages = g->msgs;
        req.n_messages = g->n_msgs;
        req.temperature = g->o->temperature;
        req.max_tokens = g->o->max_tokens;
        tell(g, HEAL_GEN_ASKING, i);
        r = heal_llm_complete(g->o->llm, &req, &resp, &err);
        if (r == 0 && (resp.n_choices == 0 || !resp.choices[0].text))
                r = heal_error_set(&err, -EPROTO, "the model gave no answer");
        if (r < 0) {
                g->res->verdict = r == -EDQUOT ? HEAL_GEN_BUDGET : HEAL_GEN_MODEL_ERROR;
                set_message(g->res, "%s", err.msg);
                heal_llm_response_release(&resp);
                return r;
        }
        a->answer = TAKE_PTR(resp.choices[0].text);
        snprintf(finish, finish_len, "%s", resp.choices[0].finish_reason);
        heal_llm_response_release(&resp);
        return 0;
}

/* Run attempt @i's program; true when it is over (ok, or not the model's fault). */
static bool run(struct gen *g, size_t i, heal_error *err)
{
        heal_gen_attempt *a = &g->res->attempts[i];
        heal_runner_opts ro = g->o->run;
        heal_runner_file file = { .name = heal_runner_lang_main_file(g->w->name),
                                  .data = a->code.code,
                                  .len = a->code.len };
        int r;

        ro.lang = g->w->name;
        ro.files = &file;
        ro.n_files = 1;
        r = heal_runner_exec(&a->result, g->o->runner, &ro, err);
        if (r < 0) {
                g->res->verdict = HEAL_GEN_SETUP_ERROR;
                set_message(g->res, "%s", err->msg);
                return true;
        }
        a->ran = true;
        tell(g, HEAL_GEN_RAN, i);
        switch (a->result.status) {
        case HEAL_EXEC_OK:
                g->res->verdict = HEAL_GEN_OK;
                g->res->message[0] = '\0';
                return true;
        case HEAL_EXEC_INTERNAL_ERROR:
                g->res->verdict = HEAL_GEN_SETUP_ERROR;
                set_message(g->res, "%s", a->result.message);
                return true;
        case HEAL_EXEC_CANCELED:
                g->res->verdict = HEAL_GEN_CANCELED;
                set_message(g->res, "%s", a->result.message);
                return true;
        default:
                set_message(g->res, "%s: %s", heal_exec_status_to_string(a->result.status),
                            a->result.message);
                return false;
        }
}

/* One attempt: ask, extract, run. 1 when the loop is over, 0 to go on, < 0 on error. */
static int attempt(struct gen *g, size_t i)
{
        heal_gen_attempt *a = &g->res->attempts[i];
        heal_error err = HEAL_ERROR_INIT;
        char finish[32] = "";
        int r;

        if (ask(g, i, finish, sizeof(finish)) < 0)
                return 1;
        g->res->n_attempts = i + 1;
        r = heal_gen_extract(&a->code, a->answer, strlen(a->answer), g->w->name, &err);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                snprintf(a->extract_error, sizeof(a->extract_error), "%s", err.msg);
                set_message(g->res, "no program in the answer: %s", err.msg);
        }
        tell(g, HEAL_GEN_ANSWERED, i);
        if (r == 0 && run(g, i, &err))
                return 1;
        if (g->res->verdict == HEAL_GEN_SETUP_ERROR)
                return 1;
        if (i + 1 == g->max_attempts)
                return 1;
        g->feedback[i] = feedback(g, a, finish);
        if (!g->feedback[i])
                return -ENOMEM;
        g->msgs[g->n_msgs++] =
                (heal_llm_message){ .role = HEAL_LLM_ASSISTANT, .content = a->answer };
        g->msgs[g->n_msgs++] =
                (heal_llm_message){ .role = HEAL_LLM_USER, .content = g->feedback[i] };
        return 0;
}

static int loop(struct gen *g)
{
        for (size_t i = 0; i < g->max_attempts; i++) {
                int r = attempt(g, i);

                if (r != 0)
                        return r < 0 ? r : 0;
        }
        return 0;
}

int heal_gen_run(heal_gen_result *ret, const heal_gen_opts *o, heal_error *err)
{
        heal_gen_result res = { .verdict = HEAL_GEN_FAILED };
        struct gen g = { .o = o, .res = &res };
        const char *canon;
        int r = -ENOMEM;

        if (!ret || !o || !o->llm || !o->model || !o->runner || !o->task)
                return heal_error_set(err, -EINVAL,
                                      "invalid argument: a model, a runner and a "
                                      "task are needed");
        if (o->retries > RETRIES_MAX)
                return heal_error_set(err, -EINVAL, "at most %d retries", RETRIES_MAX);
        canon = heal_runner_lang_canonical(o->lang ? o->lang : "go");
        if (!canon || !(g.w = words_for(canon)))
                return heal_error_set(err, -EINVAL, "unknown language '%s' (known: %s)", o->lang,
                                      heal_runner_langs());
        g.max_attempts = 1 + (o->retries ? o->retries : RETRIES_DEFAULT);
        res.attempts = calloc(g.max_attempts, sizeof(*res.attempts));
        g.msgs = calloc(2 * g.max_attempts, sizeof(*g.msgs));
        g.feedback = calloc(g.max_attempts, sizeof(*g.feedback));
        g.system = res.attempts && g.msgs && g.feedback ? system_prompt(&g) : NULL;
        if (g.system) {
                g.msgs[g.n_msgs++] =
                        (heal_llm_message){ .role = HEAL_LLM_USER, .content = o->task };
                r = loop(&g);
        }
        for (size_t i = 0; g.feedback && i < g.max_attempts; i++)
                free(g.feedback[i]);
        free(g.feedback);
        free(g.msgs);
        free(g.system);
        if (r < 0) {
                heal_gen_result_release(&res);
                return heal_error_set(err, r, "out of memory");
        }
        heal_llm_client_tally(o->llm, &res.tally);
        *ret = res;
        return 0;
}

void heal_gen_result_release(heal_gen_result *r)
{
        if (!r)
                return;
        for (size_t i = 0; i < r->n_attempts; i++) {
                free(r->attempts[i].answer);
                heal_gen_code_release(&r->attempts[i].code);
                heal_runner_result_release(&r->attempts[i].result);
        }
        free(r->attempts);
        memset(r, 0, sizeof(*r));
}
