/* SPDX-License-Identifier: MIT */
/* The heal command: exit codes, --json, usage errors, Ctrl-C, doctor, undo; and the library's
 * leaks. */
#include <jansson.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "heal/writeback.h"

#include "harness.h"
#include "httpd.h"

/* Run "heal ARGS" through sh; returns the exit status, stdout in @out (up to @len). */
static int heal(const char *args, char *out, size_t len)
{
        char cmd[1024];
        FILE *p;
        size_t n;
        int st;

        snprintf(cmd, sizeof(cmd), "cd / && %s %s 2>/dev/null", HEAL_TEST_BIN, args);
        p = popen(cmd, "r");
        cr_assert_not_null(p);
        n = fread(out, 1, len - 1, p);
        out[n] = '\0';
        st = pclose(p);
        return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static char out[1 << 16];

TestSuite(cli, .timeout = 60);

/* README's "Embedding libheal" (examples/embed/main.c, built as build/heal-embed-example). */
Test(cli, the_readme_embedding_example_runs_go_test)
{
        char cmd[2048], bin[1024], *slash;
        FILE *p;
        size_t n;

        test_require("go");
        snprintf(bin, sizeof(bin), "%s", HEAL_TEST_BIN);
        slash = strrchr(bin, '/');
        cr_assert_not_null(slash);
        snprintf(slash + 1, sizeof(bin) - (size_t)(slash + 1 - bin), "heal-embed-example");
        snprintf(cmd, sizeof(cmd), "%s '%s/../../examples/hello-go' 2>&1; echo rc=$?", bin,
                 test_data_dir());
        p = popen(cmd, "r");
        cr_assert_not_null(p);
        n = fread(out, 1, sizeof(out) - 1, p);
        out[n] = '\0';
        pclose(p);
        cr_assert(strncmp(out, "ok, exit 0, ", 12) == 0 && strstr(out, "rc=0\n"), "%s", out);
        cr_assert(strstr(out, "hello"), "go test's output is shown: %s", out);
}

Test(cli, exit_status_follows_the_command)
{
        cr_assert_eq(heal("run -- sh -c 'exit 0'", out, sizeof(out)), 0);
        cr_assert_eq(heal("run -- sh -c 'exit 42'", out, sizeof(out)), 42);
        cr_assert_eq(heal("run -- sh -c 'kill -TERM $$'", out, sizeof(out)), 128 + SIGTERM);
        cr_assert_eq(heal("run --timeout 200ms --grace 0 -- sleep 10", out, sizeof(out)), 124);
        cr_assert_eq(heal("run --output-limit 1k -- yes", out, sizeof(out)), 121);
        cr_assert_eq(heal("run -- no-such-cmd-heal", out, sizeof(out)), 127);
        cr_assert_eq(heal("run -- /etc/passwd", out, sizeof(out)), 126);
        cr_assert_eq(heal("run -- echo streamed", out, sizeof(out)), 0);
        cr_assert_str_eq(out, "streamed\n");
}

Test(cli, bwrap_style_plan)
{
        cr_assert_eq(
                heal("run --unshare-all --die-with-parent --tmpfs / --ro-bind /usr /usr "
                     "--symlink usr/bin /bin --symlink usr/lib /lib --symlink usr/lib64 /lib64 "
                     "--ro-bind-try /nonexistent-heal /x --bind-try /etc /etc --proc /proc "
                     "--chdir / -- sh -c 'readlink /bin; test -e /x || echo no-x; "
                     "test -d /etc && echo etc'",
                     out, sizeof(out)),
                0);
        cr_assert_str_eq(out, "usr/bin\nno-x\netc\n");
}

Test(cli, usage_errors)
{
        cr_assert_eq(heal("run", out, sizeof(out)), 125);
        cr_assert_eq(heal("run --timeout soon -- true", out, sizeof(out)), 125);
        cr_assert_eq(heal("run --bogus -- true", out, sizeof(out)), 125);
        cr_assert_eq(heal("run --ro-bind /usr -- true", out, sizeof(out)), 125);
        cr_assert_eq(heal("run --tmpfs /tmp -- true", out, sizeof(out)), 125,
                     "a plan must start at /");
        /* a value cut short would be another size ("00...01M" was mounted as size=0: none) */
        cr_assert_eq(heal("run --ro-bind / / --chdir / --size "
                          "00000000000000000000000000000000000000000000000000000000001M "
                          "--tmpfs /media -- true",
                          out, sizeof(out)),
                     125);
        cr_assert_eq(heal("run --ro-bind / / --chdir / --tmpfs /media --size 1M -- true", out,
                          sizeof(out)),
                     125, "a --size no --tmpfs follows");
        cr_assert_eq(heal("run --ro-bind / / --chdir / --size 1M --tmpfs /media -- sh -c "
                          "'grep -o \" /media .*size=1024k\" /proc/self/mountinfo'",
                          out, sizeof(out)),
                     0, "%s", out);
        cr_assert_eq(heal("frobnicate", out, sizeof(out)), 2);
        cr_assert_eq(heal("--help", out, sizeof(out)), 0);
        cr_assert(strstr(out, "heal run"));
        cr_assert_eq(heal("run --help", out, sizeof(out)), 0);
        cr_assert(strstr(out, "--ro-bind SRC DST") && strstr(out, "exit status"));
}

Test(cli, json_result)
{
        json_t *doc, *procs;
        json_error_t jerr;

        cr_assert_eq(heal("run --json -- sh -c 'printf \"a\\377b\"; echo e >&2; exit 3'", out,
                          sizeof(out)),
                     3);
        doc = json_loads(out, 0, &jerr);
        cr_assert_not_null(doc, "invalid JSON (%s): %s", jerr.text, out);
        cr_assert_str_eq(json_string_value(json_object_get(doc, "status")), "exit_nonzero");
        cr_assert_eq(json_integer_value(json_object_get(doc, "exit_code")), 3);
        cr_assert_str_eq(json_string_value(json_object_get(doc, "stdout")), "a\xEF\xBF\xBD"
                                                                            "b");
        cr_assert_str_eq(json_string_value(json_object_get(doc, "stderr")), "e\n");
        cr_assert(json_is_boolean(json_object_get(doc, "stdout_truncated")));
        cr_assert(json_is_integer(json_object_get(doc, "wall_ms")));
        cr_assert(json_is_integer(json_object_get(doc, "memory_peak_bytes")));
        cr_assert(json_is_object(json_object_get(doc, "timing_us")));
        procs = json_object_get(doc, "processes");
        cr_assert(json_is_array(procs) && json_array_size(procs) == 0);
        json_decref(doc);
        /* A result nobody can read is no result: not the command's status (0 here). */
        cr_assert_eq(heal("run --json -- true >/dev/full", out, sizeof(out)), 125);
        cr_assert_eq(heal("exec --json --lang sh /dev/null >/dev/full", out, sizeof(out)), 125);
        cr_assert_eq(heal("run --json --timeout 300ms --grace 0 -- sleep 5", out, sizeof(out)),
                     124);
        doc = json_loads(out, 0, &jerr);
        cr_assert_not_null(doc);
        cr_assert_str_eq(json_string_value(json_object_get(doc, "status")), "timeout");
        cr_assert_gt(json_array_size(json_object_get(doc, "processes")), 0);
        json_decref(doc);
}

/* SIGINT to heal run while the command sleeps: heal exits 130 at once, kills the whole run and
 * removes its temporary directory (weak mode announces it in TMPDIR; full mode has none on the
 * host, its /tmp is a tmpfs that goes with the mount namespace). */
static void ctrl_c(const char *mode, const char *tag)
{
        char script[96], buf[PATH_MAX + 16] = "", tmpdir[PATH_MAX] = "";
        struct timespec t0, t1;
        ssize_t n = 0, r;
        int p[2], st;
        pid_t pid;

        cr_assert_eq(pipe(p), 0);
        pid = fork();
        if (pid == 0) {
                dup2(p[1], 1);
                snprintf(script, sizeof(script), "echo ready \"$TMPDIR\"; exec sleep %s", tag);
                execl(HEAL_TEST_BIN, "heal", "run", mode, "--", "sh", "-c", script, NULL);
                _exit(127);
        }
        close(p[1]);
        while (!memchr(buf, '\n', (size_t)n) &&
               (r = read(p[0], buf + n, sizeof(buf) - 1 - (size_t)n)) > 0)
                n += r;
        cr_assert(n > 6 && strncmp(buf, "ready ", 6) == 0, "the command started: %.*s", (int)n,
                  buf);
        sscanf(buf + 6, "%4095s", tmpdir);
        clock_gettime(CLOCK_MONOTONIC, &t0);
        kill(pid, SIGINT);
        cr_assert_eq(waitpid(pid, &st, 0), pid);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        close(p[0]);
        cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 130, "status %d", st);
        cr_assert_lt(t1.tv_sec - t0.tv_sec, 3);
        cr_assert_eq(test_count_cmdline(tag), 0, "no process of the run is left");
        if (strcmp(mode, "--isolation=none") == 0) {
                cr_assert(strncmp(tmpdir, "/tmp/heal-", 10) == 0, "TMPDIR %s", tmpdir);
                cr_assert_neq(access(tmpdir, F_OK), 0, "%s left behind", tmpdir);
        }
}

/* One test, so the two modes do not count each other's processes. */
Test(cli, ctrl_c_leaves_nothing_behind)
{
        ctrl_c("--isolation=full", "4321.5");
        ctrl_c("--isolation=none", "4322.5");
}

Test(cli, doctor_reports_each_check)
{
        json_t *doc, *checks;

        heal("doctor --json", out, sizeof(out));
        doc = json_loads(out, 0, NULL);
        cr_assert_not_null(doc, "%s", out);
        checks = json_object_get(doc, "checks");
        cr_assert_geq(json_array_size(checks), 5);
        cr_assert_str_eq(json_string_value(json_object_get(json_array_get(checks, 0), "name")),
                         "namespaces");
        cr_assert_str_eq(json_string_value(json_object_get(json_array_get(checks, 0), "status")),
                         "ok");
        cr_assert_str_eq(json_string_value(json_object_get(json_array_get(checks, 1), "status")),
                         "ok", "overlay");
        /* Limits that fall back name the fix that fits this host's cgroup layout. */
        for (size_t i = 0; i < json_array_size(checks); i++) {
                json_t *c = json_array_get(checks, i);
                const char *detail = json_string_value(json_object_get(c, "detail"));
                FILE *f = fopen("/sys/fs/cgroup/unified/cgroup.controllers", "re");
                char ctl[512] = "";
                bool hybrid_v1 = f && (!fgets(ctl, sizeof(ctl), f) || !strstr(ctl, "memory"));

                if (f)
                        fclose(f);
                if (strcmp(json_string_value(json_object_get(c, "name")), "limits") != 0 ||
                    strcmp(json_string_value(json_object_get(c, "status")), "ok") == 0)
                        continue;
                cr_assert(strstr(detail, "fix: run as root"), "%s", detail);
                if (hybrid_v1)
                        cr_assert(strstr(detail, "on cgroup v1") &&
                                          strstr(detail, "systemd.unified_cgroup_hierarchy=1"),
                                  "%s", detail);
        }
        json_decref(doc);
}

static const char *check_detail(json_t *doc, const char *name, const char **status)
{
        json_t *checks = json_object_get(doc, "checks");

        for (size_t i = 0; i < json_array_size(checks); i++) {
                json_t *c = json_array_get(checks, i);

                if (strcmp(json_string_value(json_object_get(c, "name")), name) == 0) {
                        *status = json_string_value(json_object_get(c, "status"));
                        return json_string_value(json_object_get(c, "detail"));
                }
        }
        cr_assert_fail("no check '%s'", name);
        return NULL;
}

/* The closing check of the model layer: heal asks a real HTTP server, records the answer
 * without the key, reports what it spent, and the cassette then answers alone. */
Test(cli, doctor_asks_the_model_records_and_replays)
{
        static const char body[] =
                "{\"id\":\"chatcmpl-7\",\"choices\":[{\"index\":0,\"message\":{\"role\":"
                "\"assistant\",\"content\":\"OK\"},\"finish_reason\":\"stop\"}],\"usage\":{"
                "\"prompt_tokens\":13,\"completion_tokens\":1}}";
        struct httpd_reply r = { 200, NULL, NULL, body, 0, 0, 0 };
        char cassette[] = "/tmp/heal-test-cassette-XXXXXX", args[512], text[4096] = "";
        const char *status = NULL, *detail;
        struct httpd srv;
        json_t *doc;
        FILE *f;
        int fd = mkstemp(cassette);

        cr_assert(fd >= 0);
        close(fd);
        httpd_start(&srv, &r, 1);
        setenv("OPENAI_API_KEY", "sk-cli-secret", 1);
        snprintf(args, sizeof(args),
                 "doctor --json --ask-model --model openai:gpt-4.1-mini --llm-url %s --record %s",
                 srv.base_url, cassette);
        cr_assert_eq(heal(args, out, sizeof(out)), 0, "%s", out);
        httpd_stop(&srv);
        cr_assert(strstr(srv.requests[0], "Authorization: Bearer sk-cli-secret"));
        doc = json_loads(out, 0, NULL);
        cr_assert_not_null(doc, "%s", out);
        detail = check_detail(doc, "llm-answer", &status);
        cr_assert_str_eq(status, "ok", "%s", detail);
        cr_assert(strstr(detail, "answered 'OK'") && strstr(detail, "request id chatcmpl-7") &&
                          strstr(detail, "1 request (0 from cache or cassette), 13 tokens in"),
                  "%s", detail);
        json_decref(doc);
        f = fopen(cassette, "re");
        cr_assert_gt(fread(text, 1, sizeof(text) - 1, f), 0);
        fclose(f);
        cr_assert(strstr(text, "\"text\":\"OK\""), "%s", text);
        cr_assert_null(strstr(text, "sk-cli-secret"), "no key in the cassette");

        /* The server is gone: the cassette answers. */
        snprintf(args, sizeof(args), "doctor --json --ask-model --model replay:gpt-4.1-mini");
        setenv("HEAL_CASSETTE", cassette, 1);
        cr_assert_eq(heal(args, out, sizeof(out)), 0, "%s", out);
        doc = json_loads(out, 0, NULL);
        detail = check_detail(doc, "llm-answer", &status);
        cr_assert_str_eq(status, "ok", "%s", detail);
        cr_assert(strstr(detail, "0 requests (1 from cache or cassette)"), "%s", detail);
        json_decref(doc);

        snprintf(args, sizeof(args), "doctor --json --ask-model --model replay:m --record %s",
                 cassette);
        cr_assert_eq(heal(args, out, sizeof(out)), 1, "%s", out);
        doc = json_loads(out, 0, NULL);
        detail = check_detail(doc, "llm", &status);
        cr_assert_str_eq(status, "fail");
        cr_assert(strstr(detail, "--record writes down a live provider's answers"), "%s", detail);
        json_decref(doc);
        unlink(cassette);
}

Test(cli, doctor_json_stays_valid_with_bytes_that_are_not_utf8)
{
        json_t *doc;
        const char *status = NULL, *detail;

        setenv("HEAL_LLM_COMMAND", "printf '\\377\\376 broken' >&2; exit 1", 1);
        cr_assert_eq(heal("doctor --json --ask-model --model exec:x", out, sizeof(out)), 1, "%s",
                     out);
        doc = json_loads(out, 0, NULL);
        cr_assert_not_null(doc, "%s", out);
        detail = check_detail(doc, "llm-answer", &status);
        cr_assert_str_eq(status, "fail");
        cr_assert(strstr(detail, "exited with status 1") && strstr(detail, "broken"), "%s", detail);
        json_decref(doc);
}

/* heal killed while its model command runs: the command goes too (it would run on, orphaned). */
Test(cli, a_killed_heal_leaves_no_model_command_behind)
{
        pid_t pid;
        int status, tries = 0;

        setenv("HEAL_LLM_COMMAND", "sleep 7377", 1);
        pid = fork();
        cr_assert(pid >= 0);
        if (pid == 0) {
                execl(HEAL_TEST_BIN, "heal", "doctor", "--ask-model", "--model", "exec:x",
                      (char *)NULL);
                _exit(127);
        }
        /* The command starting: 0.2 s here, but the suites run beside the hostile ones, whose
         * fork bombs and cgroup teardown stalled a doctor for ~15 s once (each /proc scan is
         * slow then too): a deadline, not a count. */
        for (time_t end = time(NULL) + 60;
             test_count_cmdline("sleep 7377") == 0 && time(NULL) < end;)
                usleep(10000);
        cr_assert_gt(test_count_cmdline("sleep 7377"), 0, "the model command started");
        kill(pid, SIGKILL);
        cr_assert_eq(waitpid(pid, &status, 0), pid);
        for (tries = 0; test_count_cmdline("sleep 7377") > 0 && tries < 500; tries++)
                usleep(10000);
        cr_assert_eq(test_count_cmdline("sleep 7377"), 0, "the model command died with heal");
}

#ifdef __SANITIZE_ADDRESS__
size_t __sanitizer_get_current_allocated_bytes(void); /* libasan's allocator interface */
/* ASan's quarantine keeps freed memory resident: count live heap bytes instead of RSS. */
static long heap_kib(void)
{
        return (long)(__sanitizer_get_current_allocated_bytes() / 1024);
}
#else
static long heap_kib(void)
{
        return test_rss_kib();
}
#endif

/* heal undo on a write-back made with the library: --list, --dry-run, --json, the restore, and
 * the exit status once there is nothing left to undo. */
Test(cli, undo_puts_back_what_a_writeback_wrote)
{
        char tree[] = "/tmp/heal-test-cli-undo-XXXXXX", path[256], args[512], *id = NULL;
        heal_file_change ch = { .file = strdup("main.go"),
                                .before = strdup("package main\n"),
                                .after = strdup("package main // fixed\n") };
        heal_patch p = { .files = &ch, .n_files = 1 };
        heal_writeback_opts o = { .tree = tree, .command = "go test" };
        heal_error err = HEAL_ERROR_INIT;
        json_t *j;
        FILE *f;

        cr_assert_not_null(mkdtemp(tree));
        snprintf(path, sizeof(path), "%s/main.go", tree);
        f = fopen(path, "we");
        cr_assert_not_null(f);
        fputs("package main\n", f);
        fclose(f);
        cr_assert_eq(heal_writeback(&id, &p, &o, &err), 0, "%s", err.msg);

        snprintf(args, sizeof(args), "undo --list --json --tree %s", tree);
        cr_assert_eq(heal(args, out, sizeof(out)), 0);
        j = json_loads(out, 0, NULL);
        cr_assert_not_null(j, "%s", out);
        cr_assert_str_eq(json_string_value(json_object_get(
                                 json_array_get(json_object_get(j, "entries"), 0), "id")),
                         id);
        json_decref(j);
        snprintf(args, sizeof(args), "undo --dry-run --json --tree %s", tree);
        cr_assert_eq(heal(args, out, sizeof(out)), 0);
        j = json_loads(out, 0, NULL);
        cr_assert_not_null(j, "%s", out);
        cr_assert_str_eq(json_string_value(json_array_get(json_object_get(j, "files"), 0)),
                         "main.go");
        json_decref(j);
        snprintf(args, sizeof(args), "undo --tree %s %s", tree, id);
        cr_assert_eq(heal(args, out, sizeof(out)), 0);
        cr_assert(strstr(out, "restored 1 file of"), "%s", out);
        f = fopen(path, "re");
        cr_assert_not_null(f);
        cr_assert_not_null(fgets(args, sizeof(args), f));
        fclose(f);
        cr_assert_str_eq(args, "package main\n");
        snprintf(args, sizeof(args), "undo --tree %s", tree);
        cr_assert_eq(heal(args, out, sizeof(out)), 1, "nothing left to undo");
        cr_assert_eq(heal("undo --force --list", out, sizeof(out)), 2);

        snprintf(args, sizeof(args), "rm -rf '%s'", tree);
        cr_assert_eq(system(args), 0);
        free(id);
        free(ch.file);
        free(ch.before);
        free(ch.after);
}

Test(leak, two_hundred_runs_keep_fds_and_rss_flat, .timeout = 120)
{
        const char *argv[] = { "/bin/true", NULL };
        heal_sandbox *sb = test_sandbox("/");
        int fds0 = test_fd_count() - 1; /* the sandbox's own cancel eventfd */
        long rss0 = 0;
        int pooled = 0;

        for (int i = 0; i < 220; i++) {
                heal_sandbox_result r = { 0 };

                if (i == 20) /* after warm-up: caches, the seccomp filter, libc arenas */
                        rss0 = heap_kib();
                if (i % 2) /* half the runs join the pool's namespaces, half make their own */
                        heal_sandbox_pool_wait();
                test_run(sb, argv, &r);
                cr_assert_eq(r.status, HEAL_STATUS_OK);
                pooled += r.timing.pooled;
                heal_sandbox_result_release(&r);
                /* Inits still tearing down are reaped later: a bounded handful of pidfds; the
                 * pool holds three. */
                cr_assert_leq(test_fd_count(), fds0 + 1 + 8 + 3);
        }
        cr_assert_geq(pooled, 100, "only %d runs joined pre-made namespaces", pooled);
        cr_assert_lt(heap_kib() - rss0, 2048, "memory grew by %ld KiB", heap_kib() - rss0);
        heal_sandbox_free(sb);
        heal_sandbox_pool_release();
        cr_assert_eq(test_fd_count(), fds0,
                     "every descriptor is closed by heal_sandbox_free() and the pool's release");
}
