/* SPDX-License-Identifier: MIT */
/* heal_sandbox_run(): verdicts, output, environment, view, seccomp, limits, timeouts. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"

static heal_sandbox_result res;

static void fini(void)
{
        heal_sandbox_result_release(&res);
}

TestSuite(run, .fini = fini, .timeout = 60);

Test(run, exit_codes_and_output)
{
        test_sh("/", "echo out; echo err >&2; exit 7", &res);
        cr_assert_eq(res.status, HEAL_STATUS_EXIT_NONZERO);
        cr_assert_eq(res.exit_code, 7);
        cr_assert_str_eq(res.out, "out\n");
        cr_assert_str_eq(res.err, "err\n");
        cr_assert_eq(res.out_len, 4);
        cr_assert(!res.out_truncated && !res.err_truncated);
        heal_sandbox_result_release(&res);
        test_sh("/", "exit 0", &res);
        cr_assert_eq(res.status, HEAL_STATUS_OK);
        cr_assert_eq(res.exit_code, 0);
        cr_assert_str_eq(res.out, "");
}

Test(run, signal_verdict)
{
        test_sh("/", "kill -SEGV $$", &res);
        cr_assert_eq(res.status, HEAL_STATUS_SIGNALED);
        cr_assert_eq(res.signal, SIGSEGV);
        cr_assert_eq(res.exit_code, 128 + SIGSEGV);
        cr_assert(strstr(res.message, "signal 11"), "%s", res.message);
}

Test(run, command_not_found_is_setup_error)
{
        const char *argv[] = { "no-such-program-heal", NULL };
        heal_sandbox *sb = test_sandbox("/");

        test_run(sb, argv, &res);
        cr_assert_eq(res.status, HEAL_STATUS_SETUP_ERROR);
        cr_assert_eq(res.exit_code, 127);
        cr_assert(strstr(res.message, "'no-such-program-heal'") &&
                          strstr(res.message, "not found in the sandbox's PATH"),
                  "%s", res.message);
        heal_sandbox_free(sb);
}

Test(run, environment_is_an_allow_list)
{
        setenv("OPENAI_API_KEY", "sk-test-123", 1);
        setenv("LC_ALL", "C", 1);
        setenv("TZ", "UTC", 1);
        test_sh("/", "env", &res);
        cr_assert_eq(res.status, HEAL_STATUS_OK);
        cr_assert_null(strstr(res.out, "sk-test-123"));
        cr_assert_null(strstr(res.out, "OPENAI"));
        cr_assert(strstr(res.out, "LC_ALL=C\n"));
        cr_assert(strstr(res.out, "TZ=UTC\n"));
        cr_assert(strstr(res.out, "PATH="));
        cr_assert(strstr(res.out, "HOME=/tmp\n"));
}

Test(run, setenv_wins_and_unset)
{
        const char *argv[] = { "/bin/sh", "-c", "echo \"$PATH|$FOO|${TERM-unset}\"", NULL };
        heal_sandbox *sb = test_sandbox("/");

        cr_assert_eq(heal_sandbox_setenv(sb, "PATH", "/usr/bin:/bin", NULL), 0);
        cr_assert_eq(heal_sandbox_setenv(sb, "FOO", "a b'c", NULL), 0);
        cr_assert_eq(heal_sandbox_setenv(sb, "TERM", NULL, NULL), 0);
        cr_assert_eq(
                heal_sandbox_inherit_env(sb, (const char *const[]){ "PATH=/evil", NULL }, NULL), 0);
        test_run(sb, argv, &res);
        cr_assert_str_eq(res.out, "/usr/bin:/bin|a b'c|unset\n");
        heal_sandbox_free(sb);
}

Test(run, default_view)
{
        char *dir = test_tempdir();

        test_sh(dir,
                "test -d /usr/bin && test -e /etc/passwd && test -d /proc/self && "
                "test -c /dev/null && test -d /tmp && echo view-ok; "
                "ls -d /home /root /var 2>&1 | grep -c 'No such' ; "
                "touch /usr/x 2>&1 | grep -q 'Read-only' && echo usr-ro; "
                "touch /x 2>&1 | grep -q 'Read-only' && echo root-ro; "
                "touch /tmp/x && echo tmp-rw; echo data > shared; pwd; hostname",
                &res);
        cr_assert_eq(res.status, HEAL_STATUS_OK, "%s %s", res.out, res.err);
        cr_assert(strstr(res.out, "view-ok\n3\nusr-ro\nroot-ro\ntmp-rw\n"), "%s", res.out);
        cr_assert(strstr(res.out, dir), "cwd is the same path inside: %s", res.out);
        cr_assert(strstr(res.out, "heal\n"));
        /* The working directory is the host's, read-write. */
        char path[256];
        struct stat st;
        snprintf(path, sizeof(path), "%s/shared", dir);
        cr_assert_eq(stat(path, &st), 0);
        cr_assert_eq(st.st_uid, getuid(), "files written map to the invoking user");
        test_rmtree(dir);
        free(dir);
}

Test(run, cwd_overlay_discards_writes)
{
        const char *argv[] = { "/bin/sh", "-c", "cat keep; echo new > keep; rm -f gone; cat keep",
                               NULL };
        char *dir = test_tempdir(), path[256];
        heal_sandbox *sb = test_sandbox(dir);
        FILE *f;
        char line[64] = "";

        test_write_file(dir, "keep", "old\n");
        test_write_file(dir, "gone", "x\n");
        cr_assert_eq(heal_sandbox_set_flags(sb, HEAL_SANDBOX_CWD_OVERLAY, NULL), 0);
        test_run(sb, argv, &res);
        cr_assert_eq(res.status, HEAL_STATUS_OK, "%s", res.err);
        cr_assert_str_eq(res.out, "old\nnew\n");
        snprintf(path, sizeof(path), "%s/keep", dir);
        f = fopen(path, "re");
        cr_assert_not_null(fgets(line, sizeof(line), f));
        fclose(f);
        cr_assert_str_eq(line, "old\n", "the host file is untouched");
        snprintf(path, sizeof(path), "%s/gone", dir);
        cr_assert_eq(access(path, F_OK), 0, "a deletion in the overlay stays in the overlay");
        heal_sandbox_free(sb);
        test_rmtree(dir);
        free(dir);
}

Test(run, stdin_fd)
{
        const char *argv[] = { "/bin/cat", NULL };
        heal_sandbox *sb = test_sandbox("/");
        int p[2];

        cr_assert_eq(pipe(p), 0);
        cr_assert_eq(write(p[1], "from-stdin", 10), 10);
        close(p[1]);
        heal_sandbox_set_stdin_fd(sb, p[0]);
        test_run(sb, argv, &res);
        cr_assert_str_eq(res.out, "from-stdin");
        close(p[0]);
        heal_sandbox_free(sb);
        heal_sandbox_result_release(&res);
        test_sh("/", "cat; echo eof", &res);
        cr_assert_str_eq(res.out, "eof\n", "default stdin is /dev/null");
}

static size_t streamed;

static void count_output(int stream, const char *data, size_t len, void *userdata)
{
        (void)stream, (void)data;
        cr_assert_eq(userdata, &streamed);
        streamed += len;
}

Test(run, output_limit_and_streaming)
{
        const char *argv[] = { "/usr/bin/yes", NULL };
        heal_sandbox_limits lim = HEAL_SANDBOX_LIMITS_INIT;
        heal_sandbox *sb = test_sandbox("/");

        lim.out_max_bytes = 100000;
        lim.wall_ms = 20000;
        heal_sandbox_set_limits(sb, &lim, NULL);
        heal_sandbox_set_output_fn(sb, count_output, &streamed, true);
        test_run(sb, argv, &res);
        cr_assert_eq(res.status, HEAL_STATUS_OUTPUT_LIMIT);
        cr_assert(res.limits_hit & HEAL_LIMIT_OUTPUT);
        cr_assert_eq(res.out_len, 100000);
        cr_assert_eq(streamed, 100000);
        cr_assert(res.out_truncated);
        cr_assert_lt(res.wall_ms, 5000);
        heal_sandbox_free(sb);
}

Test(run, timeout_sends_sigquit_then_kills_and_snapshots)
{
        const char *argv[] = { "/bin/sh", "-c",
                               "trap 'echo got-quit; exit 3' QUIT; echo started; "
                               "while :; do :; done",
                               NULL };
        heal_sandbox_limits lim = HEAL_SANDBOX_LIMITS_INIT;
        heal_sandbox *sb = test_sandbox("/");

        lim.wall_ms = 500;
        lim.grace_ms = 2000;
        heal_sandbox_set_limits(sb, &lim, NULL);
        test_run(sb, argv, &res);
        cr_assert_eq(res.status, HEAL_STATUS_TIMEOUT, "%s",
                     heal_sandbox_status_to_string(res.status));
        cr_assert(res.limits_hit & HEAL_LIMIT_WALL);
        cr_assert(strstr(res.out, "started\ngot-quit\n"), "%s", res.out);
        cr_assert_geq(res.wall_ms, 500);
        cr_assert_lt(res.wall_ms, 2000, "the command ended on SIGQUIT: no need to wait the grace");
        cr_assert_geq(res.n_procs, 2);
        cr_assert_eq(res.procs[0].pid > 0, true);
        bool running_sh = false;
        for (size_t i = 0; i < res.n_procs; i++)
                running_sh |= strcmp(res.procs[i].comm, "sh") == 0 && res.procs[i].state == 'R';
        cr_assert(running_sh, "the snapshot shows the spinning shell");
        cr_assert(strstr(res.message, "wall time limit of 500 ms"), "%s", res.message);
        heal_sandbox_free(sb);
}

Test(run, stopped_process_is_still_killed_on_time)
{
        const char *argv[] = { "/bin/sh", "-c", "kill -STOP $$", NULL };
        heal_sandbox_limits lim = HEAL_SANDBOX_LIMITS_INIT;
        heal_sandbox *sb = test_sandbox("/");

        lim.wall_ms = 300;
        lim.grace_ms = 300;
        heal_sandbox_set_limits(sb, &lim, NULL);
        test_run(sb, argv, &res);
        cr_assert_eq(res.status, HEAL_STATUS_TIMEOUT);
        cr_assert_lt(res.wall_ms, 2000);
        cr_assert(res.n_procs >= 2 && res.procs[1].state == 'T', "snapshot shows the stopped sh");
        heal_sandbox_free(sb);
}

Test(run, cpu_limit)
{
        const char *argv[] = { "/bin/sh", "-c", "while :; do :; done", NULL };
        heal_sandbox_limits lim = HEAL_SANDBOX_LIMITS_INIT;
        heal_sandbox *sb = test_sandbox("/");

        lim.cpu_ms = 1000;
        lim.wall_ms = 20000;
        heal_sandbox_set_limits(sb, &lim, NULL);
        test_run(sb, argv, &res);
        cr_assert_eq(res.status, HEAL_STATUS_CPU_LIMIT, "%s",
                     heal_sandbox_status_to_string(res.status));
        cr_assert(res.limits_hit & HEAL_LIMIT_CPU);
        cr_assert_geq(res.cpu_ms, 500, "cpu %llu ms", (unsigned long long)res.cpu_ms);
        cr_assert_lt(res.wall_ms, 10000);
        heal_sandbox_free(sb);
}

Test(run, file_size_limit_gives_efbig)
{
        heal_sandbox_limits lim = HEAL_SANDBOX_LIMITS_INIT;
        const char *argv[] = { "/bin/sh", "-c",
                               "dd if=/dev/zero of=/tmp/f bs=1k count=100 2>&1; stat -c %s /tmp/f",
                               NULL };
        heal_sandbox *sb = test_sandbox("/");

        lim.fsize_max_bytes = 10240;
        heal_sandbox_set_limits(sb, &lim, NULL);
        test_run(sb, argv, &res);
        cr_assert(strstr(res.out, "File too large"), "%s", res.out);
        cr_assert(strstr(res.out, "\n10240\n"), "%s", res.out);
        heal_sandbox_free(sb);
}

Test(run, cancel_before_run)
{
        const char *argv[] = { "/bin/sleep", "30", NULL };
        heal_sandbox *sb = test_sandbox("/");

        heal_sandbox_cancel(sb);
        test_run(sb, argv, &res);
        cr_assert_eq(res.status, HEAL_STATUS_CANCELED);
        cr_assert_lt(res.wall_ms, 5000);
        heal_sandbox_result_release(&res);
        /* The cancel was consumed: the next run is normal. */
        argv[1] = "0";
        test_run(sb, argv, &res);
        cr_assert_eq(res.status, HEAL_STATUS_OK);
        heal_sandbox_free(sb);
}

Test(run, memory_usage_reported)
{
        test_sh("/", "head -c 50000000 /dev/zero | tail -c 1 >/dev/null", &res);
        cr_assert_eq(res.status, HEAL_STATUS_OK);
        cr_assert_gt(res.mem_peak_bytes, 1 << 20);
        cr_assert_gt(res.timing.exec_us, 0);
        cr_assert_geq(res.timing.end_us, res.timing.exec_us);
}
