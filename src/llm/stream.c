/* SPDX-License-Identifier: MIT */
/*
 * The streamed-answer assembler shared by the providers (see stream.h): per choice a text
 * buffer and tool calls whose id, name and JSON arguments arrive in pieces, each capped; at the
 * end the pieces become a heal_llm_response.
 */
#include "llm/stream.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "llm/llm-internal.h"

static int on_sse(const sse_event *ev, void *userdata)
{
        struct llm_stream *s = userdata;

        return s->on_event(s, ev);
}

int llm_stream_new(struct llm_stream **ret, const struct llm_provider *p, heal_llm_response *resp,
                   size_t max_bytes, heal_error *err)
{
        struct llm_stream *s = calloc(1, sizeof(*s));

        if (!s)
                return heal_error_set(err, -ENOMEM, "out of memory");
        s->on_event = p->stream_event;
        s->end_marker = p->end_marker;
        s->resp = resp;
        s->max_bytes = max_bytes;
        s->err = err;
        sse_parser_init(&s->sse, max_bytes, on_sse, s);
        *ret = s;
        return 0;
}

void llm_stream_notify(struct llm_stream *s, const heal_llm_request *req, unsigned attempt,
                       size_t choice_base)
{
        s->notify = req && req->on_delta ? req : NULL;
        s->attempt = attempt;
        s->choice_base = choice_base;
}

void llm_stream_free(struct llm_stream *s)
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
        free(s->blocks);
        sse_parser_release(&s->sse);
        free(s);
}

void *llm_grow(void *v, size_t *n, size_t idx, size_t size)
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

static int choice_at(struct llm_stream *s, size_t k, struct stream_choice **ret)
{
        struct stream_choice *v;

        if (k >= STREAM_CHOICES_MAX)
                return heal_error_set(s->err, -EPROTO, "stream: choice index %zu", k);
        v = llm_grow(s->choices, &s->n_choices, k, sizeof(*s->choices));
        if (!v)
                return heal_error_set(s->err, -ENOMEM, "out of memory");
        s->choices = v;
        *ret = &v[k];
        return 0;
}

int llm_stream_text(struct llm_stream *s, size_t choice, const char *text, size_t len)
{
        struct stream_choice *ch = NULL;
        int r = choice_at(s, choice, &ch);

        if (r < 0)
                return r;
        if (ch->text.max == 0)
                heal_buf_init(&ch->text, s->max_bytes);
        if ((r = heal_buf_append(&ch->text, text, len)) < 0)
                return heal_error_set(s->err, r, "stream: the answer is larger than %zu bytes",
                                      s->max_bytes);
        if (s->notify && len > 0)
                s->notify->on_delta(s->notify->delta_data, s->attempt, s->choice_base + choice,
                                    text, len);
        return 0;
}

static int append_str(heal_buf *b, json_t *v, size_t max)
{
        if (!json_is_string(v))
                return 0;
        if (b->max == 0)
                heal_buf_init(b, max);
        return heal_buf_append(b, json_string_value(v), json_string_length(v));
}

int llm_stream_call(struct llm_stream *s, size_t choice, size_t call, json_t *id, json_t *name,
                    json_t *args)
{
        struct stream_choice *ch = NULL;
        struct stream_call *c;
        int r = choice_at(s, choice, &ch);

        if (r < 0)
                return r;
        if (call >= STREAM_CALLS_MAX)
                return heal_error_set(s->err, -EPROTO, "stream: tool call index %zu", call);
        c = llm_grow(ch->calls, &ch->n_calls, call, sizeof(*ch->calls));
        if (!c)
                return heal_error_set(s->err, -ENOMEM, "out of memory");
        ch->calls = c;
        c = &ch->calls[call];
        if (c->id.len == 0 && (r = append_str(&c->id, id, 256)) < 0)
                return heal_error_set(s->err, r, "stream: tool call id too long");
        if ((r = append_str(&c->name, name, 256)) < 0 ||
            (r = append_str(&c->args, args, s->max_bytes)) < 0)
                return heal_error_set(s->err, r, "stream: tool call %zu too large", call);
        return 0;
}

size_t llm_stream_n_calls(const struct llm_stream *s, size_t choice)
{
        return choice < s->n_choices ? s->choices[choice].n_calls : 0;
}

int llm_stream_finish_reason(struct llm_stream *s, size_t choice, const char *reason)
{
        struct stream_choice *ch = NULL;
        int r = choice_at(s, choice, &ch);

        if (r < 0)
                return r;
        snprintf(ch->finish_reason, sizeof(ch->finish_reason), "%s", reason);
        return 0;
}

int llm_stream_feed(const char *data, size_t len, void *userdata)
{
        struct llm_stream *s = userdata;
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

static int take_calls(heal_llm_choice *out, struct stream_choice *ch, heal_error *err)
{
        out->tool_calls = calloc(ch->n_calls ? ch->n_calls : 1, sizeof(*out->tool_calls));
        if (!out->tool_calls)
                return heal_error_set(err, -ENOMEM, "out of memory");
        for (size_t j = 0; j < ch->n_calls; j++, out->n_tool_calls++) {
                heal_llm_tool_call *tc = &out->tool_calls[j];

                tc->id = take(&ch->calls[j].id);
                tc->name = take(&ch->calls[j].name);
                /* A call without arguments streams none: that is the empty object. */
                tc->arguments = ch->calls[j].args.len ? take(&ch->calls[j].args) : strdup("{}");
                if (!tc->id || !tc->name || !tc->arguments)
                        return heal_error_set(err, -ENOMEM, "out of memory");
                tc->arguments_valid = llm_is_json_object(tc->arguments);
        }
        return 0;
}

int llm_stream_finish(struct llm_stream *s, heal_error *err)
{
        heal_llm_response *resp = s->resp;
        int r = 0;

        if (sse_parser_finish(&s->sse) < 0 || !s->done)
                return heal_error_set(err, -EPROTO, "the stream ended before %s (cut mid-way?)",
                                      s->end_marker);
        if (s->n_choices == 0)
                return heal_error_set(err, -EPROTO, "the stream carried no choice");
        resp->choices = calloc(s->n_choices, sizeof(*resp->choices));
        if (!resp->choices)
                return heal_error_set(err, -ENOMEM, "out of memory");
        for (size_t i = 0; i < s->n_choices && r == 0; i++, resp->n_choices++) {
                struct stream_choice *ch = &s->choices[i];
                heal_llm_choice *out = &resp->choices[i];

                out->text = take(&ch->text);
                memcpy(out->finish_reason, ch->finish_reason, sizeof(out->finish_reason));
                if (!out->text)
                        return heal_error_set(err, -ENOMEM, "out of memory");
                r = take_calls(out, ch, err);
        }
        return r;
}
