/* SPDX-License-Identifier: MIT */
/*
 * Anthropic's Messages API: request encoding and response decoding. The system prompt is a
 * top-level field; a turn's content is a list of blocks (text, tool_use, tool_result); tool
 * results travel in a user turn, and consecutive ones share it (turns must alternate); the model
 * answers with content blocks and a stop_reason, which heal maps to OpenAI's finish reasons so
 * callers see one vocabulary. Usage: input_tokens counts only uncached input, so heal adds the
 * cache reads and writes to report all input, and the cache reads as cached.
 * See: https://docs.anthropic.com/en/api/messages, .../en/docs/build-with-claude/tool-use,
 *      .../en/docs/build-with-claude/structured-outputs (output_config.format).
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "core/util.h"
#include "llm/llm-internal.h"

#define ANTHROPIC_VERSION  "2023-06-01"
#define DEFAULT_MAX_TOKENS 4096 /* the API requires max_tokens; heal's 0 means "default" */

/* An assistant turn: its text, then a tool_use block per call; arguments that are not a JSON
 * object (a small model's broken output, replayed) are sent as {} since the API wants an object. */
static json_t *assistant_blocks(const heal_llm_message *m)
{
        json_t *blocks = json_array();

        if (m->content && *m->content)
                json_array_append_new(blocks, json_pack("{s:s,s:o}", "type", "text", "text",
                                                        json_string_or_null(m->content)));
        for (size_t i = 0; i < m->n_tool_calls; i++) {
                const heal_llm_tool_call *tc = &m->tool_calls[i];
                json_t *input = json_loads(tc->arguments ? tc->arguments : "{}", 0, NULL);

                if (!json_is_object(input)) {
                        json_decref(input);
                        input = json_object();
                }
                json_array_append_new(blocks, json_pack("{s:s,s:s,s:s,s:o}", "type", "tool_use",
                                                        "id", tc->id ? tc->id : "", "name",
                                                        tc->name ? tc->name : "", "input", input));
        }
        return blocks;
}

static int encode_messages(json_t *root, const heal_llm_request *req, heal_error *err)
{
        json_t *msgs = json_array(), *last_results = NULL;

        json_object_set_new(root, "messages", msgs);
        for (size_t i = 0; i < req->n_messages; i++) {
                const heal_llm_message *m = &req->messages[i];
                json_t *o;

                if (m->role == HEAL_LLM_TOOL) {
                        json_t *block = json_pack("{s:s,s:s,s:o}", "type", "tool_result",
                                                  "tool_use_id", m->tool_call_id ?: "", "content",
                                                  json_string_or_null(m->content ?: ""));

                        if (!last_results) {
                                last_results = json_array();
                                json_array_append_new(msgs, json_pack("{s:s,s:o}", "role", "user",
                                                                      "content", last_results));
                        }
                        json_array_append_new(last_results, block);
                        continue;
                }
                last_results = NULL;
                if (m->role == HEAL_LLM_USER)
                        o = json_pack("{s:s,s:o}", "role", "user", "content",
                                      json_string_or_null(m->content ?: ""));
                else if (m->role == HEAL_LLM_ASSISTANT)
                        o = json_pack("{s:s,s:o}", "role", "assistant", "content",
                                      assistant_blocks(m));
                else
                        return heal_error_set(err, -EINVAL, "message %zu: bad role", i);
                json_array_append_new(msgs, o);
        }
        return 0;
}

static int encode_tools(json_t *root, const heal_llm_request *req, heal_error *err)
{
        json_t *tools = json_array();

        json_object_set_new(root, "tools", tools);
        for (size_t i = 0; i < req->n_tools; i++) {
                const heal_llm_tool *t = &req->tools[i];
                json_error_t jerr;
                json_t *params = json_loads(t->parameters ? t->parameters : "{}", 0, &jerr);

                if (!json_is_object(params)) {
                        json_decref(params);
                        return heal_error_set(err, -EINVAL,
                                              "tool '%s': parameters are not a JSON object: %s",
                                              t->name, jerr.text);
                }
                json_array_append_new(tools,
                                      json_pack("{s:s,s:s,s:o}", "name", t->name, "description",
                                                t->description ?: "", "input_schema", params));
        }
        return 0;
}

static int encode_options(json_t *root, const heal_llm_request *req, heal_error *err)
{
        json_object_set_new(root, "max_tokens",
                            json_integer(req->max_tokens ? req->max_tokens : DEFAULT_MAX_TOKENS));
        if (req->system)
                json_object_set_new(root, "system", json_string_or_null(req->system));
        if (req->temperature >= 0)
                json_object_set_new(root, "temperature", json_real(req->temperature));
        if (req->stream)
                json_object_set_new(root, "stream", json_true());
        if (req->stop) {
                json_t *stop = json_array();

                for (size_t i = 0; req->stop[i]; i++)
                        json_array_append_new(stop, json_string(req->stop[i]));
                json_object_set_new(root, "stop_sequences", stop);
        }
        if (req->response_schema) {
                json_error_t jerr;
                json_t *schema = json_loads(req->response_schema, 0, &jerr);

                if (!json_is_object(schema)) {
                        json_decref(schema);
                        return heal_error_set(err, -EINVAL,
                                              "response schema is not a JSON object: %s",
                                              schema ? "another JSON value" : jerr.text);
                }
                json_object_set_new(root, "output_config",
                                    json_pack("{s:{s:s,s:o}}", "format", "type", "json_schema",
                                              "schema", schema));
        }
        return 0;
}

/* One request asks for one answer: n > 1 is sent as n requests (client.c). */
int anthropic_encode(char **ret, const heal_llm_request *req, heal_error *err)
{
        json_t *root;
        int r;

        if (!req->model || !*req->model)
                return heal_error_set(err, -EINVAL, "the request names no model");
        root = json_pack("{s:s}", "model", req->model);
        if (!root)
                return heal_error_set(err, -ENOMEM, "out of memory");
        r = encode_messages(root, req, err);
        if (r == 0 && req->n_tools)
                r = encode_tools(root, req, err);
        if (r == 0)
                r = encode_options(root, req, err);
        if (r == 0 && !(*ret = json_dumps(root, JSON_COMPACT)))
                r = heal_error_set(err, -ENOMEM, "out of memory");
        json_decref(root);
        return r;
}

const char *anthropic_finish_reason(const char *stop_reason)
{
        static const char *const map[][2] = {
                { "end_turn", "stop" },          { "stop_sequence", "stop" },
                { "max_tokens", "length" },      { "tool_use", "tool_calls" },
                { "refusal", "content_filter" },
        };

        for (size_t i = 0; i < ELEMENTSOF(map); i++)
                if (strcmp(stop_reason, map[i][0]) == 0)
                        return map[i][1];
        return stop_reason; /* e.g. "pause_turn": passed on as the provider said */
}

void anthropic_usage(heal_llm_response *resp, json_t *u)
{
        uint64_t in = (uint64_t)json_integer_value(json_object_get(u, "input_tokens"));
        uint64_t read = (uint64_t)json_integer_value(json_object_get(u, "cache_read_input_tokens"));
        uint64_t made =
                (uint64_t)json_integer_value(json_object_get(u, "cache_creation_input_tokens"));

        if (json_object_get(u, "input_tokens")) {
                resp->input_tokens = in + read + made;
                resp->cached_tokens = read;
        }
        if (json_object_get(u, "output_tokens"))
                resp->output_tokens =
                        (uint64_t)json_integer_value(json_object_get(u, "output_tokens"));
}

static int decode_tool_use(heal_llm_choice *ch, json_t *b, size_t i, heal_error *err)
{
        heal_llm_tool_call *tc = &ch->tool_calls[ch->n_tool_calls];
        json_t *input = json_object_get(b, "input");

        if (!json_is_string(json_object_get(b, "name")))
                return heal_error_set(err, -EPROTO,
                                      "content block %zu: expected a tool_use with a 'name'", i);
        tc->id = strdup(json_string_value(json_object_get(b, "id")) ?: "");
        tc->name = strdup(json_string_value(json_object_get(b, "name")));
        tc->arguments = json_is_object(input) ? json_dumps(input, JSON_COMPACT) : strdup("{}");
        ch->n_tool_calls++;
        if (!tc->id || !tc->name || !tc->arguments)
                return heal_error_set(err, -ENOMEM, "out of memory");
        tc->arguments_valid = json_is_object(input);
        return 0;
}

static int decode_blocks(heal_llm_choice *ch, json_t *content, heal_error *err)
{
        size_t n = json_array_size(content);
        heal_buf text;
        int r = 0;

        heal_buf_init(&text, SIZE_MAX);
        ch->tool_calls = calloc(n ? n : 1, sizeof(*ch->tool_calls));
        if (!ch->tool_calls)
                return heal_error_set(err, -ENOMEM, "out of memory");
        for (size_t i = 0; i < n && r == 0; i++) {
                json_t *b = json_array_get(content, i);
                const char *type = json_string_value(json_object_get(b, "type")) ?: "";

                if (strcmp(type, "text") == 0)
                        r = heal_buf_append(&text,
                                            json_string_value(json_object_get(b, "text")) ?: "",
                                            json_string_length(json_object_get(b, "text")));
                else if (strcmp(type, "tool_use") == 0)
                        r = decode_tool_use(ch, b, i, err);
                /* thinking, redacted_thinking, server tools: not part of the answer */
        }
        ch->text = heal_buf_detach(&text, NULL);
        if (r == 0 && !ch->text)
                r = heal_error_set(err, -ENOMEM, "out of memory");
        heal_buf_release(&text);
        return r;
}

int anthropic_decode(heal_llm_response *resp, const char *body, size_t len, heal_error *err)
{
        json_error_t jerr;
        json_t *root = json_loadb(body, len, 0, &jerr), *content, *stop;
        int r;

        if (!root)
                return heal_error_set(err, -EPROTO,
                                      "expected a JSON message, got invalid JSON (%s at byte %d): "
                                      "'%.*s'",
                                      jerr.text, jerr.position, (int)MIN(len, 60), body);
        content = json_object_get(root, "content");
        if (!json_is_array(content)) {
                json_decref(root);
                return heal_error_set(err, -EPROTO,
                                      "expected a message with a 'content' array, got '%.*s'",
                                      (int)MIN(len, 80), body);
        }
        resp->choices = calloc(1, sizeof(*resp->choices));
        if (!resp->choices) {
                json_decref(root);
                return heal_error_set(err, -ENOMEM, "out of memory");
        }
        resp->n_choices = 1;
        r = decode_blocks(&resp->choices[0], content, err);
        stop = json_object_get(root, "stop_reason");
        if (json_is_string(stop))
                snprintf(resp->choices[0].finish_reason, sizeof(resp->choices[0].finish_reason),
                         "%s", anthropic_finish_reason(json_string_value(stop)));
        anthropic_usage(resp, json_object_get(root, "usage"));
        if (!resp->request_id[0] && json_is_string(json_object_get(root, "id")))
                snprintf(resp->request_id, sizeof(resp->request_id), "%s",
                         json_string_value(json_object_get(root, "id")));
        json_decref(root);
        return r;
}

static struct curl_slist *anthropic_headers(struct curl_slist *h, const char *api_key)
{
        char line[1024];

        h = lc.slist_append(h, "anthropic-version: " ANTHROPIC_VERSION);
        if (api_key && *api_key) {
                snprintf(line, sizeof(line), "x-api-key: %s", api_key);
                h = lc.slist_append(h, line);
                explicit_bzero(line, sizeof(line));
        }
        return h;
}

const struct llm_provider llm_anthropic = {
        .name = "anthropic",
        .path = "/messages",
        .end_marker = "'event: message_stop'",
        .native_n = false,
        .encode = anthropic_encode,
        .decode = anthropic_decode,
        .stream_event = anthropic_stream_event,
        .headers = anthropic_headers,
};
