/* SPDX-License-Identifier: MIT */
/*
 * Anthropic's streamed message: named events (message_start, content_block_start,
 * content_block_delta, content_block_stop, message_delta, message_stop, ping, error), each with
 * a JSON body whose "type" repeats the name. Content blocks are numbered by "index": a text
 * block's text_delta fragments go to the answer, a tool_use block's input_json_delta pieces to
 * its call's arguments. "message_stop" ends the stream; there is no [DONE]. An "error" event
 * mid-stream (overloaded_error) is worth a retry. The assembling is stream.c's.
 * See: https://docs.anthropic.com/en/docs/build-with-claude/streaming
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "core/util.h"
#include "llm/llm-internal.h"
#include "llm/stream.h"

#define BLOCKS_MAX 1024

static int block_start(struct llm_stream *s, size_t i, json_t *block)
{
        const char *type = json_string_value(json_object_get(block, "type")) ?: "";
        size_t *v, slot;

        if (i >= BLOCKS_MAX)
                return heal_error_set(s->err, -EPROTO, "stream: content block index %zu", i);
        v = llm_grow(s->blocks, &s->n_blocks, i, sizeof(*s->blocks));
        if (!v)
                return heal_error_set(s->err, -ENOMEM, "out of memory");
        s->blocks = v;
        s->blocks[i] = 0; /* a block started again at an index is what it says now */
        if (strcmp(type, "text") == 0) {
                json_t *t = json_object_get(block, "text");

                return llm_stream_text(s, 0, json_string_value(t) ?: "", json_string_length(t));
        }
        if (strcmp(type, "tool_use") != 0)
                return 0; /* thinking and server tools are not part of the answer */
        slot = llm_stream_n_calls(s, 0);
        s->blocks[i] = slot + 1;
        return llm_stream_call(s, 0, slot, json_object_get(block, "id"),
                               json_object_get(block, "name"), NULL);
}

static int block_delta(struct llm_stream *s, size_t i, json_t *delta)
{
        const char *type = json_string_value(json_object_get(delta, "type")) ?: "";

        if (strcmp(type, "text_delta") == 0) {
                json_t *t = json_object_get(delta, "text");

                return llm_stream_text(s, 0, json_string_value(t) ?: "", json_string_length(t));
        }
        if (strcmp(type, "input_json_delta") != 0)
                return 0;
        if (i >= s->n_blocks || s->blocks[i] == 0)
                return heal_error_set(s->err, -EPROTO,
                                      "stream: input_json_delta for block %zu, which is not a "
                                      "tool_use block",
                                      i);
        return llm_stream_call(s, 0, s->blocks[i] - 1, NULL, NULL,
                               json_object_get(delta, "partial_json"));
}

static int stream_error(struct llm_stream *s, json_t *o)
{
        json_t *e = json_object_get(o, "error");
        const char *type = json_string_value(json_object_get(e, "type")) ?: "error";
        const char *msg = json_string_value(json_object_get(e, "message")) ?: "(no message)";
        bool transient = strcmp(type, "overloaded_error") == 0 || strcmp(type, "api_error") == 0;

        return heal_error_set(s->err, transient ? -EAGAIN : -EPROTO,
                              "stream: the provider reported %s: %s", type, msg);
}

static int apply(struct llm_stream *s, const char *type, json_t *o)
{
        json_t *index = json_object_get(o, "index"), *msg = json_object_get(o, "message");
        size_t i = json_is_integer(index) ? (size_t)json_integer_value(index) : 0;

        if (strcmp(type, "message_start") == 0) {
                anthropic_usage(s->resp, json_object_get(msg, "usage"));
                if (!s->resp->request_id[0] && json_is_string(json_object_get(msg, "id")))
                        snprintf(s->resp->request_id, sizeof(s->resp->request_id), "%s",
                                 json_string_value(json_object_get(msg, "id")));
                return llm_stream_text(s, 0, "", 0); /* the one choice exists from here */
        }
        if (strcmp(type, "content_block_start") == 0)
                return block_start(s, i, json_object_get(o, "content_block"));
        if (strcmp(type, "content_block_delta") == 0)
                return block_delta(s, i, json_object_get(o, "delta"));
        if (strcmp(type, "message_delta") == 0) {
                json_t *stop = json_object_get(json_object_get(o, "delta"), "stop_reason");

                anthropic_usage(s->resp, json_object_get(o, "usage"));
                if (json_is_string(stop))
                        return llm_stream_finish_reason(
                                s, 0, anthropic_finish_reason(json_string_value(stop)));
                return 0;
        }
        if (strcmp(type, "message_stop") == 0)
                s->done = true;
        else if (strcmp(type, "error") == 0)
                return stream_error(s, o);
        return 0; /* ping, content_block_stop, and events added later */
}

int anthropic_stream_event(struct llm_stream *s, const sse_event *ev)
{
        json_error_t jerr;
        json_t *o = json_loadb(ev->data, ev->data_len, 0, &jerr);
        const char *type;
        int r;

        if (!json_is_object(o)) {
                json_decref(o);
                return heal_error_set(s->err, -EPROTO,
                                      "stream: expected a JSON event body for '%s', got '%.*s'",
                                      ev->event, (int)MIN(ev->data_len, 60), ev->data);
        }
        type = json_string_value(json_object_get(o, "type")) ?: ev->event;
        r = apply(s, type, o);
        json_decref(o);
        return r;
}
