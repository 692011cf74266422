/* SPDX-License-Identifier: MIT */
/*
 * bench-start: start-to-exit latency of /bin/true, heal against its peers in one invocation.
 *
 * Cases (each timed with CLOCK_MONOTONIC around spawn + wait, stdio on /dev/null):
 *   bare     posix_spawn(3) + waitpid(2): glibc's clone(CLONE_VM | CLONE_VFORK) + execve
 *   lib      heal_sandbox_run() on one reused heal_sandbox: default view, default limits,
 *            heal_sandbox_inherit_env(environ) (what the repair search pays per candidate,
 *            with the pre-made namespaces every run after a process's second one joins)
 *   libcold  the same on a second sandbox with HEAL_SANDBOX_NO_POOL: it creates every
 *            namespace itself, as a process's first run does
 *   cli      the process 'heal run -- /bin/true'
 *   bwrap    bwrap --unshare-all --die-with-parent --ro-bind / / --proc /proc --dev /dev
 *            --tmpfs /tmp /bin/true
 *   unshare  unshare -U -r -m -p -n -f --mount-proc /bin/true
 *
 * Every round runs each case once, the first case of a round rotating, so machine noise hits
 * all cases alike; before each case the library's pool thread is waited for (untimed), so no
 * case shares the CPUs with it; BENCH_WARMUP_RUNS rounds are discarded first. Prints medians, p10,
 * p90, the ratios the issue sets targets for, and the library's own start-up breakdown.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "heal/sandbox.h"

#include "bench-util.h"

extern char **environ;

enum { CASE_BARE, CASE_LIB, CASE_LIBCOLD, CASE_CLI, CASE_BWRAP, CASE_UNSHARE, N_CASES };
enum { T_CLONE, T_MAPS, T_MOUNTS, T_EXEC, T_END, N_TIMING };

static const char *const case_names[N_CASES] = {
        "bare", "lib", "libcold", "cli", "bwrap", "unshare"
};
static const char *const timing_names[N_TIMING] = { "clone_us", "maps_us", "mounts_us", "exec_us",
                                                    "end_us" };

struct bcase {
        bool on;
        char skip[256];
        const char *argv[16];
        double *ms;
        size_t n;
        struct bench_stats st;
};

struct ctx {
        unsigned runs;
        unsigned ballast_mb;
        bool json;
        const char *only; /* --only: comma-separated case names, NULL for all */
        int null_fd;
        char *ballast;
        char heal[PATH_MAX];
        char bwrap[PATH_MAX];
        char unshare[PATH_MAX];
        heal_sandbox *sb;
        heal_sandbox *sb_cold; /* HEAL_SANDBOX_NO_POOL */
        bool pids_fallback;
        char note[HEAL_ERROR_MSG_MAX + 128];
        struct bcase c[N_CASES];
        double *timing[N_TIMING];
        size_t n_timing;
        double timing_med[N_TIMING];
        size_t n_pooled; /* lib runs that joined pre-made namespaces */
};

static const char *const true_argv[] = { "/bin/true", NULL };

static void usage(FILE *f)
{
        fputs("usage: bench-start [--runs N] [--heal PATH] [--ballast-mb N] [--only CASES] [--json]\n"
              "  --runs N        measured runs per case (default 200), after 20 warmup runs\n"
              "  --heal PATH     the heal CLI (default: ../heal next to this binary, or build/heal)\n"
              "  --ballast-mb N  touch N MiB of memory first, like a caller with a large heap\n"
              "  --only CASES    run only these cases (comma-separated: bare,lib,libcold,cli,\n"
              "                  bwrap,unshare), e.g. to profile one with perf record\n"
              "  --json          print the results as one JSON object on stdout\n",
              f);
}

/* ../heal relative to this binary (build/bench/bench-start -> build/heal), else build/heal. */
static void default_heal_path(char *ret, size_t len)
{
        char self[PATH_MAX];
        ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

        if (n > 0) {
                self[n] = '\0';
                snprintf(ret, len, "%s/../heal", dirname(self));
                if (access(ret, X_OK) == 0)
                        return;
        }
        snprintf(ret, len, "build/heal");
}

static int parse_args(struct ctx *c, int argc, char **argv)
{
        static const struct option opts[] = {
                { "runs", required_argument, NULL, 'r' },
                { "heal", required_argument, NULL, 'H' },
                { "ballast-mb", required_argument, NULL, 'b' },
                { "only", required_argument, NULL, 'o' },
                { "json", no_argument, NULL, 'j' },
                { "help", no_argument, NULL, 'h' },
                { NULL, 0, NULL, 0 },
        };
        int o;

        c->runs = 200;
        default_heal_path(c->heal, sizeof(c->heal));
        while ((o = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
                switch (o) {
                case 'r':
                        if (!bench_parse_runs(optarg, &c->runs)) {
                                fprintf(stderr, "bench-start: bad --runs '%s'\n", optarg);
                                return -EINVAL;
                        }
                        break;
                case 'b':
                        if (!bench_parse_runs(optarg, &c->ballast_mb)) {
                                fprintf(stderr, "bench-start: bad --ballast-mb '%s'\n", optarg);
                                return -EINVAL;
                        }
                        break;
                case 'H':
                        snprintf(c->heal, sizeof(c->heal), "%s", optarg);
                        break;
                case 'o':
                        c->only = optarg;
                        break;
                case 'j':
                        c->json = true;
                        break;
                case 'h':
                        usage(stdout);
                        exit(0);
                default:
                        usage(stderr);
                        return -EINVAL;
                }
        }
        if (optind != argc) {
                usage(stderr);
                return -EINVAL;
        }
        return 0;
}

/* Whether --only names case i (every case without --only). */
static bool case_asked(const struct ctx *c, int i)
{
        size_t n = strlen(case_names[i]);

        for (const char *p = c->only; p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
                if (strncmp(p, case_names[i], n) == 0 && (p[n] == ',' || p[n] == '\0'))
                        return true;
        return !c->only;
}

/* Switches off what --only leaves out; an unknown name is an error. */
static int apply_only(struct ctx *c)
{
        for (const char *p = c->only; p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL) {
                size_t n = strcspn(p, ",");
                bool known = false;

                for (int i = 0; i < N_CASES; i++)
                        known |= strlen(case_names[i]) == n && strncmp(p, case_names[i], n) == 0;
                if (!known) {
                        fprintf(stderr, "bench-start: --only: no case '%.*s'\n", (int)n, p);
                        return -EINVAL;
                }
        }
        for (int i = 0; i < N_CASES; i++)
                if (c->c[i].on && !case_asked(c, i)) {
                        c->c[i].on = false;
                        snprintf(c->c[i].skip, sizeof(c->c[i].skip), "not in --only");
                }
        return 0;
}

static void set_argv(struct bcase *bc, const char *const *argv)
{
        size_t i = 0;

        for (; argv[i] && i < ELEMENTSOF(bc->argv) - 1; i++)
                bc->argv[i] = argv[i];
        bc->argv[i] = NULL;
}

static void setup_peers(struct ctx *c)
{
        const char *const bw[] = { c->bwrap, BENCH_BWRAP_VIEW, "/bin/true", NULL };
        const char *const us[] = { c->unshare, "-U", "-r",           "-m",        "-p",
                                   "-n",       "-f", "--mount-proc", "/bin/true", NULL };

        set_argv(&c->c[CASE_BARE], true_argv);
        c->c[CASE_BARE].on = true;
        c->c[CASE_BWRAP].on = bench_find_exe(c->bwrap, sizeof(c->bwrap), "bwrap");
        if (c->c[CASE_BWRAP].on)
                set_argv(&c->c[CASE_BWRAP], bw);
        else
                snprintf(c->c[CASE_BWRAP].skip, sizeof(c->c[CASE_BWRAP].skip),
                         "bwrap not installed (apt-get install bubblewrap)");
        c->c[CASE_UNSHARE].on = bench_find_exe(c->unshare, sizeof(c->unshare), "unshare");
        if (c->c[CASE_UNSHARE].on)
                set_argv(&c->c[CASE_UNSHARE], us);
        else
                snprintf(c->c[CASE_UNSHARE].skip, sizeof(c->c[CASE_UNSHARE].skip),
                         "unshare not installed (util-linux)");
}

/* The library case: one sandbox for all runs; the CLI case follows its limits. */
static void setup_heal(struct ctx *c)
{
        struct bcase *lib = &c->c[CASE_LIB], *cli = &c->c[CASE_CLI];
        const char *const cli_argv[] = { c->heal, "run", "--", "/bin/true", NULL };
        const char *const cli_nopids[] = { c->heal, "run", "--pids", "0", "--", "/bin/true", NULL };
        heal_error err = HEAL_ERROR_INIT;
        int r;

        r = heal_sandbox_new(&c->sb, &err);
        if (r >= 0)
                r = heal_sandbox_inherit_env(c->sb, (const char *const *)environ, &err);
        if (r >= 0)
                r = bench_lib_probe(c->sb, true_argv, &c->pids_fallback, c->note, sizeof(c->note));
        else
                snprintf(c->note, sizeof(c->note), "%s", err.msg);
        /* The cold case: the same sandbox, its limits as probed, without the pool. */
        if (r >= 0)
                r = heal_sandbox_new(&c->sb_cold, &err);
        if (r >= 0)
                r = heal_sandbox_inherit_env(c->sb_cold, (const char *const *)environ, &err);
        if (r >= 0)
                r = heal_sandbox_set_limits(c->sb_cold, heal_sandbox_get_limits(c->sb), &err);
        if (r >= 0)
                r = heal_sandbox_set_flags(c->sb_cold, HEAL_SANDBOX_NO_POOL, &err);
        if (r < 0 && !c->note[0])
                snprintf(c->note, sizeof(c->note), "%s", err.msg);
        lib->on = r >= 0;
        if (!lib->on)
                snprintf(lib->skip, sizeof(lib->skip), "heal_sandbox_run() failed: %.200s",
                         c->note);
        c->c[CASE_LIBCOLD].on = lib->on;
        memcpy(c->c[CASE_LIBCOLD].skip, lib->skip, sizeof(lib->skip));
        if (access(c->heal, X_OK) < 0) {
                snprintf(cli->skip, sizeof(cli->skip), "'%.200s' not executable (use --heal PATH)",
                         c->heal);
                return;
        }
        cli->on = true;
        set_argv(cli, c->pids_fallback ? cli_nopids : cli_argv);
}

static int run_lib(struct ctx *c, bool cold, bool keep, uint64_t *ret_ns)
{
        heal_sandbox_result res = { 0 };
        heal_error err = HEAL_ERROR_INIT;
        uint64_t t0;
        int r;

        t0 = bench_now_ns();
        r = heal_sandbox_run(cold ? c->sb_cold : c->sb, true_argv, &res, &err);
        *ret_ns = bench_now_ns() - t0;
        if (r < 0) {
                fprintf(stderr, "bench-start: lib: %s\n", err.msg);
                return r;
        }
        if (res.status != HEAL_STATUS_OK) {
                fprintf(stderr, "bench-start: lib: %s %s\n",
                        heal_sandbox_status_to_string(res.status), res.message);
                r = -EIO;
        } else if (keep && !cold) {
                const heal_sandbox_timing *t = &res.timing;
                size_t i = c->n_timing++;

                c->timing[T_CLONE][i] = (double)t->clone_us;
                c->timing[T_MAPS][i] = (double)t->maps_us;
                c->timing[T_MOUNTS][i] = (double)t->mounts_us;
                c->timing[T_EXEC][i] = (double)t->exec_us;
                c->timing[T_END][i] = (double)t->end_us;
                c->n_pooled += t->pooled;
        }
        heal_sandbox_result_release(&res);
        return r;
}

static int run_case(struct ctx *c, int i, bool keep)
{
        struct bcase *bc = &c->c[i];
        uint64_t ns = 0;
        int st;

        heal_sandbox_pool_wait(); /* the pool's thread done: nothing else on the CPUs */
        if (i == CASE_LIB || i == CASE_LIBCOLD) {
                st = run_lib(c, i == CASE_LIBCOLD, keep, &ns);
                if (st < 0)
                        return st;
        } else {
                st = bench_spawn_wait(bc->argv, NULL, NULL, c->null_fd, &ns);
                if (st < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
                        fprintf(stderr, "bench-start: %s: '%s' failed (%s %d)\n", case_names[i],
                                bc->argv[0], st < 0 ? "error" : "wait status", st < 0 ? -st : st);
                        return -EIO;
                }
        }
        if (keep)
                bc->ms[bc->n++] = (double)ns / 1e6;
        return 0;
}

/* One case failing its first (warmup) run is switched off with the reason; later, it is fatal. */
static int run_round(struct ctx *c, unsigned round, bool keep)
{
        for (int k = 0; k < N_CASES; k++) {
                int i = (int)((round + (unsigned)k) % N_CASES);
                int r;

                if (!c->c[i].on)
                        continue;
                r = run_case(c, i, keep);
                if (r < 0 && !keep && round == 0) {
                        c->c[i].on = false;
                        snprintf(c->c[i].skip, sizeof(c->c[i].skip), "failed its first run");
                } else if (r < 0) {
                        return r;
                }
        }
        return 0;
}

static int alloc_samples(struct ctx *c)
{
        if (c->ballast_mb) {
                size_t len = (size_t)c->ballast_mb << 20;

                /* Resident, not just reserved: fork(2) copies page tables of touched pages. */
                if (!(c->ballast = malloc(len)))
                        return -ENOMEM;
                memset(c->ballast, 1, len);
        }
        for (int i = 0; i < N_CASES; i++)
                if (!(c->c[i].ms = calloc(c->runs, sizeof(double))))
                        return -ENOMEM;
        for (int t = 0; t < N_TIMING; t++)
                if (!(c->timing[t] = calloc(c->runs, sizeof(double))))
                        return -ENOMEM;
        return 0;
}

static int measure(struct ctx *c)
{
        int r;

        for (unsigned round = 0; round < BENCH_WARMUP_RUNS; round++)
                if ((r = run_round(c, round, false)) < 0)
                        return r;
        for (unsigned round = 0; round < c->runs; round++)
                if ((r = run_round(c, round, true)) < 0)
                        return r;
        for (int i = 0; i < N_CASES; i++)
                bench_stats_compute(&c->c[i].st, c->c[i].ms, c->c[i].n);
        for (int t = 0; t < N_TIMING; t++) {
                struct bench_stats s;

                bench_stats_compute(&s, c->timing[t], c->n_timing);
                c->timing_med[t] = s.median;
        }
        return 0;
}

struct ratio {
        const char *name;
        int num, den;
        const char *target; /* NULL: informational */
        double limit;
};

static const struct ratio ratios[] = {
        { "cli/bwrap", CASE_CLI, CASE_BWRAP, "heal run <= 0.4x bwrap", 0.4 },
        { "lib/bare", CASE_LIB, CASE_BARE, "library <= 3x bare fork+exec", 3.0 },
        { "libcold/bare", CASE_LIBCOLD, CASE_BARE, NULL, 0.0 },
        { "cli/bare", CASE_CLI, CASE_BARE, NULL, 0.0 },
        /* unshare(1) makes the namespaces and mounts /proc, nothing else (no pivot, /dev, tmpfs,
         * seccomp filter or limits): a floor under any process that starts a sandbox, heal run
         * included, to read the cli/bwrap target against. */
        { "unshare/bwrap", CASE_UNSHARE, CASE_BWRAP, NULL, 0.0 },
};

static double ratio_value(const struct ctx *c, const struct ratio *q)
{
        return bench_ratio(c->c[q->num].st.median, c->c[q->den].st.median);
}

static const char *verdict(double v, double limit)
{
        return isnan(v) ? "n/a" : v <= limit ? "met" : "not met";
}

static void print_case(const struct ctx *c, int i)
{
        const struct bcase *bc = &c->c[i];

        if (!bc->on && !bc->n) {
                printf("  %-8s  skipped: %s\n", case_names[i], bc->skip);
                return;
        }
        printf("  %-8s  %9.3f  %9.3f  %9.3f\n", case_names[i], bc->st.median, bc->st.p10,
               bc->st.p90);
}

static void print_human(const struct ctx *c)
{
        printf("bench-start: /bin/true start to exit, %u runs per case after %u warmup, "
               "round-robin; euid %u\n",
               c->runs, BENCH_WARMUP_RUNS, (unsigned)geteuid());
        if (c->ballast_mb)
                printf("ballast: %u MiB touched in this process before measuring\n", c->ballast_mb);
        printf("bare = posix_spawn(3) (glibc: clone(CLONE_VM|CLONE_VFORK) + execve) + waitpid\n");
        if (c->pids_fallback)
                printf("note: %s\n", c->note);
        printf("\n  %-8s  %9s  %9s  %9s\n", "case", "median ms", "p10 ms", "p90 ms");
        for (int i = 0; i < N_CASES; i++)
                print_case(c, i);
        printf("\nratios of medians:\n");
        for (size_t k = 0; k < ELEMENTSOF(ratios); k++) {
                const struct ratio *q = &ratios[k];
                double v = ratio_value(c, q);

                printf("  %-13s %6.2f", q->name, v);
                if (q->target)
                        printf("   target: %-30s %s", q->target, verdict(v, q->limit));
                printf("\n");
        }
        printf("  (unshare/bwrap: namespaces and /proc alone, the floor of any sandbox's CLI)\n");
        printf("\nlibrary start-up (lib), median µs since heal_sandbox_run() began:\n ");
        for (int t = 0; t < N_TIMING; t++)
                printf(" %s %.0f", timing_names[t], c->timing_med[t]);
        printf("\n  %zu of %zu lib runs joined pre-made namespaces\n", c->n_pooled, c->n_timing);
}

static json_t *case_json(const struct bcase *bc)
{
        if (!bc->on && !bc->n)
                return json_pack("{s:s}", "skipped", bc->skip);
        return json_pack("{s:o,s:o,s:o,s:I}", "median_ms", bench_json_num(bc->st.median), "p10_ms",
                         bench_json_num(bc->st.p10), "p90_ms", bench_json_num(bc->st.p90), "n",
                         (json_int_t)bc->n);
}

static json_t *results_json(const struct ctx *c)
{
        json_t *cases = json_object(), *rat = json_object(), *tgt = json_array();
        json_t *tim = json_object();

        for (int i = 0; i < N_CASES; i++)
                json_object_set_new(cases, case_names[i], case_json(&c->c[i]));
        for (size_t k = 0; k < ELEMENTSOF(ratios); k++) {
                const struct ratio *q = &ratios[k];
                double v = ratio_value(c, q);

                json_object_set_new(rat, q->name, bench_json_num(v));
                if (q->target)
                        json_array_append_new(tgt, json_pack("{s:s,s:s,s:f,s:o,s:s}", "target",
                                                             q->target, "ratio", q->name, "limit",
                                                             q->limit, "value", bench_json_num(v),
                                                             "verdict", verdict(v, q->limit)));
        }
        for (int t = 0; t < N_TIMING; t++)
                json_object_set_new(tim, timing_names[t], bench_json_num(c->timing_med[t]));
        return json_pack("{s:s,s:I,s:I,s:I,s:I,s:s,s:o,s:o,s:o,s:o,s:I,s:b,s:s}", "bench", "start",
                         "runs", (json_int_t)c->runs, "warmup", (json_int_t)BENCH_WARMUP_RUNS,
                         "ballast_mb", (json_int_t)c->ballast_mb, "euid", (json_int_t)geteuid(),
                         "bare_spawn", "posix_spawn", "cases", cases, "ratios", rat, "targets", tgt,
                         "lib_timing_median_us", tim, "lib_pooled_runs", (json_int_t)c->n_pooled,
                         "pids_limit_off", c->pids_fallback, "note", c->note);
}

static void ctx_release(struct ctx *c)
{
        for (int i = 0; i < N_CASES; i++)
                free(c->c[i].ms);
        for (int t = 0; t < N_TIMING; t++)
                free(c->timing[t]);
        free(c->ballast);
        heal_sandbox_free(c->sb);
        heal_sandbox_free(c->sb_cold);
        if (c->null_fd >= 0)
                close(c->null_fd);
}

int main(int argc, char **argv)
{
        struct ctx c = { .null_fd = -1 };
        int r;

        if (parse_args(&c, argc, argv) < 0)
                return 2;
        c.null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
        if (c.null_fd < 0 || alloc_samples(&c) < 0) {
                fprintf(stderr, "bench-start: %s\n", strerror(errno ? errno : ENOMEM));
                ctx_release(&c);
                return 3;
        }
        setup_peers(&c);
        setup_heal(&c);
        if (apply_only(&c) < 0) {
                ctx_release(&c);
                return 2;
        }
        for (int i = 0; i < N_CASES; i++)
                if (!c.c[i].on && c.json)
                        fprintf(stderr, "bench-start: %s skipped: %s\n", case_names[i],
                                c.c[i].skip);
        r = measure(&c);
        if (r >= 0 && c.json)
                r = bench_json_print(results_json(&c));
        else if (r >= 0)
                print_human(&c);
        ctx_release(&c);
        return r < 0 ? 1 : 0;
}
