/* SPDX-License-Identifier: MIT */
/* Requests in flight together (libcurl multi): n candidates as parallel requests, servers that
 * ignore "n", heal_llm_complete_many(), the parallelism cap and the budget across them. The
 * server counts requests in flight at once, and its replies wait until the expected number has
 * arrived: a client that sent them one after another would show 1, not N. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heal/llm.h"

#include "httpd.h"

#define OPENAI_BODY(text)                                                                   \
 "{\"id\":\"c\",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":" \
 "\"" text "\"},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":10,"              \
 "\"completion_tokens\":2}}"

#define ANTHROPIC_BODY(text)                                                                \
 "{\"id\":\"msg\",\"content\":[{\"type\":\"text\",\"text\":\"" text "\"}],\"stop_reason\":" \
 "\"end_turn\",\"usage\":{\"input_tokens\":10,\"output_tokens\":2}}"

static struct httpd srv;
static heal_llm_client *client;
static heal_llm_response resps[4];
static heal_error err;

static void fini(void)
{
        for (size_t i = 0; i < 4; i++)
                heal_llm_response_release(&resps[i]);
        client = heal_llm_client_free(client);
}

TestSuite(parallel, .fini = fini, .timeout = 60);

static void start(const struct httpd_reply *replies, size_t n, const char *provider,
                  unsigned max_parallel)
{
        heal_llm_config cfg = HEAL_LLM_CONFIG_INIT;

        httpd_start(&srv, replies, n);
        cfg.provider = provider;
        cfg.base_url = srv.base_url;
        cfg.max_parallel = max_parallel;
        cr_assert_eq(heal_llm_client_new(&client, &cfg, &err), 0, "%s", err.msg);
}

static heal_llm_message hello = { .role = HEAL_LLM_USER, .content = "say hello" };

static heal_llm_request request(unsigned n)
{
        heal_llm_request req = HEAL_LLM_REQUEST_INIT;

        req.model = "m";
        req.messages = &hello;
        req.n_messages = 1;
        req.n = n;
        return req;
}

static bool has_text(const heal_llm_response *r, const char *text)
{
        for (size_t i = 0; i < r->n_choices; i++)
                if (strcmp(r->choices[i].text, text) == 0)
                        return true;
        return false;
}

static size_t told_choices;

static void on_delta(void *data, unsigned attempt, size_t choice, const char *text, size_t len)
{
        (void)data, (void)attempt, (void)text, (void)len;
        told_choices |= 1u << choice;
}

#define STREAM(text)                                                                          \
 "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{"           \
 "\"input_tokens\":10,\"output_tokens\":1}}}\n\nevent: content_block_delta\ndata: {\"type\":" \
 "\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"" text    \
 "\"}}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"

Test(parallel, anthropic_n_candidates_are_requests_in_flight_together)
{
        struct httpd_reply r[] = {
                { 200, "text/event-stream", NULL, STREAM("one"), 0, 0, 3 },
                { 200, "text/event-stream", NULL, STREAM("two"), 0, 0, 3 },
                { 200, "text/event-stream", NULL, STREAM("three"), 0, 0, 3 },
        };
        heal_llm_request req = request(3);

        req.stream = true;
        req.on_delta = on_delta;
        start(r, 3, "anthropic", 0);
        cr_assert_eq(heal_llm_complete(client, &req, &resps[0], &err), 0, "%s", err.msg);
        httpd_stop(&srv);
        cr_assert_eq(srv.max_inflight, 3, "the three requests overlapped");
        cr_assert_eq(resps[0].n_choices, 3);
        cr_assert(has_text(&resps[0], "one") && has_text(&resps[0], "two") &&
                  has_text(&resps[0], "three"));
        cr_assert_eq(resps[0].input_tokens, 30, "usage is summed");
        cr_assert_eq(resps[0].attempts, 3);
        cr_assert_eq(told_choices, 7, "fragments are told as choices 0, 1 and 2");
        for (size_t i = 0; i < 3; i++)
                cr_assert_null(strstr(srv.requests[i], "\"n\":"), "Anthropic has no n");
}

Test(parallel, a_server_that_ignores_n_is_topped_up_in_parallel)
{
        struct httpd_reply r[] = {
                { 200, NULL, NULL, OPENAI_BODY("first"), 0, 0, 0 },
                { 200, NULL, NULL, OPENAI_BODY("second"), 0, 0, 2 },
                { 200, NULL, NULL, OPENAI_BODY("third"), 0, 0, 2 },
        };
        heal_llm_request req = request(3);

        start(r, 3, "openai", 0);
        cr_assert_eq(heal_llm_complete(client, &req, &resps[0], &err), 0, "%s", err.msg);
        httpd_stop(&srv);
        cr_assert(strstr(srv.requests[0], "\"n\":3"), "asked for 3 at once first");
        cr_assert_null(strstr(srv.requests[1], "\"n\":"));
        cr_assert_null(strstr(srv.requests[2], "\"n\":"));
        cr_assert_eq(srv.max_inflight, 2, "the two missing candidates were asked together");
        cr_assert_eq(resps[0].n_choices, 3);
        cr_assert_str_eq(resps[0].choices[0].text, "first");
        cr_assert(has_text(&resps[0], "second") && has_text(&resps[0], "third"));
}

Test(parallel, many_requests_at_once)
{
        struct httpd_reply r[] = {
                { 200, NULL, NULL, OPENAI_BODY("a"), 0, 0, 4 },
                { 200, NULL, NULL, OPENAI_BODY("b"), 0, 0, 4 },
                { 200, NULL, NULL, OPENAI_BODY("c"), 0, 0, 4 },
                { 500, NULL, NULL, "{\"error\":{\"message\":\"boom\"}}", 0, 0, 4 },
                { 200, NULL, NULL, OPENAI_BODY("d"), 0, 0, 0 },
        };
        heal_llm_request reqs[4] = { request(1), request(1), request(1), request(1) };
        heal_error errs[4];
        int rs[4];
        heal_llm_tally t;
        bool seen[4] = { false };

        start(r, 5, "openai", 0);
        cr_assert_eq(heal_llm_complete_many(client, reqs, 4, resps, rs, errs), 0, "%s",
                     errs[0].msg);
        httpd_stop(&srv);
        cr_assert_eq(srv.max_inflight, 4);
        for (size_t i = 0; i < 4; i++) {
                cr_assert_eq(rs[i], 0, "%s", errs[i].msg);
                cr_assert_eq(resps[i].n_choices, 1);
                cr_assert_eq(strlen(resps[i].choices[0].text), 1);
                seen[resps[i].choices[0].text[0] - 'a'] = true;
        }
        cr_assert(seen[0] && seen[1] && seen[2] && seen[3], "each request got its own answer");
        heal_llm_client_tally(client, &t);
        cr_assert_eq(t.requests, 5, "four requests and one retry after the 500");
        cr_assert_eq(t.input_tokens, 40);
}

Test(parallel, max_parallel_caps_requests_in_flight)
{
        struct httpd_reply r[] = {
                { 200, NULL, NULL, OPENAI_BODY("a"), 0, 0, 2 },
                { 200, NULL, NULL, OPENAI_BODY("b"), 0, 0, 2 },
                { 200, NULL, NULL, OPENAI_BODY("c"), 0, 0, 2 },
                { 200, NULL, NULL, OPENAI_BODY("d"), 0, 0, 2 },
        };
        heal_llm_request reqs[4] = { request(1), request(1), request(1), request(1) };
        int rs[4];

        start(r, 4, "openai", 2);
        cr_assert_eq(heal_llm_complete_many(client, reqs, 4, resps, rs, NULL), 0);
        httpd_stop(&srv);
        cr_assert_eq(srv.max_inflight, 2);
        cr_assert_eq(srv.served, 4);
}

Test(parallel, budget_stops_the_requests_past_it)
{
        struct httpd_reply r[] = {
                { 200, NULL, NULL, ANTHROPIC_BODY("x"), 0, 0, 0 },
                { 200, NULL, NULL, ANTHROPIC_BODY("y"), 0, 0, 0 },
        };
        heal_llm_budget budget = { .max_requests = 2 };
        heal_llm_request req = request(3);
        heal_llm_tally t;

        start(r, 2, "anthropic", 0);
        heal_llm_client_set_budget(client, &budget);
        cr_assert_eq(heal_llm_complete(client, &req, &resps[0], &err), 0, "%s", err.msg);
        httpd_stop(&srv);
        cr_assert_eq(resps[0].n_choices, 2, "two of three candidates fit the budget");
        heal_llm_client_tally(client, &t);
        cr_assert_eq(t.requests, 2);
        cr_assert_eq(heal_llm_complete(client, &req, &resps[1], &err), -EDQUOT);
        cr_assert(strstr(err.msg, "request"), "%s", err.msg);
}

Test(parallel, bad_arguments)
{
        heal_llm_request req = request(1);

        cr_assert_eq(heal_llm_complete_many(NULL, &req, 1, resps, NULL, NULL), -EINVAL);
        start(NULL, 0, "openai", 0);
        cr_assert_eq(heal_llm_complete_many(client, NULL, 1, resps, NULL, NULL), -EINVAL);
        cr_assert_eq(heal_llm_complete_many(client, &req, 0, resps, NULL, NULL), 0);
        httpd_stop(&srv);
}
