/* SPDX-License-Identifier: MIT */
/*
 * The OpenAI Chat Completions wire format: request encoding and response decoding.
 * A response that is not the expected JSON is an error naming what was expected and what came.
 * See: https://platform.openai.com/docs/api-reference/chat/create
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "core/util.h"
#include "llm/llm-internal.h"

static const char *const role_names[] = {
        [HEAL_LLM_USER] = "user",
        [HEAL_LLM_ASSISTANT] = "assistant",
        [HEAL_LLM_TOOL] = "tool",
};

static json_t *encode_tool_calls(const heal_llm_message *m)
{
        json_t *a = json_array();

        for (size_t i = 0; a && i < m->n_tool_calls; i++) {
                const heal_llm_tool_call *tc = &m->tool_calls[i];

                json_array_append_new(a,
                                      json_pack("{s:s,s:s,s:{s:s,s:s}}", "id", tc->id, "type",
                                                "function", "function", "name", tc->name,
                                                "arguments", tc->arguments ? tc->arguments : "{}"));
        }
        return a;
}

static json_t *encode_message(const heal_llm_message *m)
{
        json_t *o;

        if ((int)m->role < 0 || m->role > HEAL_LLM_TOOL)
                return NULL;
        o = json_pack("{s:s}", "role", role_names[m->role]);
        if (!o)
                return NULL;
        json_object_set_new(o, "content", json_string_or_null(m->content));
        if (m->role == HEAL_LLM_TOOL && m->tool_call_id)
                json_object_set_new(o, "tool_call_id", json_string_or_null(m->tool_call_id));
        if (m->role == HEAL_LLM_ASSISTANT && m->n_tool_calls)
                json_object_set_new(o, "tool_calls", encode_tool_calls(m));
        return o;
}

static int encode_tools(json_t *root, const heal_llm_request *req, heal_error *err)
{
        json_t *tools = json_array();

        for (size_t i = 0; i < req->n_tools; i++) {
                const heal_llm_tool *t = &req->tools[i];
                json_error_t jerr;
                json_t *params = json_loads(t->parameters ? t->parameters : "{}", 0, &jerr);

                if (!params || !json_is_object(params)) {
                        json_decref(params);
                        json_decref(tools);
                        return heal_error_set(err, -EINVAL,
                                              "tool '%s': parameters are not a JSON object: %s",
                                              t->name, jerr.text);
                }
                json_array_append_new(tools, json_pack("{s:s,s:{s:s,s:s,s:o}}", "type", "function",
                                                       "function", "name", t->name, "description",
                                                       t->description ? t->description : "",
                                                       "parameters", params));
        }
        json_object_set_new(root, "tools", tools);
        return 0;
}

/* Structured outputs: https://platform.openai.com/docs/guides/structured-outputs */
static int encode_response_format(json_t *root, const heal_llm_request *req, heal_error *err)
{
        json_error_t jerr;
        json_t *schema;

        if (!req->response_schema)
                return 0;
        schema = json_loads(req->response_schema, 0, &jerr);
        if (!json_is_object(schema)) {
                json_decref(schema);
                return heal_error_set(err, -EINVAL, "response schema is not a JSON object: %s",
                                      schema ? "another JSON value" : jerr.text);
        }
        json_object_set_new(root, "response_format",
                            json_pack("{s:s,s:{s:s,s:b,s:o}}", "type", "json_schema", "json_schema",
                                      "name", "response", "strict", 1, "schema", schema));
        return 0;
}

static void encode_options(json_t *root, const heal_llm_request *req)
{
        if (req->temperature >= 0)
                json_object_set_new(root, "temperature", json_real(req->temperature));
        if (req->max_tokens)
                json_object_set_new(root, "max_tokens", json_integer(req->max_tokens));
        if (req->n > 1)
                json_object_set_new(root, "n", json_integer(req->n));
        if (req->stream) {
                json_object_set_new(root, "stream", json_true());
                json_object_set_new(root, "stream_options", json_pack("{s:b}", "include_usage", 1));
        }
        if (req->stop) {
                json_t *stop = json_array();

                for (size_t i = 0; req->stop[i]; i++)
                        json_array_append_new(stop, json_string(req->stop[i]));
                json_object_set_new(root, "stop", stop);
        }
}

int openai_encode(char **ret, const heal_llm_request *req, heal_error *err)
{
        json_t *root, *msgs;
        int r = 0;

        if (!req->model || !*req->model)
                return heal_error_set(err, -EINVAL, "the request names no model");
        root = json_pack("{s:s}", "model", req->model);
        msgs = json_array();
        if (!root || !msgs) {
                json_decref(root);
                json_decref(msgs);
                return heal_error_set(err, -ENOMEM, "out of memory");
        }
        if (req->system)
                json_array_append_new(msgs, json_pack("{s:s,s:o}", "role", "system", "content",
                                                      json_string_or_null(req->system)));
        for (size_t i = 0; i < req->n_messages && r == 0; i++) {
                json_t *m = encode_message(&req->messages[i]);

                if (!m)
                        r = heal_error_set(err, -EINVAL, "message %zu: bad role", i);
                else
                        json_array_append_new(msgs, m);
        }
        json_object_set_new(root, "messages", msgs);
        if (r == 0 && req->n_tools)
                r = encode_tools(root, req, err);
        if (r == 0)
                r = encode_response_format(root, req, err);
        encode_options(root, req);
        if (r == 0 && !(*ret = json_dumps(root, JSON_COMPACT)))
                r = heal_error_set(err, -ENOMEM, "out of memory");
        json_decref(root);
        return r;
}

bool llm_is_json_object(const char *text)
{
        json_t *v = json_loads(text, JSON_ALLOW_NUL, NULL); /* "\u0000" is JSON too */
        bool ok = json_is_object(v);

        json_decref(v);
        return ok;
}

static char *dup_string(json_t *v)
{
        return json_is_string(v) ? strdup(json_string_value(v)) : strdup("");
}

static int decode_tool_calls(heal_llm_choice *ch, json_t *calls, size_t idx, heal_error *err)
{
        size_t n = json_array_size(calls);

        ch->tool_calls = calloc(n ? n : 1, sizeof(*ch->tool_calls));
        if (!ch->tool_calls)
                return heal_error_set(err, -ENOMEM, "out of memory");
        (void)idx;
        for (size_t i = 0; i < n; i++) {
                json_t *c = json_array_get(calls, i), *fn = json_object_get(c, "function");
                json_t *args = json_object_get(fn, "arguments");
                heal_llm_tool_call *tc = &ch->tool_calls[i];

                /* A malformed call (no name, arguments as an object rather than a JSON text, as
                 * some servers send) is kept as it came: the caller answers it with an error
                 * the model can act on, and the other calls of the turn still count. */
                tc->id = dup_string(json_object_get(c, "id"));
                tc->name = dup_string(json_object_get(fn, "name"));
                tc->arguments =
                        json_is_object(args) ? json_dumps(args, JSON_COMPACT) : dup_string(args);
                ch->n_tool_calls++;
                if (!tc->id || !tc->name || !tc->arguments)
                        return heal_error_set(err, -ENOMEM, "out of memory");
                tc->arguments_valid = llm_is_json_object(tc->arguments);
        }
        return 0;
}

static int decode_choice(heal_llm_choice *ch, json_t *c, size_t idx, heal_error *err)
{
        json_t *msg = json_object_get(c, "message");
        json_t *content = json_object_get(msg, "content");
        json_t *calls = json_object_get(msg, "tool_calls");
        json_t *finish = json_object_get(c, "finish_reason");

        if (!json_is_object(msg))
                return heal_error_set(err, -EPROTO, "choice %zu: expected a 'message' object", idx);
        if (content && !json_is_string(content) && !json_is_null(content))
                return heal_error_set(err, -EPROTO,
                                      "choice %zu: expected 'content' to be a string or null", idx);
        ch->text = dup_string(content);
        if (!ch->text)
                return heal_error_set(err, -ENOMEM, "out of memory");
        if (json_is_string(finish))
                snprintf(ch->finish_reason, sizeof(ch->finish_reason), "%s",
                         json_string_value(finish));
        if (json_is_array(calls))
                return decode_tool_calls(ch, calls, idx, err);
        return 0;
}

static void decode_usage(heal_llm_response *resp, json_t *root)
{
        json_t *u = json_object_get(root, "usage");
        json_t *details = json_object_get(u, "prompt_tokens_details");

        resp->input_tokens = (uint64_t)json_integer_value(json_object_get(u, "prompt_tokens"));
        resp->output_tokens = (uint64_t)json_integer_value(json_object_get(u, "completion_tokens"));
        resp->cached_tokens =
                (uint64_t)json_integer_value(json_object_get(details, "cached_tokens"));
        if (!resp->request_id[0] && json_is_string(json_object_get(root, "id")))
                snprintf(resp->request_id, sizeof(resp->request_id), "%s",
                         json_string_value(json_object_get(root, "id")));
}

int openai_decode(heal_llm_response *resp, const char *body, size_t len, heal_error *err)
{
        json_error_t jerr;
        json_t *root = json_loadb(body, len, 0, &jerr), *choices;
        size_t n;
        int r = 0;

        /* @body has a length and need not be NUL-terminated: quote it with "%.*s". */
        if (!root)
                return heal_error_set(err, -EPROTO,
                                      "expected a JSON chat completion, got invalid JSON (%s at "
                                      "byte %d): '%.*s'",
                                      jerr.text, jerr.position, (int)MIN(len, 60), body);
        choices = json_object_get(root, "choices");
        n = json_array_size(choices);
        if (!json_is_array(choices) || n == 0) {
                json_decref(root);
                return heal_error_set(err, -EPROTO,
                                      "expected a chat completion with 'choices', got '%.*s'",
                                      (int)MIN(len, 80), body);
        }
        resp->choices = calloc(n, sizeof(*resp->choices));
        if (!resp->choices) {
                json_decref(root);
                return heal_error_set(err, -ENOMEM, "out of memory");
        }
        for (size_t i = 0; i < n && r == 0; i++) {
                r = decode_choice(&resp->choices[i], json_array_get(choices, i), i, err);
                resp->n_choices++;
        }
        decode_usage(resp, root);
        json_decref(root);
        return r;
}

void llm_error_message(char *out, size_t len, const char *body, size_t body_len)
{
        json_t *root = json_loadb(body, body_len, 0, NULL);
        json_t *e = json_object_get(root, "error");
        json_t *msg = json_is_object(e) ? json_object_get(e, "message") : e;

        if (json_is_string(msg))
                snprintf(out, len, "%s", json_string_value(msg));
        else if (body_len)
                snprintf(out, len, "%.*s", (int)MIN(body_len, 200), body);
        else
                snprintf(out, len, "(empty body)");
        json_decref(root);
}

static struct curl_slist *openai_headers(struct curl_slist *h, const char *api_key)
{
        char line[1024];

        if (api_key && *api_key) {
                snprintf(line, sizeof(line), "Authorization: Bearer %s", api_key);
                h = lc.slist_append(h, line);
                explicit_bzero(line, sizeof(line));
        }
        return h;
}

const struct llm_provider llm_openai = {
        .name = "openai",
        .path = "/chat/completions",
        .end_marker = "'data: [DONE]'",
        .native_n = true,
        .encode = openai_encode,
        .decode = openai_decode,
        .stream_event = openai_stream_event,
        .headers = openai_headers,
};
