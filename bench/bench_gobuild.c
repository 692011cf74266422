/* SPDX-License-Identifier: MIT */
/*
 * bench-gobuild: what the sandbox adds to a warm 'go build' of a small module.
 *
 * A temporary tree T holds the module at T/mod (go.mod "module hello", go 1.19, a main.go that
 * prints hello) and its build cache at T/mod/.cache, so the default view's read-write bind of
 * the working directory shares the cache with the sandbox at the same path. Every case gets the
 * same environment: PATH, HOME=T, GOCACHE, GOPROXY=off, GOFLAGS=-mod=mod. Cases:
 *   host   posix_spawn(3) of 'go build -o hello .' in T/mod
 *   heal   heal_sandbox_run() of the same, default view and limits, cwd T/mod
 *   bwrap  bwrap --unshare-all --die-with-parent --ro-bind / / --proc /proc --dev /dev
 *          --tmpfs /tmp --bind T T --chdir T/mod go build -o hello .  (when installed)
 *
 * Three untimed builds per case warm the cache; then each round runs every case once (the
 * first case rotating) and the sandbox's cost is the median of the per-round differences.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "heal/sandbox.h"

#include "bench-util.h"

#define GOBUILD_WARM_BUILDS 3u
/* The reference: bwrap adds ~8 ms to a ~120 ms build on the CI machine. */
#define REF_BWRAP_ADDS_MS 8.0

enum { G_HOST, G_HEAL, G_BWRAP, N_G };

static const char *const g_names[N_G] = { "host", "heal", "bwrap" };

struct gcase {
        bool on;
        double *ms;
        double *diff; /* this case minus host, same round */
        size_t n;
        struct bench_stats st, dst;
};

struct gctx {
        unsigned runs;
        bool json;
        bool shared_tmp;
        char root[PATH_MAX];
        char mod[PATH_MAX];
        char go[PATH_MAX];
        char bwrap[PATH_MAX];
        char env_buf[3][PATH_MAX + 16];
        const char *envp[8];
        const char *go_argv[6];
        const char *bwrap_argv[32];
        heal_sandbox *sb;
        bool pids_fallback;
        char note[HEAL_ERROR_MSG_MAX + 128];
        struct gcase c[N_G];
};

/* Set by SIGINT/SIGTERM: the run in progress is canceled and the temporary tree removed. */
static volatile sig_atomic_t interrupted;
static heal_sandbox *running_sb;

static void on_signal(int sig)
{
        (void)sig;
        interrupted = 1;
        if (running_sb)
                heal_sandbox_cancel(running_sb);
}

static void catch_signals(void)
{
        struct sigaction sa = { .sa_handler = on_signal };

        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGTERM, &sa, NULL);
        sigaction(SIGHUP, &sa, NULL);
}

static const char main_go[] = "package main\n\nimport \"fmt\"\n\nfunc main() {\n"
                              "\tfmt.Println(\"hello\")\n}\n";
static const char go_mod[] = "module hello\n\ngo 1.19\n";

static int parse_args(struct gctx *g, int argc, char **argv)
{
        static const struct option opts[] = {
                { "runs", required_argument, NULL, 'r' },
                { "json", no_argument, NULL, 'j' },
                { "shared-tmp", no_argument, NULL, 't' },
                { "help", no_argument, NULL, 'h' },
                { NULL, 0, NULL, 0 },
        };
        int o;

        g->runs = 20;
        while ((o = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
                if (o == 'r' && bench_parse_runs(optarg, &g->runs))
                        continue;
                if (o == 'j' || o == 't') {
                        *(o == 'j' ? &g->json : &g->shared_tmp) = true;
                        continue;
                }
                fputs("usage: bench-gobuild [--runs N] [--shared-tmp] [--json]\n"
                      "  --runs N      measured rounds (default 20), after 3 warm-up builds each\n"
                      "  --shared-tmp  GOTMPDIR=T/mod/.tmp in every case, so go's work directory\n"
                      "                is on the same file system (else the sandboxes' /tmp is a\n"
                      "                tmpfs and the host's is not)\n"
                      "  --json        print the results as one JSON object on stdout\n",
                      o == 'h' ? stdout : stderr);
                if (o == 'h')
                        exit(0);
                return -EINVAL;
        }
        return optind == argc ? 0 : -EINVAL;
}

static int write_text(const char *dir, const char *name, const char *text)
{
        char path[PATH_MAX + 32];
        FILE *f;
        int r;

        snprintf(path, sizeof(path), "%s/%s", dir, name);
        f = fopen(path, "we");
        if (!f)
                return -errno;
        r = fputs(text, f) < 0 ? -EIO : 0;
        if (fclose(f) != 0 && r == 0)
                r = -errno;
        return r;
}

static int make_module(struct gctx *g)
{
        const char *tmp = getenv("TMPDIR");
        char cache[PATH_MAX];
        int r;

        if (snprintf(g->root, sizeof(g->root), "%s/heal-bench-go-XXXXXX",
                     tmp && *tmp ? tmp : "/tmp") >= (int)sizeof(g->root) - 16)
                return -ENAMETOOLONG;
        if (!mkdtemp(g->root)) {
                g->root[0] = '\0';
                return -errno;
        }
        if (snprintf(g->mod, sizeof(g->mod), "%s/mod", g->root) >= (int)sizeof(g->mod) ||
            snprintf(cache, sizeof(cache), "%s/.cache", g->mod) >= (int)sizeof(cache))
                return -ENAMETOOLONG;
        if (mkdir(g->mod, 0755) < 0 || mkdir(cache, 0755) < 0)
                return -errno;
        if (snprintf(cache, sizeof(cache), "%s/.tmp", g->mod) >= (int)sizeof(cache))
                return -ENAMETOOLONG;
        if (mkdir(cache, 0755) < 0)
                return -errno;
        if ((r = write_text(g->mod, "go.mod", go_mod)) < 0)
                return r;
        return write_text(g->mod, "main.go", main_go);
}

static void setup_env(struct gctx *g)
{
        snprintf(g->env_buf[0], sizeof(g->env_buf[0]), "HOME=%s", g->root);
        snprintf(g->env_buf[1], sizeof(g->env_buf[1]), "GOCACHE=%s/.cache", g->mod);
        g->envp[0] = "PATH=/usr/local/bin:/usr/bin:/bin:/usr/lib/go/bin";
        g->envp[1] = g->env_buf[0];
        g->envp[2] = g->env_buf[1];
        g->envp[3] = "GOPROXY=off";
        g->envp[4] = "GOFLAGS=-mod=mod";
        g->envp[5] = NULL;
        if (g->shared_tmp) {
                snprintf(g->env_buf[2], sizeof(g->env_buf[2]), "GOTMPDIR=%s/.tmp", g->mod);
                g->envp[5] = g->env_buf[2];
                g->envp[6] = NULL;
        }
        if (!bench_find_exe(g->go, sizeof(g->go), "go"))
                snprintf(g->go, sizeof(g->go), "/usr/bin/go");
        memcpy(g->go_argv, (const char *const[]){ g->go, "build", "-o", "hello", ".", NULL },
               sizeof(g->go_argv));
}

static void setup_bwrap(struct gctx *g)
{
        const char *const a[] = {
                g->bwrap, BENCH_BWRAP_VIEW, "--bind", g->root, g->root, "--chdir", g->mod,
                g->go,    "build",          "-o",     "hello", ".",     NULL
        };

        g->c[G_BWRAP].on = bench_find_exe(g->bwrap, sizeof(g->bwrap), "bwrap");
        if (g->c[G_BWRAP].on)
                memcpy(g->bwrap_argv, a, sizeof(a));
}

static int setup_heal(struct gctx *g)
{
        heal_error err = HEAL_ERROR_INIT;
        int r;

        r = heal_sandbox_new(&g->sb, &err);
        if (r >= 0)
                running_sb = g->sb;
        if (r >= 0)
                r = heal_sandbox_set_cwd(g->sb, g->mod, &err);
        for (size_t i = 0; r >= 0 && g->envp[i]; i++) {
                char name[32];
                const char *eq = strchr(g->envp[i], '=');

                snprintf(name, sizeof(name), "%.*s", (int)(eq - g->envp[i]), g->envp[i]);
                r = heal_sandbox_setenv(g->sb, name, eq + 1, &err);
        }
        if (r < 0) {
                fprintf(stderr, "bench-gobuild: %s\n", err.msg);
                return r;
        }
        r = bench_lib_probe(g->sb, g->go_argv, &g->pids_fallback, g->note, sizeof(g->note));
        if (r < 0)
                fprintf(stderr, "bench-gobuild: heal: %s\n", g->note);
        else if (g->pids_fallback && g->json)
                fprintf(stderr, "bench-gobuild: note: %s\n", g->note);
        g->c[G_HEAL].on = r >= 0;
        return r;
}

static int run_heal(struct gctx *g, uint64_t *ret_ns)
{
        heal_sandbox_result res = { 0 };
        heal_error err = HEAL_ERROR_INIT;
        uint64_t t0 = bench_now_ns();
        int r = heal_sandbox_run(g->sb, g->go_argv, &res, &err);

        *ret_ns = bench_now_ns() - t0;
        if (r < 0) {
                fprintf(stderr, "bench-gobuild: heal: %s\n", err.msg);
                return r;
        }
        if (res.status == HEAL_STATUS_CANCELED) {
                fprintf(stderr, "bench-gobuild: interrupted\n");
                r = -ECANCELED;
        } else if (res.status != HEAL_STATUS_OK) {
                fprintf(stderr, "bench-gobuild: heal: %s %s\n%s",
                        heal_sandbox_status_to_string(res.status), res.message, res.err);
                r = -EIO;
        }
        heal_sandbox_result_release(&res);
        return r;
}

static int run_one(struct gctx *g, int i, uint64_t *ret_ns)
{
        const char *const *argv = i == G_BWRAP ? g->bwrap_argv : g->go_argv;
        int st;

        if (i == G_HEAL)
                return run_heal(g, ret_ns);
        st = bench_spawn_wait(argv, g->envp, g->mod, -1, ret_ns);
        if (st < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
                fprintf(stderr, "bench-gobuild: %s: '%s' failed (%s %d)\n", g_names[i], argv[0],
                        st < 0 ? "error" : "wait status", st < 0 ? -st : st);
                return -EIO;
        }
        return 0;
}

static int run_round(struct gctx *g, unsigned round, bool keep)
{
        double ms[N_G] = { 0 };

        for (int k = 0; k < N_G; k++) {
                int i = (int)((round + (unsigned)k) % N_G);
                uint64_t ns;
                int r;

                if (interrupted)
                        return -ECANCELED;
                if (!g->c[i].on)
                        continue;
                if ((r = run_one(g, i, &ns)) < 0)
                        return r;
                ms[i] = (double)ns / 1e6;
        }
        for (int i = 0; keep && i < N_G; i++) {
                struct gcase *gc = &g->c[i];

                if (!gc->on)
                        continue;
                gc->ms[gc->n] = ms[i];
                gc->diff[gc->n++] = ms[i] - ms[G_HOST];
        }
        return 0;
}

static int measure(struct gctx *g)
{
        int r;

        for (int i = 0; i < N_G; i++) {
                g->c[i].ms = calloc(g->runs, sizeof(double));
                g->c[i].diff = calloc(g->runs, sizeof(double));
                if (!g->c[i].ms || !g->c[i].diff)
                        return -ENOMEM;
        }
        for (unsigned round = 0; round < GOBUILD_WARM_BUILDS; round++)
                if ((r = run_round(g, round, false)) < 0)
                        return r;
        for (unsigned round = 0; round < g->runs; round++)
                if ((r = run_round(g, round, true)) < 0)
                        return r;
        for (int i = 0; i < N_G; i++) {
                bench_stats_compute(&g->c[i].st, g->c[i].ms, g->c[i].n);
                bench_stats_compute(&g->c[i].dst, g->c[i].diff, g->c[i].n);
        }
        return 0;
}

/* Target: heal adds less than bwrap (this invocation's bwrap, else the issue's ~8 ms). */
static double target_ms(const struct gctx *g)
{
        return g->c[G_BWRAP].on ? g->c[G_BWRAP].dst.median : REF_BWRAP_ADDS_MS;
}

static const char *verdict(const struct gctx *g)
{
        double h = g->c[G_HEAL].dst.median;

        return isnan(h) ? "n/a" : h < target_ms(g) ? "met" : "not met";
}

static void print_human(const struct gctx *g)
{
        printf("bench-gobuild: warm 'go build' of a hello module, %u rounds after %u warm-up "
               "builds per case, interleaved; euid %u\n",
               g->runs, GOBUILD_WARM_BUILDS, (unsigned)geteuid());
        printf("go's work directory: %s\n",
               g->shared_tmp ? "GOTMPDIR=T/mod/.tmp in every case "
                               "(same file system)"
                             : "$TMPDIR or /tmp (host: /tmp; heal, bwrap: their own tmpfs)");
        if (g->pids_fallback)
                printf("note: %s\n", g->note);
        printf("\n  %-6s  %9s  %9s  %9s   %s\n", "case", "median ms", "p10 ms", "p90 ms",
               "minus host, same round: median [p10, p90] ms");
        for (int i = 0; i < N_G; i++) {
                const struct gcase *gc = &g->c[i];

                if (!gc->on) {
                        printf("  %-6s  skipped: %s\n", g_names[i],
                               i == G_BWRAP ? "bwrap not installed" : "setup failed");
                        continue;
                }
                printf("  %-6s  %9.2f  %9.2f  %9.2f", g_names[i], gc->st.median, gc->st.p10,
                       gc->st.p90);
                if (i != G_HOST)
                        printf("   %+7.2f [%+.2f, %+.2f]", gc->dst.median, gc->dst.p10,
                               gc->dst.p90);
                printf("\n");
        }
        printf("\nreference (issue): bwrap adds ~8 ms to a ~120 ms build here; target: heal adds "
               "less\n");
        printf("this run: heal adds %.2f ms, %s %.2f ms: %s\n", g->c[G_HEAL].dst.median,
               g->c[G_BWRAP].on ? "bwrap adds" : "reference", target_ms(g), verdict(g));
}

static json_t *gcase_json(const struct gcase *gc, bool with_diff)
{
        if (!gc->on)
                return json_null();
        return json_pack("{s:o,s:o,s:o,s:o,s:I}", "median_ms", bench_json_num(gc->st.median),
                         "p10_ms", bench_json_num(gc->st.p10), "p90_ms", bench_json_num(gc->st.p90),
                         "minus_host_median_ms",
                         with_diff ? bench_json_num(gc->dst.median) : json_null(), "n",
                         (json_int_t)gc->n);
}

static json_t *results_json(const struct gctx *g)
{
        json_t *cases = json_object();

        for (int i = 0; i < N_G; i++)
                json_object_set_new(cases, g_names[i], gcase_json(&g->c[i], i != G_HOST));
        return json_pack("{s:s,s:I,s:I,s:I,s:b,s:o,s:s,s:o,s:s,s:b,s:s}", "bench", "gobuild",
                         "runs", (json_int_t)g->runs, "warm_builds",
                         (json_int_t)GOBUILD_WARM_BUILDS, "euid", (json_int_t)geteuid(),
                         "shared_tmp", g->shared_tmp, "cases", cases, "target",
                         "heal adds less than bwrap (issue: bwrap adds ~8 ms to ~120 ms)",
                         "target_ms", bench_json_num(target_ms(g)), "verdict", verdict(g),
                         "pids_limit_off", g->pids_fallback, "note", g->note);
}

static int rm_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
        (void)st, (void)type, (void)ftw;
        remove(path);
        return 0;
}

static void gctx_release(struct gctx *g)
{
        for (int i = 0; i < N_G; i++) {
                free(g->c[i].ms);
                free(g->c[i].diff);
        }
        running_sb = NULL;
        heal_sandbox_free(g->sb);
        if (g->root[0])
                nftw(g->root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

int main(int argc, char **argv)
{
        struct gctx g = { 0 };
        int r;

        if (parse_args(&g, argc, argv) < 0)
                return 2;
        catch_signals();
        r = make_module(&g);
        if (r < 0) {
                fprintf(stderr, "bench-gobuild: cannot create the module: %s\n", strerror(-r));
                gctx_release(&g);
                return 3;
        }
        setup_env(&g);
        setup_bwrap(&g);
        g.c[G_HOST].on = true;
        r = setup_heal(&g);
        if (r >= 0)
                r = measure(&g);
        if (r >= 0 && g.json)
                r = bench_json_print(results_json(&g));
        else if (r >= 0)
                print_human(&g);
        gctx_release(&g);
        return r < 0 ? 1 : 0;
}
