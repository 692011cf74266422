/* SPDX-License-Identifier: MIT */
/* The exec provider: a real local command gets the request as JSON on stdin and answers on
 * stdout; its failures (exit status, signal, bad JSON, silence, floods) are clear errors. */
#include <criterion/criterion.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "heal/llm.h"

static heal_llm_client *client;
static heal_llm_response resp;
static heal_error err;
static char dir[] = "/tmp/heal-test-exec-XXXXXX";

static void init(void)
{
        cr_assert_not_null(mkdtemp(dir));
}

static void fini(void)
{
        char cmd[128];

        heal_llm_response_release(&resp);
        client = heal_llm_client_free(client);
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        cr_assert_eq(system(cmd), 0);
}

TestSuite(exec, .init = init, .fini = fini, .timeout = 30);

static int ask(const char *command, uint64_t timeout_ms, const char *cassette)
{
        heal_llm_config cfg = HEAL_LLM_CONFIG_INIT;
        heal_llm_message msg = { .role = HEAL_LLM_USER, .content = "it's \"quoted\" & 'odd'" };
        heal_llm_request req = HEAL_LLM_REQUEST_INIT;

        cfg.provider = "exec";
        cfg.command = command;
        cfg.timeout_ms = timeout_ms;
        cfg.max_response_bytes = 1 << 16;
        cfg.cassette = cassette;
        cr_assert_eq(heal_llm_client_new(&client, &cfg, &err), 0, "%s", err.msg);
        req.model = "local-model";
        req.messages = &msg;
        req.n_messages = 1;
        err = (heal_error)HEAL_ERROR_INIT;
        return heal_llm_complete(client, &req, &resp, &err);
}

static char *slurp(const char *path)
{
        static char text[65536];
        FILE *f = fopen(path, "re");
        size_t n;

        cr_assert_not_null(f, "%s", path);
        n = fread(text, 1, sizeof(text) - 1, f);
        text[n] = '\0';
        fclose(f);
        return text;
}

Test(exec, heal_form_answer_and_the_request_on_stdin)
{
        char cmd[512], path[256];

        snprintf(path, sizeof(path), "%s/request.json", dir);
        snprintf(cmd, sizeof(cmd),
                 "cat > '%s'; printf '%%s' '{\"choices\":[{\"text\":\"from the tool\","
                 "\"finish_reason\":\"stop\",\"tool_calls\":[{\"id\":\"t1\",\"name\":\"run\","
                 "\"arguments\":\"{}\"}]}],\"usage\":{\"input_tokens\":5,\"output_tokens\":2}}'",
                 path);
        cr_assert_eq(ask(cmd, 10000, NULL), 0, "%s", err.msg);
        cr_assert_str_eq(resp.choices[0].text, "from the tool");
        cr_assert_eq(resp.choices[0].n_tool_calls, 1);
        cr_assert_eq(resp.input_tokens, 5);
        cr_assert_str_eq(resp.request_id, "exec");
        cr_assert(strstr(slurp(path), "\"model\":\"local-model\"") &&
                          strstr(slurp(path), "it's \\\"quoted\\\" & 'odd'"),
                  "the request travels as JSON, quotes intact: %s", slurp(path));
}

Test(exec, chat_completions_answer_and_recording)
{
        char cassette[256];

        snprintf(cassette, sizeof(cassette), "%s/c.jsonl", dir);
        cr_assert_eq(ask("cat >/dev/null; echo '{\"choices\":[{\"message\":{\"content\":\"hi\"},"
                         "\"finish_reason\":\"stop\"}]}'",
                         10000, cassette),
                     0, "%s", err.msg);
        cr_assert_str_eq(resp.choices[0].text, "hi");
        cr_assert(strstr(slurp(cassette), "\"text\":\"hi\""), "%s", slurp(cassette));
}

Test(exec, nonzero_exit_quotes_stderr)
{
        cr_assert_eq(ask("echo 'model not found: x' >&2; exit 3", 10000, NULL), -EIO);
        cr_assert(strstr(err.msg, "exited with status 3") && strstr(err.msg, "model not found: x"),
                  "%s", err.msg);
}

Test(exec, killed_by_a_signal)
{
        cr_assert_eq(ask("kill -SEGV $$", 10000, NULL), -EIO);
        cr_assert(strstr(err.msg, "killed by signal 11"), "%s", err.msg);
}

Test(exec, bad_json_names_what_came)
{
        cr_assert_eq(ask("echo 'Sure! Here is the answer'", 10000, NULL), -EPROTO);
        cr_assert(strstr(err.msg, "printed no answer") && strstr(err.msg, "Sure! Here"), "%s",
                  err.msg);
}

/* Gone, or exits within 5 s (SIGKILL is delivered when the target next runs). */
static bool dead(int pid)
{
        int fd = (int)syscall(SYS_pidfd_open, pid, 0);
        struct pollfd p = { .fd = fd, .events = POLLIN };
        int r;

        if (fd < 0)
                return errno == ESRCH;
        r = poll(&p, 1, 5000);
        close(fd);
        return r == 1;
}

Test(exec, silence_past_the_timeout_kills_the_command_group)
{
        char cmd[256], pidfile[200];
        struct timespec a, b;
        FILE *f;
        int pid = 0;

        snprintf(pidfile, sizeof(pidfile), "%s/pid", dir);
        snprintf(cmd, sizeof(cmd), "sleep 30 & echo $! > '%s'; wait", pidfile);
        clock_gettime(CLOCK_MONOTONIC, &a);
        cr_assert_eq(ask(cmd, 300, NULL), -ETIMEDOUT, "%s", err.msg);
        clock_gettime(CLOCK_MONOTONIC, &b);
        cr_assert(strstr(err.msg, "did not answer within 300 ms"), "%s", err.msg);
        cr_assert_lt(b.tv_sec - a.tv_sec, 10);
        f = fopen(pidfile, "re");
        cr_assert_not_null(f);
        cr_assert_eq(fscanf(f, "%d", &pid), 1);
        fclose(f);
        cr_assert(dead(pid), "the command's child was killed too");
}

Test(exec, a_flood_is_cut_at_the_cap)
{
        cr_assert_eq(ask("cat >/dev/null; yes", 10000, NULL), -E2BIG, "%s", err.msg);
        cr_assert(strstr(err.msg, "more than 65536 bytes"), "%s", err.msg);
}

Test(exec, a_command_that_never_reads_stdin)
{
        heal_llm_config cfg = HEAL_LLM_CONFIG_INIT;
        heal_llm_message msg = { .role = HEAL_LLM_USER };
        heal_llm_request req = HEAL_LLM_REQUEST_INIT;
        char *big = malloc(4 << 20);

        memset(big, 'a', (4 << 20) - 1);
        big[(4 << 20) - 1] = '\0';
        msg.content = big;
        cfg.provider = "exec";
        cfg.command = "exec 0<&-; echo '{\"choices\":[{\"text\":\"ok\"}]}'";
        cr_assert_eq(heal_llm_client_new(&client, &cfg, &err), 0, "%s", err.msg);
        req.model = "m";
        req.messages = &msg;
        req.n_messages = 1;
        cr_assert_eq(heal_llm_complete(client, &req, &resp, &err), 0, "%s", err.msg);
        cr_assert_str_eq(resp.choices[0].text, "ok");
        free(big);
}

Test(exec, no_command_is_a_configuration_error)
{
        heal_llm_config cfg = HEAL_LLM_CONFIG_INIT;

        cfg.provider = "exec";
        cr_assert_eq(heal_llm_client_new(&client, &cfg, &err), -EINVAL);
        cr_assert(strstr(err.msg, "HEAL_LLM_COMMAND"), "%s", err.msg);
}

Test(exec, a_half_decoded_answer_is_an_error_not_a_candidate)
{
        cr_assert_eq(ask("printf '{\"choices\":[{\"message\":{\"content\":5}}]}'", 10000, NULL),
                     -EPROTO);
        cr_assert(strstr(err.msg, "'content' to be a string"), "%s", err.msg);
        cr_assert_eq(resp.n_choices, 0);
        cr_assert_null(resp.choices);
}

Test(exec, a_background_process_holding_the_pipes_does_not_hold_heal)
{
        char cmd[512], pidfile[200];
        struct timespec a, b;
        FILE *f;
        int pid = 0;

        snprintf(pidfile, sizeof(pidfile), "%s/pid", dir);
        snprintf(cmd, sizeof(cmd),
                 "cat >/dev/null; sleep 30 & echo $! > '%s'; echo '{\"choices\":[{\"text\":"
                 "\"OK\"}]}'",
                 pidfile);
        clock_gettime(CLOCK_MONOTONIC, &a);
        cr_assert_eq(ask(cmd, 20000, NULL), 0, "%s", err.msg);
        clock_gettime(CLOCK_MONOTONIC, &b);
        cr_assert_str_eq(resp.choices[0].text, "OK");
        cr_assert_lt(b.tv_sec - a.tv_sec, 10, "answered when the shell exited, not at the timeout");
        f = fopen(pidfile, "re");
        cr_assert_not_null(f);
        cr_assert_eq(fscanf(f, "%d", &pid), 1);
        fclose(f);
        cr_assert(dead(pid), "what the command left running is killed");
}

Test(exec, the_status_is_kept_when_the_caller_ignores_sigchld)
{
        signal(SIGCHLD, SIG_IGN);
        cr_assert_eq(ask("echo '{\"choices\":[{\"text\":\"OK\"}]}'; exit 3", 10000, NULL), -EIO,
                     "%s", err.msg);
        signal(SIGCHLD, SIG_DFL); /* for fini's system(3) */
        cr_assert(strstr(err.msg, "exited with status 3"), "%s", err.msg);
}

Test(exec, the_end_of_a_long_stderr_is_quoted)
{
        cr_assert_eq(ask("for i in $(seq 60); do echo \"log line $i with some words\" >&2; done;"
                         " echo 'FATAL: the real reason' >&2; exit 2",
                         10000, NULL),
                     -EIO);
        cr_assert(strstr(err.msg, "FATAL: the real reason"), "%s", err.msg);
}
