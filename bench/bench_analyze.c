/* SPDX-License-Identifier: MIT */
/*
 * bench-analyze: how fast failure analysis is, against the floor of hashing the same bytes.
 *   - normalisation + hashing (the exact fingerprint) of a large mixed log made of the corpus's
 *     recorded failures, in MB/s, against XXH3-128 of the raw bytes;
 *   - heal_analyze() of the first 1 MiB of that log (every parser, both fingerprints), in ms;
 *   - heal_analyze() of each corpus case's recorded output, median µs per case.
 * Medians of --runs runs (default 20), in this process.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "heal/analyze.h"
#include "heal/buf.h"
#include "heal/prompt.h"

#include "bench-util.h"

#define LOG_BYTES (8u << 20)

static char *read_file(const char *path, size_t *len)
{
        FILE *f = fopen(path, "re");
        heal_buf b = HEAL_BUF_INIT(64u << 20);
        char chunk[65536];
        size_t n;

        if (!f)
                return NULL;
        while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
                heal_buf_append(&b, chunk, n);
        fclose(f);
        return heal_buf_detach(&b, len);
}

struct corpus {
        char *text[64];
        size_t len[64];
        size_t n;
};

static void load(struct corpus *c, const char *dir)
{
        struct dirent **names;
        int n = scandir(dir, &names, NULL, alphasort);

        for (int i = 0; i < n; i++) {
                char path[1024];

                if (names[i]->d_name[0] >= '0' && names[i]->d_name[0] <= '9' && c->n < 64) {
                        snprintf(path, sizeof(path), "%s/%s/expected_failure.txt", dir,
                                 names[i]->d_name);
                        if ((c->text[c->n] = read_file(path, &c->len[c->n])))
                                c->n++;
                }
                free(names[i]);
        }
        free(names);
}

static double time_ms(void (*fn)(const char *, size_t), const char *text, size_t len)
{
        uint64_t t = bench_now_ns();

        fn(text, len);
        return (double)(bench_now_ns() - t) / 1e6;
}

static volatile uint64_t sink;

static void raw_hash(const char *text, size_t len)
{
        sink += XXH3_128bits(text, len).low64;
}

static void normalize_hash(const char *text, size_t len)
{
        heal_analyze_opts o = { .exit_code = 1 };
        char *norm = NULL;

        if (heal_fingerprint_normalize(&norm, text, len, &o, NULL) == 0)
                sink += XXH3_128bits(norm, strlen(norm)).low64;
        free(norm);
}

static void analyze(const char *text, size_t len)
{
        heal_analyze_opts o = { .exit_code = 1, .command = "go test ./..." };
        heal_analysis a;

        if (heal_analyze(&a, text, len, &o, NULL) == 0) {
                sink += a.n_diags;
                heal_analysis_release(&a);
        }
}

/* Outline of the corpus's nil-map case: a cold gopls (start, initialize, outline, stop), a warm
 * one (outline only), and ctags; medians in ms of @runs (cold: at most 5). */
static void outlines(unsigned runs)
{
        char dir[1024], path[1100];
        const char *aliases[] = { "/home/dev/src/14-panic-nil-inner-map", NULL };
        heal_analyze_opts ao = { .exit_code = 1, .command = "go test ./...", .aliases = aliases };
        double cold[5], warm[1000], ctags[1000];
        struct bench_stats s_cold, s_warm, s_ctags;
        heal_lsp *l = NULL, *servers[2] = { NULL, NULL };
        heal_context_opts co = { .servers = servers };
        heal_analysis a;
        heal_context ctx;
        size_t len;
        char *out;
        unsigned n_cold = runs < 5 ? runs : 5;

        snprintf(dir, sizeof(dir), "%s/broken/14-panic-nil-inner-map", HEAL_BENCH_DATA);
        snprintf(path, sizeof(path), "%s/expected_failure.txt", dir);
        if (!(out = read_file(path, &len)))
                return;
        ao.tree = co.tree = dir;
        if (heal_analyze(&a, out, len, &ao, NULL) < 0) {
                free(out);
                return;
        }
        for (unsigned r = 0; r < n_cold; r++) {
                uint64_t t = bench_now_ns();

                if (heal_lsp_start(&l, "go", dir, 20000, NULL) < 0) {
                        printf("  gopls: not available (install the gopls package)\n");
                        goto out;
                }
                servers[0] = l;
                if (heal_context_build(&ctx, &a, &co, NULL) == 0)
                        heal_context_release(&ctx);
                l = heal_lsp_free(l);
                cold[r] = (double)(bench_now_ns() - t) / 1e6;
        }
        heal_lsp_start(&l, "go", dir, 20000, NULL);
        servers[0] = l;
        for (unsigned r = 0; r < runs; r++) {
                uint64_t t = bench_now_ns();

                if (heal_context_build(&ctx, &a, &co, NULL) == 0)
                        heal_context_release(&ctx);
                warm[r] = (double)(bench_now_ns() - t) / 1e6;
        }
        l = heal_lsp_free(l);
        servers[0] = NULL;
        for (unsigned r = 0; r < runs; r++) {
                uint64_t t = bench_now_ns();

                if (heal_context_build(&ctx, &a, &co, NULL) == 0)
                        heal_context_release(&ctx);
                ctags[r] = (double)(bench_now_ns() - t) / 1e6;
        }
        bench_stats_compute(&s_cold, cold, n_cold);
        bench_stats_compute(&s_warm, warm, runs);
        bench_stats_compute(&s_ctags, ctags, runs);
        printf("\nsource windows + outline of tally.go (the nil-map case), median ms:\n"
               "  gopls, cold (start + initialize + outline + stop)  %8.2f\n"
               "  gopls, warm (outline)                              %8.2f\n"
               "  ctags                                              %8.2f\n"
               "ratios: cold/warm %.1f, ctags/warm %.1f\n",
               s_cold.median, s_warm.median, s_ctags.median,
               bench_ratio(s_cold.median, s_warm.median),
               bench_ratio(s_ctags.median, s_warm.median));
out:
        heal_analysis_release(&a);
        free(out);
}

int main(int argc, char **argv)
{
        unsigned runs = 20;
        struct corpus c = { 0 };
        heal_buf log = HEAL_BUF_INIT(LOG_BYTES + (1u << 20));
        double raw[1000], norm[1000], an[1000], raw1[1000], per_case[64 * 50];
        struct bench_stats s_raw, s_norm, s_an, s_raw1, s_case;
        size_t n_case = 0;

        if (argc == 3 && strcmp(argv[1], "--runs") == 0 && !bench_parse_runs(argv[2], &runs)) {
                fprintf(stderr, "bench-analyze: --runs takes 1 to 100000\n");
                return 2;
        }
        if (runs > 1000)
                runs = 1000;
        load(&c, HEAL_BENCH_DATA "/broken");
        if (c.n == 0) {
                fprintf(stderr, "bench-analyze: no corpus under %s/broken\n", HEAL_BENCH_DATA);
                return 1;
        }
        while (log.len < LOG_BYTES)
                for (size_t i = 0; i < c.n && log.len < LOG_BYTES; i++)
                        heal_buf_append(&log, c.text[i], c.len[i]);
        for (unsigned r = 0; r < runs; r++) {
                raw[r] = time_ms(raw_hash, log.data, log.len);
                norm[r] = time_ms(normalize_hash, log.data, log.len);
                raw1[r] = time_ms(raw_hash, log.data, 1u << 20);
                an[r] = time_ms(analyze, log.data, 1u << 20);
                for (size_t i = 0; i < c.n && r < 50; i++)
                        per_case[n_case++] = time_ms(analyze, c.text[i], c.len[i]) * 1000;
        }
        bench_stats_compute(&s_raw, raw, runs);
        bench_stats_compute(&s_norm, norm, runs);
        bench_stats_compute(&s_raw1, raw1, runs);
        bench_stats_compute(&s_an, an, runs);
        bench_stats_compute(&s_case, per_case, n_case);
        printf("bench-analyze: %zu corpus outputs, a %.1f MiB mixed log of them, %u runs\n\n", c.n,
               (double)log.len / (1 << 20), runs);
        printf("  case                                   median      p10      p90\n");
        printf("  XXH3-128 of the log (floor)          %7.2f ms %7.2f  %7.2f   %8.0f MB/s\n",
               s_raw.median, s_raw.p10, s_raw.p90, (double)log.len / 1e3 / s_raw.median);
        printf("  normalize + hash (exact fingerprint) %7.2f ms %7.2f  %7.2f   %8.0f MB/s\n",
               s_norm.median, s_norm.p10, s_norm.p90, (double)log.len / 1e3 / s_norm.median);
        printf("  heal_analyze, 1 MiB of the log       %7.2f ms %7.2f  %7.2f\n", s_an.median,
               s_an.p10, s_an.p90);
        printf("  heal_analyze, one corpus case        %7.1f µs %7.1f  %7.1f\n\n", s_case.median,
               s_case.p10, s_case.p90);
        printf("ratios of medians:\n  normalize+hash / raw hash   %6.1f\n"
               "  analyze 1 MiB / raw hash 1 MiB   %6.1f\n",
               bench_ratio(s_norm.median, s_raw.median), bench_ratio(s_an.median, s_raw1.median));
        outlines(runs);
        for (size_t i = 0; i < c.n; i++)
                free(c.text[i]);
        heal_buf_release(&log);
        return 0;
}
