/* SPDX-License-Identifier: MIT */
/* The Anthropic Messages provider against a real HTTP server on 127.0.0.1 speaking its wire
 * format: content blocks, tool_use/tool_result, named stream events, 529 "overloaded". */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "heal/llm.h"

#include "httpd.h"

#define TEXT_BODY                                                                         \
 "{\"id\":\"msg_01\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[{\"type\":" \
 "\"text\",\"text\":\"hello there\"}],\"stop_reason\":\"end_turn\",\"usage\":{"           \
 "\"input_tokens\":8,\"output_tokens\":3,\"cache_read_input_tokens\":4,"                  \
 "\"cache_creation_input_tokens\":2}}"

#define EVENT(name, json) "event: " name "\ndata: " json "\n\n"

static struct httpd srv;
static heal_llm_client *client;
static heal_llm_response resp;
static heal_error err;

static struct {
        char text[256];
        size_t len, calls;
        unsigned attempt;
} heard;

static void on_delta(void *data, unsigned attempt, size_t choice, const char *text, size_t len)
{
        (void)data, (void)choice;
        if (attempt != heard.attempt)
                heard.len = 0; /* a retried stream starts over */
        heard.attempt = attempt;
        if (heard.len + len < sizeof(heard.text))
                memcpy(heard.text + heard.len, text, len), heard.len += len;
        heard.calls++;
}

static void fini(void)
{
        heal_llm_response_release(&resp);
        client = heal_llm_client_free(client);
}

TestSuite(anthropic, .fini = fini, .timeout = 30);

static int ask_req(const struct httpd_reply *replies, size_t n, heal_llm_request *req)
{
        heal_llm_config cfg = HEAL_LLM_CONFIG_INIT;
        int r;

        heal_llm_response_release(&resp);
        client = heal_llm_client_free(client);
        httpd_start(&srv, replies, n);
        cfg.provider = "anthropic";
        cfg.timeout_ms = 2000;
        cfg.max_response_bytes = 1 << 16;
        cfg.base_url = srv.base_url;
        cfg.api_key = "sk-ant-secret";
        cfg.max_retry_wait_ms = 3000;
        cr_assert_eq(heal_llm_client_new(&client, &cfg, &err), 0, "%s", err.msg);
        req->model = "claude-test";
        err = (heal_error)HEAL_ERROR_INIT;
        r = heal_llm_complete(client, req, &resp, &err);
        httpd_stop(&srv);
        return r;
}

static int ask(const struct httpd_reply *replies, size_t n, bool stream)
{
        heal_llm_message msg = { .role = HEAL_LLM_USER, .content = "say hello" };
        heal_llm_request req = HEAL_LLM_REQUEST_INIT;

        req.system = "be brief";
        req.messages = &msg;
        req.n_messages = 1;
        req.stream = stream;
        req.on_delta = on_delta;
        return ask_req(replies, n, &req);
}

Test(anthropic, plain_answer_and_the_request_on_the_wire)
{
        struct httpd_reply r = { 200, NULL, "request-id: req_abc\r\n", TEXT_BODY, 0, 0, 0 };

        cr_assert_eq(ask(&r, 1, false), 0, "%s", err.msg);
        cr_assert(strstr(srv.requests[0], "POST /v1/messages HTTP/1.1"), "%s", srv.requests[0]);
        cr_assert(strstr(srv.requests[0], "x-api-key: sk-ant-secret"));
        cr_assert(strstr(srv.requests[0], "anthropic-version: 2023-06-01"));
        cr_assert_null(strstr(srv.requests[0], "Authorization"), "no bearer header");
        cr_assert(strstr(srv.requests[0], "\"system\":\"be brief\""), "system is top-level");
        cr_assert(strstr(srv.requests[0], "\"max_tokens\":4096"), "max_tokens is required");
        cr_assert(strstr(srv.requests[0], "\"messages\":[{\"role\":\"user\",\"content\":\"say "
                                          "hello\"}]"),
                  "%s", srv.requests[0]);
        cr_assert_str_eq(resp.choices[0].text, "hello there");
        cr_assert_str_eq(resp.choices[0].finish_reason, "stop", "end_turn is told as stop");
        cr_assert_eq(resp.input_tokens, 14, "input + cache reads + cache writes");
        cr_assert_eq(resp.cached_tokens, 4);
        cr_assert_eq(resp.output_tokens, 3);
        cr_assert_str_eq(resp.request_id, "req_abc");
}

Test(anthropic, tool_use_blocks_and_a_conversation_with_tool_results)
{
        static const char body[] =
                "{\"id\":\"msg_02\",\"content\":[{\"type\":\"thinking\",\"thinking\":\"hm\"},"
                "{\"type\":\"text\",\"text\":\"Running both.\"},{\"type\":\"tool_use\",\"id\":"
                "\"toolu_1\",\"name\":\"run_code\",\"input\":{\"language\":\"go\"}},{\"type\":"
                "\"tool_use\",\"id\":\"toolu_2\",\"name\":\"list\",\"input\":{}}],"
                "\"stop_reason\":\"tool_use\",\"usage\":{\"input_tokens\":5,\"output_tokens\":9}}";
        struct httpd_reply r = { 200, NULL, NULL, body, 0, 0, 0 };
        char id0[] = "toolu_0", id9[] = "toolu_9", run[] = "run_code", list[] = "list";
        char args0[] = "{\"language\":\"c\"}", args9[] = "{broken";
        heal_llm_tool_call calls[] = {
                { id0, run, args0, true },
                { id9, list, args9, false },
        };
        heal_llm_message msgs[] = {
                { HEAL_LLM_USER, "run it", NULL, NULL, 0 },
                { HEAL_LLM_ASSISTANT, NULL, NULL, calls, 2 },
                { HEAL_LLM_TOOL, "exit 0", "toolu_0", NULL, 0 },
                { HEAL_LLM_TOOL, "a.go", "toolu_9", NULL, 0 },
                { HEAL_LLM_USER, "and now?", NULL, NULL, 0 },
        };
        heal_llm_tool tool = { "run_code", "Run code", "{\"type\":\"object\"}" };
        heal_llm_request req = HEAL_LLM_REQUEST_INIT;

        req.messages = msgs;
        req.n_messages = 5;
        req.tools = &tool;
        req.n_tools = 1;
        cr_assert_eq(ask_req(&r, 1, &req), 0, "%s", err.msg);
        cr_assert(strstr(srv.requests[0],
                         "{\"role\":\"assistant\",\"content\":[{\"type\":\"tool_use\",\"id\":"
                         "\"toolu_0\",\"name\":\"run_code\",\"input\":{\"language\":\"c\"}},"
                         "{\"type\":\"tool_use\",\"id\":\"toolu_9\",\"name\":\"list\",\"input\":"
                         "{}}]}"),
                  "tool calls become tool_use blocks, broken arguments {}: %s", srv.requests[0]);
        cr_assert(strstr(srv.requests[0],
                         "{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\","
                         "\"tool_use_id\":\"toolu_0\",\"content\":\"exit 0\"},{\"type\":"
                         "\"tool_result\",\"tool_use_id\":\"toolu_9\",\"content\":\"a.go\"}]},"
                         "{\"role\":\"user\",\"content\":\"and now?\"}"),
                  "both results share one user turn: %s", srv.requests[0]);
        cr_assert(strstr(srv.requests[0], "\"input_schema\":{\"type\":\"object\"}"));
        cr_assert_str_eq(resp.choices[0].text, "Running both.");
        cr_assert_str_eq(resp.choices[0].finish_reason, "tool_calls");
        cr_assert_eq(resp.choices[0].n_tool_calls, 2);
        cr_assert_str_eq(resp.choices[0].tool_calls[0].id, "toolu_1");
        cr_assert_str_eq(resp.choices[0].tool_calls[0].arguments, "{\"language\":\"go\"}");
        cr_assert(resp.choices[0].tool_calls[0].arguments_valid);
        cr_assert_str_eq(resp.choices[0].tool_calls[1].name, "list");
        cr_assert_str_eq(resp.choices[0].tool_calls[1].arguments, "{}");
}

Test(anthropic, overloaded_529_then_success)
{
        struct httpd_reply r[] = {
                { 529, NULL, "retry-after: 0\r\n",
                  "{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":"
                  "\"Overloaded\"}}",
                  0, 0, 0 },
                { 200, NULL, NULL, TEXT_BODY, 0, 0, 0 },
        };

        cr_assert_eq(ask(r, 2, false), 0, "%s", err.msg);
        cr_assert_eq(resp.attempts, 2);
        cr_assert_str_eq(resp.choices[0].text, "hello there");
}

Test(anthropic, unauthorized_quotes_the_provider)
{
        struct httpd_reply r = { 401,
                                 NULL,
                                 NULL,
                                 "{\"type\":\"error\",\"error\":{\"type\":\"authentication_error\","
                                 "\"message\":\"invalid x-api-key\"}}",
                                 0,
                                 0,
                                 0 };

        cr_assert_eq(ask(&r, 1, false), -EACCES, "%s", err.msg);
        cr_assert(strstr(err.msg, "HTTP 401: invalid x-api-key"), "%s", err.msg);
        cr_assert_null(strstr(err.msg, "sk-ant-secret"));
}

#define STREAM_START                                                                 \
 EVENT("message_start", "{\"type\":\"message_start\",\"message\":{\"id\":\"msg_s\"," \
                        "\"usage\":{\"input_tokens\":10,\"output_tokens\":1}}}")

#define STREAM_TOOLS                                                                         \
 STREAM_START                                                                                \
 EVENT("content_block_start", "{\"type\":\"content_block_start\",\"index\":0,"               \
                              "\"content_block\":{\"type\":\"text\",\"text\":\"\"}}")        \
 EVENT("ping", "{\"type\": \"ping\"}")                                                       \
 EVENT("content_block_delta", "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{"    \
                              "\"type\":\"text_delta\",\"text\":\"Let me \"}}")              \
 EVENT("content_block_delta", "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{"    \
                              "\"type\":\"text_delta\",\"text\":\"check.\"}}")               \
 EVENT("content_block_stop", "{\"type\":\"content_block_stop\",\"index\":0}")                \
 EVENT("content_block_start", "{\"type\":\"content_block_start\",\"index\":1,"               \
                              "\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_7\"," \
                              "\"name\":\"run_code\",\"input\":{}}}")                        \
 EVENT("content_block_delta", "{\"type\":\"content_block_delta\",\"index\":1,\"delta\":{"    \
                              "\"type\":\"input_json_delta\",\"partial_json\":\"\"}}")       \
 EVENT("content_block_delta", "{\"type\":\"content_block_delta\",\"index\":1,\"delta\":{"    \
                              "\"type\":\"input_json_delta\",\"partial_json\":"              \
                              "\"{\\\"language\\\": \\\"go\"}}")                             \
 EVENT("content_block_delta", "{\"type\":\"content_block_delta\",\"index\":1,\"delta\":{"    \
                              "\"type\":\"input_json_delta\",\"partial_json\":\"\\\"}\"}}")  \
 EVENT("content_block_stop", "{\"type\":\"content_block_stop\",\"index\":1}")                \
 EVENT("content_block_start", "{\"type\":\"content_block_start\",\"index\":2,"               \
                              "\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_8\"," \
                              "\"name\":\"list\",\"input\":{}}}")                            \
 EVENT("content_block_stop", "{\"type\":\"content_block_stop\",\"index\":2}")                \
 EVENT("message_delta", "{\"type\":\"message_delta\",\"delta\":{\"stop_reason\":"            \
                        "\"tool_use\"},\"usage\":{\"output_tokens\":25}}")

Test(anthropic, streamed_text_and_tool_use_deltas)
{
        struct httpd_reply r = {
                200,  "text/event-stream",
                NULL, STREAM_TOOLS EVENT("message_stop", "{\"type\":\"message_stop\"}"),
                0,    0,
                0
        };

        cr_assert_eq(ask(&r, 1, true), 0, "%s", err.msg);
        cr_assert(strstr(srv.requests[0], "\"stream\":true"));
        cr_assert_str_eq(resp.choices[0].text, "Let me check.");
        cr_assert_eq(heard.calls, 2);
        cr_assert_arr_eq(heard.text, "Let me check.", 13);
        cr_assert_str_eq(resp.choices[0].finish_reason, "tool_calls");
        cr_assert_eq(resp.choices[0].n_tool_calls, 2);
        cr_assert_str_eq(resp.choices[0].tool_calls[0].id, "toolu_7");
        cr_assert_str_eq(resp.choices[0].tool_calls[0].arguments, "{\"language\": \"go\"}");
        cr_assert(resp.choices[0].tool_calls[0].arguments_valid);
        cr_assert_str_eq(resp.choices[0].tool_calls[1].arguments, "{}",
                         "a call without input deltas has empty arguments");
        cr_assert_eq(resp.input_tokens, 10);
        cr_assert_eq(resp.output_tokens, 25);
        cr_assert_str_eq(resp.request_id, "msg_s");
}

Test(anthropic, stream_without_message_stop_is_cut)
{
        struct httpd_reply r = { 200, "text/event-stream", NULL, STREAM_TOOLS, 0, 0, 0 };

        cr_assert_eq(ask(&r, 1, true), -EPROTO, "%s", err.msg);
        cr_assert(strstr(err.msg, "before 'event: message_stop'"), "%s", err.msg);
}

Test(anthropic, overloaded_error_event_mid_stream_is_retried)
{
        struct httpd_reply r[] = {
                { 200, "text/event-stream", NULL,
                  STREAM_START EVENT("content_block_start",
                                     "{\"type\":\"content_block_start\",\"index\":0,"
                                     "\"content_block\":{\"type\":\"text\",\"text\":\"\"}}")
                          EVENT("content_block_delta",
                                "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{"
                                "\"type\":\"text_delta\",\"text\":\"half\"}}")
                                  EVENT("error", "{\"type\":\"error\",\"error\":{\"type\":"
                                                 "\"overloaded_error\",\"message\":"
                                                 "\"Overloaded\"}}"),
                  0, 0, 0 },
                { 200, "text/event-stream", NULL,
                  STREAM_START EVENT("content_block_delta",
                                     "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{"
                                     "\"type\":\"text_delta\",\"text\":\"whole\"}}")
                          EVENT("message_stop", "{\"type\":\"message_stop\"}"),
                  0, 0, 0 },
        };

        cr_assert_eq(ask(r, 2, true), 0, "%s", err.msg);
        cr_assert_eq(resp.attempts, 2);
        cr_assert_str_eq(resp.choices[0].text, "whole");
        cr_assert_eq(heard.attempt, 2);
        cr_assert_arr_eq(heard.text, "whole", 5, "the first attempt's fragments are void");
}

Test(anthropic, response_schema_is_output_config_format)
{
        struct httpd_reply r = { 200, NULL, NULL, TEXT_BODY, 0, 0, 0 };
        heal_llm_message msg = { .role = HEAL_LLM_USER, .content = "json please" };
        heal_llm_request req = HEAL_LLM_REQUEST_INIT;
        const char *stop[] = { "END", NULL };

        req.messages = &msg;
        req.n_messages = 1;
        req.response_schema = "{\"type\":\"object\"}";
        req.stop = stop;
        req.temperature = 0.5;
        req.max_tokens = 100;
        cr_assert_eq(ask_req(&r, 1, &req), 0, "%s", err.msg);
        cr_assert(strstr(srv.requests[0], "\"output_config\":{\"format\":{\"type\":\"json_schema\","
                                          "\"schema\":{\"type\":\"object\"}}}"),
                  "%s", srv.requests[0]);
        cr_assert(strstr(srv.requests[0], "\"stop_sequences\":[\"END\"]"));
        cr_assert(strstr(srv.requests[0], "\"temperature\":0.5"));
        cr_assert(strstr(srv.requests[0], "\"max_tokens\":100"));
}

Test(anthropic, rate_limited_waits_for_the_reset_time)
{
        char headers[128];
        struct httpd_reply r[] = {
                { 429, NULL, headers,
                  "{\"type\":\"error\",\"error\":{\"type\":\"rate_limit_error\","
                  "\"message\":\"Number of requests has exceeded your rate limit\"}}",
                  0, 0, 0 },
                { 200, NULL, NULL, TEXT_BODY, 0, 0, 0 },
        };
        time_t reset = time(NULL) + 2;
        struct timespec t0, t1;
        struct tm tm;

        gmtime_r(&reset, &tm);
        strftime(headers, sizeof(headers),
                 "anthropic-ratelimit-requests-reset: %Y-%m-%dT%H:%M:%SZ\r\n", &tm);
        clock_gettime(CLOCK_MONOTONIC, &t0);
        cr_assert_eq(ask(r, 2, false), 0, "%s", err.msg);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        cr_assert_eq(resp.attempts, 2);
        cr_assert_geq((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000, 900,
                      "waited for the reset (at least one whole second of the two)");
}

/* The failures every provider must name: malformed JSON, wrong content type, oversized, slow. */
Test(anthropic, bad_answers_are_named)
{
        struct httpd_reply malformed = { 200, NULL, NULL, "{\"content\": [", 0, 0, 0 };
        struct httpd_reply no_blocks = { 200, NULL, NULL, "{\"completion\": \"hi\"}", 0, 0, 0 };
        struct httpd_reply html = { 200, "text/html", NULL, "<html>gateway</html>", 0, 0, 0 };
        struct httpd_reply big = { 200, NULL, NULL, NULL, 1 << 20, 0, 0 };
        struct httpd_reply slow = { 200, NULL, NULL, TEXT_BODY, 0, 3000, 0 };

        cr_assert_eq(ask(&malformed, 1, false), -EPROTO);
        cr_assert(strstr(err.msg, "expected a JSON message, got invalid JSON"), "%s", err.msg);
        cr_assert_eq(ask(&no_blocks, 1, false), -EPROTO);
        cr_assert(strstr(err.msg, "expected a message with a 'content' array, got "
                                  "'{\"completion\""),
                  "%s", err.msg);
        cr_assert_eq(ask(&html, 1, false), -EPROTO);
        cr_assert(strstr(err.msg, "content type 'text/html'"), "%s", err.msg);
        cr_assert_eq(ask(&big, 1, false), -E2BIG);
        cr_assert(strstr(err.msg, "larger than 65536 bytes"), "%s", err.msg);
        cr_assert_eq(ask(&slow, 1, false), -ETIMEDOUT);
}

Test(anthropic, text_that_is_not_utf8_goes_out_with_replacement_characters)
{
        /* A program's output fed back to the model may hold any bytes; JSON cannot. */
        struct httpd_reply ok = { 200, NULL, NULL, TEXT_BODY, 0, 0, 0 };
        heal_llm_message msgs[] = {
                { .role = HEAL_LLM_USER, .content = "output: \xff\xfe end" },
                { .role = HEAL_LLM_ASSISTANT, .content = "ok \xc3" },
                { .role = HEAL_LLM_USER, .content = "again" },
        };
        heal_llm_request req = HEAL_LLM_REQUEST_INIT;

        req.system = "sys \x80";
        req.messages = msgs;
        req.n_messages = 3;
        cr_assert_eq(ask_req(&ok, 1, &req), 0, "%s", err.msg);
        cr_assert(strstr(srv.requests[0], "output: \xef\xbf\xbd\xef\xbf\xbd end") ||
                          strstr(srv.requests[0], "output: \\ufffd\\ufffd end"),
                  "%s", srv.requests[0]);
        cr_assert(strstr(srv.requests[0], "\"system\":\"sys \xef\xbf\xbd\"") ||
                  strstr(srv.requests[0], "\"system\":\"sys \\ufffd\""));
        cr_assert(strstr(srv.requests[0], "ok \xef\xbf\xbd") ||
                  strstr(srv.requests[0], "ok \\ufffd"));
}
