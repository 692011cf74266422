/* SPDX-License-Identifier: MIT */
/* heal gen against a model served on 127.0.0.1 (tests/helpers/httpd.c, the Chat Completions
 * wire format): a program that does not compile and then one that does, failures of each kind
 * fed back, the retries running out, the budget, the model failing, and the CLI's outputs. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "harness.h"
#include "model.h"

#define GOOD_GO                                                                   \
 "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfor i := 1; i <= 3; i++ {\n" \
 "\t\tfmt.Println(\"line\", i)\n\t}\n}\n"
#define BAD_GO "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(undefinedThing)\n}\n"

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

TestSuite(gen, .init = setup, .fini = teardown, .timeout = 120);

/* A Chat Completions answer whose text is @text. */
static void answer(size_t i, const char *text)
{
        model_reply(&model, i,
                    json_pack("{s:s,s:[{s:i,s:{s:s,s:s},s:s}],s:{s:i,s:i}}", "id", "chatcmpl-t",
                              "choices", "index", 0, "message", "role", "assistant", "content",
                              text, "finish_reason", "stop", "usage", "prompt_tokens", 50,
                              "completion_tokens", 20));
}

static char *fenced(const char *tag, const char *code)
{
        static char buf[4][4096];
        static int k;
        char *b = buf[k++ % 4];

        snprintf(b, sizeof(buf[0]), "Here is the program:\n\n```%s\n%s```\n\nRun it with go run.",
                 tag, code);
        return b;
}

/* heal gen ARGS against the server holding @n scripted answers. */
#define GEN(n, ...)                                                \
 model_run(&model, &run, dir, NULL, "gen", "openai:test-model", n, \
           (const char *const[]){ __VA_ARGS__, NULL })

Test(gen, a_program_that_does_not_compile_then_the_fixed_one)
{
        json_t *req, *msgs;

        answer(0, fenced("go", BAD_GO));
        answer(1, fenced("Go", GOOD_GO));
        GEN(2, "print three lines");
        cr_assert_eq(run.code, 0, "stderr: %s", run.err);
        cr_assert_str_eq(run.out, "line 1\nline 2\nline 3\n");
        cr_assert(strstr(run.err, "attempt 1: compile_error"), "%s", run.err);
        cr_assert(strstr(run.err, "ok after 2 attempts"), "%s", run.err);
        cr_assert_eq(model.srv.served, 2);
        /* the second request is the same conversation: the task, the first answer, the error */
        req = json_loads(model_request_body(&model, 1), 0, NULL);
        cr_assert_not_null(req, "%s", model_request_body(&model, 1));
        msgs = json_object_get(req, "messages");
        cr_assert_eq(json_array_size(msgs), 4, "system, task, answer, feedback");
        cr_assert_str_eq(json_string_value(json_object_get(json_array_get(msgs, 0), "role")),
                         "system");
        cr_assert(strstr(json_string_value(json_object_get(json_array_get(msgs, 0), "content")),
                         "```go"));
        /* the limits it will run under, the drivers' defaults when none were given */
        cr_assert(strstr(json_string_value(json_object_get(json_array_get(msgs, 0), "content")),
                         "for at most 10.0 s, with 512 MiB of memory"),
                  "%s", json_string_value(json_object_get(json_array_get(msgs, 0), "content")));
        cr_assert_str_eq(json_string_value(json_object_get(json_array_get(msgs, 1), "content")),
                         "print three lines");
        cr_assert(strstr(json_string_value(json_object_get(json_array_get(msgs, 2), "content")),
                         "undefinedThing"));
        cr_assert_str_eq(json_string_value(json_object_get(json_array_get(msgs, 2), "role")),
                         "assistant");
        {
                const char *fb =
                        json_string_value(json_object_get(json_array_get(msgs, 3), "content"));

                cr_assert(strstr(fb, "did not compile"), "%s", fb);
                cr_assert(strstr(fb, "undefined: undefinedThing"), "the compiler's words: %s", fb);
                cr_assert(strstr(fb, "whole corrected Go program"), "%s", fb);
        }
        json_decref(req);
}

Test(gen, every_kind_of_failure_is_fed_back)
{
        /* no code; a runtime error; a hang; then a program that works */
        answer(0, "I would write a loop that prints the numbers.");
        answer(1, fenced("python", "import sys\nprint('partial')\nsys.exit('boom: bad input')\n"));
        answer(2, fenced("python", "while True:\n    pass\n"));
        answer(3, fenced("", "print('done')\n"));
        GEN(4, "--lang", "python3", "--retries", "3", "--timeout", "1s", "count");
        cr_assert_eq(run.code, 0, "stderr: %s", run.err);
        cr_assert_str_eq(run.out, "done\n");
        cr_assert(strstr(model_request_body(&model, 1), "no code block"), "%s",
                  model_request_body(&model, 1));
        cr_assert(strstr(model_request_body(&model, 2), "The program failed: exit status 1"), "%s",
                  model_request_body(&model, 2));
        cr_assert(strstr(model_request_body(&model, 2), "boom: bad input"), "stderr fed back");
        cr_assert(strstr(model_request_body(&model, 2), "partial"), "stdout fed back");
        cr_assert(strstr(model_request_body(&model, 3), "did not finish in time"), "%s",
                  model_request_body(&model, 3));
        cr_assert(strstr(model_request_body(&model, 3), "busy: an endless loop"), "%s",
                  model_request_body(&model, 3));
}

Test(gen, retries_run_out_and_the_last_error_is_named)
{
        answer(0, fenced("go", BAD_GO));
        answer(1, fenced("go", BAD_GO));
        GEN(2, "--retries", "1", "print three lines");
        cr_assert_eq(run.code, 3, "stderr: %s", run.err);
        cr_assert_eq(model.srv.served, 2, "1 + --retries requests");
        cr_assert(strstr(run.err, "no working program after 2 attempts; the last: compile_error"),
                  "%s", run.err);
        cr_assert(strstr(run.err, "undefined: undefinedThing"), "%s", run.err);
        cr_assert_str_eq(run.out, "");
}

Test(gen, json_report_keeps_every_attempt)
{
        json_t *attempts, *a0, *a1;

        answer(0, fenced("go", BAD_GO));
        answer(1, fenced("go", GOOD_GO));
        GEN(2, "--json", "print three lines");
        cr_assert_eq(run.code, 0, "stderr: %s", run.err);
        doc = json_loads(run.out, 0, NULL);
        cr_assert_not_null(doc, "%s", run.out);
        cr_assert_str_eq(json_string_value(json_object_get(doc, "verdict")), "ok");
        cr_assert_str_eq(json_string_value(json_object_get(doc, "language")), "go");
        cr_assert_str_eq(json_string_value(json_object_get(doc, "program")), GOOD_GO);
        attempts = json_object_get(doc, "attempts");
        cr_assert_eq(json_array_size(attempts), 2);
        a0 = json_array_get(attempts, 0);
        a1 = json_array_get(attempts, 1);
        cr_assert_str_eq(json_string_value(json_object_get(a0, "code")), BAD_GO);
        cr_assert_str_eq(
                json_string_value(json_object_get(json_object_get(a0, "result"), "status")),
                "compile_error");
        cr_assert_str_eq(json_string_value(json_object_get(
                                 json_object_get(json_object_get(a1, "result"), "run"), "stdout")),
                         "line 1\nline 2\nline 3\n");
        cr_assert_eq(json_integer_value(json_object_get(json_object_get(doc, "usage"), "requests")),
                     2);
        cr_assert_eq(
                json_integer_value(json_object_get(json_object_get(doc, "usage"), "input_tokens")),
                100);
}

Test(gen, keep_and_show_code)
{
        char path[4096];
        struct stat st;

        answer(0, fenced("golang", GOOD_GO));
        snprintf(path, sizeof(path), "%s/out", dir);
        GEN(1, "--keep", path, "--show-code", "print three lines");
        cr_assert_eq(run.code, 0, "stderr: %s", run.err);
        cr_assert(strstr(run.err, "--- main.go ---\n" GOOD_GO "---"), "%s", run.err);
        snprintf(path, sizeof(path), "%s/out/main.go", dir);
        cr_assert_eq(stat(path, &st), 0, "--keep wrote %s", path);
        cr_assert_eq((size_t)st.st_size, strlen(GOOD_GO));
}

Test(gen, program_arguments_and_stdin)
{
        static const char prog[] = "import sys\nprint(sys.argv[1:], sys.stdin.read().upper())\n";
        char input[4096];

        snprintf(input, sizeof(input), "%s/in.txt", dir);
        test_write_file(dir, "in.txt", "abc");
        answer(0, fenced("python", prog));
        answer(1, fenced("python", prog));
        GEN(2, "--lang", "py", "--stdin", input, "echo", "--", "x y", "$(z)");
        cr_assert_eq(run.code, 0, "stderr: %s", run.err);
        cr_assert_str_eq(run.out, "['x y', '$(z)'] ABC\n");
}

Test(gen, the_budget_stops_the_retries)
{
        answer(0, fenced("go", BAD_GO));
        answer(1, fenced("go", GOOD_GO));
        GEN(2, "--max-requests", "1", "print three lines");
        cr_assert_eq(run.code, 4, "stderr: %s", run.err);
        cr_assert_eq(model.srv.served, 1, "nothing sent past the budget");
        cr_assert(strstr(run.err, "budget"), "%s", run.err);
}

Test(gen, a_model_that_fails_is_exit_5)
{
        model.replies[0] =
                (struct httpd_reply){ .status = 401,
                                      .body = "{\"error\":{\"message\":\"bad key sk-x\"}}" };
        GEN(1, "print three lines");
        cr_assert_eq(run.code, 5, "stderr: %s", run.err);
        cr_assert(strstr(run.err, "bad key"), "the provider's own message: %s", run.err);
}

Test(gen, usage_errors)
{
        const char *const cases[][4] = {
                { "gen", "--retries", "0", "x" },
                { "gen", "--lang", "cobol", "x" },
                { "gen", NULL },
                { "gen", "--bogus", "x", NULL },
                { "gen", "a", "b", NULL },
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                const char *argv[5] = { cases[i][0], cases[i][1], cases[i][2], cases[i][3] };

                test_proc_release(&run);
                test_heal(&run, dir, NULL, NULL, argv);
                cr_assert_eq(run.code, 2, "case %zu: %s", i, run.err);
                cr_assert(strstr(run.err, "heal gen: "), "case %zu: %s", i, run.err);
        }
        test_proc_release(&run);
        test_heal(&run, dir,
                  (const char *const[]){ "HEAL_MODEL", "OPENAI_API_KEY", "ANTHROPIC_API_KEY",
                                         "OPENROUTER_API_KEY", "GEMINI_API_KEY", "OLLAMA_HOST",
                                         "HEAL_LLM_COMMAND", "HEAL_CASSETTE", NULL },
                  NULL, (const char *const[]){ "gen", "x", NULL });
        cr_assert_eq(run.code, 2, "no model: %s", run.err);
        cr_assert(strstr(run.err, "model"), "%s", run.err);
}

/* The demo's recorded conversations (examples/cassettes, from the scripted models in
 * examples/agent) replay: the request heal makes is byte for byte the recorded one. */
Test(gen, the_demo_cassettes_replay)
{
        char cassette[4096], env[4200];

        snprintf(cassette, sizeof(cassette), "%s/../../examples/cassettes/gen-primes.jsonl",
                 test_data_dir());
        snprintf(env, sizeof(env), "HEAL_CASSETTE=%s", cassette);
        test_heal(&run, dir, (const char *const[]){ "HEAL_MODEL=replay:fake", env, NULL }, NULL,
                  (const char *const[]){ "gen", "print the first 10 prime numbers, one per line",
                                         NULL });
        cr_assert_eq(run.code, 0, "stderr: %s", run.err);
        cr_assert_str_eq(run.out, "2\n3\n5\n7\n11\n13\n17\n19\n23\n29\n");
        cr_assert(strstr(run.err, "undefined: math"), "the first program failed: %s", run.err);
        test_proc_release(&run);
        snprintf(cassette, sizeof(cassette), "%s/../../examples/cassettes/ask-primes.jsonl",
                 test_data_dir());
        snprintf(env, sizeof(env), "HEAL_CASSETTE=%s", cassette);
        test_heal(&run, dir, (const char *const[]){ "HEAL_MODEL=replay:fake", env, NULL }, NULL,
                  (const char *const[]){ "ask", "what is the sum of the first 100 primes?", NULL });
        cr_assert_eq(run.code, 0, "stderr: %s", run.err);
        cr_assert_str_eq(run.out, "The sum of the first 100 primes is 24133.\n");
}

Test(gen, output_with_a_nul_or_fences_is_fed_back_whole)
{
        /* the turn is a C string, and a fence in the output must not end its quote */
        answer(0, fenced("python", "import sys\nsys.stderr.write('bad\\x00 more\\n```\\nafter "
                                   "fence\\n')\nsys.exit(1)\n"));
        answer(1, fenced("python", "print('ok')\n"));
        GEN(2, "--lang", "python3", "x");
        cr_assert_eq(run.code, 0, "stderr: %s", run.err);
        cr_assert(strstr(model_request_body(&model, 1), "after fence"), "%s",
                  model_request_body(&model, 1));
        cr_assert(strstr(model_request_body(&model, 1), "````\\n"), "a longer fence: %s",
                  model_request_body(&model, 1));
        cr_assert(strstr(model_request_body(&model, 1), "Fix the program"), "%s",
                  model_request_body(&model, 1));
}

Test(gen, keep_is_checked_before_the_model_is_asked)
{
        char file[4096], existing[4096];

        answer(0, fenced("go", GOOD_GO));
        snprintf(file, sizeof(file), "%s/a-file", dir);
        test_write_file(dir, "a-file", "x");
        GEN(1, "--keep", file, "print three lines");
        cr_assert_eq(run.code, 2, "%s", run.err);
        cr_assert(strstr(run.err, "is not a directory"), "%s", run.err);
        cr_assert_eq(model.srv.served, 0, "no model request");
        test_proc_release(&run);
        snprintf(existing, sizeof(existing), "%s/kept", dir);
        mkdir(existing, 0755);
        test_write_file(existing, "main.go", "// mine\n");
        GEN(1, "--keep", existing, "print three lines");
        cr_assert_eq(run.code, 2, "%s", run.err);
        cr_assert(strstr(run.err, "does not overwrite"), "%s", run.err);
        cr_assert_eq(model.srv.served, 0);
}
