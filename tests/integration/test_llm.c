/* SPDX-License-Identifier: MIT */
/* The OpenAI-compatible provider against a real HTTP server on 127.0.0.1 (tests/helpers/httpd.c).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "heal/llm.h"

#include "httpd.h"

#define OK_BODY                                                                        \
 "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion\",\"choices\":[{\"index\":0,"    \
 "\"message\":{\"role\":\"assistant\",\"content\":\"hello there\"},\"finish_reason\":" \
 "\"stop\"}],\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":3,"                 \
 "\"prompt_tokens_details\":{\"cached_tokens\":4}}}"

static struct httpd srv;
static heal_llm_client *client;
static heal_llm_response resp;
static heal_error err;

static void fini(void)
{
        heal_llm_response_release(&resp);
        client = heal_llm_client_free(client);
}

TestSuite(llm, .fini = fini, .timeout = 30);

static int ask(const struct httpd_reply *replies, size_t n, unsigned retries, uint64_t timeout_ms,
               uint64_t max_bytes)
{
        heal_llm_config cfg = HEAL_LLM_CONFIG_INIT;
        heal_llm_message msg = { .role = HEAL_LLM_USER, .content = "say hello" };
        heal_llm_request req = HEAL_LLM_REQUEST_INIT;
        int r;

        httpd_start(&srv, replies, n);
        cfg.base_url = srv.base_url;
        cfg.api_key = "sk-test-secret";
        cfg.max_retries = retries;
        cfg.max_retry_wait_ms = 50;
        cfg.timeout_ms = timeout_ms;
        if (max_bytes)
                cfg.max_response_bytes = max_bytes;
        cr_assert_eq(heal_llm_client_new(&client, &cfg, &err), 0, "%s", err.msg);
        req.model = "gpt-test";
        req.system = "be brief";
        req.messages = &msg;
        req.n_messages = 1;
        err = (heal_error)HEAL_ERROR_INIT;
        r = heal_llm_complete(client, &req, &resp, &err);
        httpd_stop(&srv);
        return r;
}

Test(llm, plain_answer_and_the_request_on_the_wire)
{
        struct httpd_reply ok = { 200, NULL, "x-request-id: req-42\r\n", OK_BODY, 0, 0, 0 };

        cr_assert_eq(ask(&ok, 1, 0, 5000, 0), 0, "%s", err.msg);
        cr_assert_eq(resp.n_choices, 1);
        cr_assert_str_eq(resp.choices[0].text, "hello there");
        cr_assert_str_eq(resp.choices[0].finish_reason, "stop");
        cr_assert_eq(resp.input_tokens, 12);
        cr_assert_eq(resp.output_tokens, 3);
        cr_assert_eq(resp.cached_tokens, 4);
        cr_assert_str_eq(resp.request_id, "req-42");
        cr_assert_eq(resp.attempts, 1);
        cr_assert(strstr(srv.requests[0], "POST /v1/chat/completions HTTP/1.1"), "%s",
                  srv.requests[0]);
        cr_assert(strstr(srv.requests[0], "Authorization: Bearer sk-test-secret"));
        cr_assert(strstr(srv.requests[0], "\"model\":\"gpt-test\""));
        cr_assert(strstr(srv.requests[0], "{\"role\":\"system\",\"content\":\"be brief\"}"));
        cr_assert(strstr(srv.requests[0], "{\"role\":\"user\",\"content\":\"say hello\"}"));
}

Test(llm, several_tool_calls_in_one_turn)
{
        struct httpd_reply calls = {
                200,
                NULL,
                NULL,
                "{\"choices\":[{\"message\":{\"role\":\"assistant\",\"content\":null,"
                "\"tool_calls\":[{\"id\":\"call_1\",\"type\":\"function\",\"function\":"
                "{\"name\":\"run_code\",\"arguments\":\"{\\\"language\\\":\\\"go\\\"}\"}},"
                "{\"id\":\"call_2\",\"type\":\"function\",\"function\":{\"name\":\"run_code\","
                "\"arguments\":\"{\\\"language\\\": \"}}]},\"finish_reason\":\"tool_calls\"}]}",
                0,
                0,
                0,
        };

        cr_assert_eq(ask(&calls, 1, 0, 5000, 0), 0, "%s", err.msg);
        cr_assert_str_eq(resp.choices[0].text, "");
        cr_assert_str_eq(resp.choices[0].finish_reason, "tool_calls");
        cr_assert_eq(resp.choices[0].n_tool_calls, 2);
        cr_assert_str_eq(resp.choices[0].tool_calls[0].id, "call_1");
        cr_assert_str_eq(resp.choices[0].tool_calls[0].name, "run_code");
        cr_assert_str_eq(resp.choices[0].tool_calls[0].arguments, "{\"language\":\"go\"}");
        cr_assert(resp.choices[0].tool_calls[0].arguments_valid);
        cr_assert_not(resp.choices[0].tool_calls[1].arguments_valid,
                      "broken arguments are flagged, not a crash");
}

Test(llm, rate_limited_then_success_honours_retry_after)
{
        struct httpd_reply r[] = {
                { 429, NULL, "retry-after-ms: 30\r\n",
                  "{\"error\":{\"message\":\"Rate limit reached\"}}", 0, 0, 0 },
                { 200, NULL, NULL, OK_BODY, 0, 0, 0 },
        };
        struct timespec t0, t1;

        clock_gettime(CLOCK_MONOTONIC, &t0);
        cr_assert_eq(ask(r, 2, 3, 5000, 0), 0, "%s", err.msg);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        cr_assert_eq(resp.attempts, 2);
        cr_assert_geq((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000, 30,
                      "waited as the server asked");
}

Test(llm, rate_limited_without_retry_after_waits_for_the_reset)
{
        struct httpd_reply r[] = {
                { 429, NULL,
                  "x-ratelimit-reset-requests: 300ms\r\nx-ratelimit-reset-tokens: 6ms\r\n",
                  "{\"error\":{\"message\":\"Rate limit reached for requests\"}}", 0, 0, 0 },
                { 200, NULL, NULL, OK_BODY, 0, 0, 0 },
        };
        struct timespec t0, t1;

        clock_gettime(CLOCK_MONOTONIC, &t0);
        cr_assert_eq(ask(r, 2, 3, 5000, 0), 0, "%s", err.msg);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        cr_assert_eq(resp.attempts, 2);
        /* The cap in ask() is 50 ms: the reset is honoured up to it (a backoff alone would be
         * a random 0-50 ms; the clock counts whole ms, hence 48). */
        cr_assert_geq((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000, 48,
                      "waited for the later reset, capped");
}

Test(llm, the_wall_time_budget_counts_the_call_in_progress)
{
        struct httpd_reply r[] = {
                { 500, NULL, "retry-after-ms: 400\r\n", "{\"error\":{\"message\":\"boom\"}}", 0, 0,
                  0 },
                { 200, NULL, NULL, OK_BODY, 0, 0, 0 },
        };
        heal_llm_config cfg = HEAL_LLM_CONFIG_INIT;
        heal_llm_message msg = { .role = HEAL_LLM_USER, .content = "say hello" };
        heal_llm_request req = HEAL_LLM_REQUEST_INIT;
        heal_llm_budget budget = { .max_wall_ms = 200 };

        httpd_start(&srv, r, 2);
        cfg.base_url = srv.base_url;
        cfg.max_retry_wait_ms = 1000;
        cr_assert_eq(heal_llm_client_new(&client, &cfg, &err), 0, "%s", err.msg);
        heal_llm_client_set_budget(client, &budget);
        req.model = "gpt-test";
        req.messages = &msg;
        req.n_messages = 1;
        cr_assert_eq(heal_llm_complete(client, &req, &resp, &err), -EDQUOT, "%s", err.msg);
        httpd_stop(&srv);
        cr_assert(strstr(err.msg, "of 200 ms"), "%s", err.msg);
        cr_assert_eq(srv.served, 1, "the retry past the limit was not sent");
}

Test(llm, server_error_then_success)
{
        struct httpd_reply r[] = {
                { 500, NULL, NULL, "{\"error\":{\"message\":\"boom\"}}", 0, 0, 0 },
                { 200, NULL, NULL, OK_BODY, 0, 0, 0 },
        };

        cr_assert_eq(ask(r, 2, 3, 5000, 0), 0, "%s", err.msg);
        cr_assert_eq(resp.attempts, 2);
        cr_assert_str_eq(resp.choices[0].text, "hello there");
}

Test(llm, unauthorized_is_not_retried_and_quotes_the_provider)
{
        struct httpd_reply r[] = {
                { 401, NULL, NULL,
                  "{\"error\":{\"message\":\"Incorrect API key provided: sk-te***\"}}", 0, 0, 0 },
                { 200, NULL, NULL, OK_BODY, 0, 0, 0 },
        };

        cr_assert_eq(ask(r, 1, 3, 5000, 0), -EACCES, "%s", err.msg);
        cr_assert_eq(srv.served, 1, "no retry after 401");
        cr_assert(strstr(err.msg, "HTTP 401: Incorrect API key provided"), "%s", err.msg);
        cr_assert_null(strstr(err.msg, "sk-test-secret"), "the key is never printed");
}

Test(llm, retries_run_out)
{
        struct httpd_reply r[] = {
                { 503, NULL, NULL, "{\"error\":{\"message\":\"overloaded\"}}", 0, 0, 0 },
                { 503, NULL, NULL, "{\"error\":{\"message\":\"overloaded\"}}", 0, 0, 0 },
                { 503, NULL, NULL, "{\"error\":{\"message\":\"still overloaded\"}}", 0, 0, 0 },
        };

        cr_assert_eq(ask(r, 3, 2, 5000, 0), -EAGAIN, "%s", err.msg);
        cr_assert_eq(srv.served, 3);
        cr_assert(strstr(err.msg, "gave up after 3 attempts") &&
                          strstr(err.msg, "still overloaded"),
                  "%s", err.msg);
}

Test(llm, malformed_json_names_what_came)
{
        struct httpd_reply r = { 200, NULL, NULL, "{\"choices\": [", 0, 0, 0 };

        cr_assert_eq(ask(&r, 1, 0, 5000, 0), -EPROTO, "%s", err.msg);
        cr_assert(strstr(err.msg, "invalid JSON"), "%s", err.msg);
        heal_llm_response_release(&resp);
        client = heal_llm_client_free(client);
        r.body = "{\"object\":\"list\",\"data\":[]}";
        cr_assert_eq(ask(&r, 1, 0, 5000, 0), -EPROTO, "%s", err.msg);
        cr_assert(strstr(err.msg, "expected a chat completion with 'choices'"), "%s", err.msg);
}

Test(llm, wrong_content_type)
{
        struct httpd_reply r = { 200, "text/html", NULL, "<html>captive portal</html>", 0, 0, 0 };

        cr_assert_eq(ask(&r, 1, 0, 5000, 0), -EPROTO, "%s", err.msg);
        cr_assert(strstr(err.msg, "content type 'text/html'"), "%s", err.msg);
}

Test(llm, oversized_response)
{
        struct httpd_reply r = { 200, NULL, NULL, NULL, 1 << 20, 0, 0 };

        cr_assert_eq(ask(&r, 1, 0, 5000, 4096), -E2BIG, "%s", err.msg);
        cr_assert(strstr(err.msg, "larger than 4096 bytes"), "%s", err.msg);
}

Test(llm, slower_than_the_timeout)
{
        struct httpd_reply r = { 200, NULL, NULL, OK_BODY, 0, 1500, 0 };

        cr_assert_eq(ask(&r, 1, 0, 300, 0), -ETIMEDOUT, "%s", err.msg);
}

Test(llm, bad_configuration)
{
        heal_llm_config cfg = HEAL_LLM_CONFIG_INIT;

        cr_assert_eq(heal_llm_client_new(&client, &cfg, &err), -EINVAL);
        cfg.base_url = "http://127.0.0.1:1/v1";
        cfg.provider = "carrier-pigeon";
        cr_assert_eq(heal_llm_client_new(&client, &cfg, &err), -EINVAL);
        cr_assert(strstr(err.msg, "unknown provider 'carrier-pigeon'"));
}

static int replay(const char *cassette, const char *question)
{
        heal_llm_config cfg = HEAL_LLM_CONFIG_INIT;
        heal_llm_message msg = { .role = HEAL_LLM_USER, .content = question };
        heal_llm_request req = HEAL_LLM_REQUEST_INIT;

        cfg.provider = "replay";
        cfg.cassette = cassette;
        err = (heal_error)HEAL_ERROR_INIT;
        heal_llm_response_release(&resp);
        client = heal_llm_client_free(client);
        if (heal_llm_client_new(&client, &cfg, &err) < 0)
                return err.code;
        req.model = "gpt-test";
        req.system = "be brief";
        req.messages = &msg;
        req.n_messages = 1;
        return heal_llm_complete(client, &req, &resp, &err);
}

Test(llm, record_then_replay_round_trips_without_the_key)
{
        char path[] = "/tmp/heal-test-cassette-XXXXXX";
        struct httpd_reply ok = { 200, NULL, NULL, OK_BODY, 0, 0, 0 };
        heal_llm_config cfg = HEAL_LLM_CONFIG_INIT;
        heal_llm_message msg = { .role = HEAL_LLM_USER, .content = "say hello" };
        heal_llm_request req = HEAL_LLM_REQUEST_INIT;
        char text[8192] = "";
        FILE *f;
        int fd = mkstemp(path);

        cr_assert(fd >= 0);
        close(fd);
        httpd_start(&srv, &ok, 1);
        cfg.base_url = srv.base_url;
        cfg.api_key = "sk-test-secret";
        cfg.cassette = path;
        cr_assert_eq(heal_llm_client_new(&client, &cfg, &err), 0, "%s", err.msg);
        req.model = "gpt-test";
        req.system = "be brief";
        req.messages = &msg;
        req.n_messages = 1;
        cr_assert_eq(heal_llm_complete(client, &req, &resp, &err), 0, "%s", err.msg);
        httpd_stop(&srv);
        f = fopen(path, "re");
        cr_assert_gt(fread(text, 1, sizeof(text) - 1, f), 0);
        fclose(f);
        cr_assert_null(strstr(text, "sk-test-secret"), "the key never reaches a cassette");
        cr_assert(strstr(text, "\"key\":") && strstr(text, "hello there"), "%s", text);

        cr_assert_eq(replay(path, "say hello"), 0, "%s", err.msg);
        cr_assert_str_eq(resp.choices[0].text, "hello there");
        cr_assert_eq(resp.input_tokens, 12);
        cr_assert_eq(resp.attempts, 0, "no HTTP request was made");

        cr_assert_eq(replay(path, "say goodbye"), -ENOENT);
        cr_assert(strstr(err.msg, "nearest recorded request differs at byte") &&
                          strstr(err.msg, "recorded 'hello") && strstr(err.msg, "asked 'goodbye"),
                  "%s", err.msg);
        unlink(path);
}

Test(llm, hand_written_cassette_with_tool_calls)
{
        char path[] = "/tmp/heal-test-cassette-XXXXXX";
        const char *canonical_line;
        int fd = mkstemp(path);
        FILE *f = fdopen(fd, "w");

        /* A cassette line for a request we do not ask: the file parses, the lookup misses. */
        canonical_line = "{\"key\":\"00\",\"request\":{\"model\":\"m\"},\"response\":{\"choices\":"
                         "[{\"text\":\"\",\"finish_reason\":\"tool_calls\",\"tool_calls\":[{\"id\":"
                         "\"c1\",\"name\":\"run_code\",\"arguments\":\"{}\"}]}],\"usage\":{}}}\n";
        fputs(canonical_line, f);
        fclose(f);
        cr_assert_eq(replay(path, "anything"), -ENOENT);
        cr_assert(strstr(err.msg, "recorded '"), "%s", err.msg);
        f = fopen(path, "we");
        fputs("{\"key\": 1}\n", f);
        fclose(f);
        cr_assert_eq(replay(path, "anything"), -EBADMSG);
        cr_assert(strstr(err.msg, "line 1: expected {key, request, response}"), "%s", err.msg);
        cr_assert_eq(replay("/nonexistent/cassette", "x"), -ENOENT);
        unlink(path);
}

/* What heal_llm_request.on_delta heard during the last ask_stream(). */
static struct {
        char text[256];
        size_t len;
        unsigned calls, attempt;
        size_t max_choice;
} heard;

static void on_delta(void *data, unsigned attempt, size_t choice, const char *text, size_t len)
{
        cr_assert_eq(data, &heard);
        cr_assert_lt(heard.len + len, sizeof(heard.text));
        memcpy(heard.text + heard.len, text, len);
        heard.len += len;
        heard.calls++;
        heard.attempt = attempt;
        heard.max_choice = choice > heard.max_choice ? choice : heard.max_choice;
}

static int ask_stream(const struct httpd_reply *replies, size_t n)
{
        heal_llm_config cfg = HEAL_LLM_CONFIG_INIT;
        heal_llm_message msg = { .role = HEAL_LLM_USER, .content = "stream it" };
        heal_llm_request req = HEAL_LLM_REQUEST_INIT;
        int r;

        httpd_start(&srv, replies, n);
        cfg.base_url = srv.base_url;
        cfg.max_retries = 1;
        cfg.max_retry_wait_ms = 20;
        cr_assert_eq(heal_llm_client_new(&client, &cfg, &err), 0, "%s", err.msg);
        req.model = "gpt-test";
        req.messages = &msg;
        req.n_messages = 1;
        req.stream = true;
        req.on_delta = on_delta;
        req.delta_data = &heard;
        memset(&heard, 0, sizeof(heard));
        err = (heal_error)HEAL_ERROR_INIT;
        r = heal_llm_complete(client, &req, &resp, &err);
        httpd_stop(&srv);
        return r;
}

#define CHUNK(json) "data: " json "\n\n"

Test(llm, streamed_answer_with_usage_chunk_and_comments)
{
        struct httpd_reply r = {
                200,
                "text/event-stream",
                NULL,
                ": OPENROUTER PROCESSING\r\n\r\n" CHUNK(
                        "{\"id\":\"c-9\",\"choices\":[{\"index\":0,\"delta\":{\"role\":"
                        "\"assistant\",\"content\":\"hel\"}}]}") "data: {\"choices\":[{\"index\":0,"
                                                                 "\"delta\":{\"content\":\"lo\"},"
                                                                 "\"finish_reason\":\"stop\"}]}\r\n\r\n" CHUNK(
                                                                         "{\"choices\":[],\"usage\":{\"prompt_tokens\":7,"
                                                                         "\"completion_tokens\":2}}") "data: [DONE]\n\n",
                0,
                0,
                0,
        };

        cr_assert_eq(ask_stream(&r, 1), 0, "%s", err.msg);
        cr_assert(strstr(srv.requests[0], "\"stream\":true") &&
                  strstr(srv.requests[0], "\"include_usage\":true"));
        cr_assert_eq(resp.n_choices, 1);
        cr_assert_str_eq(resp.choices[0].text, "hello");
        cr_assert_str_eq(resp.choices[0].finish_reason, "stop");
        cr_assert_eq(resp.input_tokens, 7);
        cr_assert_eq(resp.output_tokens, 2);
        cr_assert_str_eq(resp.request_id, "c-9");
        cr_assert_eq(heard.calls, 2, "one call per text fragment");
        cr_assert_eq(heard.len, 5);
        cr_assert_arr_eq(heard.text, "hello", 5);
        cr_assert_eq(heard.attempt, 1);
        cr_assert_eq(heard.max_choice, 0);
}

Test(llm, streamed_tool_call_deltas_are_assembled_by_index)
{
        struct httpd_reply r = {
                200,
                "text/event-stream",
                NULL,
                CHUNK("{\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":"
                      "\"call_a\",\"type\":\"function\",\"function\":{\"name\":\"run_code\","
                      "\"arguments\":\"{\\\"lang\"}}]}}]}")
                        CHUNK("{\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":1,\"id\":"
                              "\"call_b\",\"function\":{\"name\":\"read_file\",\"arguments\":\"{}\"}}]}}]}")
                                CHUNK("{\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,"
                                      "\"function\":{\"arguments\":\"uage\\\":\\\"go\\\"}\"}}]},\"finish_reason\":"
                                      "\"tool_calls\"}]}") "data: [DONE]\n\n",
                0,
                0,
                0,
        };

        cr_assert_eq(ask_stream(&r, 1), 0, "%s", err.msg);
        cr_assert_eq(resp.choices[0].n_tool_calls, 2);
        cr_assert_str_eq(resp.choices[0].tool_calls[0].id, "call_a");
        cr_assert_str_eq(resp.choices[0].tool_calls[0].name, "run_code");
        cr_assert_str_eq(resp.choices[0].tool_calls[0].arguments, "{\"language\":\"go\"}");
        cr_assert(resp.choices[0].tool_calls[0].arguments_valid);
        cr_assert_str_eq(resp.choices[0].tool_calls[1].name, "read_file");
        cr_assert_str_eq(resp.choices[0].finish_reason, "tool_calls");
        cr_assert_eq(heard.calls, 0, "tool-call arguments are not answer text");
}

Test(llm, stream_cut_mid_event_is_an_error)
{
        struct httpd_reply r = {
                200,
                "text/event-stream",
                NULL,
                CHUNK("{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"partial\"}}]}") "data: {\"choices\":[{\"ind",
                0,
                0,
                0,
        };

        cr_assert_eq(ask_stream(&r, 1), -EPROTO, "%s", err.msg);
        cr_assert(strstr(err.msg, "before 'data: [DONE]'"), "%s", err.msg);
}

Test(llm, stream_request_answered_with_plain_json_still_works)
{
        struct httpd_reply r = { 200, NULL, NULL, OK_BODY, 0, 0, 0 };

        cr_assert_eq(ask_stream(&r, 1), 0, "%s", err.msg);
        cr_assert_str_eq(resp.choices[0].text, "hello there");
        cr_assert_eq(heard.calls, 0, "an answer that came whole is not told in fragments");
}

Test(llm, stream_after_a_429_starts_over)
{
        struct httpd_reply r[] = {
                { 429, NULL, "retry-after: 0\r\n", "{\"error\":{\"message\":\"slow down\"}}", 0, 0,
                  0 },
                { 200, "text/event-stream", NULL,
                  CHUNK("{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ok\"},"
                        "\"finish_reason\":\"stop\"}]}") "data: [DONE]\n\n",
                  0, 0, 0 },
        };

        cr_assert_eq(ask_stream(r, 2), 0, "%s", err.msg);
        cr_assert_eq(resp.attempts, 2);
        cr_assert_str_eq(resp.choices[0].text, "ok");
        cr_assert_eq(heard.calls, 1);
        cr_assert_eq(heard.attempt, 2, "the fragment is told as the second attempt's");
}

Test(llm, two_candidates_streamed_are_told_apart)
{
        struct httpd_reply r = {
                200,
                "text/event-stream",
                NULL,
                CHUNK("{\"choices\":[{\"index\":1,\"delta\":{\"content\":\"b\"}},"
                      "{\"index\":0,\"delta\":{\"content\":\"a\"}}]}")
                        CHUNK("{\"choices\":[{\"index\":1,\"delta\":{\"content\":\"\"},"
                              "\"finish_reason\":\"stop\"}]}") "data: [DONE]\n\n",
                0,
                0,
                0,
        };

        cr_assert_eq(ask_stream(&r, 1), 0, "%s", err.msg);
        cr_assert_eq(resp.n_choices, 2);
        cr_assert_str_eq(resp.choices[0].text, "a");
        cr_assert_str_eq(resp.choices[1].text, "b");
        cr_assert_eq(heard.calls, 2, "empty fragments are not told");
        cr_assert_eq(heard.max_choice, 1);
        cr_assert_arr_eq(heard.text, "ba", 2);
}

static heal_llm_request hello_request(heal_llm_message *msg)
{
        heal_llm_request req = HEAL_LLM_REQUEST_INIT;

        *msg = (heal_llm_message){ .role = HEAL_LLM_USER, .content = "say hello" };
        req.model = "gpt-4.1-mini";
        req.messages = msg;
        req.n_messages = 1;
        return req;
}

Test(llm, response_schema_goes_on_the_wire_and_a_bad_one_is_refused_locally)
{
        struct httpd_reply ok = { 200, NULL, NULL, OK_BODY, 0, 0, 0 };
        heal_llm_config cfg = HEAL_LLM_CONFIG_INIT;
        heal_llm_message msg;
        heal_llm_request req = hello_request(&msg);

        httpd_start(&srv, &ok, 1);
        cfg.base_url = srv.base_url;
        cr_assert_eq(heal_llm_client_new(&client, &cfg, &err), 0);
        req.response_schema = "[1]";
        cr_assert_eq(heal_llm_complete(client, &req, &resp, &err), -EINVAL);
        cr_assert(strstr(err.msg, "response schema is not a JSON object"), "%s", err.msg);
        req.response_schema = "{\"type\":";
        cr_assert_eq(heal_llm_complete(client, &req, &resp, &err), -EINVAL);
        req.response_schema = "{\"type\":\"object\",\"properties\":{\"patch\":{\"type\":"
                              "\"string\"}},\"required\":[\"patch\"]}";
        cr_assert_eq(heal_llm_complete(client, &req, &resp, &err), 0, "%s", err.msg);
        httpd_stop(&srv);
        cr_assert_eq(srv.served, 1, "the bad schemas sent nothing");
        cr_assert(strstr(srv.requests[0],
                         "\"response_format\":{\"type\":\"json_schema\",\"json_schema\":{"
                         "\"name\":\"response\",\"strict\":true,\"schema\":{\"type\":\"object\","
                         "\"properties\":{\"patch\":{\"type\":\"string\"}},\"required\":"
                         "[\"patch\"]}}}"),
                  "%s", srv.requests[0]);
}

Test(llm, budget_stops_before_sending_and_tallies)
{
        struct httpd_reply ok[] = { { 200, NULL, NULL, OK_BODY, 0, 0, 0 },
                                    { 200, NULL, NULL, OK_BODY, 0, 0, 0 } };
        heal_llm_config cfg = HEAL_LLM_CONFIG_INIT;
        heal_llm_budget budget = { .max_requests = 2 };
        heal_llm_message msg;
        heal_llm_request req = hello_request(&msg);
        heal_llm_tally t;
        char line[256];

        httpd_start(&srv, ok, 2);
        cfg.base_url = srv.base_url;
        cr_assert_eq(heal_llm_client_new(&client, &cfg, &err), 0);
        heal_llm_client_set_budget(client, &budget);
        for (int i = 0; i < 2; i++) {
                cr_assert_eq(heal_llm_complete(client, &req, &resp, &err), 0, "%s", err.msg);
                heal_llm_response_release(&resp);
        }
        cr_assert_eq(heal_llm_complete(client, &req, &resp, &err), -EDQUOT);
        cr_assert(strstr(err.msg, "budget exhausted: 2 of 2 requests"), "%s", err.msg);
        httpd_stop(&srv);
        cr_assert_eq(srv.served, 2, "nothing was sent past the budget");
        heal_llm_client_tally(client, &t);
        cr_assert_eq(t.requests, 2);
        cr_assert_eq(t.input_tokens, 24);
        cr_assert_eq(t.output_tokens, 6);
        cr_assert_eq(t.cached_tokens, 8);
        /* gpt-4.1-mini: (12-4)*0.40 + 4*0.10 + 3*1.60 micro-$ per call = 8.4 -> 8 each */
        cr_assert_eq(t.cost_micro_usd, 16, "%llu", (unsigned long long)t.cost_micro_usd);
        heal_llm_tally_format(&t, line, sizeof(line));
        cr_assert(strstr(line,
                         "2 requests (0 from cache or cassette), 24 tokens in (8 cached), 6 out"),
                  "%s", line);
}

Test(llm, token_and_money_budgets_with_price_override)
{
        struct httpd_reply ok = { 200, NULL, NULL, OK_BODY, 0, 0, 0 };
        heal_llm_config cfg = HEAL_LLM_CONFIG_INIT;
        heal_llm_budget budget = { .max_cost_micro_usd = 1000 };
        heal_llm_message msg;
        heal_llm_request req = hello_request(&msg);

        httpd_start(&srv, &ok, 1);
        cfg.base_url = srv.base_url;
        cr_assert_eq(heal_llm_client_new(&client, &cfg, &err), 0);
        cr_assert_eq(heal_llm_client_set_price(client, "gpt-4.1-mini", 100.0, 100.0, 100.0), 0);
        heal_llm_client_set_budget(client, &budget);
        cr_assert_eq(heal_llm_complete(client, &req, &resp, &err), 0, "%s", err.msg);
        heal_llm_response_release(&resp);
        /* 15 tokens at $100 per million = $0.0015 > $0.001 */
        cr_assert_eq(heal_llm_complete(client, &req, &resp, &err), -EDQUOT);
        cr_assert(strstr(err.msg, "budget exhausted: $0.0015 of $0.0010"), "%s", err.msg);
        httpd_stop(&srv);
}

Test(llm, cache_answers_repeats_and_ignores_corruption)
{
        struct httpd_reply ok[] = { { 200, NULL, NULL, OK_BODY, 0, 0, 0 },
                                    { 200, NULL, NULL, OK_BODY, 0, 0, 0 } };
        heal_llm_config cfg = HEAL_LLM_CONFIG_INIT;
        char dir[] = "/tmp/heal-test-cache-XXXXXX", cmd[128];
        heal_llm_message msg;
        heal_llm_request req = hello_request(&msg);
        heal_llm_tally t;

        cr_assert_not_null(mkdtemp(dir));
        httpd_start(&srv, ok, 2);
        cfg.base_url = srv.base_url;
        cfg.api_key = "sk-test-secret";
        cfg.cache_dir = dir;
        cr_assert_eq(heal_llm_client_new(&client, &cfg, &err), 0);
        cr_assert_eq(heal_llm_complete(client, &req, &resp, &err), 0, "%s", err.msg);
        heal_llm_response_release(&resp);
        cr_assert_eq(heal_llm_complete(client, &req, &resp, &err), 0, "%s", err.msg);
        cr_assert_str_eq(resp.choices[0].text, "hello there");
        cr_assert_str_eq(resp.request_id, "cache");
        heal_llm_response_release(&resp);
        heal_llm_client_tally(client, &t);
        cr_assert_eq(t.requests, 1);
        cr_assert_eq(t.cache_hits, 1);
        snprintf(cmd, sizeof(cmd), "grep -rq sk-test-secret %s", dir);
        cr_assert_neq(system(cmd), 0, "no key in the cache");
        /* A corrupted entry is a miss, not an error. */
        snprintf(cmd, sizeof(cmd), "for f in %s/*/*.json; do echo garbage > $f; done", dir);
        cr_assert_eq(system(cmd), 0);
        cr_assert_eq(heal_llm_complete(client, &req, &resp, &err), 0, "%s", err.msg);
        httpd_stop(&srv);
        cr_assert_eq(srv.served, 2, "the corrupted entry sent the request again");
        snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
        cr_assert_eq(system(cmd), 0);
}

Test(llm, text_that_is_not_utf8_goes_out_with_replacement_characters)
{
        /* A program's output fed back to the model may hold any bytes; JSON cannot. */
        struct httpd_reply ok = { 200, NULL, NULL, OK_BODY, 0, 0, 0 };
        heal_llm_config cfg = HEAL_LLM_CONFIG_INIT;
        heal_llm_message msgs[] = {
                { .role = HEAL_LLM_USER, .content = "output: \xff\xfe end" },
                { .role = HEAL_LLM_TOOL, .content = "tool \xc3", .tool_call_id = "c1" },
        };
        heal_llm_request req = HEAL_LLM_REQUEST_INIT;

        httpd_start(&srv, &ok, 1);
        cfg.base_url = srv.base_url;
        cr_assert_eq(heal_llm_client_new(&client, &cfg, &err), 0, "%s", err.msg);
        req.model = "gpt-test";
        req.system = "sys \x80";
        req.messages = msgs;
        req.n_messages = 2;
        cr_assert_eq(heal_llm_complete(client, &req, &resp, &err), 0, "%s", err.msg);
        httpd_stop(&srv);
        cr_assert(strstr(srv.requests[0], "output: \xef\xbf\xbd\xef\xbf\xbd end"), "%s",
                  srv.requests[0]);
        cr_assert(strstr(srv.requests[0], "\"content\":\"sys \xef\xbf\xbd\""));
        cr_assert(strstr(srv.requests[0], "\"content\":\"tool \xef\xbf\xbd\""));
}
