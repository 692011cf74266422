/* SPDX-License-Identifier: MIT */
/*
 * What each fingerprint level catches and misses (docs/analysis.md has the table):
 * - the exact fingerprint absorbs what changes from run to run (addresses, goroutine ids, ports,
 *   durations, temporary paths, the tree's location, goroutine order) and nothing else;
 * - the cause fingerprint also absorbs the failure's wording (values, literals, identifiers,
 *   line numbers within a function), but not a different kind, file or function.
 * Plus the formats with no corpus case: Python, go test -json, "unknown", huge outputs.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heal/analyze.h"

static heal_analysis a, b;

static void fini(void)
{
        heal_analysis_release(&a);
        heal_analysis_release(&b);
}

TestSuite(fingerprint, .fini = fini);

static void analyze(heal_analysis *r, const char *text, int exit_code, const char *command)
{
        heal_analyze_opts o = { .exit_code = exit_code, .command = command };
        heal_error err = HEAL_ERROR_INIT;

        heal_analysis_release(r);
        cr_assert_eq(heal_analyze(r, text, strlen(text), &o, &err), 0, "%s", err.msg);
}

static void pair(const char *x, const char *y, int exit_code)
{
        analyze(&a, x, exit_code, NULL);
        analyze(&b, y, exit_code, NULL);
}

#define PANIC(id, addr, line)                                                \
 "panic: assignment to entry in nil map\n\ngoroutine " id " [running]:\n"    \
 "example.(*Tally).Submit(0x" addr ", {0x" addr ", 0x5})\n"                  \
 "\t/src/tally.go:" line " +0x1f2\nexample.main()\n\t/src/main.go:9 +0x2b\n" \
 "exit status 2\n"

Test(fingerprint, run_to_run_noise_keeps_both)
{
        pair(PANIC("18", "c000096680", "21"), PANIC("7", "c0000aa120", "21"), 1);
        cr_assert_str_eq(a.exact, b.exact, "goroutine ids and addresses");
        cr_assert_str_eq(a.cause, b.cause);
        pair("listening on 127.0.0.1:46841\nok  \texample\t0.006s\nFAIL after 1.5s\n",
             "listening on 127.0.0.1:39127\nok  \texample\t0.104s\nFAIL after 2s\n", 1);
        cr_assert_str_eq(a.exact, b.exact, "ports and durations");
        pair("open /tmp/go-build3141/b001/x.test: fail\n==1234==ERROR: LeakSanitizer: leak\n",
             "open /tmp/go-build2718/b001/x.test: fail\n==77==ERROR: LeakSanitizer: leak\n", 1);
        cr_assert_str_eq(a.exact, b.exact, "temporary paths and sanitizer pids");
        pair("2026-11-29T14:00:01Z started\nboom\n", "2026-11-30T09:12:44.5+01:00 started\nboom\n",
             1);
        cr_assert_str_eq(a.exact, b.exact, "timestamps");
}

Test(fingerprint, goroutine_order_does_not_matter)
{
        static const char one[] = "goroutine 1 [chan receive]:\nmain.a()\n\t/src/m.go:1 +0x1\n\n"
                                  "goroutine 2 [select]:\nmain.b()\n\t/src/m.go:2 +0x1\n";
        static const char two[] = "goroutine 5 [select]:\nmain.b()\n\t/src/m.go:2 +0x1\n\n"
                                  "goroutine 9 [chan receive]:\nmain.a()\n\t/src/m.go:1 +0x1\n";
        static const char three[] = "goroutine 5 [select]:\nmain.c()\n\t/src/m.go:2 +0x1\n\n"
                                    "goroutine 9 [chan receive]:\nmain.a()\n\t/src/m.go:1 +0x1\n";

        pair(one, two, 2);
        cr_assert_str_eq(a.exact, b.exact);
        pair(one, three, 2);
        cr_assert_str_neq(a.exact, b.exact, "another function in the dump is another failure");
}

Test(fingerprint, the_same_cause_in_other_words_collides_at_cause_level_only)
{
        /* other values in the same assertion */
        pair("--- FAIL: TestTruncate (0.00s)\n    truncate_test.go:22: Truncate(\"café\", 4) = "
             "\"caf\\xc3...\", want \"café\"\nFAIL\n",
             "--- FAIL: TestTruncate (0.00s)\n    truncate_test.go:22: Truncate(\"naïve\", 3) = "
             "\"na\\xc3...\", want \"naï\"\nFAIL\n",
             1);
        cr_assert_str_neq(a.exact, b.exact);
        cr_assert_str_eq(a.cause, b.cause);
        /* the same panic reached through a line moved by an unrelated edit */
        pair(PANIC("18", "c000096680", "21"), PANIC("18", "c000096680", "24"), 1);
        cr_assert_str_neq(a.exact, b.exact);
        cr_assert_str_eq(a.cause, b.cause, "a line moved within the same function");
        /* another index out of range */
        pair("panic: runtime error: index out of range [5] with length 3\n\ngoroutine 1 "
             "[running]:\nmain.f()\n\t/src/m.go:4 +0x1d\n",
             "panic: runtime error: index out of range [9] with length 2\n\ngoroutine 1 "
             "[running]:\nmain.f()\n\t/src/m.go:4 +0x1d\n",
             2);
        cr_assert_str_neq(a.exact, b.exact);
        cr_assert_str_eq(a.cause, b.cause);
        /* another undefined name in the same place */
        pair("./main.go:29:5: undefined: err\n", "./main.go:29:5: undefined: errs\n", 2);
        cr_assert_str_neq(a.exact, b.exact);
        cr_assert_str_eq(a.cause, b.cause, "identifiers are abstracted");
}

Test(fingerprint, another_failure_differs_at_both_levels)
{
        /* the fix moved the panic into another function: progress, not a loop */
        pair(PANIC("18", "c000096680", "21"),
             "panic: assignment to entry in nil map\n\ngoroutine 1 [running]:\n"
             "example.(*Tally).Flush(0xc0000)\n\t/src/tally.go:40 +0x1\n",
             1);
        cr_assert_str_neq(a.cause, b.cause);
        /* the same place, another kind of failure */
        pair("./main.go:29:5: undefined: err\n",
             "--- FAIL: TestX (0.00s)\n    main_test.go:29: undefined: err\nFAIL\n", 1);
        cr_assert_str_neq(a.cause, b.cause);
        /* another message template */
        pair("./a.go:3:1: missing return\n", "./a.go:3:1: unreachable code\n", 2);
        cr_assert_str_neq(a.cause, b.cause);
        /* the exit status is part of the exact fingerprint */
        pair("boom\n", "boom\n", 1);
        analyze(&b, "boom\n", 3, NULL);
        cr_assert_str_neq(a.exact, b.exact);
}

Test(fingerprint, normalized_text_is_readable)
{
        heal_analyze_opts o = { .tree = "/home/ann/proj", .exit_code = 1 };
        heal_error err = HEAL_ERROR_INIT;
        static const char in[] = "goroutine 7 [running]:\nmain.f(0xc000012345)\n"
                                 "\t/home/ann/proj/m.go:4 +0x1d\nok  \tx\t0.25s\n";
        char *out = NULL;

        cr_assert_eq(heal_fingerprint_normalize(&out, in, strlen(in), &o, &err), 0);
        cr_assert_str_eq(out, "goroutine N [running]:\nmain.f(0x?)\n\t<tree>/m.go:4 +0x?\n"
                              "ok  \tx\t<dur>\n");
        free(out);
}

Test(fingerprint, python_traceback)
{
        analyze(&a,
                "Traceback (most recent call last):\n  File \"/src/app.py\", line 12, in <module>\n"
                "    main()\n  File \"/src/app.py\", line 8, in main\n    total = parse(x)\n"
                "  File \"/src/lib/parse.py\", line 3, in parse\n    return int(s)\n"
                "ValueError: invalid literal for int() with base 10: 'x'\n",
                1, "python3 app.py");
        cr_assert_eq(a.n_diags, 1);
        cr_assert_eq(a.diags[0].kind, HEAL_DIAG_PANIC);
        cr_assert_str_eq(a.diags[0].message,
                         "ValueError: invalid literal for int() with base 10: 'x'");
        cr_assert_eq(a.diags[0].n_frames, 3);
        cr_assert_str_eq(a.diags[0].frames[0].function, "parse", "innermost first");
        cr_assert_str_eq(a.diags[0].frames[2].function, "<module>");
        analyze(&b,
                "  File \"x.py\", line 2\n    def f(\n         ^\nSyntaxError: '(' was never closed\n",
                1, NULL);
        cr_assert_eq(b.n_diags, 1);
        cr_assert_eq(b.diags[0].kind, HEAL_DIAG_COMPILE_ERROR, "a syntax error has no Traceback");
        cr_assert_str_eq(b.diags[0].file, "x.py");
        cr_assert_eq(b.diags[0].line, 2);
}

Test(fingerprint, go_test_json_events)
{
        static const char events[] =
                "{\"Action\":\"run\",\"Package\":\"example\",\"Test\":\"TestA\"}\n"
                "{\"Action\":\"output\",\"Package\":\"example\",\"Test\":\"TestA\",\"Output\":"
                "\"=== RUN   TestA\\n\"}\n"
                "{\"Action\":\"output\",\"Package\":\"example\",\"Test\":\"TestA\",\"Output\":"
                "\"--- PASS: TestA (0.00s)\\n\"}\n"
                "{\"Action\":\"pass\",\"Package\":\"example\",\"Test\":\"TestA\"}\n"
                "{\"Action\":\"output\",\"Package\":\"example\",\"Test\":\"TestB\",\"Output\":"
                "\"--- FAIL: TestB (0.00s)\\n\"}\n"
                "{\"Action\":\"output\",\"Package\":\"example\",\"Test\":\"TestB\",\"Output\":"
                "\"    b_test.go:9: got 1, want 2\\n\"}\n"
                "{\"Action\":\"fail\",\"Package\":\"example\",\"Test\":\"TestB\"}\n";

        analyze(&a, events, 1, "go test -json ./...");
        cr_assert_eq(a.n_diags, 1);
        cr_assert_eq(a.diags[0].kind, HEAL_DIAG_TEST_FAILURE);
        cr_assert_str_eq(a.diags[0].file, "b_test.go");
        cr_assert_eq(a.diags[0].line, 9);
        cr_assert_str_eq(a.diags[0].test, "TestB");
        cr_assert_eq(a.n_tests_passed, 1);
        cr_assert_str_eq(a.tests_passed[0], "TestA");
        cr_assert_eq(a.n_tests_failed, 1);
        /* the same failure as -v text has the same cause */
        analyze(&b, "=== RUN   TestB\n--- FAIL: TestB (0.00s)\n    b_test.go:9: got 1, want 2\n", 1,
                "go test -v ./...");
        cr_assert_str_eq(a.cause, b.cause);
}

Test(fingerprint, c_notes_attach_and_ubsan)
{
        analyze(&a,
                "x.c: In function 'f':\nx.c:3:9: error: 'y' undeclared (first use in this "
                "function)\nx.c:3:9: note: each undeclared identifier is reported only once\n"
                "u.c:5:10: runtime error: signed integer overflow: 2147483647 + 1 cannot be "
                "represented in type 'int'\n",
                1, NULL);
        cr_assert_eq(a.n_diags, 2);
        cr_assert_str_eq(a.diags[0].function, "f");
        cr_assert_eq(a.diags[0].n_notes, 1);
        cr_assert_eq(a.diags[1].kind, HEAL_DIAG_SANITIZER);
        cr_assert_eq(a.diags[1].line, 5);
        analyze(&b, "a.out: m.c:10: main: Assertion `n > 0' failed.\n", 134, NULL);
        cr_assert_eq(b.diags[0].kind, HEAL_DIAG_CRASH);
        cr_assert_str_eq(b.diags[0].function, "main");
        cr_assert_str_eq(b.diags[0].message, "Assertion `n > 0' failed.");
}

Test(fingerprint, nothing_recognised_is_unknown_with_the_last_line)
{
        analyze(&a, "step 1\nstep 2\nsomething went wrong here\n\n", 1, NULL);
        cr_assert_eq(a.n_diags, 1);
        cr_assert_eq(a.diags[0].kind, HEAL_DIAG_UNKNOWN);
        cr_assert_str_eq(a.diags[0].message, "something went wrong here");
        analyze(&b, "", 3, NULL);
        cr_assert_str_eq(b.diags[0].message, "exited with status 3 and printed nothing");
        analyze(&b, "all good\n", 0, NULL);
        cr_assert_eq(b.n_diags, 0, "a passing run has nothing to explain");
}

Test(fingerprint, huge_outputs_are_linear)
{
        size_t n = 1 << 20;
        char *line = malloc(n + 1), *many = malloc(100000 * 12 + 1);
        heal_error err = HEAL_ERROR_INIT;
        heal_analyze_opts o = { .exit_code = 1 };

        memset(line, 'x', n);
        line[n] = '\0';
        cr_assert_eq(heal_analyze(&a, line, n, &o, &err), 0, "%s", err.msg);
        cr_assert_eq(a.diags[0].kind, HEAL_DIAG_UNKNOWN);
        for (size_t i = 0; i < 100000; i++)
                memcpy(many + i * 12, "0xdeadbeef \n", 12);
        cr_assert_eq(heal_analyze(&b, many, 100000 * 12, &o, &err), 0, "%s", err.msg);
        cr_assert_eq(strlen(b.tail) <= 4096, true);
        free(line);
        free(many);
}

/* Found by an adversarial pass over heal analyze; each was wrong before. */
Test(fingerprint, go_test_v_messages_come_before_their_fail_line)
{
        analyze(&a,
                "=== RUN   TestTable\n=== RUN   TestTable/x/y_wrong\n"
                "    calc_test.go:20: Div(6,2) = 3, want 4\n"
                "=== RUN   TestTable/ok\n    calc_test.go:30: a t.Log line of a passing test\n"
                "--- FAIL: TestTable (0.00s)\n    --- FAIL: TestTable/x/y_wrong (0.00s)\n"
                "    --- PASS: TestTable/ok (0.00s)\nFAIL\nFAIL\texample\t0.003s\n",
                1, "go test -v ./...");
        cr_assert_eq(a.n_diags, 1, "%zu", a.n_diags);
        cr_assert_str_eq(a.diags[0].test, "TestTable/x/y_wrong");
        cr_assert_str_eq(a.diags[0].file, "calc_test.go");
        cr_assert_eq(a.diags[0].line, 20);
        cr_assert_str_eq(a.diags[0].message, "Div(6,2) = 3, want 4");
}

Test(fingerprint, colour_codes_spaces_and_nul_bytes)
{
        analyze(&a,
                "\x1b[01m\x1b[Kx.c:3:9:\x1b[m\x1b[K \x1b[01;31m\x1b[Kerror: \x1b[m\x1b[K"
                "'y' undeclared\n",
                1, "gcc");
        cr_assert_eq(a.n_diags, 1);
        cr_assert_eq(a.diags[0].kind, HEAL_DIAG_COMPILE_ERROR);
        cr_assert_str_eq(a.diags[0].file, "x.c");
        cr_assert_str_eq(a.diags[0].message, "'y' undeclared");
        analyze(&b, "./my main.go:4:9: undefined: y\n", 2, "go build");
        cr_assert_eq(b.diags[0].kind, HEAL_DIAG_COMPILE_ERROR);
        cr_assert_str_eq(b.diags[0].file, "my main.go");
        {
                static const char nul[] = "hello\n\0panic: boom\n\ngoroutine 1 [running]:\n"
                                          "main.main()\n\t/src/m.go:3 +0x1\n";
                heal_analyze_opts o = { .exit_code = 2 };
                heal_error err = HEAL_ERROR_INIT;

                heal_analysis_release(&a);
                cr_assert_eq(heal_analyze(&a, nul, sizeof(nul) - 1, &o, &err), 0);
                cr_assert_eq(a.diags[0].kind, HEAL_DIAG_PANIC, "a NUL does not hide the panic");
                cr_assert(strstr(a.tail, "panic: boom"), "nor cut the tail");
        }
}

Test(fingerprint, signals_differ_and_go_test_summaries_are_not_the_message)
{
        analyze(&a, "", 139, "./a.out");
        analyze(&b, "", 137, "./a.out");
        cr_assert_str_eq(a.diags[0].message, "killed by signal 11: Segmentation fault");
        cr_assert_str_neq(a.cause, b.cause, "a segfault is not a SIGKILL");
        analyze(&a, "2026/11/29 15:36:10 config missing\nFAIL\texample\t0.003s\nFAIL\n", 1,
                "go test ./...");
        cr_assert_str_eq(a.diags[0].message, "2026/11/29 15:36:10 config missing");
        analyze(&b, "exit status 3\nFAIL\texample\t0.003s\n", 1, "go test ./...");
        cr_assert_str_eq(b.diags[0].message, "exit status 3");
        cr_assert_str_neq(a.cause, b.cause);
}

Test(fingerprint, go_test_builds_are_not_vet_and_go_vet_type_errors_count)
{
        analyze(&a, "# example/a\n./a.go:5:9: undefined: y\nFAIL\texample/a [build failed]\n", 1,
                "go test ./...");
        cr_assert_eq(a.diags[0].kind, HEAL_DIAG_COMPILE_ERROR, "%s",
                     heal_diag_kind_name(a.diags[0].kind));
        analyze(&b, "# example\nvet: a/a.go:5:9: undeclared name: y\n", 1, "go vet ./...");
        cr_assert_eq(b.n_diags, 1);
        cr_assert_str_eq(b.diags[0].file, "a/a.go");
        cr_assert_eq(b.diags[0].kind, HEAL_DIAG_COMPILE_ERROR);
}

Test(fingerprint, compiler_fixits)
{
        analyze(&a,
                "fx.c:2:35: warning: using the result of an assignment as a condition without "
                "parentheses [-Wparentheses]\n"
                "fx.c:2:35: note: use '==' to turn this assignment into an equality comparison\n"
                "fix-it:\"fx.c\":{2:35-2:36}:\"==\"\n"
                "fx.c:2:67: error: expected ';' after expression\n"
                "fix-it:\"fx.c\":{2:67-2:67}:\";\"\n"
                "fix-it:\"fx.c\":{2:1-2:1}:\"\\\"q\\\\\\011\"\n",
                1, "clang -fdiagnostics-parseable-fixits -c fx.c");
        cr_assert_eq(a.n_diags, 2);
        cr_assert_eq(a.diags[0].n_fixits, 1);
        cr_assert(a.diags[0].fixits[0].from_note);
        cr_assert_str_eq(a.diags[0].fixits[0].text, "==");
        cr_assert_eq(a.diags[0].fixits[0].col, 35);
        cr_assert_eq(a.diags[0].fixits[0].end_col, 36);
        cr_assert_eq(a.diags[1].n_fixits, 2);
        cr_assert_not(a.diags[1].fixits[0].from_note);
        cr_assert_str_eq(a.diags[1].fixits[0].file, "fx.c");
        cr_assert_str_eq(a.diags[1].fixits[0].text, ";");
        cr_assert_str_eq(a.diags[1].fixits[1].text, "\"q\\\t", "escapes undone");
}

#define RACE(first, firstfn, other, otherfn)                                              \
 "==================\nWARNING: DATA RACE\n" first " at 0x00c000018228 by goroutine 12:\n" \
 "  " firstfn "()\n      /src/v.go:24 +0xc4\n\n" other                                    \
 " at 0x00c000018228 by goroutine 7:\n  " otherfn "()\n      /src/v.go:20 +0x10f\n"       \
 "==================\n"

/* The detector may report a race once or twice, either access first, from run to run. */
Test(fingerprint, a_race_is_its_pair_of_functions)
{
        pair(RACE("Read", "example.F.func1", "Previous write", "example.F"),
             RACE("Read", "example.F.func1", "Previous write", "example.F")
                     RACE("Write", "example.F", "Previous read", "example.F.func1"),
             1);
        cr_assert_str_eq(a.cause, b.cause);
        cr_assert_str_neq(a.exact, b.exact);
        pair(RACE("Read", "example.F.func1", "Previous write", "example.F"),
             RACE("Read", "example.G.func1", "Previous write", "example.G"), 1);
        cr_assert_str_neq(a.cause, b.cause, "another race");
}
