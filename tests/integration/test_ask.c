/* SPDX-License-Identifier: MIT */
/* heal ask against a model served on 127.0.0.1 (tests/helpers/httpd.c) that calls run_code:
 * two calls in one turn, a failing one, a timeout, broken arguments, an unknown tool, then a
 * text answer; the same over the Anthropic wire format; the turn limit; the JSON report. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "model.h"

static struct model model;
static struct test_proc run;
static char *dir;
static json_t *doc;

static void setup(void)
{
        dir = test_tempdir();
}

static void teardown(void)
{
        model_release(&model);
        test_proc_release(&run);
        json_decref(doc);
        doc = NULL;
        test_rmtree(dir);
        free(dir);
}

TestSuite(ask, .init = setup, .fini = teardown, .timeout = 120);

static void reply(size_t i, json_t *body)
{
        model_reply(&model, i, body);
}

/* A Chat Completions turn: @text and the calls in @calls (pairs of name, arguments JSON). */
static void turn(size_t i, const char *text, const char *const *calls)
{
        json_t *tc = json_array();
        json_t *msg = json_pack("{s:s,s:o}", "role", "assistant", "content",
                                text ? json_string(text) : json_null());

        for (size_t k = 0; calls && calls[2 * k]; k++) {
                char id[48];

                snprintf(id, sizeof(id), "call_%zu_%zu", i, k);
                json_array_append_new(tc, json_pack("{s:s,s:s,s:{s:s,s:s}}", "id", id, "type",
                                                    "function", "function", "name", calls[2 * k],
                                                    "arguments", calls[2 * k + 1]));
        }
        if (json_array_size(tc))
                json_object_set_new(msg, "tool_calls", tc);
        else
                json_decref(tc);
        reply(i, json_pack("{s:[{s:i,s:o,s:s}]}", "choices", "index", 0, "message", msg,
                           "finish_reason", calls ? "tool_calls" : "stop"));
}

static void ask(size_t n, const char *provider, const char *const *args)
{
        model_run(&model, &run, dir, (const char *const[]){ "ANTHROPIC_API_KEY=sk-ant-test", NULL },
                  "ask", provider, n, args);
}

#define ASK(n, ...) ask(n, "openai:test-model", (const char *const[]){ __VA_ARGS__, NULL })

static json_t *request(size_t i)
{
        const char *b = model_request_body(&model, i);
        json_t *j = json_loads(b, 0, NULL);

        cr_assert_not_null(j, "request %zu is not JSON: %s", i, b);
        return j;
}

/* The tool message answering @id in request @i, parsed. */
static json_t *tool_result(size_t i, const char *id)
{
        json_t *req = request(i), *msgs = json_object_get(req, "messages"), *m, *res = NULL;
        size_t k;

        json_array_foreach(msgs, k, m)
                if (!strcmp(json_string_value(json_object_get(m, "role")), "tool") &&
                    !strcmp(json_string_value(json_object_get(m, "tool_call_id")), id))
                        res = json_loads(json_string_value(json_object_get(m, "content")), 0, NULL);
        json_decref(req);
        cr_assert_not_null(res, "request %zu answers no call %s with JSON", i, id);
        return res;
}

static const char *field(json_t *o, const char *key)
{
        const char *s = json_string_value(json_object_get(o, key));

        return s ? s : "";
}

Test(ask, calls_in_one_turn_failures_and_a_timeout_then_an_answer)
{
        json_t *r, *req, *tool;

        turn(0, "Let me compute.",
             (const char *const[]){
                     "run_code", "{\"language\":\"python3\",\"code\":\"print(sum(range(101)))\"}",
                     "run_code", "{\"language\":\"c\",\"code\":\"int main(void) { return 0 }\\n\"}",
                     NULL });
        turn(1, NULL,
             (const char *const[]){
                     "run_code",
                     "{\"language\":\"sh\",\"code\":\"while :; do :; done\",\"timeout_ms\":300}",
                     "run_code", "{\"language\": \"python3\", \"code\": ", "shell",
                     "{\"cmd\":\"ls\"}", NULL });
        turn(2, "The sum is 5050.", NULL);
        ASK(3, "-v", "what is 1+2+...+100?");
        cr_assert_eq(run.code, 0, "stderr: %s", run.err);
        cr_assert_str_eq(run.out, "The sum is 5050.\n");
        cr_assert_eq(model.srv.served, 3);

        /* the tool as offered */
        req = request(0);
        tool = json_array_get(json_object_get(req, "tools"), 0);
        cr_assert_str_eq(field(json_object_get(tool, "function"), "name"), "run_code");
        cr_assert(json_is_object(json_object_get(json_object_get(tool, "function"), "parameters")));
        json_decref(req);

        /* turn 1: both calls ran, each answered under its own id */
        r = tool_result(1, "call_0_0");
        cr_assert_str_eq(field(r, "status"), "ok");
        cr_assert_str_eq(field(r, "stdout"), "5050\n");
        json_decref(r);
        r = tool_result(1, "call_0_1");
        cr_assert_str_eq(field(r, "status"), "compile_error");
        cr_assert(strstr(field(r, "compile_output"), "expected"), "%s", field(r, "compile_output"));
        json_decref(r);

        /* turn 2: a timeout, broken arguments, an unknown tool: answered, not fatal */
        r = tool_result(2, "call_1_0");
        cr_assert_str_eq(field(r, "status"), "timeout");
        cr_assert(strstr(field(r, "message"), "300 ms"), "%s", field(r, "message"));
        json_decref(r);
        r = tool_result(2, "call_1_1");
        cr_assert(strstr(field(r, "error"), "not a JSON object"), "%s", field(r, "error"));
        json_decref(r);
        r = tool_result(2, "call_1_2");
        cr_assert(strstr(field(r, "error"), "no tool 'shell'"), "%s", field(r, "error"));
        json_decref(r);

        /* the conversation goes on with the assistant's calls echoed before the results */
        req = request(2);
        cr_assert_eq(json_array_size(json_object_get(req, "messages")), 1 + 1 + 1 + 2 + 1 + 3,
                     "system, question, turn 1 + 2 results, turn 2 + 3 results");
        json_decref(req);
        cr_assert(strstr(run.err, "call run_code(python3)"), "%s", run.err);
        cr_assert(strstr(run.err, "print(sum(range(101)))"), "-v shows the code: %s", run.err);
        cr_assert(strstr(run.err, "-> timeout"), "%s", run.err);
        cr_assert(strstr(run.err, "-> refused"), "%s", run.err);
}

Test(ask, arguments_missing_a_field_are_told_which)
{
        json_t *r;

        turn(0, NULL,
             (const char *const[]){ "run_code", "{\"code\":\"print(1)\"}", "run_code",
                                    "{\"language\":\"cobol\",\"code\":\"x\"}", "run_code",
                                    "{\"language\":\"go\",\"code\":1}", NULL });
        turn(1, "done", NULL);
        ASK(2, "q");
        cr_assert_eq(run.code, 0, "stderr: %s", run.err);
        r = tool_result(1, "call_0_0");
        cr_assert(strstr(field(r, "error"), "'language' is missing"), "%s", field(r, "error"));
        json_decref(r);
        r = tool_result(1, "call_0_1");
        cr_assert(strstr(field(r, "error"), "'cobol' is not one of"), "%s", field(r, "error"));
        json_decref(r);
        r = tool_result(1, "call_0_2");
        cr_assert(strstr(field(r, "error"), "'code' must be a string"), "%s", field(r, "error"));
        json_decref(r);
}

Test(ask, the_anthropic_wire_format)
{
        json_t *req, *msgs, *last, *block;

        reply(0, json_pack("{s:s,s:s,s:s,s:[{s:s,s:s},{s:s,s:s,s:s,s:{s:s,s:s}}],s:s,s:{s:i,s:i}}",
                           "id", "msg_1", "type", "message", "role", "assistant", "content", "type",
                           "text", "text", "checking", "type", "tool_use", "id", "tu_1", "name",
                           "run_code", "input", "language", "sh", "code", "echo $((6 * 7))",
                           "stop_reason", "tool_use", "usage", "input_tokens", 10, "output_tokens",
                           5));
        reply(1, json_pack("{s:s,s:s,s:s,s:[{s:s,s:s}],s:s,s:{s:i,s:i}}", "id", "msg_2", "type",
                           "message", "role", "assistant", "content", "type", "text", "text",
                           "It is 42.", "stop_reason", "end_turn", "usage", "input_tokens", 20,
                           "output_tokens", 3));
        ask(2, "anthropic:claude-test", (const char *const[]){ "6 times 7?", NULL });
        cr_assert_eq(run.code, 0, "stderr: %s", run.err);
        cr_assert_str_eq(run.out, "It is 42.\n");
        req = request(1);
        msgs = json_object_get(req, "messages");
        last = json_array_get(msgs, json_array_size(msgs) - 1);
        cr_assert_str_eq(field(last, "role"), "user");
        block = json_array_get(json_object_get(last, "content"), 0);
        cr_assert_str_eq(field(block, "type"), "tool_result");
        cr_assert_str_eq(field(block, "tool_use_id"), "tu_1");
        cr_assert(strstr(field(block, "content"), "\"stdout\":\"42\\n\""), "%s",
                  field(block, "content"));
        json_decref(req);
}

Test(ask, the_turn_limit)
{
        turn(0, "thinking",
             (const char *const[]){ "run_code", "{\"language\":\"sh\",\"code\":\"true\"}", NULL });
        ASK(1, "--max-turns", "1", "q");
        cr_assert_eq(run.code, 3, "stderr: %s", run.err);
        cr_assert(strstr(run.err, "still called tools after 1 turns"), "%s", run.err);
        cr_assert_eq(model.srv.served, 1);
}

Test(ask, json_report)
{
        json_t *calls;

        turn(0, NULL,
             (const char *const[]){ "run_code",
                                    "{\"language\":\"bash\",\"code\":\"echo hi; exit 3\"}", NULL });
        turn(1, "It exits with 3.", NULL);
        ASK(2, "--json", "q");
        cr_assert_eq(run.code, 0, "stderr: %s", run.err);
        doc = json_loads(run.out, 0, NULL);
        cr_assert_not_null(doc, "%s", run.out);
        cr_assert_str_eq(field(doc, "verdict"), "answered");
        cr_assert_str_eq(field(doc, "answer"), "It exits with 3.");
        cr_assert_eq(json_integer_value(json_object_get(doc, "turns")), 2);
        calls = json_object_get(doc, "calls");
        cr_assert_eq(json_array_size(calls), 1);
        cr_assert_str_eq(field(json_array_get(calls, 0), "status"), "runtime_error");
        cr_assert_eq(json_integer_value(json_object_get(
                             json_object_get(json_array_get(calls, 0), "result"), "exit_code")),
                     3);
        cr_assert_eq(json_integer_value(json_object_get(json_object_get(doc, "usage"), "requests")),
                     2);
}

Test(ask, usage_errors)
{
        const char *const cases[][4] = {
                { "ask", NULL },
                { "ask", "--max-turns", "0", "q" },
                { "ask", "--timeout", "5s", "q" },
                { "ask", "--stdin", "x", "q" },
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                const char *argv[5] = { cases[i][0], cases[i][1], cases[i][2], cases[i][3] };

                test_proc_release(&run);
                test_heal(&run, dir, NULL, NULL, argv);
                cr_assert_eq(run.code, 2, "case %zu: %s", i, run.err);
                cr_assert(strstr(run.err, "heal ask: "), "case %zu: %s", i, run.err);
        }
}

Test(ask, malformed_calls_are_answered_and_only_sixteen_run_in_a_turn)
{
        json_t *r, *calls = json_array(), *msg;

        /* a call without a name, arguments as an object, a NUL in the code, then 17 more */
        json_array_append_new(calls, json_pack("{s:s,s:s,s:{s:s}}", "id", "c_noname", "type",
                                               "function", "function", "arguments", "{}"));
        json_array_append_new(calls, json_pack("{s:s,s:s,s:{s:s,s:{s:s,s:s}}}", "id", "c_obj",
                                               "type", "function", "function", "name", "run_code",
                                               "arguments", "language", "sh", "code", "echo obj"));
        json_array_append_new(calls,
                              json_pack("{s:s,s:s,s:{s:s,s:s}}", "id", "c_nul", "type", "function",
                                        "function", "name", "run_code", "arguments",
                                        "{\"language\":\"sh\",\"code\":\"echo a; # \\u0000\"}"));
        for (int i = 0; i < 17; i++) {
                char id[32];

                snprintf(id, sizeof(id), "c_%d", i);
                json_array_append_new(calls, json_pack("{s:s,s:s,s:{s:s,s:s}}", "id", id, "type",
                                                       "function", "function", "name", "run_code",
                                                       "arguments",
                                                       "{\"language\":\"sh\",\"code\":\"true\"}"));
        }
        msg = json_pack("{s:s,s:n,s:o}", "role", "assistant", "content", "tool_calls", calls);
        reply(0, json_pack("{s:[{s:i,s:o,s:s}]}", "choices", "index", 0, "message", msg,
                           "finish_reason", "tool_calls"));
        turn(1, "done", NULL);
        ASK(2, "q");
        cr_assert_eq(run.code, 0, "stderr: %s", run.err);
        r = tool_result(1, "c_noname");
        cr_assert(strstr(field(r, "error"), "no tool ''"), "%s", field(r, "error"));
        json_decref(r);
        r = tool_result(1, "c_obj");
        cr_assert_str_eq(field(r, "stdout"), "obj\n");
        json_decref(r);
        r = tool_result(1, "c_nul");
        cr_assert_str_eq(field(r, "stdout"), "a\n");
        json_decref(r);
        r = tool_result(1, "c_12");
        cr_assert_str_eq(field(r, "status"), "ok", "the 16th call ran");
        json_decref(r);
        r = tool_result(1, "c_13");
        cr_assert(strstr(field(r, "error"), "at most 16 calls"), "%s", field(r, "error"));
        json_decref(r);
}

Test(ask, a_call_gets_only_what_the_schema_offers_and_the_users_memory_limit)
{
        json_t *r;

        turn(0, NULL,
             (const char *const[]){
                     "run_code",
                     "{\"language\":\"python3\",\"code\":\"x = bytearray(1 << 30)\","
                     "\"memory_mb\":100000}",
                     "run_code", "{\"language\":\"python3\",\"code\":\"x = bytearray(300 << 20)\"}",
                     NULL });
        turn(1, "done", NULL);
        ASK(2, "--memory", "100M", "q");
        cr_assert_eq(run.code, 0, "stderr: %s", run.err);
        r = tool_result(1, "call_0_0");
        cr_assert(strstr(field(r, "error"), "unknown argument 'memory_mb'"), "%s",
                  field(r, "error"));
        json_decref(r);
        r = tool_result(1, "call_0_1");
        cr_assert_str_eq(field(r, "status"), "memory_limit", "--memory holds: %s",
                         field(r, "message"));
        json_decref(r);
}
