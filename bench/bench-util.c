/* SPDX-License-Identifier: MIT */
/* Helpers shared by the benchmarks; see bench-util.h. */
#include "bench-util.h"

#include <errno.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

uint64_t bench_now_ns(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int spawn_actions(posix_spawn_file_actions_t *fa, const char *cwd, int null_fd)
{
        int r = posix_spawn_file_actions_init(fa);

        if (r != 0)
                return -r;
        for (int fd = 0; fd < 3 && null_fd >= 0 && r == 0; fd++)
                r = posix_spawn_file_actions_adddup2(fa, null_fd, fd);
        if (r == 0 && cwd)
                r = posix_spawn_file_actions_addchdir_np(fa, cwd);
        if (r != 0) {
                posix_spawn_file_actions_destroy(fa);
                return -r;
        }
        return 0;
}

int bench_spawn_wait(const char *const *argv, const char *const *envp, const char *cwd, int null_fd,
                     uint64_t *ret_ns)
{
        union {
                const char *const *c;
                char *const *m;
        } av = { .c = argv }, ev = { .c = envp };
        posix_spawn_file_actions_t fa;
        uint64_t t0;
        pid_t pid;
        int r, st;

        r = spawn_actions(&fa, cwd, null_fd);
        if (r < 0)
                return r;
        t0 = bench_now_ns();
        r = posix_spawnp(&pid, argv[0], &fa, NULL, av.m, envp ? ev.m : environ);
        if (r == 0) {
                while (waitpid(pid, &st, 0) < 0)
                        if (errno != EINTR) {
                                r = errno;
                                break;
                        }
        }
        *ret_ns = bench_now_ns() - t0;
        posix_spawn_file_actions_destroy(&fa);
        return r != 0 ? -r : st;
}

bool bench_find_exe(char *ret, size_t len, const char *name)
{
        const char *path = getenv("PATH");

        if (!path || !*path)
                path = "/usr/local/bin:/usr/bin:/bin";
        while (*path) {
                const char *end = strchrnul(path, ':');
                int n = snprintf(ret, len, "%.*s/%s", (int)(end - path), path, name);

                if (n > 0 && (size_t)n < len && end > path && access(ret, X_OK) == 0)
                        return true;
                path = *end ? end + 1 : end;
        }
        return false;
}

static int cmp_double(const void *a, const void *b)
{
        double x = *(const double *)a, y = *(const double *)b;

        return (x > y) - (x < y);
}

/* Linear interpolation between closest ranks (numpy's default); @v sorted, @n > 0. */
static double quantile(const double *v, size_t n, double q)
{
        double pos = q * (double)(n - 1);
        size_t lo = (size_t)pos;

        if (lo + 1 >= n)
                return v[n - 1];
        return v[lo] + (pos - (double)lo) * (v[lo + 1] - v[lo]);
}

void bench_stats_compute(struct bench_stats *ret, double *v, size_t n)
{
        if (n == 0) {
                *ret = (struct bench_stats){ NAN, NAN, NAN };
                return;
        }
        qsort(v, n, sizeof(*v), cmp_double);
        ret->median = quantile(v, n, 0.5);
        ret->p10 = quantile(v, n, 0.1);
        ret->p90 = quantile(v, n, 0.9);
}

double bench_ratio(double a, double b)
{
        if (isnan(a) || isnan(b) || b == 0.0)
                return NAN;
        return a / b;
}

bool bench_parse_runs(const char *s, unsigned *ret)
{
        char *end;
        unsigned long v;

        if (!s || !*s)
                return false;
        errno = 0;
        v = strtoul(s, &end, 10);
        if (errno || *end || v < 1 || v > 100000)
                return false;
        *ret = (unsigned)v;
        return true;
}

int bench_lib_probe(heal_sandbox *sb, const char *const *argv, bool *ret_fallback, char *note,
                    size_t note_len)
{
        heal_sandbox_limits limits = *heal_sandbox_get_limits(sb);
        heal_sandbox_result res = { 0 };
        heal_error err = HEAL_ERROR_INIT;
        int r;

        *ret_fallback = false;
        note[0] = '\0';
        r = heal_sandbox_run(sb, argv, &res, &err);
        if (r == -EPERM && geteuid() == 0 && limits.pids_max) {
                snprintf(note, note_len,
                         "default limits refused: %s; measured with the "
                         "process limit off (--pids 0)",
                         err.msg);
                limits.pids_max = 0;
                heal_error_clear(&err);
                r = heal_sandbox_set_limits(sb, &limits, &err);
                if (r >= 0)
                        r = heal_sandbox_run(sb, argv, &res, &err);
                *ret_fallback = r >= 0;
        }
        if (r < 0) {
                snprintf(note, note_len, "%s", err.msg);
                return r;
        }
        if (res.status != HEAL_STATUS_OK) {
                snprintf(note, note_len, "'%s' in the sandbox: %s (exit %d) %s%.200s", argv[0],
                         heal_sandbox_status_to_string(res.status), res.exit_code, res.message,
                         res.err ? res.err : "");
                r = -EIO;
        }
        heal_sandbox_result_release(&res);
        return r;
}

json_t *bench_json_num(double v)
{
        return isnan(v) ? json_null() : json_real(v);
}

int bench_json_print(json_t *root)
{
        int r;

        if (!root)
                return -ENOMEM;
        r = json_dumpf(root, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(6));
        json_decref(root);
        if (r < 0 || fputc('\n', stdout) == EOF)
                return -EIO;
        return 0;
}
