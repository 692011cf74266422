/* SPDX-License-Identifier: MIT */
#ifndef HEAL_BENCH_UTIL_H
#define HEAL_BENCH_UTIL_H

/*
 * What bench-start and bench-gobuild share: a monotonic clock, spawning a peer command and
 * waiting for it, quantiles, option parsing, and the one fallback the library may need here
 * (see bench_lib_probe()).
 */

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "heal/sandbox.h"

#define BENCH_WARMUP_RUNS 20u
#define ELEMENTSOF(a)     (sizeof(a) / sizeof((a)[0]))

/**
 * struct bench_stats - Quantiles of one sample, in the sample's unit.
 * @median: 50th percentile.
 * @p10:    10th percentile.
 * @p90:    90th percentile.
 */
struct bench_stats {
        double median;
        double p10;
        double p90;
};

/* CLOCK_MONOTONIC, ns. */
uint64_t bench_now_ns(void);

/*
 * Spawn @argv (looked up in PATH when it holds no '/') with @envp (NULL: ours) in @cwd (NULL:
 * ours), its stdin, stdout and stderr on @null_fd (-1: ours), and wait for it. posix_spawn(3)
 * is glibc's clone(CLONE_VM | CLONE_VFORK) + execve(2), so this is the vfork+exec path.
 * @ret_ns: time from just before posix_spawn to just after waitpid returned, ns.
 * Return: the wait status (>= 0); -errno when the spawn failed.
 */
int bench_spawn_wait(const char *const *argv, const char *const *envp, const char *cwd, int null_fd,
                     uint64_t *ret_ns);

/* Full path of executable @name found in $PATH, into @ret (capacity @len); false if none. */
bool bench_find_exe(char *ret, size_t len, const char *name);

/* Quantiles of @v (@n values; @v is sorted in place). All NAN when @n is 0. */
void bench_stats_compute(struct bench_stats *ret, double *v, size_t n);

/* @a / @b, or NAN when either is missing or @b is 0. */
double bench_ratio(double a, double b);

/* Parse a run count in 1..100000; false on anything else. */
bool bench_parse_runs(const char *s, unsigned *ret);

/*
 * Run @argv once in @sb to learn whether the default limits can be enforced. As root with no
 * writable cgroup the library refuses the default process limit (-EPERM); then the process
 * limit is set to 0 (none), *@ret_fallback is set and @note says why.
 * Return: 0, or the error of the run (then @note holds its message).
 */
int bench_lib_probe(heal_sandbox *sb, const char *const *argv, bool *ret_fallback, char *note,
                    size_t note_len);

/* A JSON number, or null for NAN. */
json_t *bench_json_num(double v);

/* Print @root to stdout (indented) and drop the reference. Return: 0, or -EIO. */
int bench_json_print(json_t *root);

/* The bwrap peer's view, the same in every benchmark: all namespaces, / read-only, fresh
 * /proc, /dev and /tmp (what heal's default view gives). Its path comes before, the rest after. */
#define BENCH_BWRAP_VIEW                                                                          \
 "--unshare-all", "--die-with-parent", "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev", \
         "--tmpfs", "/tmp"

#endif
