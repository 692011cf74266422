/* SPDX-License-Identifier: MIT */
/*
 * Fingerprints of a failure.
 *
 * Exact: the output with what changes from run to run replaced (the table below, applied in
 * order, each a PCRE2 pattern compiled once with JIT), the tree's paths written as <tree>, go
 * test's progress lines (=== RUN, --- PASS) dropped, and each goroutine dump's blocks sorted;
 * then XXH3-128 of that text and the exit status. The same failure run twice hashes the same.
 *
 * Cause: for every error diagnostic, its kind, file, enclosing function and message template
 * (quoted literals, numbers and identifiers abstracted; an identifier is a word with a dot,
 * underscore, digit or inner capital, or a word of the diagnostic's source line), sorted and
 * deduplicated; then XXH3-128. The same root cause in other words, values or lines collides;
 * what a fix changes (another function, another kind of failure) does not. docs/analysis.md
 * lists what each level catches and misses.
 * See: https://www.pcre.org/current/doc/html/pcre2api.html (pcre2_substitute, pcre2_jit_compile),
 *      https://github.com/Cyan4973/xxHash (XXH3).
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <ctype.h>
#include <errno.h>
#include <pcre2.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "heal/buf.h"

#include "core/util.h"
#include "repair/repair-internal.h"

static const struct normalizer {
        const char *name, *pattern, *replacement;
} normalizers[] = {
        { "timestamp",
          "\\d{4}-\\d\\d-\\d\\d[T ]\\d\\d:\\d\\d:\\d\\d(?:\\.\\d+)?(?:Z|[+-]\\d\\d:?\\d\\d)?",
          "<time>" },
        { "log-timestamp", "\\d{4}/\\d\\d/\\d\\d \\d\\d:\\d\\d:\\d\\d(?:\\.\\d+)?", "<time>" },
        { "temp-path", "/tmp/[\\w.+-]*\\d[\\w./+-]*", "<tmp>" },
        { "hex", "0x[0-9a-fA-F]+", "0x?" },
        { "goroutine-id", "(?i)\\bgoroutine \\d+", "goroutine N" },
        { "sanitizer-pid", "==\\d+==", "==PID==" },
        { "pid", "\\b(pid|PID|process)([ =:]+)\\d+", "$1$2N" },
        { "port", "\\b(127\\.0\\.0\\.1|localhost|0\\.0\\.0\\.0|\\[::1?\\]):\\d+", "$1:PORT" },
        { "duration", "\\b\\d+(?:\\.\\d+)?(?:ns|us|\\xc2\\xb5s|ms|s|m|h)\\b", "<dur>" },
};

static pcre2_code *compiled[ELEMENTSOF(normalizers)];
static pthread_once_t once = PTHREAD_ONCE_INIT;
static bool compile_failed;

static void compile(void)
{
        for (size_t i = 0; i < ELEMENTSOF(normalizers); i++) {
                int code;
                PCRE2_SIZE off;

                compiled[i] = pcre2_compile((PCRE2_SPTR)normalizers[i].pattern,
                                            PCRE2_ZERO_TERMINATED, 0, &code, &off, NULL);
                if (!compiled[i]) {
                        compile_failed = true;
                        return;
                }
                (void)pcre2_jit_compile(compiled[i], PCRE2_JIT_COMPLETE); /* else interpreted */
        }
}

/* Replace every match of normalizer @i in @*text; the result replaces @*text. */
static int substitute(size_t i, char **text, size_t *len)
{
        pcre2_match_data *md = pcre2_match_data_create_from_pattern(compiled[i], NULL);
        PCRE2_SIZE out_len = *len + *len / 2 + 64;
        char *out = NULL;
        int rc;

        if (!md)
                return -ENOMEM;
        for (int tries = 0; tries < 2; tries++) {
                free(out);
                out = malloc(out_len + 1);
                if (!out)
                        break;
                rc = pcre2_substitute(compiled[i], (PCRE2_SPTR)*text, *len, 0,
                                      PCRE2_SUBSTITUTE_GLOBAL | PCRE2_SUBSTITUTE_OVERFLOW_LENGTH,
                                      md, NULL, (PCRE2_SPTR)normalizers[i].replacement,
                                      PCRE2_ZERO_TERMINATED, (PCRE2_UCHAR *)out, &out_len);
                if (rc >= 0) {
                        free(*text);
                        *text = out;
                        *len = out_len;
                        pcre2_match_data_free(md);
                        return 0;
                }
                if (rc != PCRE2_ERROR_NOMEMORY)
                        break; /* e.g. a match limit: keep the text as it is */
        }
        free(out);
        pcre2_match_data_free(md);
        return out ? 0 : -ENOMEM;
}

/* Write @s with every occurrence of @from replaced by @to. */
static void replace_all(heal_buf *b, const char *s, size_t len, const char *from, const char *to)
{
        size_t n = strlen(from);

        while (len > 0) {
                const char *hit = n ? memmem(s, len, from, n) : NULL;
                size_t k = hit ? (size_t)(hit - s) : len;

                heal_buf_append(b, s, k);
                if (!hit)
                        break;
                heal_buf_puts(b, to);
                s += k + n;
                len -= k + n;
        }
}

static int cmp_str(const void *a, const void *b)
{
        return strcmp(*(char *const *)a, *(char *const *)b);
}

/* One goroutine block from line @i to the blank line after it (or the end); *@system: every
 * call in it is the runtime's own. Returns the line after the block. */
static size_t read_block(const struct lines *L, size_t i, heal_buf *blk, bool *system)
{
        *system = true;
        heal_buf_puts(blk, L->v[i]);
        heal_buf_puts(blk, "\n");
        for (i++; i < L->n && L->v[i][0]; i++) {
                heal_buf_puts(blk, L->v[i]);
                heal_buf_puts(blk, "\n");
                if (L->v[i][0] != '\t')
                        *system &= starts_with(L->v[i], "runtime.") ||
                                   starts_with(L->v[i], "created by runtime.");
        }
        return i;
}

static bool progress_line(const char *s)
{
        s += strspn(s, " ");
        return starts_with(s, "=== RUN") || starts_with(s, "=== PAUSE") ||
               starts_with(s, "=== CONT") || starts_with(s, "=== NAME") ||
               starts_with(s, "--- PASS: ");
}

/*
 * Drop go test's progress lines; in each goroutine dump drop the runtime's own goroutines (GC
 * workers and finalizers come and go from run to run) and sort the others.
 */
static int reorder(char **text, size_t *len)
{
        struct lines L;
        heal_buf out = HEAL_BUF_INIT(*len + 1);
        char **blocks = NULL;
        size_t nb = 0;
        int r = lines_split(&L, *text, *len);

        if (r < 0)
                return r;
        for (size_t i = 0; i < L.n && r == 0; i++) {
                if (progress_line(L.v[i]))
                        continue;
                if (starts_with(L.v[i], "goroutine N [")) {
                        heal_buf blk = HEAL_BUF_INIT(*len + 1);
                        bool system;
                        char **g;

                        i = read_block(&L, i, &blk, &system);
                        if (!system) {
                                g = realloc(blocks, (nb + 1) * sizeof(*g));
                                if (!g || !(g[nb] = heal_buf_detach(&blk, NULL)))
                                        r = -ENOMEM;
                                if (g)
                                        blocks = g, nb += r == 0;
                        }
                        heal_buf_release(&blk);
                        if (i + 1 < L.n && starts_with(L.v[i + 1], "goroutine N ["))
                                continue; /* the dump goes on after the blank line */
                        if (nb > 1)
                                qsort(blocks, nb, sizeof(*blocks), cmp_str);
                        for (size_t k = 0; k < nb; k++) /* blank lines between, as printed */
                                heal_buf_puts(&out, k ? "\n" : ""), heal_buf_puts(&out, blocks[k]),
                                        free(blocks[k]);
                        nb = 0;
                        if (i >= L.n)
                                break;
                }
                heal_buf_puts(&out, L.v[i]);
                heal_buf_puts(&out, "\n");
        }
        for (size_t k = 0; k < nb; k++)
                free(blocks[k]);
        free(blocks);
        lines_release(&L);
        free(*text);
        *text = heal_buf_detach(&out, len);
        heal_buf_release(&out);
        return *text ? r : -ENOMEM;
}

int heal_fingerprint_normalize(char **ret, const char *output, size_t len,
                               const heal_analyze_opts *o, heal_error *err)
{
        heal_buf b = HEAL_BUF_INIT((size_t)-1);
        char *text;
        size_t n;
        int r = 0;

        pthread_once(&once, compile);
        if (compile_failed)
                return heal_error_set(err, -ENOMEM, "cannot compile the normalizers");
        if (o && o->tree && o->tree[0]) {
                replace_all(&b, output, len, o->tree, "<tree>");
        } else {
                heal_buf_append(&b, output, len);
        }
        for (size_t i = 0; o && o->aliases && o->aliases[i]; i++) {
                heal_buf next = HEAL_BUF_INIT((size_t)-1);

                replace_all(&next, b.data ? b.data : "", b.len, o->aliases[i], "<tree>");
                heal_buf_release(&b);
                b = next;
        }
        text = heal_buf_detach(&b, &n);
        heal_buf_release(&b);
        for (size_t i = 0; text && r == 0 && i < ELEMENTSOF(normalizers); i++)
                r = substitute(i, &text, &n);
        if (text && r == 0)
                r = reorder(&text, &n);
        if (!text || r < 0) {
                free(text);
                return heal_error_set(err, -ENOMEM, "out of memory");
        }
        *ret = text;
        return 0;
}

static void hex128(char out[33], const void *data, size_t len)
{
        XXH128_hash_t h = XXH3_128bits(data, len);

        snprintf(out, 33, "%016llx%016llx", (unsigned long long)h.high64,
                 (unsigned long long)h.low64);
}

int fingerprint_exact(heal_analysis *a, const char *text, size_t len, const heal_analyze_opts *o,
                      heal_error *err)
{
        char *norm, tail[32];
        heal_buf b = HEAL_BUF_INIT((size_t)-1);
        int r = heal_fingerprint_normalize(&norm, text, len, o, err);

        if (r < 0)
                return r;
        heal_buf_puts(&b, norm);
        snprintf(tail, sizeof(tail), "\nexit=%d", o ? o->exit_code : 1);
        heal_buf_puts(&b, tail);
        free(norm);
        if (!b.data)
                return heal_error_set(err, -ENOMEM, "out of memory");
        hex128(a->exact, b.data, b.len);
        heal_buf_release(&b);
        return 0;
}
