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
        "limits (SIZE: 512K, 64M, 1G; TIME: 500ms, 5s, 2m; a bare number of TIME is seconds):\n"
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
        "not found, 130 interrupted (docs/exit-codes.md).\n"
        "\n"
        "examples:\n"
        "  heal run -- go test ./...\n"
        "  heal run --timeout 5s --memory 256M -- ./untrusted\n"
        "  heal run --ro-bind / / --tmpfs /tmp --proc /proc --dev /dev -- sh -c 'id; ls /tmp'\n";

#define MAX_MOUNTS 64
#define MAX_OPTS   16

struct cli_mount {
        const char *type, *src, *dst;
        const char *opts[MAX_OPTS + 1];
        size_t n_opts;
};

struct run_opts {
        struct cli_mount mounts[MAX_MOUNTS];
        size_t n_mounts;
        const char *next_size, *next_perms;
        char size_opt[MAX_MOUNTS][64], perms_opt[MAX_MOUNTS][64];
        heal_sandbox_limits limits;
        unsigned flags;
        const char *chdir;
        char chdir_abs[PATH_MAX];
        const char **env_ops; /* pairs: name, value (NULL value = unset) */
        size_t n_env_ops;
        bool stdin_pass, json, home_set;
        char **argv;
};

static heal_sandbox *running;
static volatile sig_atomic_t got_signal;

static void on_signal(int sig)
{
        got_signal = sig;
        heal_sandbox_cancel(running);
}

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int usage_error(const char *fmt, ...)
{
        va_list ap;

        fprintf(stderr, "heal run: ");
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fprintf(stderr, "\nsee 'heal run --help'\n");
        return -EINVAL;
}

static int add_mount(struct run_opts *o, const char *type, const char *src, const char *dst)
{
        struct cli_mount *m;
        size_t i = o->n_mounts;

        if (i == MAX_MOUNTS)
                return usage_error("too many mounts (at most %s)", "64");
        m = &o->mounts[i];
        *m = (struct cli_mount){ .type = type, .src = src, .dst = dst };
        if (strcmp(type, "tmpfs") == 0) {
                if (o->next_size) {
                        snprintf(o->size_opt[i], sizeof(o->size_opt[i]), "size=%s", o->next_size);
                        m->opts[m->n_opts++] = o->size_opt[i];
                }
                if (o->next_perms) {
                        snprintf(o->perms_opt[i], sizeof(o->perms_opt[i]), "mode=%s",
                                 o->next_perms);
                        m->opts[m->n_opts++] = o->perms_opt[i];
                }
                o->next_size = o->next_perms = NULL;
        }
        o->n_mounts++;
        return 0;
}

static int set_limit(uint64_t *field, const char *v, int (*parse)(const char *, uint64_t *),
                     const char *opt)
{
        const char *form = parse == parse_duration_ms ? "a time like 500ms, 5s, 2m"
                           : parse == parse_size      ? "a size like 512K, 64M, 1G"
                                                      : "a whole number";

        if (parse(v, field) < 0)
                return usage_error("%s '%s': expected %s", opt, v, form);
        return 0;
}

/* Options that take no argument. */
static int opt_flag(struct run_opts *o, const char *name)
{
        static const struct {
                const char *name;
                unsigned flag;
        } flags[] = {
                { "--share-net", HEAL_SANDBOX_SHARE_NET },
                { "--overlay-cwd", HEAL_SANDBOX_CWD_OVERLAY },
                { "--allow-userns", HEAL_SANDBOX_ALLOW_USERNS },
                { "--allow-ptrace", HEAL_SANDBOX_ALLOW_PTRACE },
                { "--no-seccomp", HEAL_SANDBOX_NO_SECCOMP },
        };

        for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
                if (strcmp(name, flags[i].name) == 0) {
                        o->flags |= flags[i].flag;
                        return 1;
                }
        static const char *const always[] = {
                "--unshare-all", "--unshare-user",    "--unshare-pid",
                "--unshare-ipc", "--unshare-uts",     "--unshare-cgroup",
                "--unshare-net", "--die-with-parent", "--new-session",
        };

        for (size_t i = 0; i < sizeof(always) / sizeof(always[0]); i++)
                if (strcmp(name, always[i]) == 0)
                        return 1;
        if (strcmp(name, "--stdin") == 0)
                o->stdin_pass = true;
        else if (strcmp(name, "--json") == 0)
                o->json = true;
        else
                return 0;
        return 1;
}

static int opt_limit(struct run_opts *o, const char *name, const char *v)
{
        heal_sandbox_limits *l = &o->limits;

        if (strcmp(name, "--timeout") == 0)
                return set_limit(&l->wall_ms, v, parse_duration_ms, name);
        if (strcmp(name, "--grace") == 0)
                return set_limit(&l->grace_ms, v, parse_duration_ms, name);
        if (strcmp(name, "--cpu-time") == 0)
                return set_limit(&l->cpu_ms, v, parse_duration_ms, name);
        if (strcmp(name, "--memory") == 0)
                return set_limit(&l->mem_max_bytes, v, parse_size, name);
        if (strcmp(name, "--pids") == 0)
                return set_limit(&l->pids_max, v, parse_uint, name);
        if (strcmp(name, "--file-size") == 0)
                return set_limit(&l->fsize_max_bytes, v, parse_size, name);
        if (strcmp(name, "--nofile") == 0)
                return set_limit(&l->nofile_max, v, parse_uint, name);
        if (strcmp(name, "--output-limit") == 0)
                return set_limit(&l->out_max_bytes, v, parse_size, name);
        if (strcmp(name, "--tmp-size") == 0)
                return set_limit(&l->tmpfs_max_bytes, v, parse_size, name);
        return 1; /* not a limit */
}

static int opt_one(struct run_opts *o, const char *name, const char *v)
{
        int r = opt_limit(o, name, v);

        if (r <= 0)
                return r;
        if (strcmp(name, "--tmpfs") == 0)
                return add_mount(o, "tmpfs", NULL, v);
        if (strcmp(name, "--proc") == 0)
                return add_mount(o, "proc", NULL, v);
        if (strcmp(name, "--dev") == 0)
                return add_mount(o, "dev", NULL, v);
        if (strcmp(name, "--size") == 0)
                o->next_size = v;
        else if (strcmp(name, "--perms") == 0)
                o->next_perms = v;
        else if (strcmp(name, "--chdir") == 0)
                o->chdir = v;
        else if (strcmp(name, "--unsetenv") == 0) {
                o->env_ops[o->n_env_ops++] = v;
                o->env_ops[o->n_env_ops++] = NULL;
        } else if (strcmp(name, "--mount-opt") == 0) {
                struct cli_mount *m = o->n_mounts ? &o->mounts[o->n_mounts - 1] : NULL;

                if (!m)
                        return usage_error("%s must follow a mount option", name);
                if (m->n_opts == MAX_OPTS)
                        return usage_error("too many options for one mount (at most %s)", "16");
                m->opts[m->n_opts++] = v;
        } else if (strcmp(name, "--isolation") == 0) {
                if (strcmp(v, "none") == 0)
                        o->flags |= HEAL_SANDBOX_ISOLATION_NONE;
                else if (strcmp(v, "full") != 0)
                        return usage_error("--isolation is 'full' or 'none', not '%s'", v);
        } else {
                return 1;
        }
        return 0;
}

static int opt_two(struct run_opts *o, const char *name, const char *a, const char *b)
{
        if (strcmp(name, "--ro-bind") == 0) {
                int r = add_mount(o, "bind", a, b);

                if (r == 0)
                        o->mounts[o->n_mounts - 1].opts[o->mounts[o->n_mounts - 1].n_opts++] = "ro";
                return r;
        }
        if (strcmp(name, "--bind") == 0)
                return add_mount(o, "bind", a, b);
        if (strcmp(name, "--ro-bind-try") == 0 || strcmp(name, "--bind-try") == 0) {
                int r;

                if (access(a, F_OK) < 0)
                        return 0;
                r = add_mount(o, "bind", a, b);
                if (r == 0 && name[2] == 'r')
                        o->mounts[o->n_mounts - 1].opts[o->mounts[o->n_mounts - 1].n_opts++] = "ro";
                return r;
        }
        if (strcmp(name, "--symlink") == 0)
                return add_mount(o, "symlink", a, b);
        if (strcmp(name, "--overlay") == 0)
                return add_mount(o, "overlay", a, b);
        if (strcmp(name, "--setenv") == 0) {
                if (strcmp(a, "HOME") == 0)
                        o->home_set = true;
                o->env_ops[o->n_env_ops++] = a;
                o->env_ops[o->n_env_ops++] = b;
                return 0;
        }
        return 1;
}

static int parse_args(struct run_opts *o, int argc, char **argv)
{
        static const char *const two[] = { "--ro-bind",     "--bind",     "--overlay", "--setenv",
                                           "--ro-bind-try", "--bind-try", "--symlink" };
        int i;

        for (i = 1; i < argc; i++) {
                char *a = argv[i], *eq, name[64];
                int r;

                if (strcmp(a, "--") == 0) {
                        i++;
                        break;
                }
                if (a[0] != '-')
                        break;
                if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
                        fputs(run_usage, stdout);
                        exit(0);
                }
                if ((r = opt_flag(o, a)) != 0)
                        continue;
                eq = strchr(a, '=');
                snprintf(name, sizeof(name), "%.*s", eq ? (int)(eq - a) : (int)strlen(a), a);
                for (size_t k = 0; k < sizeof(two) / sizeof(two[0]); k++)
                        if (strcmp(name, two[k]) == 0) {
                                if (eq || i + 2 >= argc)
                                        return usage_error("%s takes two arguments", name);
                                r = opt_two(o, name, argv[i + 1], argv[i + 2]);
                                i += 2;
                                goto next;
                        }
                if (!eq && i + 1 >= argc)
                        return usage_error("%s needs an argument", name);
                r = opt_one(o, name, eq ? eq + 1 : argv[++i]);
                if (r > 0)
                        return usage_error("unknown option '%s'", name);
next:
                if (r < 0)
                        return r;
        }
        if (i >= argc)
                return usage_error("%s", "no command given: heal run [options] -- CMD [ARG...]");
        o->argv = argv + i;
        return 0;
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

static int build_sandbox(heal_sandbox *sb, struct run_opts *o, heal_error *err)
{
        int r;

        for (size_t i = 0; i < o->n_mounts; i++) {
                struct cli_mount *m = &o->mounts[i];

                m->opts[m->n_opts] = NULL;
                r = heal_sandbox_add_mount(sb, m->type, m->src, m->dst, m->opts, err);
                if (r < 0)
                        return r;
        }
        if ((r = heal_sandbox_set_limits(sb, &o->limits, err)) < 0 ||
            (r = heal_sandbox_set_flags(sb, o->flags, err)) < 0 ||
            (r = heal_sandbox_inherit_env(sb, (const char *const *)environ, err)) < 0)
                return r;
        if (!o->home_set && (r = heal_sandbox_setenv(sb, "HOME", "/tmp", err)) < 0)
                return r;
        /* On a timeout Go then dumps every thread's goroutine, not only the one SIGQUIT hit. */
        if ((r = heal_sandbox_setenv(sb, "GOTRACEBACK", "crash", err)) < 0)
                return r;
        for (size_t i = 0; i < o->n_env_ops; i += 2)
                if ((r = heal_sandbox_setenv(sb, o->env_ops[i], o->env_ops[i + 1], err)) < 0)
                        return r;
        if (o->chdir && (r = heal_sandbox_set_cwd(sb, o->chdir, err)) < 0)
                return r;
        if (o->stdin_pass)
                heal_sandbox_set_stdin_fd(sb, STDIN_FILENO);
        if (!o->json)
                heal_sandbox_set_output_fn(sb, stream_output, NULL, false);
        return 0;
}

static void report_human(const heal_sandbox_result *res)
{
        const char *st = heal_sandbox_status_to_string(res->status);

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

/* --overlay-cwd is a default-view option: with a plan of one's own it would be ignored. */
static int check_flags(const struct run_opts *o, heal_error *err)
{
        if (o->n_mounts && (o->flags & HEAL_SANDBOX_CWD_OVERLAY))
                return heal_error_set(err, -EINVAL,
                                      "--overlay-cwd changes the default view, and mount options "
                                      "replace it; use --overlay SRC DST in your plan instead");
        return 0;
}

/* Say so when the default view would share the whole /tmp or the user's home directory. */
static void notice_shared(const struct run_opts *o)
{
        char cwd[PATH_MAX];
        const char *dir = o->chdir, *home = getenv("HOME");

        if (o->n_mounts || (o->flags & (HEAL_SANDBOX_CWD_OVERLAY | HEAL_SANDBOX_ISOLATION_NONE)))
                return;
        if (!dir && !(dir = getcwd(cwd, sizeof(cwd))))
                return;
        if (strcmp(dir, "/tmp") == 0 || (home && *home && strcmp(dir, home) == 0))
                log_error("note: sharing '%s' read-write with the command (--chdir a project "
                          "directory, or --overlay-cwd, to share less)",
                          dir);
}

/* The working directory must exist on the host before the default view can share it. */
static int check_cwd(const struct run_opts *o, heal_error *err)
{
        struct stat st;

        if (!o->chdir || o->n_mounts || (o->flags & HEAL_SANDBOX_ISOLATION_NONE))
                return 0;
        if (stat(o->chdir, &st) < 0)
                return heal_error_set(err, -errno, "--chdir '%s': %s", o->chdir, strerror(errno));
        if (!S_ISDIR(st.st_mode))
                return heal_error_set(err, -ENOTDIR, "--chdir '%s': not a directory", o->chdir);
        return 0;
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
        if (parse_args(o, argc, argv) < 0)
                goto out;
        /* Streamed output costs heal no memory: no cap unless asked; --json keeps 16 MiB. */
        if (o->limits.out_max_bytes == UINT64_MAX)
                o->limits.out_max_bytes = o->json ? HEAL_DEFAULT_OUT_MAX_BYTES : 0;
        if (o->chdir && o->chdir[0] != '/') {
                /* a relative --chdir is taken from heal's own working directory */
                if (!realpath(o->chdir, o->chdir_abs)) {
                        log_error("--chdir '%s': %s", o->chdir, strerror(errno));
                        fail_json(o, "--chdir: no such directory");
                        goto out;
                }
                o->chdir = o->chdir_abs;
        }
        r = check_flags(o, &err);
        if (r >= 0)
                r = check_cwd(o, &err);
        if (r >= 0)
                r = heal_sandbox_new(&sb, &err);
        if (r >= 0)
                r = build_sandbox(sb, o, &err);
        if (r < 0) {
                log_error("%s", err.msg);
                fail_json(o, err.msg);
                goto out;
        }
        notice_shared(o);
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
        if (o->json)
                json_print(result_to_json(&res));
        else
                report_human(&res);
        code = exit_code(&res);
out:
        heal_sandbox_result_release(&res);
        heal_sandbox_free(sb);
        free(o->env_ops);
        free(o);
        return code;
}
