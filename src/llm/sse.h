/* SPDX-License-Identifier: MIT */
#ifndef HEAL_LLM_SSE_H
#define HEAL_LLM_SSE_H

/*
 * An incremental parser for server-sent events (text/event-stream), as OpenAI-compatible and
 * Anthropic streaming responses use them. Bytes arrive in arbitrary pieces (network reads); each
 * complete event goes to a callback.
 * See: WHATWG HTML Living Standard, section 9.2 "Server-sent events", "Event stream
 * interpretation".
 */

#include <stdbool.h>
#include <stddef.h>

#include "heal/buf.h"

/* One event. Strings are borrowed for the duration of the callback. */
typedef struct sse_event {
        const char *event; /* "message" unless an "event:" field named it */
        const char *data;  /* "data:" lines joined with '\n', NUL-terminated */
        size_t data_len;
        const char *id; /* last "id:" seen on the stream, or "" */
} sse_event;

/* Return < 0 to stop parsing: sse_parser_feed() returns that value. */
typedef int (*sse_event_fn)(const sse_event *ev, void *userdata);

struct sse_parser {
        heal_buf line;  /* the line being read */
        heal_buf data;  /* data of the event being read */
        heal_buf event; /* its event type */
        heal_buf id;
        unsigned retry_ms; /* last valid "retry:" field, 0 if none */
        bool after_cr; /* the previous byte ended a line with CR: a following LF is part of it */
        bool started;  /* past a possible byte order mark */
        bool pending;  /* fields seen since the last dispatch */
        sse_event_fn fn;
        void *userdata;
};

/*
 * sse_parser_init() - Prepare @p; @max_bytes caps one line and one event's data (bytes).
 */
void sse_parser_init(struct sse_parser *p, size_t max_bytes, sse_event_fn fn, void *userdata);

/*
 * sse_parser_feed() - Parse @len bytes of @buf, calling the callback for each complete event.
 * Return: 0; -E2BIG when a line or an event is over the cap; -ENOMEM; or the callback's value.
 */
int sse_parser_feed(struct sse_parser *p, const char *buf, size_t len);

/*
 * sse_parser_finish() - The stream ended.
 * Return: 0 when it ended between events; -EPROTO when it was cut inside one (the standard
 *         discards such an event, but a caller waiting for "[DONE]" needs to know).
 */
int sse_parser_finish(struct sse_parser *p);

/* sse_parser_release() - Free what @p holds. */
void sse_parser_release(struct sse_parser *p);

#endif
