/* SPDX-License-Identifier: MIT */
/*
 * bench-workspace: what a repair candidate's workspace costs, apart from the command it runs.
 * On trees of 100, 10,000 and 100,000 files, each candidate (one edited file, the command
 * `true`):
 *   - overlay: heal's workspace (the tree as an overlay's read-only lower layer, the changed
 *     file in a layer above it, writes to a hidden tmpfs), created, run, torn down;
 *   - copy: the tree copied to a temporary directory (copy_file_range per file), the edit
 *     written there, the same sandbox run in it, the copy removed (the "copy file -> sandbox"
 *     approach of the heal-cli post);
 *   - floor: the bare sandbox running `true` with the default view (no workspace at all).
 * Medians of --runs runs (copy: at most 3 from 10,000 files), in this process; ms and the ratios
 * copy/overlay and overlay-floor.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "heal/repair.h"

#include "bench-util.h"
#include "repair/search-internal.h"

static const char *const true_argv[] = { "true", NULL };

static void write_text(const char *path, const char *text)
{
        FILE *f = fopen(path, "we");

        if (f) {
                fputs(text, f);
                fclose(f);
        }
}

/* @n files, 100 per directory, each a few lines of Go; main.go at the top is the one edited. */
static void make_tree(const char *dir, unsigned n)
{
        char path[PATH_MAX];

        mkdir(dir, 0755);
        snprintf(path, sizeof(path), "%s/main.go", dir);
        write_text(path, "package main\n\nfunc main() {\n\tprintln(\"hello\")\n}\n");
        for (unsigned i = 1; i < n; i++) {
                if (i % 100 == 1) {
                        snprintf(path, sizeof(path), "%s/d%u", dir, i / 100);
                        mkdir(path, 0755);
                }
                snprintf(path, sizeof(path), "%s/d%u/f%u.go", dir, i / 100, i);
                write_text(path, "package d\n\n// F returns its argument.\nfunc F(x int) int { "
                                 "return x }\n");
        }
}

static int rm_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
        (void)st, (void)type, (void)ftw;
        remove(path);
        return 0;
}

static const char *copy_to;
static size_t copy_from_len;

static int copy_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
        char dst[PATH_MAX];
        int in, out;

        (void)ftw;
        snprintf(dst, sizeof(dst), "%s%s", copy_to, path + copy_from_len);
        if (type == FTW_D)
                return mkdir(dst, st->st_mode & 07777) < 0 && errno != EEXIST ? -1 : 0;
        if (type != FTW_F)
                return 0;
        in = open(path, O_RDONLY | O_CLOEXEC);
        out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, st->st_mode & 07777);
        if (in >= 0 && out >= 0)
                while (copy_file_range(in, NULL, out, NULL, 1u << 30, 0) > 0)
                        ;
        if (in >= 0)
                close(in);
        if (out >= 0)
                close(out);
        return 0;
}

static heal_sandbox *plain_sandbox(const char *cwd)
{
        heal_sandbox *sb = NULL;
        heal_sandbox_limits lim = HEAL_SANDBOX_LIMITS_INIT;

        if (heal_sandbox_new(&sb, NULL) < 0)
                return NULL;
        lim.pids_max = 0; /* as root without a writable cgroup the default would be refused */
        heal_sandbox_set_limits(sb, &lim, NULL);
        heal_sandbox_set_cwd(sb, cwd, NULL);
        return sb;
}

static double run_floor(const char *tree)
{
        heal_sandbox *sb = plain_sandbox(tree);
        heal_sandbox_result res;
        uint64_t t = bench_now_ns();

        if (!sb || heal_sandbox_run(sb, true_argv, &res, NULL) < 0)
                return NAN;
        heal_sandbox_result_release(&res);
        heal_sandbox_free(sb);
        return (double)(bench_now_ns() - t) / 1e6;
}

static double run_copy(const char *tree, const heal_patch *p)
{
        char dir[] = "/var/tmp/heal-bench-copy-XXXXXX", path[PATH_MAX];
        heal_sandbox *sb;
        heal_sandbox_result res;
        uint64_t t = bench_now_ns();
        double ms = NAN;

        if (!mkdtemp(dir))
                return NAN;
        copy_to = dir;
        copy_from_len = strlen(tree);
        nftw(tree, copy_entry, 64, FTW_PHYS);
        snprintf(path, sizeof(path), "%s/%s", dir, p->files[0].file);
        write_text(path, p->files[0].after);
        sb = plain_sandbox(dir);
        if (sb && heal_sandbox_run(sb, true_argv, &res, NULL) == 0) {
                heal_sandbox_result_release(&res);
                ms = 0;
        }
        heal_sandbox_free(sb);
        nftw(dir, rm_entry, 64, FTW_DEPTH | FTW_PHYS);
        return isnan(ms) ? ms : (double)(bench_now_ns() - t) / 1e6;
}

static double run_overlay(const struct ws_config *c, const heal_patch *p)
{
        heal_sandbox_result res;
        uint64_t t = bench_now_ns();

        if (workspace_run(&res, c, true_argv, p, NULL, NULL, NULL) < 0)
                return NAN;
        heal_sandbox_result_release(&res);
        return (double)(bench_now_ns() - t) / 1e6;
}

static void measure(json_t *out, unsigned n_files, unsigned runs)
{
        char tree[64], path[PATH_MAX];
        heal_sandbox_limits lim = HEAL_SANDBOX_LIMITS_INIT;
        heal_repair_opts o = { .argv = true_argv, .limits = &lim };
        static char main_go[] = "main.go";
        heal_file_change fc = { .file = main_go };
        heal_patch p = { .files = &fc, .n_files = 1 };
        struct ws_config c;
        double *ov = calloc(runs, sizeof(double)), *cp = calloc(runs, sizeof(double));
        double *fl = calloc(runs, sizeof(double));
        unsigned copy_runs = n_files >= 10000 && runs > 3 ? 3 : runs;
        struct bench_stats s_ov, s_cp, s_fl;
        json_t *row = json_object();

        snprintf(tree, sizeof(tree), "/var/tmp/heal-bench-tree-%u", n_files);
        nftw(tree, rm_entry, 64, FTW_DEPTH | FTW_PHYS);
        make_tree(tree, n_files);
        lim.pids_max = 0;
        o.tree = tree;
        snprintf(path, sizeof(path), "%s/main.go", tree);
        fc.before = strdup("package main\n\nfunc main() {\n\tprintln(\"hello\")\n}\n");
        fc.after = strdup("package main\n\nfunc main() {\n\tprintln(\"hello, heal\")\n}\n");
        if (!ov || !cp || !fl || !fc.before || !fc.after ||
            ws_config_init(&c, &o, false, NULL) < 0) {
                fprintf(stderr, "bench-workspace: setup failed\n");
                exit(1);
        }
        for (unsigned r = 0; r < 3; r++) /* warm up: page cache, the first mounts */
                run_overlay(&c, &p), run_floor(tree);
        for (unsigned r = 0; r < runs; r++) {
                ov[r] = run_overlay(&c, &p);
                fl[r] = run_floor(tree);
                if (r < copy_runs)
                        cp[r] = run_copy(tree, &p);
        }
        bench_stats_compute(&s_ov, ov, runs);
        bench_stats_compute(&s_cp, cp, copy_runs);
        bench_stats_compute(&s_fl, fl, runs);
        printf("  %6u files: overlay %7.2f ms   copy %8.2f ms   floor %6.2f ms   "
               "copy/overlay %6.1fx   overlay-floor %+.2f ms\n",
               n_files, s_ov.median, s_cp.median, s_fl.median,
               bench_ratio(s_cp.median, s_ov.median), s_ov.median - s_fl.median);
        json_object_set_new(row, "files", json_integer(n_files));
        json_object_set_new(row, "overlay_ms", bench_json_num(s_ov.median));
        json_object_set_new(row, "copy_ms", bench_json_num(s_cp.median));
        json_object_set_new(row, "floor_ms", bench_json_num(s_fl.median));
        json_array_append_new(out, row);
        nftw(tree, rm_entry, 64, FTW_DEPTH | FTW_PHYS);
        free(fc.before), free(fc.after), free(ov), free(cp), free(fl);
}

int main(int argc, char **argv)
{
        static const unsigned sizes[] = { 100, 10000, 100000 };
        unsigned runs = 20;
        bool json = false;
        json_t *out = json_array();

        for (int i = 1; i < argc; i++) {
                if (!strcmp(argv[i], "--json"))
                        json = true;
                else if (!strcmp(argv[i], "--runs") && i + 1 < argc &&
                         bench_parse_runs(argv[++i], &runs))
                        continue;
                else {
                        fprintf(stderr, "usage: bench-workspace [--runs N] [--json]\n");
                        return 2;
                }
        }
        printf("bench-workspace: one candidate's workspace (one edited file, CMD = true), "
               "median of %u runs\n",
               runs);
        for (size_t i = 0; i < ELEMENTSOF(sizes); i++)
                measure(out, sizes[i], runs);
        if (json)
                return bench_json_print(out) < 0;
        json_decref(out);
        return 0;
}
