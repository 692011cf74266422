/* SPDX-License-Identifier: MIT */
/*
 * OpenAI's streamed chat completion ("stream": true): each chunk carries deltas per choice (by
 * "index"): content fragments, and tool calls whose id, name and "arguments" string arrive in
 * pieces keyed by their own "index". With include_usage a last chunk has "choices": [] and the
 * usage. "data: [DONE]" ends the stream. The assembling is stream.c's.
 * See: https://platform.openai.com/docs/api-reference/chat-streaming
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "core/util.h"
#include "llm/llm-internal.h"
#include "llm/stream.h"

static int apply_tool_calls(struct llm_stream *s, size_t k, json_t *calls)
{
        int r = 0;

        for (size_t i = 0; r == 0 && i < json_array_size(calls); i++) {
                json_t *tc = json_array_get(calls, i), *fn = json_object_get(tc, "function");
                json_t *index = json_object_get(tc, "index");
                size_t call = json_is_integer(index) ? (size_t)json_integer_value(index) : i;

                r = llm_stream_call(s, k, call, json_object_get(tc, "id"),
                                    json_object_get(fn, "name"), json_object_get(fn, "arguments"));
        }
        return r;
}

static int apply_choice(struct llm_stream *s, json_t *c, size_t pos)
{
        json_t *index = json_object_get(c, "index"), *delta = json_object_get(c, "delta");
        json_t *finish = json_object_get(c, "finish_reason");
        json_t *content = json_object_get(delta, "content");
        size_t k = json_is_integer(index) ? (size_t)json_integer_value(index) : pos;
        int r;

        r = llm_stream_text(s, k, json_string_value(content) ?: "", json_string_length(content));
        if (r == 0 && json_is_string(finish))
                r = llm_stream_finish_reason(s, k, json_string_value(finish));
        if (r == 0)
                r = apply_tool_calls(s, k, json_object_get(delta, "tool_calls"));
        return r;
}

int openai_stream_event(struct llm_stream *s, const sse_event *ev)
{
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
                json_t *details = json_object_get(usage, "prompt_tokens_details");

                s->resp->input_tokens =
                        (uint64_t)json_integer_value(json_object_get(usage, "prompt_tokens"));
                s->resp->output_tokens =
                        (uint64_t)json_integer_value(json_object_get(usage, "completion_tokens"));
                s->resp->cached_tokens =
                        (uint64_t)json_integer_value(json_object_get(details, "cached_tokens"));
        }
        if (r == 0 && !s->resp->request_id[0] && json_is_string(json_object_get(chunk, "id")))
                snprintf(s->resp->request_id, sizeof(s->resp->request_id), "%s",
                         json_string_value(json_object_get(chunk, "id")));
        json_decref(chunk);
        return r;
}
