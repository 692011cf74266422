/* SPDX-License-Identifier: MIT */
/* heal mcp spoken to line by line: malformed JSON-RPC gets the right error codes and never
 * ends the server, version negotiation, old clients without structured content, the end of
 * input with a call running, SIGTERM, and nothing but protocol messages on stdout. (The
 * official SDK client drives the tools in tests/mcp/sdk-client.mjs.) */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

struct server {
        pid_t pid;
        int in, out;
        char buf[16 << 20];
        size_t len;
};

static struct server srv;
static char *dir;
static json_t *msg;

/* heal mcp --root DIR with @args (NULL-terminated, at most 8) and @env ("NAME=value"). */
static void start(const char *const *args, const char *const *env)
{
        int in[2], out[2];

        cr_assert(pipe2(in, O_CLOEXEC) == 0 && pipe2(out, O_CLOEXEC) == 0);
        srv.pid = fork();
        cr_assert_geq(srv.pid, 0);
        if (srv.pid == 0) {
                const char *v[16] = { "heal", "mcp", "--root", dir };
                size_t n = 4;

                for (size_t i = 0; args && args[i] && n < 15; i++)
                        v[n++] = args[i];
                for (size_t i = 0; env && env[i]; i++)
                        putenv((char *)(uintptr_t)env[i]);
                dup2(in[0], 0);
                dup2(out[1], 1);
                execv(HEAL_TEST_BIN, (char *const *)(uintptr_t)v);
                _exit(127);
        }
        close(in[0]), close(out[1]);
        srv.in = in[1];
        srv.out = out[0];
        srv.len = 0;
}

/* The server of the next test with other options. */
static void restart(const char *const *args, const char *const *env)
{
        close(srv.in);
        close(srv.out);
        kill(srv.pid, SIGKILL);
        waitpid(srv.pid, NULL, 0);
        start(args, env);
}

static void setup(void)
{
        dir = test_tempdir();
        signal(SIGPIPE, SIG_IGN);
        start((const char *const[]){ "--no-heal-tool", NULL }, NULL);
}

static void teardown(void)
{
        json_decref(msg);
        msg = NULL;
        if (srv.in >= 0)
                close(srv.in);
        close(srv.out);
        if (srv.pid > 0) {
                kill(srv.pid, SIGKILL);
                waitpid(srv.pid, NULL, 0);
        }
        test_rmtree(dir);
        free(dir);
}

TestSuite(mcp, .init = setup, .fini = teardown, .timeout = 60);

static void send_raw(const char *data, size_t len)
{
        while (len) {
                ssize_t n = write(srv.in, data, len);

                cr_assert_gt(n, 0, "writing to heal mcp: %s", strerror(errno));
                data += n;
                len -= (size_t)n;
        }
}

static void send_line(const char *line)
{
        send_raw(line, strlen(line));
        send_raw("\n", 1);
}

/* The next line heal mcp writes, parsed; every line must be a JSON-RPC 2.0 object. */
static json_t *next(int timeout_ms)
{
        for (;;) {
                char *nl = memchr(srv.buf, '\n', srv.len);
                struct pollfd p = { srv.out, POLLIN, 0 };
                ssize_t n;

                if (nl) {
                        json_error_t jerr;
                        json_t *j = json_loadb(srv.buf, (size_t)(nl - srv.buf), 0, &jerr);

                        cr_assert_not_null(j, "stdout held a line that is not JSON (%s): %.*s",
                                           jerr.text, (int)(nl - srv.buf), srv.buf);
                        cr_assert_str_eq(json_string_value(json_object_get(j, "jsonrpc")), "2.0");
                        srv.len -= (size_t)(nl + 1 - srv.buf);
                        memmove(srv.buf, nl + 1, srv.len);
                        json_decref(msg);
                        return msg = j;
                }
                cr_assert_gt(poll(&p, 1, timeout_ms), 0, "no answer within %d ms", timeout_ms);
                n = read(srv.out, srv.buf + srv.len, sizeof(srv.buf) - srv.len);
                cr_assert_gt(n, 0, "heal mcp closed its output");
                srv.len += (size_t)n;
        }
}

static int error_code(json_t *m)
{
        json_t *e = json_object_get(m, "error");

        cr_assert_not_null(e, "an error was expected: %s", json_dumps(m, 0));
        return (int)json_integer_value(json_object_get(e, "code"));
}

static void expect_error(const char *line, int code, json_int_t id)
{
        send_line(line);
        next(5000);
        cr_assert_eq(error_code(msg), code, "%s -> %s", line, json_dumps(msg, 0));
        if (id < 0)
                cr_assert(json_is_null(json_object_get(msg, "id")), "%s", line);
        else
                cr_assert_eq(json_integer_value(json_object_get(msg, "id")), id, "%s", line);
}

static void expect_pong(json_int_t id)
{
        char line[128];

        snprintf(line, sizeof(line), "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"method\":\"ping\"}",
                 (long long)id);
        send_line(line);
        next(5000);
        cr_assert_eq(json_integer_value(json_object_get(msg, "id")), id, "%s", json_dumps(msg, 0));
        cr_assert(json_is_object(json_object_get(msg, "result")));
}

/* A ping whose answer is never read, on a non-blocking input; false once the input is full. */
static bool send_ping_nonblocking(int id)
{
        char line[128];
        int n = snprintf(line, sizeof(line),
                         "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"ping\"}\n", id);

        return write(srv.in, line, (size_t)n) == n;
}

static int wait_exit(int timeout_ms)
{
        int st;

        for (int i = 0; i < timeout_ms / 10; i++) {
                pid_t w = waitpid(srv.pid, &st, WNOHANG);

                if (w == srv.pid) {
                        srv.pid = -1;
                        return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
                }
                usleep(10000);
        }
        cr_assert_fail("heal mcp did not exit within %d ms", timeout_ms);
        return -1;
}

Test(mcp, malformed_messages_get_their_error_codes_and_the_server_goes_on)
{
        expect_error("this is not json", -32700, -1);
        expect_error("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"", -32700, -1);
        expect_error("{\"jsonrpc\":\"2.0\",\"id\":1,\"id\":2,\"method\":\"ping\"}", -32700, -1);
        expect_error("\"a string\"", -32600, -1);
        expect_error("42", -32600, -1);
        expect_error("[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]", -32600, -1);
        expect_error("{\"jsonrpc\":\"1.0\",\"id\":3,\"method\":\"ping\"}", -32600, 3);
        expect_error("{\"id\":4,\"method\":\"ping\"}", -32600, 4);
        expect_error("{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":7}", -32600, 5);
        expect_error("{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"ping\"}", -32600, -1);
        expect_error("{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"ping\"}", -32600, -1);
        expect_error("{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"ping\",\"params\":3}", -32600, 6);
        expect_error("{\"jsonrpc\":\"2.0\",\"id\":7}", -32600, 7);
        expect_error("{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"resources/list\"}", -32601, 8);
        expect_error("{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\",\"params\":{}}",
                     -32602, 9);
        expect_error("{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"tools/call\",\"params\":"
                     "{\"name\":\"run_code\",\"arguments\":\"print(1)\"}}",
                     -32602, 10);
        expect_error("{\"jsonrpc\":\"2.0\",\"id\":11,\"method\":\"tools/call\",\"params\":"
                     "{\"name\":\"heal\"}}",
                     -32602, 11); /* started with --no-heal-tool */
        expect_error("{\"jsonrpc\":\"2.0\",\"id\":12,\"method\":\"tools/list\",\"params\":[]}",
                     -32602, 12);
        expect_error("{\"jsonrpc\":\"2.0\",\"id\":13,\"method\":\"initialize\",\"params\":{}}",
                     -32602, 13);
        /* invalid UTF-8 is not JSON */
        expect_error("{\"jsonrpc\":\"2.0\",\"id\":14,\"method\":\"\xff\"}", -32700, -1);
        /* notifications and responses get no answer; blank lines are skipped */
        send_line("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/whatever\"}");
        send_line("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":"
                  "{\"requestId\":999}}");
        send_line("{\"jsonrpc\":\"2.0\",\"id\":77,\"result\":{}}");
        send_line("");
        send_line("   ");
        expect_pong(15);
        expect_pong(16);
}

/* A ping padded to @size bytes. */
static void send_big(size_t size)
{
        static const char head[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"x\":\"";
        char *line = malloc(size);

        cr_assert_not_null(line);
        memset(line, ' ', size);
        memcpy(line, head, sizeof(head) - 1);
        send_raw(line, size);
        send_raw("\"}\n", 3);
        free(line);
}

Test(mcp, a_message_over_16_mib_is_refused_and_skipped)
{
        /* just over (it may arrive whole) and well over (the server drops its start) */
        send_big((16u << 20) + 4096);
        next(10000);
        cr_assert_eq(error_code(msg), -32600, "%s", json_dumps(msg, 0));
        cr_assert(strstr(json_dumps(msg, 0), "16 MiB"), "%s", json_dumps(msg, 0));
        expect_pong(2);
        send_big(24u << 20);
        next(10000);
        cr_assert_eq(error_code(msg), -32600, "%s", json_dumps(msg, 0));
        expect_pong(3);
        send_big(1u << 20); /* 1 MiB is fine */
        next(10000);
        cr_assert_eq(json_integer_value(json_object_get(msg, "id")), 1, "%s", json_dumps(msg, 0));
        cr_assert(json_is_object(json_object_get(msg, "result")));
}

Test(mcp, version_negotiation_and_old_clients)
{
        send_line("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":"
                  "{\"protocolVersion\":\"1999-01-01\",\"capabilities\":{},\"clientInfo\":"
                  "{\"name\":\"t\",\"version\":\"1\"}}}");
        next(5000);
        cr_assert_str_eq(json_string_value(json_object_get(json_object_get(msg, "result"),
                                                           "protocolVersion")),
                         "2025-11-25", "an unknown version gets the newest");
        send_line("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"initialize\",\"params\":"
                  "{\"protocolVersion\":\"2024-11-05\",\"capabilities\":{},\"clientInfo\":"
                  "{\"name\":\"t\",\"version\":\"1\"}}}");
        next(5000);
        cr_assert_str_eq(json_string_value(json_object_get(json_object_get(msg, "result"),
                                                           "protocolVersion")),
                         "2024-11-05");
        send_line("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
        send_line("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\"}");
        next(5000);
        {
                json_t *tools = json_object_get(json_object_get(msg, "result"), "tools");

                cr_assert_eq(json_array_size(tools), 2, "run_code and run_command");
                cr_assert_null(json_object_get(json_array_get(tools, 0), "outputSchema"),
                               "no outputSchema before 2025-06-18");
        }
        send_line("{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":"
                  "\"run_code\",\"arguments\":{\"language\":\"sh\",\"code\":\"echo hi\"}}}");
        next(30000);
        {
                json_t *res = json_object_get(msg, "result");
                const char *text = json_string_value(json_object_get(
                        json_array_get(json_object_get(res, "content"), 0), "text"));
                json_t *doc = json_loads(text, 0, NULL);

                cr_assert_null(json_object_get(res, "structuredContent"));
                cr_assert_not_null(doc, "the text is the JSON document: %s", text);
                cr_assert_str_eq(
                        json_string_value(json_object_get(json_object_get(doc, "run"), "stdout")),
                        "hi\n");
                json_decref(doc);
        }
}

Test(mcp, a_duplicate_request_id_in_flight_is_refused)
{
        send_line(
                "{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"method\":\"tools/call\",\"params\":{\"name\":"
                "\"run_code\",\"arguments\":{\"language\":\"sh\",\"code\":\"sleep 2; echo "
                "one\"}}}");
        send_line(
                "{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"method\":\"tools/call\",\"params\":{\"name\":"
                "\"run_code\",\"arguments\":{\"language\":\"sh\",\"code\":\"echo two\"}}}");
        next(5000);
        cr_assert_eq(error_code(msg), -32600, "%s", json_dumps(msg, 0));
        next(30000);
        cr_assert_str_eq(json_string_value(json_object_get(msg, "id")), "a");
        cr_assert(strstr(json_dumps(msg, 0), "one\\n"), "%s", json_dumps(msg, 0));
}

Test(mcp, the_end_of_input_cancels_a_running_call_and_exits)
{
        struct timespec t0, t1;

        send_line("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":"
                  "\"run_code\",\"arguments\":{\"language\":\"sh\",\"code\":\"sleep 876543\","
                  "\"timeout_ms\":60000}}}");
        for (int i = 0; i < 200 && test_count_cmdline("sleep 876543") == 0; i++)
                usleep(20000);
        cr_assert_eq(test_count_cmdline("sleep 876543"), 1, "the call runs");
        clock_gettime(CLOCK_MONOTONIC, &t0);
        close(srv.in);
        srv.in = -1;
        cr_assert_eq(wait_exit(10000), 0);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        cr_assert_lt(t1.tv_sec - t0.tv_sec, 8, "ended at once, not at the call's limit");
        cr_assert_eq(test_count_cmdline("sleep 876543"), 0, "no process left");
}

Test(mcp, an_unknown_argument_is_a_tool_error_naming_it)
{
        /* a misspelt limit must not be ignored: the call would run without it */
        send_line("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":"
                  "\"run_code\",\"arguments\":{\"language\":\"sh\",\"code\":\"sleep 5\","
                  "\"timeout\":500}}}");
        next(5000);
        {
                json_t *res = json_object_get(msg, "result");
                const char *text = json_string_value(json_object_get(
                        json_array_get(json_object_get(res, "content"), 0), "text"));

                cr_assert(json_is_true(json_object_get(res, "isError")), "%s", json_dumps(msg, 0));
                cr_assert(text && strstr(text, "unknown argument 'timeout'") &&
                                  strstr(text, "timeout_ms"),
                          "%s", text);
        }
        send_line("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":"
                  "\"run_command\",\"arguments\":{\"argv\":[\"true\"],\"cwd\":\"/\"}}}");
        next(5000);
        cr_assert(strstr(json_dumps(msg, 0), "unknown argument 'cwd'"), "%s", json_dumps(msg, 0));
}

Test(mcp, usage_errors)
{
        static const char *const cases[][3] = {
                { "mcp", "--bogus", NULL },
                { "mcp", "-x", NULL },
                { "mcp", "--max-calls", "0" },
                { "mcp", "--root", NULL },
                { "mcp", "--root", "/nonexistent/dir" },
                { "mcp", "stray", NULL },
        };
        struct test_proc p;

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                const char *argv[4] = { cases[i][0], cases[i][1], cases[i][2], NULL };

                test_heal(&p, dir, NULL, NULL, argv);
                cr_assert_eq(p.code, 2, "case %zu: %s", i, p.err);
                cr_assert(strstr(p.err, "heal mcp: "), "case %zu: %s", i, p.err);
                cr_assert(i > 1 || strstr(p.err, "unknown option"), "case %zu: %s", i, p.err);
                cr_assert_eq(p.out_len, 0, "nothing on stdout");
                test_proc_release(&p);
        }
}

Test(mcp, sigterm_ends_the_server)
{
        expect_pong(1);
        kill(srv.pid, SIGTERM);
        cr_assert_eq(wait_exit(10000), 0);
}

Test(mcp, nothing_but_messages_on_stdout_even_when_programs_print)
{
        /* the programs' output is inside results; heal's own notes go to stderr */
        send_line("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":"
                  "\"run_command\",\"arguments\":{\"argv\":[\"sh\",\"-c\",\"echo to-stdout; echo "
                  "to-stderr >&2; printf 'no newline'\"]}}}");
        next(30000);
        cr_assert_eq(json_integer_value(json_object_get(msg, "id")), 1);
        cr_assert_str_eq(
                json_string_value(json_object_get(
                        json_object_get(json_object_get(msg, "result"), "structuredContent"),
                        "stdout")),
                "to-stdout\nno newline");
        expect_pong(2);
        close(srv.in);
        srv.in = -1;
        cr_assert_eq(wait_exit(10000), 0);
        {
                char rest[256];
                ssize_t n = read(srv.out, rest, sizeof(rest));

                cr_assert_eq(n, 0, "nothing after the last answer: %.*s", (int)n, rest);
        }
}

static json_t *call_result(void)
{
        json_t *res = json_object_get(msg, "result");

        cr_assert_not_null(res, "%s", json_dumps(msg, 0));
        return res;
}

static const char *result_text(void)
{
        return json_string_value(json_object_get(
                json_array_get(json_object_get(call_result(), "content"), 0), "text"));
}

Test(mcp, a_call_may_not_ask_for_more_memory_than_the_server_allows)
{
        send_line("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":"
                  "\"run_code\",\"arguments\":{\"language\":\"python3\",\"code\":\"x = "
                  "bytearray(1 << 30)\\nprint(len(x))\",\"memory_mb\":1073741824}}}");
        next(60000);
        cr_assert_str_eq(json_string_value(json_object_get(
                                 json_object_get(call_result(), "structuredContent"), "status")),
                         "memory_limit", "%s", result_text());
}

Test(mcp, deep_file_names_and_symlinks_out_of_the_root_are_refused)
{
        char deep[4096] = "";

        for (int i = 0; i < 40; i++)
                strcat(deep, "a/");
        strcat(deep, "x.py");
        {
                char line[8192];

                snprintf(line, sizeof(line),
                         "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{"
                         "\"name\":\"run_code\",\"arguments\":{\"files\":[{\"name\":\"main.py\","
                         "\"content\":\"print(1)\"},{\"name\":\"%s\",\"content\":\"\"}]}}}",
                         deep);
                send_line(line);
        }
        next(30000);
        cr_assert(json_is_true(json_object_get(call_result(), "isError")));
        cr_assert(strstr(result_text(), "at most 32 deep"), "%s", result_text());
        {
                char link[4096];

                snprintf(link, sizeof(link), "%s/out", dir);
                cr_assert_eq(symlink("/etc", link), 0);
        }
        send_line("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":"
                  "\"run_command\",\"arguments\":{\"argv\":[\"ls\"],\"directory\":\"out\"}}}");
        next(30000);
        cr_assert(strstr(result_text(), "leads out of the server's directory"), "%s",
                  result_text());
}

Test(mcp, a_result_too_large_for_one_message_is_cut_to_a_summary)
{
        /* control bytes take 6 bytes in JSON, 7 in the text copy of the JSON: 1 MiB of them
         * would be a message of ~13 MiB, over what an SDK client reads */
        restart((const char *const[]){ "--no-heal-tool", "--output-limit", "1M", NULL }, NULL);
        send_line("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":"
                  "\"run_code\",\"arguments\":{\"language\":\"python3\",\"code\":\"import sys\\n"
                  "sys.stdout.write(chr(1) * 1048000)\"}}}");
        next(60000);
        {
                char *line = json_dumps(msg, JSON_COMPACT);
                json_t *brief = json_loads(result_text(), 0, NULL);

                cr_assert_lt(strlen(line), 8u << 20, "the message is %zu bytes", strlen(line));
                cr_assert_not_null(json_object_get(call_result(), "structuredContent"));
                cr_assert(strstr(json_string_value(json_object_get(brief, "note")),
                                 "structuredContent only"),
                          "%s", result_text());
                json_decref(brief);
                free(line);
        }
}

Test(mcp, sigterm_ends_a_server_whose_client_stopped_reading)
{
        /* its answers fill the pipe, then its input fills while it waits for room; SIGTERM
         * must not wait for the client */
        fcntl(srv.in, F_SETFL, fcntl(srv.in, F_GETFL) | O_NONBLOCK);
        for (int i = 0; i < 100000 && send_ping_nonblocking(i); i++)
                ;
        usleep(100000);
        kill(srv.pid, SIGTERM);
        cr_assert_eq(wait_exit(5000), 0);
}

Test(mcp, a_request_reusing_the_id_of_a_running_call_is_refused)
{
        send_line("{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":"
                  "\"run_code\",\"arguments\":{\"language\":\"sh\",\"code\":\"sleep 1; echo "
                  "done\"}}}");
        send_line("{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\"}");
        next(5000);
        cr_assert_eq(error_code(msg), -32600, "%s", json_dumps(msg, 0));
        next(30000);
        cr_assert(strstr(json_dumps(msg, 0), "done\\n"), "%s", json_dumps(msg, 0));
}

Test(mcp, a_repair_does_not_outlive_a_killed_server)
{
        /* heal fix runs in a process group of its own; it must die with the server, not go on
         * and write the tree later */
        restart(NULL, NULL);
        send_line("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":"
                  "\"heal\",\"arguments\":{\"command\":[\"sh\",\"-c\",\"sleep 765432\"],"
                  "\"write\":true}}}");
        for (int i = 0; i < 500 && test_count_cmdline("sleep 765432") == 0; i++)
                usleep(20000);
        cr_assert_geq(test_count_cmdline("sleep 765432"), 1, "the repair's baseline runs");
        /* the heal child, and its sandbox's init (a clone of it, no execve) */
        cr_assert_geq(test_count_cmdline("-- sh -c sleep 765432"), 1, "in the heal child");
        kill(srv.pid, SIGKILL);
        waitpid(srv.pid, NULL, 0);
        srv.pid = -1;
        /* "heal fix --json ... -- sh -c sleep 765432": this test's heal child, not another
         * suite's heal fix running meanwhile */
        for (int i = 0; i < 500 && (test_count_cmdline("-- sh -c sleep 765432") ||
                                    test_count_cmdline("sleep 765432"));
             i++)
                usleep(20000);
        cr_assert_eq(test_count_cmdline("-- sh -c sleep 765432"), 0, "the heal child died too");
        cr_assert_eq(test_count_cmdline("sleep 765432"), 0, "and its sandbox");
}
