/* SPDX-License-Identifier: MIT */
/* The heal_sandbox object: its mount plan, limits, flags, environment and output settings. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/util.h"
#include "sandbox-internal.h"

int heal_sandbox_new(heal_sandbox **ret, heal_error *err)
{
        heal_sandbox *sb;

        if (!ret)
                return heal_error_set(err, -EINVAL, "invalid argument");
        sb = calloc(1, sizeof(*sb));
        if (!sb)
                return heal_error_set(err, -ENOMEM, "out of memory");
        sb->limits = (heal_sandbox_limits)HEAL_SANDBOX_LIMITS_INIT;
        sb->stdin_fd = -1;
        sb->cg.peak_fd = sb->cg.tasks_fd[0] = sb->cg.tasks_fd[1] = -1;
        sb->capture = true;
        sb->env = calloc(1, sizeof(char *));
        sb->cancel_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        sb->clock = mmap(NULL, sizeof(*sb->clock), PROT_READ | PROT_WRITE,
                         MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (!sb->env || sb->cancel_fd < 0 || sb->clock == MAP_FAILED) {
                int r = !sb->env ? -ENOMEM : -errno;

                if (sb->clock == MAP_FAILED)
                        sb->clock = NULL;
                heal_sandbox_free(sb);
                return heal_error_set(err, r, "cannot create sandbox: %s", strerror(-r));
        }
        *ret = sb;
        return 0;
}

heal_sandbox *heal_sandbox_free(heal_sandbox *sb)
{
        if (!sb)
                return NULL;
        reap_pending(sb, true); /* before the cgroup goes: its inits must be gone */
        plan_entries_free(sb->entries, sb->n_entries);
        for (size_t i = 0; sb->env && sb->env[i]; i++)
                free(sb->env[i]);
        free(sb->env);
        for (size_t i = 0; i < sb->n_env_explicit; i++)
                free(sb->env_explicit[i]);
        free(sb->env_explicit);
        free(sb->cwd);
        free(sb->rules);
        seccomp_free(sb->filter);
        cgroup_release(&sb->cg);
        safe_close(sb->cancel_fd);
        if (sb->clock)
                munmap(sb->clock, sizeof(*sb->clock));
        free(sb);
        return NULL;
}

int heal_sandbox_add_mount(heal_sandbox *sb, const char *type, const char *source,
                           const char *target, const char *const *options, heal_error *err)
{
        heal_mount_type t;

        if (!sb || !type)
                return heal_error_set(err, -EINVAL, "invalid argument");
        t = heal_mount_type_from_string(type);
        if (t < 0)
                return heal_error_set(err, -EINVAL,
                                      "mount entry %zu (at '%s'): unknown type '%s' (known: bind, "
                                      "tmpfs, proc, overlay, dev, symlink)",
                                      sb->n_entries, target ? target : "", type);
        return plan_entry_add(&sb->entries, &sb->n_entries, (int)t, source, target, options,
                              sb->flags & HEAL_SANDBOX_EXTEND_DEFAULT, err);
}

int heal_sandbox_set_limits(heal_sandbox *sb, const heal_sandbox_limits *limits, heal_error *err)
{
        if (!sb || !limits)
                return heal_error_set(err, -EINVAL, "invalid argument");
        sb->limits = *limits;
        return 0;
}

const heal_sandbox_limits *heal_sandbox_get_limits(const heal_sandbox *sb)
{
        return sb ? &sb->limits : NULL;
}

int heal_sandbox_set_flags(heal_sandbox *sb, unsigned flags, heal_error *err)
{
        const unsigned known = HEAL_SANDBOX_SHARE_NET | HEAL_SANDBOX_CWD_OVERLAY |
                               HEAL_SANDBOX_ALLOW_USERNS | HEAL_SANDBOX_NO_SECCOMP |
                               HEAL_SANDBOX_ALLOW_PTRACE | HEAL_SANDBOX_ISOLATION_NONE |
                               HEAL_SANDBOX_EXTEND_DEFAULT | HEAL_SANDBOX_NO_POOL;

        if (!sb || (flags & ~known))
                return heal_error_set(err, -EINVAL, "unknown sandbox flags 0x%x", flags & ~known);
        sb->flags = flags;
        return 0;
}

static bool env_allowed(const char *entry)
{
        /* The locale categories of locale(7), not any LC_ prefix (LC_SECRET would pass). */
        static const char *const names[] = {
                "PATH=",         "LANG=",           "TERM=",
                "TZ=",           "LANGUAGE=",       "LC_ALL=",
                "LC_CTYPE=",     "LC_NUMERIC=",     "LC_TIME=",
                "LC_COLLATE=",   "LC_MONETARY=",    "LC_MESSAGES=",
                "LC_PAPER=",     "LC_NAME=",        "LC_ADDRESS=",
                "LC_TELEPHONE=", "LC_MEASUREMENT=", "LC_IDENTIFICATION=",
        };

        for (size_t i = 0; i < ELEMENTSOF(names); i++)
                if (strncmp(entry, names[i], strlen(names[i])) == 0)
                        return true;
        return false;
}

static ssize_t env_find(char **env, const char *name, size_t len)
{
        for (size_t i = 0; env[i]; i++)
                if (strncmp(env[i], name, len) == 0 && env[i][len] == '=')
                        return (ssize_t)i;
        return -1;
}

static bool env_is_explicit(const heal_sandbox *sb, const char *name, size_t len)
{
        for (size_t i = 0; i < sb->n_env_explicit; i++)
                if (strlen(sb->env_explicit[i]) == len &&
                    strncmp(sb->env_explicit[i], name, len) == 0)
                        return true;
        return false;
}

/* Put "name=value" (@entry, taken over) in place of any existing name. */
static int env_put(heal_sandbox *sb, char *entry, size_t name_len)
{
        ssize_t i = env_find(sb->env, entry, name_len);
        char **grown;

        if (i >= 0) {
                free(sb->env[i]);
                sb->env[i] = entry;
                return 0;
        }
        grown = realloc(sb->env, (sb->n_env + 2) * sizeof(char *));
        if (!grown) {
                free(entry);
                return -ENOMEM;
        }
        sb->env = grown;
        sb->env[sb->n_env++] = entry;
        sb->env[sb->n_env] = NULL;
        return 0;
}

int heal_sandbox_inherit_env(heal_sandbox *sb, const char *const *envp, heal_error *err)
{
        if (!sb)
                return heal_error_set(err, -EINVAL, "invalid argument");
        for (size_t i = 0; envp && envp[i]; i++) {
                size_t len = strcspn(envp[i], "=");
                char *copy;

                if (!env_allowed(envp[i]) || env_is_explicit(sb, envp[i], len))
                        continue;
                copy = strdup(envp[i]);
                if (!copy || env_put(sb, copy, len) < 0)
                        return heal_error_set(err, -ENOMEM, "out of memory");
        }
        return 0;
}

int heal_sandbox_setenv(heal_sandbox *sb, const char *name, const char *value, heal_error *err)
{
        size_t len;
        char *entry = NULL, *n;
        char **grown;

        if (!sb || !name || !*name || strchr(name, '='))
                return heal_error_set(err, -EINVAL, "invalid environment variable name '%s'",
                                      name ? name : "(null)");
        len = strlen(name);
        if (!env_is_explicit(sb, name, len)) {
                n = strdup(name);
                grown = realloc(sb->env_explicit, (sb->n_env_explicit + 1) * sizeof(char *));
                if (!n || !grown) {
                        free(n);
                        if (grown)
                                sb->env_explicit = grown;
                        return heal_error_set(err, -ENOMEM, "out of memory");
                }
                sb->env_explicit = grown;
                sb->env_explicit[sb->n_env_explicit++] = n;
        }
        if (!value) {
                ssize_t i = env_find(sb->env, name, len);

                if (i >= 0) {
                        free(sb->env[i]);
                        memmove(&sb->env[i], &sb->env[i + 1],
                                (sb->n_env - (size_t)i) * sizeof(char *));
                        sb->n_env--;
                }
                return 0;
        }
        if (asprintf(&entry, "%s=%s", name, value) < 0 || env_put(sb, entry, len) < 0)
                return heal_error_set(err, -ENOMEM, "out of memory");
        return 0;
}

int heal_sandbox_set_cwd(heal_sandbox *sb, const char *path, heal_error *err)
{
        char *copy;

        if (!sb || !path || path[0] != '/')
                return heal_error_set(err, -EINVAL, "working directory '%s' is not absolute",
                                      path ? path : "(null)");
        copy = strdup(path);
        if (!copy)
                return heal_error_set(err, -ENOMEM, "out of memory");
        free(sb->cwd);
        sb->cwd = copy;
        sb->cwd_dev = 0;
        sb->cwd_ino = 0;
        return 0;
}

int heal_sandbox_set_cwd_fd(heal_sandbox *sb, int dirfd, heal_error *err)
{
        char link[64], path[PATH_MAX];
        struct stat st;
        ssize_t n;
        int r;

        if (!sb)
                return heal_error_set(err, -EINVAL, "invalid argument");
        if (fstat(dirfd, &st) < 0)
                return heal_error_set(err, -errno, "working directory descriptor: %s",
                                      strerror(errno));
        if (!S_ISDIR(st.st_mode))
                return heal_error_set(err, -ENOTDIR, "working directory descriptor: %s",
                                      strerror(ENOTDIR));
        snprintf(link, sizeof(link), "/proc/self/fd/%d", dirfd);
        n = readlink(link, path, sizeof(path) - 1);
        if (n < 0 || (size_t)n >= sizeof(path) - 1)
                return heal_error_set(err, n < 0 ? -errno : -ENAMETOOLONG,
                                      "working directory descriptor: %s",
                                      strerror(n < 0 ? errno : ENAMETOOLONG));
        path[n] = '\0';
        r = heal_sandbox_set_cwd(sb, path, err);
        if (r >= 0) {
                sb->cwd_dev = st.st_dev;
                sb->cwd_ino = st.st_ino;
        }
        return r;
}

void heal_sandbox_set_stdin_fd(heal_sandbox *sb, int fd)
{
        if (sb)
                sb->stdin_fd = fd;
}

void heal_sandbox_set_output_fn(heal_sandbox *sb, heal_sandbox_output_fn fn, void *userdata,
                                bool capture)
{
        if (!sb)
                return;
        sb->output_fn = fn;
        sb->output_userdata = userdata;
        sb->capture = capture;
}

int heal_sandbox_add_seccomp_rule(heal_sandbox *sb, const char *syscall, int errno_value,
                                  heal_error *err)
{
        struct seccomp_rule *grown;
        int nr;

        if (!sb || !syscall)
                return heal_error_set(err, -EINVAL, "invalid argument");
        if (errno_value < 1 || errno_value > 4095)
                return heal_error_set(err, -EINVAL, "errno %d for '%s' is outside 1..4095",
                                      errno_value, syscall);
        nr = seccomp_syscall_resolve(syscall);
        if (nr < 0)
                return heal_error_set(err, -EINVAL, "unknown syscall '%s'", syscall);
        grown = realloc(sb->rules, (sb->n_rules + 1) * sizeof(*grown));
        if (!grown)
                return heal_error_set(err, -ENOMEM, "out of memory");
        sb->rules = grown;
        sb->rules[sb->n_rules++] = (struct seccomp_rule){ nr, errno_value };
        seccomp_free(sb->filter);
        sb->filter = NULL;
        return 0;
}

void heal_sandbox_cancel(heal_sandbox *sb)
{
        uint64_t one = 1;
        ssize_t _unused;

        if (!sb)
                return;
        sb->canceled = 1;
        _unused = write(sb->cancel_fd, &one, sizeof(one));
        (void)_unused;
}

void heal_sandbox_result_release(heal_sandbox_result *result)
{
        if (!result)
                return;
        free(result->out);
        free(result->err);
        free(result->procs);
        memset(result, 0, sizeof(*result));
}

const char *heal_sandbox_status_to_string(heal_sandbox_status status)
{
        static const char *const names[] = {
                [HEAL_STATUS_OK] = "ok",
                [HEAL_STATUS_EXIT_NONZERO] = "exit_nonzero",
                [HEAL_STATUS_SIGNALED] = "signaled",
                [HEAL_STATUS_TIMEOUT] = "timeout",
                [HEAL_STATUS_MEMORY_LIMIT] = "memory_limit",
                [HEAL_STATUS_OUTPUT_LIMIT] = "output_limit",
                [HEAL_STATUS_CPU_LIMIT] = "cpu_limit",
                [HEAL_STATUS_SETUP_ERROR] = "setup_error",
                [HEAL_STATUS_CANCELED] = "canceled",
        };

        if ((int)status < 0 || status >= _HEAL_STATUS_MAX)
                return NULL;
        return names[status];
}

const char *heal_sandbox_limit_name(unsigned bit)
{
        switch (bit) {
        case HEAL_LIMIT_WALL:
                return "wall time";
        case HEAL_LIMIT_CPU:
                return "cpu time";
        case HEAL_LIMIT_MEMORY:
                return "memory";
        case HEAL_LIMIT_PIDS:
                return "processes";
        case HEAL_LIMIT_OUTPUT:
                return "output";
        case HEAL_LIMIT_FSIZE:
                return "file size";
        default:
                return NULL;
        }
}

heal_sandbox_enforcement heal_sandbox_probe_enforcement(bool *ret_mem_cgroup, bool *ret_pids_cgroup,
                                                        char *where, size_t len)
{
        return cgroup_probe(ret_mem_cgroup, ret_pids_cgroup, where, len);
}
