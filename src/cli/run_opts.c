/* SPDX-License-Identifier: MIT */
/* The sandbox options heal run takes (bwrap's names where they overlap), shared with every
 * command that runs a command the same way (heal analyze). */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "core/parse.h"

extern char **environ;

static const char *usage_command = "heal run";

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int usage_error(const char *fmt, ...)
{
        va_list ap;

        fprintf(stderr, "%s: ", usage_command);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fprintf(stderr, "\nsee '%s --help'\n", usage_command);
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
                /* A value cut short would be another size: "00...01M" read as "0" is no limit. */
                if (o->next_size) {
                        if ((size_t)snprintf(o->size_opt[i], sizeof(o->size_opt[i]), "size=%s",
                                             o->next_size) >= sizeof(o->size_opt[i]))
                                return usage_error("--size '%.40s...': too long", o->next_size);
                        m->opts[m->n_opts++] = o->size_opt[i];
                }
                if (o->next_perms) {
                        if ((size_t)snprintf(o->perms_opt[i], sizeof(o->perms_opt[i]), "mode=%s",
                                             o->next_perms) >= sizeof(o->perms_opt[i]))
                                return usage_error("--perms '%.40s...': too long", o->next_perms);
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

/* The options of one argument (for the message when the argument is missing). */
static bool takes_value(const char *name)
{
        static const char *const names[] = {
                "--tmpfs",  "--proc",         "--dev",       "--size",      "--perms",
                "--chdir",  "--unsetenv",     "--mount-opt", "--isolation", "--timeout",
                "--grace",  "--cpu-time",     "--memory",    "--pids",      "--file-size",
                "--nofile", "--output-limit", "--tmp-size",
        };

        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
                if (strcmp(name, names[i]) == 0)
                        return true;
        return false;
}

int run_opts_parse(struct run_opts *o, int argc, char **argv)
{
        static const char *const two[] = { "--ro-bind",     "--bind",     "--overlay", "--setenv",
                                           "--ro-bind-try", "--bind-try", "--symlink" };
        int i;

        usage_command = o->command;
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
                        fputs(o->usage, stdout);
                        exit(0);
                }
                if (o->extra && (r = o->extra(o, argc, argv, &i)) != 0) {
                        if (r < 0)
                                return r;
                        continue;
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
                        return usage_error(takes_value(name) ? "%s needs an argument"
                                                             : "unknown option '%s'",
                                           name);
                r = opt_one(o, name, eq ? eq + 1 : argv[++i]);
                if (r > 0)
                        return usage_error("unknown option '%s'", name);
next:
                if (r < 0)
                        return r;
        }
        /* bwrap's rule: --size and --perms are for the --tmpfs that follows them. */
        if (o->next_size || o->next_perms)
                return usage_error("%s %s: no --tmpfs follows it (it applies to the next --tmpfs)",
                                   o->next_size ? "--size" : "--perms",
                                   o->next_size ? o->next_size : o->next_perms);
        if (i >= argc && o->command_optional)
                return 0;
        if (i >= argc)
                return usage_error("no command given: %s [options] -- CMD [ARG...]", o->command);
        o->argv = argv + i;
        return 0;
}

int run_opts_build(heal_sandbox *sb, struct run_opts *o, heal_sandbox_output_fn stream,
                   heal_error *err)
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
        if (o->go_crash_traceback && (r = heal_sandbox_setenv(sb, "GOTRACEBACK", "crash", err)) < 0)
                return r;
        for (size_t i = 0; i < o->n_env_ops; i += 2)
                if ((r = heal_sandbox_setenv(sb, o->env_ops[i], o->env_ops[i + 1], err)) < 0)
                        return r;
        if (o->chdir && (r = heal_sandbox_set_cwd(sb, o->chdir, err)) < 0)
                return r;
        if (o->stdin_pass)
                heal_sandbox_set_stdin_fd(sb, STDIN_FILENO);
        if (stream)
                heal_sandbox_set_output_fn(sb, stream, NULL, false);
        return 0;
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
void run_opts_notice_shared(const struct run_opts *o)
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

int run_opts_check(struct run_opts *o, heal_error *err)
{
        int r;

        if (o->chdir && o->chdir[0] != '/') {
                /* a relative --chdir is taken from heal's own working directory */
                if (!realpath(o->chdir, o->chdir_abs))
                        return heal_error_set(err, -errno, "--chdir '%s': %s", o->chdir,
                                              strerror(errno));
                o->chdir = o->chdir_abs;
        }
        if ((r = check_flags(o, err)) < 0)
                return r;
        return check_cwd(o, err);
}
