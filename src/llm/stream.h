/* SPDX-License-Identifier: MIT */
#ifndef HEAL_LLM_STREAM_H
#define HEAL_LLM_STREAM_H

/*
 * A streamed answer assembled from server-sent events, whatever the provider: the provider's
 * event handler (openai_stream.c, anthropic_stream.c) reads each event and hands the assembler
 * text fragments, tool-call pieces, finish reasons and usage; the assembler keeps them per
 * choice, tells the caller's on_delta each text fragment, and builds the heal_llm_response when
 * the stream ends. A stream that stops before its provider's end marker is an error, not a
 * short answer.
 */

#include <jansson.h>

#include "heal/buf.h"
#include "heal/llm.h"

#include "llm/sse.h"

#define STREAM_CHOICES_MAX 64
#define STREAM_CALLS_MAX   128

struct llm_provider;
struct llm_stream;
typedef int (*llm_stream_event_fn)(struct llm_stream *s, const sse_event *ev);

struct stream_call {
        heal_buf id, name, args;
};

struct stream_choice {
        heal_buf text;
        char finish_reason[32];
        struct stream_call *calls;
        size_t n_calls;
};

struct llm_stream {
        struct sse_parser sse;
        llm_stream_event_fn on_event;
        const char *end_marker;
        heal_llm_response *resp; /* usage and request id go straight here */
        struct stream_choice *choices;
        size_t n_choices;
        size_t max_bytes;
        bool done;                      /* the provider's end marker arrived */
        heal_error *err;                /* where a feed error is described */
        const heal_llm_request *notify; /* whose on_delta hears each text fragment, or NULL */
        unsigned attempt;
        size_t choice_base; /* added to choice indexes told to on_delta */
        /* Provider state: Anthropic's content-block index -> tool-call slot + 1 (0: text). */
        size_t *blocks;
        size_t n_blocks;
};

/* A stream of @p's wire format whose answer goes to @resp; @max_bytes caps each piece. */
int llm_stream_new(struct llm_stream **ret, const struct llm_provider *p, heal_llm_response *resp,
                   size_t max_bytes, heal_error *err);
/* Tell @req's on_delta (if any) each text fragment, as HTTP attempt @attempt (from 1), with
 * @choice_base added to the choice index. */
void llm_stream_notify(struct llm_stream *s, const heal_llm_request *req, unsigned attempt,
                       size_t choice_base);
/* An http_sink function: parse @len bytes of the body. */
int llm_stream_feed(const char *data, size_t len, void *userdata);
/* The body ended: -EPROTO unless the end marker came; else the response is filled. */
int llm_stream_finish(struct llm_stream *s, heal_error *err);
void llm_stream_free(struct llm_stream *s);

/* For the providers' event handlers; each returns 0 or a negative errno with s->err set. */
int llm_stream_text(struct llm_stream *s, size_t choice, const char *text, size_t len);
/* Append to tool call @call of @choice: @id (kept once), @name and an @args piece, each a JSON
 * string or NULL. */
int llm_stream_call(struct llm_stream *s, size_t choice, size_t call, json_t *id, json_t *name,
                    json_t *args);
/* The number of tool calls @choice has so far. */
size_t llm_stream_n_calls(const struct llm_stream *s, size_t choice);
int llm_stream_finish_reason(struct llm_stream *s, size_t choice, const char *reason);
/* Grow @v (elements of @size) to hold index @idx; new elements zeroed; NULL when out of memory. */
void *llm_grow(void *v, size_t *n, size_t idx, size_t size);

#endif
