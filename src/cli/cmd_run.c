/* SPDX-License-Identifier: MIT */
/* heal run: run a command in a throwaway sandbox. Flags follow bwrap where they overlap. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "core/parse.h"
#include "runner/result-json.h"

extern char **environ;

static const char run_usage[] =
        "usage: heal run [options] [--] CMD [ARG...]\n"
        "\n"
        "Run CMD in a throwaway sandbox: new user, mount, PID, network, IPC, UTS and cgroup\n"
        "namespaces, no capabilities, a seccomp filter, and limits. Without mount options CMD sees\n"
        "the host's /usr, /bin, /sbin, /lib*, /etc, /opt (read-only), a fresh /proc, a minimal\n"
        "/dev, an empty /tmp, and the current directory read-write -- not your home directory.\n"
        "Only PATH, LANG, LC_*, TERM and TZ pass from your environment (HOME is /tmp, and\n"
        "GOTRACEBACK=crash for full Go stack dumps on timeout), so API keys stay out. CMD's stdout\n"
        "and stderr are pipes, never a terminal.\n"
        "\n"
        "mounts (any of these replaces the default view; the first must put something at /):\n"
        "  --ro-bind SRC DST      bind host SRC read-only at DST (e.g. --ro-bind / /)\n"
        "  --bind SRC DST         bind host SRC read-write at DST\n"
        "  --tmpfs DST            fresh tmpfs at DST (--size and --perms before it apply to it)\n"
        "  --proc DST             fresh /proc of the sandbox\n"
        "  --dev DST              minimal /dev: null, zero, full, random, urandom, tty, pts/, ptmx,\n"
        "                         shm/, fd, stdin, stdout, stderr\n"
        "  --overlay SRC DST      host SRC at DST as an overlay; writes vanish after the run\n"
        "  --ro-bind-try, --bind-try SRC DST   the same as --ro-bind/--bind, skipped when SRC\n"
        "                         does not exist\n"
        "  --symlink TARGET DST   a symlink at DST pointing to TARGET\n"
        "  --mount-opt OPT        add OPT to the previous mount (ro, noexec, nr_inodes=N, ...)\n"
        "  --size SIZE            size of the next --tmpfs\n"
        "  --perms OCTAL          mode of the next --tmpfs\n"
        "  --overlay-cwd          default view, but the current directory is an overlay whose\n"
        "                         writes vanish after the run\n"
        "\n"
        "environment and isolation:\n"
        "  --chdir DIR            working directory (default: the current one; a relative DIR is\n"
        "                         taken from it); with the default view it is the host directory\n"
        "                         shared read-write\n"
        "  --setenv VAR VALUE     set VAR; --unsetenv VAR removes it\n"
        "  --stdin                pass heal's stdin to CMD (default: /dev/null)\n"
        "  --share-net            use the host's network (default: loopback only)\n"
        "  --allow-userns         let CMD create nested user namespaces (default: refused)\n"
        "  --allow-ptrace         let CMD use ptrace (gdb, strace, LeakSanitizer)\n"
        "  --no-seccomp           no default seccomp filter\n"
        "  --unshare-all, --unshare-user, --unshare-pid, --unshare-ipc, --unshare-uts,\n"
        "  --unshare-cgroup, --unshare-net, --die-with-parent, --new-session\n"
        "                         accepted for bwrap compatibility: heal always does these\n"
        "  --isolation=none       NO namespaces: limits, a new session, the environment allow-list\n"
        "                         and a private TMPDIR only; contains far less (docs/sandbox.md)\n"
        "\n"
        "limits (SIZE: 512K, 64M, 1G; TIME: 500ms, 5s, 2m; a bare number of TIME is seconds;\n"
        "0 is no limit, except --grace 0: no grace; --size 0 and --tmp-size 0: tmpfs's own\n"
        "default, half of RAM):\n"
        "  --timeout TIME         wall time; on expiry SIGQUIT (stack dumps), --grace, then SIGKILL\n"
        "  --grace TIME           time between SIGQUIT and SIGKILL (default 1s; 0 kills at once)\n"
        "  --cpu-time TIME        CPU time per process\n"
        "  --memory SIZE          memory (cgroup where writable, else RLIMIT_DATA per process)\n"
        "  --pids N               processes and threads (default 2048)\n"
        "  --file-size SIZE       largest file CMD may write\n"
        "  --nofile N             open files per process (default 4096)\n"
        "  --output-limit SIZE    stdout + stderr before CMD is stopped (default: none when\n"
        "                         streaming, 16M with --json)\n"
        "  --tmp-size SIZE        size of /tmp, /dev/shm and overlay layers (default 512M)\n"
        "\n"
        "output:\n"
        "  --json                 print the result as JSON on stdout (docs/json.md) instead of\n"
        "                         streaming CMD's output\n"
        "\n"
        "exit status: CMD's own; 128+N if a signal N killed it; 124 timeout, 123 memory limit,\n"
        "122 cpu limit, 121 output limit, 125 heal could not run it, 126/127 CMD not executable or\n"
        "not found, 130 interrupted, 141 heal's output closed (a pipe's reader left)\n"
        "(docs/exit-codes.md).\n"
        "\n"
        "examples:\n"
        "  heal run -- go test ./...\n"
        "  heal run --timeout 5s --memory 256M -- ./untrusted\n"
        "  heal run --ro-bind / / --tmpfs /tmp --proc /proc --dev /dev --chdir / -- sh -c 'id; ls /tmp'\n";

static heal_sandbox *running;
static volatile sig_atomic_t got_signal;

static void on_signal(int sig)
{
        got_signal = sig;
        heal_sandbox_cancel(running);
}

static volatile sig_atomic_t broken_pipe;

/* A reader that went away (heal run -- yes | head) ends the run, as SIGPIPE would end the
 * command in a pipeline; other write errors only lose the output. */
static void write_all(int fd, const char *data, size_t len)
{
        while (len > 0) {
                ssize_t n = write(fd, data, len);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0 && errno == EPIPE && !broken_pipe) {
                        broken_pipe = 1;
                        heal_sandbox_cancel(running);
                }
                if (n <= 0)
                        return;
                data += n;
                len -= (size_t)n;
        }
}

static void stream_output(int stream, const char *data, size_t len, void *userdata)
{
        (void)userdata;
        write_all(stream == 1 ? STDOUT_FILENO : STDERR_FILENO, data, len);
}

static void report_human(const heal_sandbox_result *res, const heal_sandbox_limits *lim)
{
        const char *st = heal_sandbox_status_to_string(res->status);

        /* A command that failed by itself may have failed because a fork was refused. */
        if (res->status == HEAL_STATUS_EXIT_NONZERO && (res->limits_hit & HEAL_LIMIT_PIDS))
                log_error("note: the process limit (--pids %llu) was reached; forks failed "
                          "inside the sandbox",
                          (unsigned long long)lim->pids_max);
        if (res->status == HEAL_STATUS_OK || res->status == HEAL_STATUS_EXIT_NONZERO)
                return;
        if (res->status == HEAL_STATUS_SETUP_ERROR)
                log_error("%s", res->message);
        else if (res->status == HEAL_STATUS_CANCELED && broken_pipe)
                return; /* the reader left: nothing to say, as with SIGPIPE */
        else if (res->status == HEAL_STATUS_CANCELED)
                log_error("interrupted by %s: the run was stopped and cleaned up",
                          got_signal ? sigabbrev_np(got_signal) : "a signal");
        else
                log_error("%s: %s", st, res->message);
        for (size_t i = 0; i < res->n_procs; i++) {
                const heal_sandbox_proc *p = &res->procs[i];

                fprintf(stderr, "heal:   pid %d (%s) state %c, %llu ms cpu, in %s, syscall %s\n",
                        p->pid, p->comm, p->state, (unsigned long long)p->cpu_ms,
                        strcmp(p->wchan, "0") == 0 || !*p->wchan ? "-" : p->wchan, p->syscall);
        }
        if (res->status == HEAL_STATUS_TIMEOUT && res->limits_hit & HEAL_LIMIT_PIDS)
                log_error("the process limit was reached too");
}

static int exit_code(const heal_sandbox_result *res)
{
        switch (res->status) {
        case HEAL_STATUS_OK:
        case HEAL_STATUS_EXIT_NONZERO:
        case HEAL_STATUS_SIGNALED:
                return res->exit_code;
        case HEAL_STATUS_TIMEOUT:
                return EXIT_TIMEOUT;
        case HEAL_STATUS_MEMORY_LIMIT:
                return EXIT_MEMORY_LIMIT;
        case HEAL_STATUS_OUTPUT_LIMIT:
                return EXIT_OUTPUT_LIMIT;
        case HEAL_STATUS_CPU_LIMIT:
                return EXIT_CPU_LIMIT;
        case HEAL_STATUS_CANCELED:
                return broken_pipe ? 128 + SIGPIPE : EXIT_CANCELED;
        case HEAL_STATUS_SETUP_ERROR:
        default:
                return res->exit_code ? res->exit_code : EXIT_SETUP;
        }
}

/* With --json, failures before any result still print a document (status setup_error). */
static void fail_json(const struct run_opts *o, const char *msg)
{
        if (o->json)
                json_print(json_pack("{s:s,s:i,s:i,s:[],s:o}", "status", "setup_error", "exit_code",
                                     EXIT_SETUP, "signal", 0, "limits_hit", "message",
                                     json_string_bytes(msg, strlen(msg))));
}

int cmd_run(int argc, char **argv)
{
        struct run_opts *o = calloc(1, sizeof(*o));
        heal_sandbox_result res = { 0 };
        heal_error err = HEAL_ERROR_INIT;
        struct sigaction sa = { .sa_handler = on_signal };
        heal_sandbox *sb = NULL;
        int r, code = EXIT_SETUP;

        if (!o || !(o->env_ops = calloc((size_t)argc * 2, sizeof(char *)))) {
                log_error("out of memory");
                return EXIT_SETUP;
        }
        o->limits = (heal_sandbox_limits)HEAL_SANDBOX_LIMITS_INIT;
        o->limits.out_max_bytes = UINT64_MAX; /* "not given" until parsed */
        o->command = "heal run";
        o->go_crash_traceback = true;
        o->usage = run_usage;
        if (run_opts_parse(o, argc, argv) < 0)
                goto out;
        /* Streamed output costs heal no memory: no cap unless asked; --json keeps 16 MiB. */
        if (o->limits.out_max_bytes == UINT64_MAX)
                o->limits.out_max_bytes = o->json ? HEAL_DEFAULT_OUT_MAX_BYTES : 0;
        r = run_opts_check(o, &err);
        if (r >= 0)
                r = heal_sandbox_new(&sb, &err);
        if (r >= 0)
                r = run_opts_build(sb, o, o->json ? NULL : stream_output, &err);
        /* One run: the pool would make a set of namespaces nobody uses. */
        if (r >= 0)
                r = heal_sandbox_set_flags(sb, o->flags | HEAL_SANDBOX_NO_POOL, &err);
        if (r < 0) {
                log_error("%s", err.msg);
                fail_json(o, err.msg);
                goto out;
        }
        run_opts_notice_shared(o);
        running = sb;
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGTERM, &sa, NULL);
        sigaction(SIGHUP, &sa, NULL);
        signal(SIGPIPE, SIG_IGN);
        r = heal_sandbox_run(sb, (const char *const *)o->argv, &res, &err);
        if (r < 0) {
                log_error("%s", err.msg);
                fail_json(o, err.msg);
                goto out;
        }
        if (o->json && json_print(sandbox_result_json(&res)) < 0) {
                code = EXIT_SETUP; /* the result is lost: not the command's status */
                goto out;
        }
        if (!o->json)
                report_human(&res, &o->limits);
        code = exit_code(&res);
out:
        heal_sandbox_result_release(&res);
        heal_sandbox_free(sb);
        free(o->env_ops);
        free(o);
        return code;
}
