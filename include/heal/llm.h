/* SPDX-License-Identifier: MIT */
#ifndef HEAL_LLM_H
#define HEAL_LLM_H

/*
 * libheal's model layer: one request type and one response type whatever the provider; no other
 * module knows a provider's wire format. Wire formats: OpenAI Chat Completions (OpenAI,
 * OpenRouter, Gemini's OpenAI endpoint, Ollama, llama-server, vLLM, LM Studio) and Anthropic
 * Messages, streamed (server-sent events) or not, with retries on 429/5xx/529 honouring
 * Retry-After; a cassette (replay); a local command (exec). Requests of one call run together.
 *
 * Lifecycle: heal_llm_client_new(), heal_llm_complete() or heal_llm_complete_many() as often as
 * needed (one call at a time per client), heal_llm_response_release() per response,
 * heal_llm_client_free().
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "heal/error.h"

typedef struct heal_llm_client heal_llm_client;

typedef enum heal_llm_role {
        HEAL_LLM_USER,
        HEAL_LLM_ASSISTANT,
        HEAL_LLM_TOOL,
} heal_llm_role;

/**
 * struct heal_llm_tool_call - A function call the model asked for.
 * @id:              the provider's id, echoed back in the tool message.
 * @name:            the tool's name.
 * @arguments:       the arguments as the model wrote them (JSON text, NUL-terminated).
 * @arguments_valid: @arguments parse as a JSON object; when false, feed the error back to the
 *                   model instead of calling the tool (small local models emit broken JSON).
 */
typedef struct heal_llm_tool_call {
        char *id;
        char *name;
        char *arguments;
        bool arguments_valid;
} heal_llm_tool_call;

/**
 * struct heal_llm_message - One turn of the conversation; all strings borrowed.
 * @role:         who speaks.
 * @content:      text; may be NULL for an assistant turn that only calls tools.
 * @tool_call_id: for HEAL_LLM_TOOL: the id of the call this answers.
 * @tool_calls:   for HEAL_LLM_ASSISTANT: the calls it made (to replay a conversation).
 */
typedef struct heal_llm_message {
        heal_llm_role role;
        const char *content;
        const char *tool_call_id;
        const heal_llm_tool_call *tool_calls;
        size_t n_tool_calls;
} heal_llm_message;

/**
 * struct heal_llm_tool - A tool the model may call; strings borrowed.
 * @parameters: JSON Schema of the arguments, as JSON text.
 */
typedef struct heal_llm_tool {
        const char *name;
        const char *description;
        const char *parameters;
} heal_llm_tool;

/**
 * struct heal_llm_request - What to ask; everything borrowed for the duration of the call.
 * @temperature: negative: the provider's default.
 * @max_tokens:  0: the provider's default.
 * @n:           number of candidate answers; 0 means 1. Sent as "n" where the wire format has
 *               it (OpenAI); otherwise (Anthropic), and for the candidates a server left out
 *               (llama-server and Ollama ignore "n"), as parallel requests of one candidate.
 * @stop:        NULL-terminated stop sequences, or NULL.
 * @response_schema: NULL, or a JSON Schema (JSON text, an object) the answer's text must
 *               satisfy: sent as OpenAI's structured-outputs response_format (type "json_schema",
 *               name "response", strict), which OpenAI, Gemini, Ollama >= 0.5 and vLLM honour.
 *               The provider enforces it; heal only checks the schema is an object (-EINVAL
 *               before anything is sent). Part of the cassette and cache key.
 * @stream:      ask for a streamed answer (server-sent events) and assemble it; the response
 *               is the same as without streaming. A stream cut before its end is -EPROTO.
 * @on_delta:    with @stream, called on the calling thread, inside heal_llm_complete(), with
 *               each fragment of answer text as it arrives: @attempt counts HTTP requests from
 *               1 (a retried stream starts over: fragments of an earlier attempt are void),
 *               @choice is the candidate's position as asked (0 to n-1; requests run in
 *               parallel interleave their fragments; when one of them fails, the response
 *               holds the others in order, so later candidates move up), @text holds @len
 *               bytes (not NUL-terminated,
 *               borrowed for the call). Not called when the answer comes whole (a cache or
 *               cassette hit, or a server that ignored "stream"). NULL: not told.
 * @delta_data:  passed to @on_delta as is.
 */
typedef struct heal_llm_request {
        const char *model;
        const char *system;
        const heal_llm_message *messages;
        size_t n_messages;
        const heal_llm_tool *tools;
        size_t n_tools;
        double temperature;
        unsigned max_tokens;
        unsigned n;
        const char *const *stop;
        bool stream;
        const char *response_schema;
        void (*on_delta)(void *delta_data, unsigned attempt, size_t choice, const char *text,
                         size_t len);
        void *delta_data;
} heal_llm_request;

#define HEAL_LLM_REQUEST_INIT \
 {                            \
  .temperature = -1.0         \
 }

/**
 * struct heal_llm_choice - One candidate answer; owned by the response.
 * @finish_reason: "stop", "length", "tool_calls", "content_filter" in OpenAI's words whatever
 *                 the provider (Anthropic's end_turn and stop_sequence are "stop", max_tokens
 *                 "length", tool_use "tool_calls", refusal "content_filter"); any other reason
 *                 as the provider said it.
 */
typedef struct heal_llm_choice {
        char *text;
        heal_llm_tool_call *tool_calls;
        size_t n_tool_calls;
        char finish_reason[32];
} heal_llm_choice;

/**
 * struct heal_llm_response - The answer; release with heal_llm_response_release().
 * @input_tokens, @output_tokens, @cached_tokens: usage as the provider reported it, summed over
 *               parallel requests; input includes cached input (Anthropic's cache reads and
 *               writes are added to its input_tokens), of which @cached_tokens were cache reads.
 * @request_id: the provider's request id (x-request-id header, or the body's id), or "".
 * @attempts:   HTTP requests made, retries included.
 */
typedef struct heal_llm_response {
        heal_llm_choice *choices;
        size_t n_choices;
        uint64_t input_tokens;
        uint64_t output_tokens;
        uint64_t cached_tokens;
        char request_id[128];
        unsigned attempts;
} heal_llm_response;

/**
 * struct heal_llm_config - How to reach the model; strings copied by heal_llm_client_new().
 * @provider:           "openai" (the Chat Completions wire format), "anthropic" (the Messages
 *                      API), "replay" (answers from @cassette, no network) or "exec" (@command
 *                      answers).
 * @base_url:           e.g. "https://api.openai.com/v1"; "/chat/completions" is appended
 *                      (anthropic: "https://api.anthropic.com/v1", "/messages" appended).
 * @api_key:            sent as "Authorization: Bearer" (anthropic: "x-api-key", with
 *                      "anthropic-version: 2023-06-01"); NULL for local servers. Never logged.
 * @command:            "exec": a shell command line run with "/bin/sh -c"; it reads the
 *                      request as JSON on stdin and prints the answer as JSON (docs/llm.md).
 *                      A nonzero exit, a signal, bad JSON or silence past @timeout_ms is an
 *                      error quoting its stderr's tail.
 * @max_parallel:       requests in flight at once, at most (0: 8; capped at 64).
 * @connect_timeout_ms: TCP + TLS connect, ms.
 * @timeout_ms:         one whole HTTP request (exec: one run of the command), ms.
 * @max_retries:        retries after a retryable failure (429, 500, 502, 503, 504, 529,
 *                      connection errors, timeouts); never after 400, 401, 403, 404.
 * @max_retry_wait_ms:  cap on one wait between attempts, whatever Retry-After says, ms.
 * @max_response_bytes: larger bodies are an error (-E2BIG), bytes.
 * @cassette:           "replay": the cassette to answer from (JSON Lines, see docs/llm.md);
 *                      other providers: when set, every answer is appended to it (record).
 * @cache_dir:          when set, answers are kept in this directory keyed by the canonical
 *                      request, and the same request later costs nothing (NULL: no cache).
 */
typedef struct heal_llm_config {
        const char *provider;
        const char *base_url;
        const char *api_key;
        uint64_t connect_timeout_ms;
        uint64_t timeout_ms;
        unsigned max_retries;
        uint64_t max_retry_wait_ms;
        uint64_t max_response_bytes;
        const char *cassette;
        const char *cache_dir;
        const char *command;
        unsigned max_parallel;
} heal_llm_config;

/**
 * struct heal_llm_budget - Limits on what a client may spend; 0 means no limit for each field.
 * @max_requests:    HTTP requests, retries included.
 * @max_tokens:      input + output tokens as the provider reported them.
 * @max_cost_micro_usd: money in millionths of a US dollar, from the price table (models
 *                   without a price count nothing).
 * @max_wall_ms:     time spent inside heal_llm_complete(), ms.
 */
typedef struct heal_llm_budget {
        uint64_t max_requests;
        uint64_t max_tokens;
        uint64_t max_cost_micro_usd;
        uint64_t max_wall_ms;
} heal_llm_budget;

/**
 * struct heal_llm_tally - What a client spent so far. Cache and replay hits count as hits only.
 */
typedef struct heal_llm_tally {
        uint64_t requests;
        uint64_t cache_hits;
        uint64_t input_tokens;
        uint64_t output_tokens;
        uint64_t cached_tokens;
        uint64_t cost_micro_usd;
        uint64_t wall_ms;
} heal_llm_tally;

#define HEAL_LLM_CONFIG_INIT                                                                 \
 {                                                                                           \
  .provider = "openai", .connect_timeout_ms = 10000, .timeout_ms = 300000, .max_retries = 4, \
  .max_retry_wait_ms = 60000, .max_response_bytes = 8u << 20,                                \
 }

/**
 * heal_llm_client_new() - Create a client for one provider endpoint.
 * @ret: on success the client; free with heal_llm_client_free(). Untouched on failure.
 * @cfg: copied.
 * Return: 0; -EINVAL for an unknown provider, a missing base_url (openai, anthropic), cassette
 *         (replay) or command (exec); -ENOENT, -EBADMSG for a cassette that cannot be read or
 *         parsed; -ENOMEM.
 */
int heal_llm_client_new(heal_llm_client **ret, const heal_llm_config *cfg, heal_error *err);

/**
 * heal_llm_client_free() - Free @c; accepts NULL. Return: NULL.
 */
heal_llm_client *heal_llm_client_free(heal_llm_client *c);

/**
 * heal_llm_complete() - Send @req and wait for the answer, retrying what may succeed later.
 * @c:   the client.
 * @req: borrowed.
 * @ret: on success the answer; release with heal_llm_response_release().
 * @err: optional; on an HTTP error the message quotes the provider's own message.
 *
 * Retries: exponential backoff from 500 ms with full jitter, or the server's Retry-After
 * (seconds or an HTTP date) / retry-after-ms, capped at @max_retry_wait_ms.
 * Context: blocking; not thread-safe per client (use one client per thread). The requests of
 * one call (n > 1 without native "n") run in parallel on one thread (libcurl multi).
 * Replay: the answer recorded for the same canonical request; a miss is -ENOENT and the message
 * names the nearest recorded request and where it differs.
 * Return: 0; -EDQUOT when the budget is exhausted (nothing sent; the message names the limit);
 *         -EACCES for 401/403 (bad key); -ENOENT for 404 (model or URL); -EINVAL for other
 *         4xx; -EAGAIN when retries ran out on 429/5xx; -ETIMEDOUT; -ECONNREFUSED and other
 *         connection errors; -EPROTO for a body that is not the expected JSON or the wrong
 *         content type; -E2BIG for an oversized body; -EIO when the exec command failed;
 *         -ENOMEM. When n > 1 took several requests and only some answered, the call
 *         succeeds with fewer candidates than asked.
 * See: https://platform.openai.com/docs/api-reference/chat/create,
 *      https://docs.anthropic.com/en/api/messages, RFC 9110 section 10.2.3 (Retry-After).
 */
int heal_llm_complete(heal_llm_client *c, const heal_llm_request *req, heal_llm_response *ret,
                      heal_error *err);

/**
 * heal_llm_complete_many() - Send @n requests at once and wait until each has its answer.
 * @c:    the client.
 * @reqs: @n requests, borrowed.
 * @rets: @n responses, filled (zeroed for a failed request); release each.
 * @rs:   optional; @n results, each as heal_llm_complete() would return it.
 * @errs: optional; @n error descriptions.
 *
 * All requests that the cassette or the cache cannot answer are in flight together (at most
 * @max_parallel at a time), so N requests cost about one round trip; each retries on its own
 * clock; the budget is checked before each HTTP request (requests in flight together may cross
 * a token or money limit together). The exec provider answers them one after another.
 * Context: blocking, on the calling thread (on_delta is called from here).
 * Return: 0 when every request got its answer, else the first failure's result; -EINVAL when
 *         @c, @reqs or @rets is NULL (nothing filled); -ENOMEM.
 */
int heal_llm_complete_many(heal_llm_client *c, const heal_llm_request *reqs, size_t n,
                           heal_llm_response *rets, int *rs, heal_error *errs);

/**
 * heal_llm_client_set_budget() - Limit what later calls may spend; @budget is copied.
 *
 * When a limit is reached, heal_llm_complete() returns -EDQUOT without sending anything (the
 * call that crosses a limit still completes: limits are checked before a request).
 */
void heal_llm_client_set_budget(heal_llm_client *c, const heal_llm_budget *budget);

/**
 * heal_llm_client_set_price() - Price of @model in US dollars per million tokens; overrides the
 * built-in table (docs/llm.md). Return: 0; -ENOMEM.
 */
int heal_llm_client_set_price(heal_llm_client *c, const char *model, double input_per_mtok,
                              double output_per_mtok, double cached_input_per_mtok);

/**
 * heal_llm_client_tally() - What @c spent so far, copied into @ret.
 */
void heal_llm_client_tally(const heal_llm_client *c, heal_llm_tally *ret);

/**
 * heal_llm_tally_format() - One human line: "3 requests (1 from cache or cassette), 1234 tokens
 * in (400 cached), 56 out, $0.0012, 2.3 s". @buf of @len bytes, NUL-terminated.
 */
void heal_llm_tally_format(const heal_llm_tally *t, char *buf, size_t len);

/**
 * struct heal_llm_selection - Which model heal would use, and why; filled by heal_llm_select().
 * @config:   ready for heal_llm_client_new(); its strings point into this struct.
 * @provider: the provider as the user named it: openai, openrouter, gemini, ollama, anthropic,
 *            replay, exec.
 * @model:    the model name, for heal_llm_request.model.
 * @source:   where the choice came from ("--model", "HEAL_MODEL", ".heal/config", or the API key
 *            variable that implied it), for heal doctor and error messages.
 * @key_from: the variable the API key came from, or "" (the key itself is never shown).
 */
typedef struct heal_llm_selection {
        heal_llm_config config;
        char provider[32];
        char model[256];
        char base_url[512];
        char api_key[512];
        char cassette[512];
        char command[1024];
        char source[64];
        char key_from[64];
} heal_llm_selection;

/**
 * heal_llm_select() - Decide the provider, model, URL and key, as heal's commands do.
 * @ret:         filled on success; release with heal_llm_selection_release() (wipes the key).
 * @model_flag:  "PROVIDER:MODEL" from --model, or NULL (e.g. "openai:gpt-4.1-mini",
 *               "ollama:qwen2.5-coder:7b": the first ':' separates).
 * @url_flag:    base URL from --llm-url, or NULL.
 * @envp:        the environment to read (HEAL_MODEL, OPENAI_API_KEY, OPENAI_BASE_URL,
 *               OPENROUTER_API_KEY, GEMINI_API_KEY, ANTHROPIC_API_KEY, OLLAMA_HOST,
 *               HEAL_CASSETTE, HEAL_LLM_COMMAND); borrowed.
 * @config_path: a project's INI file with an [llm] section (model=, url=, cassette=), or
 *               NULL; a missing file is not an error. It comes with the project, so it is
 *               trusted only so far: it must belong to the user or root and be writable by
 *               nobody else (its directory too, unless sticky); its url= is used only when no
 *               API key would be sent there; a command= is refused.
 *
 * Precedence: flags, then environment, then the config file; with no model named anywhere, an
 * API key in the environment implies its provider's default model (docs/llm.md).
 * Return: 0; -ENOENT when nothing is configured (the message says how to configure a model);
 *         -EINVAL for a malformed PROVIDER:MODEL, an unknown provider, a hosted provider
 *         without its key, replay without a cassette or exec without a command; -EBADMSG for
 *         a malformed config file; -EPERM for a config file others may write, or that sets
 *         command=, or url= where a key would go.
 */
int heal_llm_select(heal_llm_selection *ret, const char *model_flag, const char *url_flag,
                    const char *const *envp, const char *config_path, heal_error *err);

/**
 * heal_llm_selection_release() - Wipe the key held by @s.
 */
void heal_llm_selection_release(heal_llm_selection *s);

/**
 * heal_llm_response_release() - Free what @r owns and zero it; accepts a zeroed response.
 */
void heal_llm_response_release(heal_llm_response *r);

#endif
