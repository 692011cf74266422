/* SPDX-License-Identifier: MIT */
/*
 * A streamed chat completion ("stream": true) assembled from its server-sent events: each chunk
 * carries deltas per choice (by "index"): content fragments, and tool calls whose id, name and
 * "arguments" string arrive in pieces keyed by their own "index". With include_usage a last chunk
 * has "choices": [] and the usage. "data: [DONE]" ends the stream; a stream that stops before it
 * is an error, not a short answer.
 * See: https://platform.openai.com/docs/api-reference/chat-streaming
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "llm/llm-internal.h"
#include "llm/sse.h"

#define STREAM_CHOICES_MAX 64
#define STREAM_CALLS_MAX   128

struct stream_call {
        heal_buf id, name, args;
};

struct stream_choice {
        heal_buf text;
        char finish_reason[32];
        struct stream_call *calls;
        size_t n_calls;
};

struct openai_stream {
        struct sse_parser sse;
        heal_llm_response *resp;
        struct stream_choice *choices;
        size_t n_choices;
        size_t max_bytes;
        bool done;
        heal_error *err; /* where a feed error is described; set by openai_stream_new() */
        const heal_llm_request *notify; /* whose on_delta hears each text fragment, or NULL */
        unsigned attempt;
};

static int on_event(const sse_event *ev, void *userdata);

int openai_stream_new(struct openai_stream **ret, heal_llm_response *resp, size_t max_bytes,
                      heal_error *err)
{
        struct openai_stream *s = calloc(1, sizeof(*s));

        if (!s)
                return heal_error_set(err, -ENOMEM, "out of memory");
        s->resp = resp;
        s->max_bytes = max_bytes;
        s->err = err;
        sse_parser_init(&s->sse, max_bytes, on_event, s);
        *ret = s;
        return 0;
}

void openai_stream_notify(struct openai_stream *s, const heal_llm_request *req, unsigned attempt)
{
        s->notify = req && req->on_delta ? req : NULL;
        s->attempt = attempt;
}

void openai_stream_free(struct openai_stream *s)
{
        if (!s)
                return;
        for (size_t i = 0; i < s->n_choices; i++) {
                heal_buf_release(&s->choices[i].text);
                for (size_t j = 0; j < s->choices[i].n_calls; j++) {
                        heal_buf_release(&s->choices[i].calls[j].id);
                        heal_buf_release(&s->choices[i].calls[j].name);
                        heal_buf_release(&s->choices[i].calls[j].args);
                }
                free(s->choices[i].calls);
        }
        free(s->choices);
        sse_parser_release(&s->sse);
        free(s);
}

/* Grow @v (elements of @size) to hold index @idx; new elements zeroed. */
static void *grow(void *v, size_t *n, size_t idx, size_t size)
{
        char *p;

        if (idx < *n)
                return v;
        p = realloc(v, (idx + 1) * size);
        if (!p)
                return NULL;
        memset(p + *n * size, 0, (idx + 1 - *n) * size);
        *n = idx + 1;
        return p;
}

static int append_str(heal_buf *b, json_t *v, size_t max)
{
        if (!json_is_string(v))
                return 0;
        if (b->max == 0)
                heal_buf_init(b, max);
        return heal_buf_append(b, json_string_value(v), json_string_length(v));
}

static int apply_tool_calls(struct openai_stream *s, struct stream_choice *ch, json_t *calls)
{
        for (size_t i = 0; i < json_array_size(calls); i++) {
                json_t *tc = json_array_get(calls, i), *fn = json_object_get(tc, "function");
                json_t *index = json_object_get(tc, "index");
                size_t k = json_is_integer(index) ? (size_t)json_integer_value(index) : i;
                struct stream_call *c;
                int r;

                if (k >= STREAM_CALLS_MAX)
                        return heal_error_set(s->err, -EPROTO, "stream: tool call index %zu", k);
                c = grow(ch->calls, &ch->n_calls, k, sizeof(*ch->calls));
                if (!c)
                        return heal_error_set(s->err, -ENOMEM, "out of memory");
                ch->calls = c;
                c = &ch->calls[k];
                if (c->id.len == 0 && (r = append_str(&c->id, json_object_get(tc, "id"), 256)) < 0)
                        return heal_error_set(s->err, r, "stream: tool call id too long");
                if ((r = append_str(&c->name, json_object_get(fn, "name"), 256)) < 0 ||
                    (r = append_str(&c->args, json_object_get(fn, "arguments"), s->max_bytes)) < 0)
                        return heal_error_set(s->err, r, "stream: tool call %zu too large", k);
        }
        return 0;
}

static int apply_choice(struct openai_stream *s, json_t *c, size_t pos)
{
        json_t *index = json_object_get(c, "index"), *delta = json_object_get(c, "delta");
        json_t *finish = json_object_get(c, "finish_reason"), *content;
        size_t k = json_is_integer(index) ? (size_t)json_integer_value(index) : pos;
        struct stream_choice *v, *ch;
        int r;

        if (k >= STREAM_CHOICES_MAX)
                return heal_error_set(s->err, -EPROTO, "stream: choice index %zu", k);
        v = grow(s->choices, &s->n_choices, k, sizeof(*s->choices));
        if (!v)
                return heal_error_set(s->err, -ENOMEM, "out of memory");
        s->choices = v;
        ch = &s->choices[k];
        content = json_object_get(delta, "content");
        if ((r = append_str(&ch->text, content, s->max_bytes)) < 0)
                return heal_error_set(s->err, r, "stream: the answer is larger than %zu bytes",
                                      s->max_bytes);
        if (s->notify && json_string_length(content) > 0)
                s->notify->on_delta(s->notify->delta_data, s->attempt, k,
                                    json_string_value(content), json_string_length(content));
        if (json_is_string(finish))
                snprintf(ch->finish_reason, sizeof(ch->finish_reason), "%s",
                         json_string_value(finish));
        return apply_tool_calls(s, ch, json_object_get(delta, "tool_calls"));
}

static int on_event(const sse_event *ev, void *userdata)
{
        struct openai_stream *s = userdata;
        json_t *chunk, *choices, *usage, *e;
        json_error_t jerr;
        int r = 0;

        if (strcmp(ev->data, "[DONE]") == 0) {
                s->done = true;
                return 0;
        }
        chunk = json_loadb(ev->data, ev->data_len, 0, &jerr);
        if (!json_is_object(chunk)) {
                json_decref(chunk);
                return heal_error_set(s->err, -EPROTO, "stream: expected a JSON chunk, got '%.*s'",
                                      (int)MIN(ev->data_len, 60), ev->data);
        }
        if ((e = json_object_get(chunk, "error"))) {
                json_t *m = json_object_get(e, "message");

                r = heal_error_set(s->err, -EPROTO, "stream: the provider reported an error: %s",
                                   json_is_string(m) ? json_string_value(m) : "(no message)");
        }
        choices = json_object_get(chunk, "choices");
        for (size_t i = 0; r == 0 && i < json_array_size(choices); i++)
                r = apply_choice(s, json_array_get(choices, i), i);
        if (r == 0 && json_is_object(usage = json_object_get(chunk, "usage"))) {
                s->resp->input_tokens =
                        (uint64_t)json_integer_value(json_object_get(usage, "prompt_tokens"));
                s->resp->output_tokens =
                        (uint64_t)json_integer_value(json_object_get(usage, "completion_tokens"));
        }
        if (r == 0 && !s->resp->request_id[0] && json_is_string(json_object_get(chunk, "id")))
                snprintf(s->resp->request_id, sizeof(s->resp->request_id), "%s",
                         json_string_value(json_object_get(chunk, "id")));
        json_decref(chunk);
        return r;
}

int openai_stream_feed(const char *data, size_t len, void *userdata)
{
        struct openai_stream *s = userdata;
        int r = sse_parser_feed(&s->sse, data, len);

        if (r == -E2BIG)
                return heal_error_set(s->err, r, "stream: an event is larger than %zu bytes",
                                      s->max_bytes);
        return r;
}

static char *take(heal_buf *b)
{
        return heal_buf_detach(b, NULL);
}

int openai_stream_finish(struct openai_stream *s, heal_error *err)
{
        heal_llm_response *resp = s->resp;

        if (sse_parser_finish(&s->sse) < 0 || !s->done)
                return heal_error_set(err, -EPROTO,
                                      "the stream ended before 'data: [DONE]' (cut mid-way?)");
        if (s->n_choices == 0)
                return heal_error_set(err, -EPROTO, "the stream carried no choice");
        resp->choices = calloc(s->n_choices, sizeof(*resp->choices));
        if (!resp->choices)
                return heal_error_set(err, -ENOMEM, "out of memory");
        for (size_t i = 0; i < s->n_choices; i++, resp->n_choices++) {
                struct stream_choice *ch = &s->choices[i];
                heal_llm_choice *out = &resp->choices[i];

                out->text = take(&ch->text);
                memcpy(out->finish_reason, ch->finish_reason, sizeof(out->finish_reason));
                out->tool_calls = calloc(ch->n_calls ? ch->n_calls : 1, sizeof(*out->tool_calls));
                if (!out->text || !out->tool_calls)
                        return heal_error_set(err, -ENOMEM, "out of memory");
                for (size_t j = 0; j < ch->n_calls; j++, out->n_tool_calls++) {
                        heal_llm_tool_call *tc = &out->tool_calls[j];

                        tc->id = take(&ch->calls[j].id);
                        tc->name = take(&ch->calls[j].name);
                        tc->arguments = take(&ch->calls[j].args);
                        if (!tc->id || !tc->name || !tc->arguments)
                                return heal_error_set(err, -ENOMEM, "out of memory");
                        tc->arguments_valid = llm_is_json_object(tc->arguments);
                }
        }
        return 0;
}
