/* SPDX-License-Identifier: MIT */
/*
 * tools/call in threads: each call runs in a detached thread of its own once one of the
 * max_calls slots is free; a cancellation (2025-11-25 basic/utilities/cancellation.mdx)
 * reaches whatever the call is running (a runner, a sandbox, a process group) and the call
 * then ends without an answer; a ticker sends notifications/progress about once a second to
 * calls that asked for it (basic/utilities/progress.mdx), never after their answer.
 *
 * One lock (the server's) guards the list of calls and every field a cancellation or the
 * ticker reads; answers are sent outside it, but "done" is set under it first.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/json.h"
#include "mcp/mcp-internal.h"
#include "runner/tool.h"

#define PROGRESS_EVERY_MS 1000

static void cancel_handles(struct mcp_call *c)
{
        if (c->runner)
                heal_runner_cancel(c->runner);
        if (c->sandbox)
                heal_sandbox_cancel(c->sandbox);
        if (c->pgid > 0)
                kill(-c->pgid, SIGTERM);
}

bool mcp_call_attach(struct mcp_call *c, heal_runner *runner, heal_sandbox *sandbox, pid_t pgid)
{
        bool canceled;

        pthread_mutex_lock(&c->srv->lock);
        c->runner = runner;
        c->sandbox = sandbox;
        c->pgid = pgid;
        canceled = c->canceled;
        if (canceled)
                cancel_handles(c);
        pthread_mutex_unlock(&c->srv->lock);
        return canceled;
}

bool mcp_call_stage(struct mcp_call *c, const char *stage)
{
        bool canceled;

        pthread_mutex_lock(&c->srv->lock);
        c->stage = stage;
        canceled = c->canceled;
        pthread_mutex_unlock(&c->srv->lock);
        return canceled;
}

bool mcp_call_canceled(struct mcp_call *c)
{
        return mcp_call_stage(c, c->stage);
}

static void unlink_call(heal_mcp_server *s, struct mcp_call *c)
{
        for (struct mcp_call **p = &s->calls; *p; p = &(*p)->next)
                if (*p == c) {
                        *p = c->next;
                        break;
                }
        if (c->running)
                s->running--;
        s->n_calls--;
        pthread_cond_broadcast(&s->changed);
}

static void call_free(struct mcp_call *c)
{
        json_decref(c->id);
        json_decref(c->progress_token);
        json_decref(c->arguments);
        free(c);
}

/* The CallToolResult: the JSON as text (for clients before 2025-06-18), structuredContent
 * (from 2025-06-18), isError. A failure of heal itself has only its message. */
static json_t *tool_result_full(const heal_mcp_server *s, json_t *structured, bool is_error,
                                const char *text)
{
        json_t *res = json_pack("{s:[{s:s,s:o}],s:b}", "content", "type", "text", "text",
                                json_string_bytes(text, strlen(text)), "isError", is_error);

        if (res && structured && s->structured)
                json_object_set(res, "structuredContent", structured);
        return res;
}

/* The text when the document twice would not fit: its status and where the rest is. */
static char *summary(json_t *structured, size_t size)
{
        static const char *const keys[] = { "status", "verdict", "exit_code", "message" };
        json_t *o = json_object();
        char note[160];

        for (size_t i = 0; o && i < sizeof(keys) / sizeof(keys[0]); i++)
                if (json_object_get(structured, keys[i]))
                        json_object_set(o, keys[i], json_object_get(structured, keys[i]));
        snprintf(note, sizeof(note),
                 "the whole result (%zu bytes of JSON) is in structuredContent only", size);
        json_object_set_new(o, "note", json_string(note));
        return json_text_take(o);
}

/* Within MCP_MESSAGE_MAX: the document as text and structured; else a summary as text; else
 * an error result saying so (an SDK client drops a message over 10 MiB, and the connection
 * with it). */
static json_t *tool_result(const heal_mcp_server *s, json_t *structured, bool is_error,
                           const char *message)
{
        char *text = structured ? json_dumps(structured, JSON_COMPACT) : NULL;
        json_t *res = tool_result_full(s, structured, is_error,
                                       text      ? text
                                       : message ? message
                                                 : "");
        size_t size = 0;

        /* the message is the document (L bytes) plus its text, where each byte is escaped into
         * at most 2: under 3L + some, so only a large document needs its exact size */
        if (res && text && 3 * strlen(text) + 65536 >= MCP_MESSAGE_MAX)
                size = json_dumpb(res, NULL, 0, JSON_COMPACT);

        if (res && structured && size > MCP_MESSAGE_MAX && s->structured) {
                char *brief = summary(structured, strlen(text));

                json_decref(res);
                res = brief ? tool_result_full(s, structured, is_error, brief) : NULL;
                size = res ? json_dumpb(res, NULL, 0, JSON_COMPACT) : 0;
                free(brief);
        }
        if (res && size > MCP_MESSAGE_MAX) {
                char msg[256];

                snprintf(msg, sizeof(msg),
                         "the result is %zu bytes, over the %u MiB heal sends in one message: "
                         "ask for less output (--output-limit of heal mcp)",
                         size, MCP_MESSAGE_MAX >> 20);
                json_decref(res);
                res = tool_result_full(s, NULL, true, msg);
        }
        free(text);
        json_decref(structured);
        return res;
}

static void finish(struct mcp_call *c, json_t *structured, bool is_error, const char *message)
{
        heal_mcp_server *s = c->srv;
        uint64_t ms = mcp_now_ms() - c->start_ms;
        char *id = json_dumps(c->id, JSON_ENCODE_ANY);
        const char *st = json_string_value(json_object_get(structured, "status"));
        const char *verdict = json_string_value(json_object_get(structured, "verdict"));
        char outcome[64];
        bool canceled, quiet = s->o.quiet;

        /* what the log says: the document's own status (compile_error, timeout, fixed...) */
        snprintf(outcome, sizeof(outcome), "%s%s%.40s", is_error ? "error" : "ok",
                 st || verdict ? " " : "",
                 st        ? st
                 : verdict ? verdict
                           : "");
        pthread_mutex_lock(&s->lock);
        c->done = true;
        canceled = c->canceled;
        pthread_mutex_unlock(&s->lock);
        if (!canceled)
                mcp_send(s, jsonrpc_result(c->id, tool_result(s, structured, is_error, message)));
        else
                json_decref(structured);
        if (!quiet || (message && *message))
                mcp_log(s, "%s (id %s): %s%s%s, %llu ms", c->tool->name, id ? id : "?",
                        canceled ? "canceled" : outcome, message && *message ? ": " : "",
                        message ? message : "", (unsigned long long)ms);
        free(id);
        pthread_mutex_lock(&s->lock);
        unlink_call(s, c);
        pthread_mutex_unlock(&s->lock);
        call_free(c);
}

static void *call_thread(void *arg)
{
        struct mcp_call *c = arg;
        heal_mcp_server *s = c->srv;
        heal_error err = HEAL_ERROR_INIT;
        json_t *structured = NULL;
        bool is_error = false;
        int r;

        pthread_mutex_lock(&s->lock);
        while (s->running >= s->o.max_calls && !c->canceled)
                pthread_cond_wait(&s->changed, &s->lock);
        if (!c->canceled) {
                s->running++;
                c->running = true;
                c->stage = "starting";
        }
        pthread_mutex_unlock(&s->lock);
        if (mcp_call_canceled(c)) {
                finish(c, NULL, true, "");
                return NULL;
        }
        r = c->tool->run(c, &structured, &is_error, &err);
        if (r < 0) {
                json_decref(structured);
                finish(c, NULL, true, err.msg);
        } else {
                finish(c, structured, is_error, NULL);
        }
        return NULL;
}

static json_t *progress_token(json_t *params)
{
        json_t *t = json_object_get(json_object_get(params, "_meta"), "progressToken");

        return json_is_string(t) || json_is_integer(t) ? json_deep_copy(t) : NULL;
}

static struct mcp_call *call_new(heal_mcp_server *s, const struct mcp_tool *t, json_t *id,
                                 json_t *params)
{
        struct mcp_call *c = calloc(1, sizeof(*c));
        json_t *args = json_object_get(params, "arguments");

        if (!c)
                return NULL;
        c->srv = s;
        c->tool = t;
        c->pgid = -1;
        c->stage = "waiting for a free slot";
        c->start_ms = c->last_progress_ms = mcp_now_ms();
        /* copies: the message is freed when this returns, and jansson values are not meant to
         * be shared between threads */
        c->id = json_deep_copy(id);
        c->arguments = json_is_object(args) ? json_deep_copy(args) : json_object();
        c->progress_token = progress_token(params);
        if (!c->id || !c->arguments) {
                call_free(c);
                return NULL;
        }
        return c;
}

int mcp_call_start(heal_mcp_server *s, const struct mcp_tool *t, json_t *id, json_t *params,
                   char *why, size_t why_len)
{
        struct mcp_call *c;
        pthread_attr_t attr;
        pthread_t th;
        int r;

        pthread_mutex_lock(&s->lock);
        if (s->n_calls >= MCP_CALLS_MAX) {
                pthread_mutex_unlock(&s->lock);
                snprintf(why, why_len, "%d tool calls are in progress already: wait for one",
                         MCP_CALLS_MAX);
                return JSONRPC_INTERNAL_ERROR;
        }
        for (c = s->calls; c; c = c->next)
                if (json_equal(c->id, id)) {
                        pthread_mutex_unlock(&s->lock);
                        snprintf(why, why_len, "a call with this request id is in progress");
                        return JSONRPC_INVALID_REQUEST;
                }
        c = call_new(s, t, id, params);
        if (!c) {
                pthread_mutex_unlock(&s->lock);
                snprintf(why, why_len, "out of memory");
                return JSONRPC_INTERNAL_ERROR;
        }
        c->next = s->calls;
        s->calls = c;
        s->n_calls++;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        r = pthread_create(&th, &attr, call_thread, c);
        pthread_attr_destroy(&attr);
        if (r != 0) {
                unlink_call(s, c);
                pthread_mutex_unlock(&s->lock);
                call_free(c);
                snprintf(why, why_len, "cannot start a thread: %s", strerror(r));
                return JSONRPC_INTERNAL_ERROR;
        }
        pthread_mutex_unlock(&s->lock);
        return 0;
}

bool mcp_call_in_flight(heal_mcp_server *s, json_t *id)
{
        bool found = false;

        pthread_mutex_lock(&s->lock);
        for (struct mcp_call *c = s->calls; c && !found; c = c->next)
                found = json_equal(c->id, id) && !c->done;
        pthread_mutex_unlock(&s->lock);
        return found;
}

void mcp_call_cancel(heal_mcp_server *s, json_t *id)
{
        pthread_mutex_lock(&s->lock);
        for (struct mcp_call *c = s->calls; c; c = c->next)
                if (json_equal(c->id, id) && !c->done) {
                        c->canceled = true;
                        cancel_handles(c);
                }
        pthread_cond_broadcast(&s->changed);
        pthread_mutex_unlock(&s->lock);
}

/* Under the lock: a progress notification to each running call that asked and is due. */
static void send_progress(heal_mcp_server *s, uint64_t now)
{
        for (struct mcp_call *c = s->calls; c; c = c->next) {
                if (!c->progress_token || c->done || c->canceled ||
                    now - c->last_progress_ms < PROGRESS_EVERY_MS)
                        continue;
                c->last_progress_ms = now;
                /* progress: whole seconds since the call came; notifications are at least a
                 * second apart, so it grows with each */
                mcp_send(s, jsonrpc_notification("notifications/progress",
                                                 json_pack("{s:O,s:I,s:s}", "progressToken",
                                                           c->progress_token, "progress",
                                                           (json_int_t)((now - c->start_ms) / 1000),
                                                           "message", c->stage)));
        }
}

static void *ticker(void *arg)
{
        heal_mcp_server *s = arg;

        pthread_mutex_lock(&s->lock);
        while (!s->stopping) {
                struct timespec until;

                clock_gettime(CLOCK_MONOTONIC, &until);
                until.tv_nsec += 250 * 1000000L;
                if (until.tv_nsec >= 1000000000L)
                        until.tv_sec++, until.tv_nsec -= 1000000000L;
                pthread_cond_timedwait(&s->changed, &s->lock, &until);
                if (!s->stopping)
                        send_progress(s, mcp_now_ms());
        }
        pthread_mutex_unlock(&s->lock);
        return NULL;
}

int mcp_ticker_start(heal_mcp_server *s)
{
        return -pthread_create(&s->ticker, NULL, ticker, s);
}

void mcp_calls_stop(heal_mcp_server *s)
{
        pthread_mutex_lock(&s->lock);
        s->stopping = true;
        for (struct mcp_call *c = s->calls; c; c = c->next) {
                c->canceled = true;
                cancel_handles(c);
        }
        pthread_cond_broadcast(&s->changed);
        while (s->n_calls > 0)
                pthread_cond_wait(&s->changed, &s->lock);
        pthread_mutex_unlock(&s->lock);
        pthread_join(s->ticker, NULL);
}
