/* SPDX-License-Identifier: MIT */
/* Line diffs: unified diffs that the real patch(1) and git-apply(1) accept (round trips in a
 * temporary directory), shortest scripts (checked against an LCS table), the line list and its
 * line map, patch stats, and the limits (large files, whole-region fallback). */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "heal/diff.h"

static char dir[] = "/tmp/heal-test-diff-XXXXXX";

static void init(void)
{
        cr_assert_not_null(mkdtemp(dir));
}

static void fini(void)
{
        char cmd[600];

        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        cr_assert_eq(system(cmd), 0);
}

TestSuite(diff, .init = init, .fini = fini);

static void put(const char *rel, const char *text, size_t len)
{
        char path[512];
        FILE *f;

        snprintf(path, sizeof(path), "%s/%s", dir, rel);
        f = fopen(path, "we");
        cr_assert_not_null(f, "%s", path);
        cr_assert_eq(fwrite(text, 1, len, f), len);
        fclose(f);
}

static char *get(const char *rel)
{
        char path[512], *s = NULL;
        size_t len = 0;
        FILE *f, *m;

        snprintf(path, sizeof(path), "%s/%s", dir, rel);
        f = fopen(path, "re");
        if (!f)
                return NULL;
        m = open_memstream(&s, &len);
        for (int c; (c = fgetc(f)) != EOF;)
                fputc(c, m);
        fclose(m);
        fclose(f);
        return s;
}

/* Diff @before -> @after as file "f.go" with @ctx lines of context, apply it with @tool
 * ("patch -p1" or "git apply") in the temporary directory, and check the file then holds
 * @after. Returns the hunks. */
static int round_trip_ctx(const char *tool, const char *before, const char *after, unsigned ctx)
{
        heal_buf out = HEAL_BUF_INIT(64u << 20);
        heal_error err = HEAL_ERROR_INIT;
        char cmd[1200], *got;
        int hunks;

        unlink(strcat(strcpy(cmd, dir), "/f.go"));
        if (before)
                put("f.go", before, strlen(before));
        hunks = heal_diff_unified(&out, "f.go", before, after, ctx, &err);
        cr_assert_geq(hunks, 0, "%s", err.msg);
        if (hunks == 0) {
                cr_assert_eq(out.len, 0);
                cr_assert_str_eq(before ? before : "", after);
                heal_buf_release(&out);
                return 0;
        }
        put("p.diff", out.data, out.len);
        snprintf(cmd, sizeof(cmd), "cd '%s' && %s < p.diff >/dev/null 2>&1", dir, tool);
        cr_assert_eq(system(cmd), 0, "%s rejected:\n%s", tool, out.data);
        got = get("f.go");
        cr_assert_not_null(got);
        cr_assert_str_eq(got, after, "%s gave a different file from:\n%s", tool, out.data);
        free(got);
        heal_buf_release(&out);
        return hunks;
}

static int round_trip(const char *tool, const char *before, const char *after)
{
        return round_trip_ctx(tool, before, after, 3);
}

static void both(const char *before, const char *after)
{
        round_trip("patch -p1 -s", before, after);
        round_trip("git apply", before, after);
}

static const char *go = "package a\n\nimport \"fmt\"\n\nfunc F() int {\n\treturn 1\n}\n\n"
                        "func G() {\n\tfmt.Println(F())\n}\n";

Test(diff, insert_at_start_and_end)
{
        char start[512], end[512];

        snprintf(start, sizeof(start), "// Package a is a test.\n%s", go);
        snprintf(end, sizeof(end), "%s\nfunc H() {}\n", go);
        both(go, start);
        both(go, end);
        both(start, end);
}

Test(diff, delete_all_and_new_file)
{
        both(go, "");
        both(NULL, go);
        both("x\n", "");
        both("", "x\n");
}

Test(diff, no_newline_at_end)
{
        heal_buf out = HEAL_BUF_INIT(1 << 20);

        both("a\nb", "a\nb\n");
        both("a\nb\n", "a\nb");
        both("a\nb", "a\nc");
        both("a\nb", "z\na\nb");
        both("x", "");
        both(NULL, "only");
        cr_assert_eq(heal_diff_unified(&out, "f", "a\nb", "a\nb\n", 3, NULL), 1);
        cr_assert_str_eq(out.data, "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n"
                                   "\\ No newline at end of file\n+b\n");
        heal_buf_release(&out);
}

Test(diff, identical_is_empty)
{
        heal_buf out = HEAL_BUF_INIT(1 << 20);
        heal_diff_line *v = (heal_diff_line *)1;
        size_t n = 7;

        cr_assert_eq(heal_diff_unified(&out, "f", go, go, 3, NULL), 0);
        cr_assert_eq(out.len, 0);
        cr_assert_eq(heal_diff_unified(&out, "f", NULL, "", 3, NULL), 0);
        cr_assert_eq(heal_diff_lines(&v, &n, go, go, NULL), 0);
        cr_assert_null(v);
        cr_assert_eq(n, 0);
        heal_buf_release(&out);
}

Test(diff, exact_text_of_a_hunk)
{
        heal_buf out = HEAL_BUF_INIT(1 << 20);
        const char *want = "--- a/a.go\n+++ b/a.go\n@@ -3,6 +3,9 @@\n import \"fmt\"\n \n"
                           " func F() int {\n+\tif x {\n+\t\treturn 2\n+\t}\n \treturn 1\n }\n \n";
        const char *cut = strstr(go, "{\n") + 2;
        char after[512];

        snprintf(after, sizeof(after), "%.*s\tif x {\n\t\treturn 2\n\t}\n%s", (int)(cut - go), go,
                 cut);
        cr_assert_eq(heal_diff_unified(&out, "a.go", go, after, 3, NULL), 1);
        cr_assert_str_eq(out.data, want);
        out.len = 0;
        cr_assert_eq(heal_diff_unified(&out, "a.go", NULL, "x\n", 3, NULL), 1);
        cr_assert_str_eq(out.data, "--- /dev/null\n+++ b/a.go\n@@ -0,0 +1 @@\n+x\n");
        heal_buf_release(&out);
}

Test(diff, two_hunks_and_zero_context)
{
        char before[4096] = "", after[4096] = "";

        for (int i = 0; i < 40; i++) {
                char l[32];

                snprintf(l, sizeof(l), "line %d\n", i);
                strcat(before, l);
                if (i == 3 || i == 30)
                        strcat(after, "changed\n");
                else if (i != 20)
                        strcat(after, l);
        }
        cr_assert_eq(round_trip("patch -p1 -s", before, after), 3);
        round_trip("git apply", before, after);
        {
                heal_buf out = HEAL_BUF_INIT(1 << 20);

                cr_assert_eq(heal_diff_unified(&out, "f", before, after, 0, NULL), 3);
                cr_assert(strstr(out.data, "@@ -21 +20,0 @@\n-line 20\n"), "%s", out.data);
                heal_buf_release(&out);
        }
        cr_assert_eq(round_trip_ctx("patch -p1 -s", before, after, 0), 3);
        round_trip_ctx("git apply --unidiff-zero", before, after, 0);
        round_trip_ctx("patch -p1 -s", "a\nb\n", "a\nx\nb\ny\n", 0);
        round_trip_ctx("git apply --unidiff-zero", "a\nb\n", "x\na\nx\nb\ny\n", 0);
        round_trip_ctx("patch -p1 -s", "a\nb\n", "a\nx\nb\ny\n", 1);
}

/* Lines from a small alphabet, so that the sides share many lines in varied orders. */
static char *random_text(unsigned *seed, size_t max_lines)
{
        size_t n = (size_t)rand_r(seed) % (max_lines + 1), len = 0;
        char *s = calloc(n * 8 + 2, 1);

        cr_assert_not_null(s);
        for (size_t i = 0; i < n; i++)
                len += (size_t)sprintf(s + len, "%c%c\n", 'a' + rand_r(seed) % 6,
                                       rand_r(seed) % 4 ? ' ' : 'x');
        if (len && rand_r(seed) % 4 == 0)
                s[--len] = '\0'; /* no newline at the end */
        return s;
}

static char *mutate(unsigned *seed, const char *s)
{
        size_t len = strlen(s);
        char *t = calloc(len * 2 + 64, 1), *o = t;

        cr_assert_not_null(t);
        for (const char *p = s; *p;) {
                size_t k = strcspn(p, "\n");
                int dice = rand_r(seed) % 10;

                if (dice == 0)
                        o += sprintf(o, "new %d\n", rand_r(seed) % 5);
                if (dice != 1) {
                        memcpy(o, p, k + (p[k] == '\n'));
                        o += k + (p[k] == '\n');
                }
                p += k + (p[k] == '\n');
        }
        return t;
}

Test(diff, random_pairs_round_trip, .timeout = 120)
{
        unsigned seed = 20261129;

        for (int i = 0; i < 200; i++) {
                char *a = random_text(&seed, 40);
                char *b = i % 2 ? random_text(&seed, 40) : mutate(&seed, a);

                round_trip_ctx(i % 4 == 3 ? "git apply" : "patch -p1 -s", i % 17 ? a : NULL, b,
                               i % 4 == 3 ? 3 : (unsigned)i % 4);
                free(a);
                free(b);
        }
}

static size_t lcs(const char *a, const char *b)
{
        const char *la[64], *lb[64];
        size_t na = 0, nb = 0, t[65][65] = { { 0 } };

        for (const char *p = a; *p; p += strcspn(p, "\n") + (p[strcspn(p, "\n")] == '\n'))
                la[na++] = p;
        for (const char *p = b; *p; p += strcspn(p, "\n") + (p[strcspn(p, "\n")] == '\n'))
                lb[nb++] = p;
        for (size_t i = 1; i <= na; i++)
                for (size_t j = 1; j <= nb; j++) {
                        size_t x = strcspn(la[i - 1], "\n"), y = strcspn(lb[j - 1], "\n");
                        bool eq = x == y && memcmp(la[i - 1], lb[j - 1], x + 1) == 0;

                        size_t up = t[i - 1][j], left = t[i][j - 1];

                        t[i][j] = eq ? t[i - 1][j - 1] + 1 : up > left ? up : left;
                }
        return t[na][nb];
}

static size_t count_lines(const char *s)
{
        size_t n = 0;

        for (; *s; s++)
                n += *s == '\n';
        return n;
}

Test(diff, scripts_are_shortest)
{
        unsigned seed = 7;

        for (int i = 0; i < 500; i++) {
                char *a = random_text(&seed, 30), *b = random_text(&seed, 30);
                size_t na = count_lines(a) + (a[0] && a[strlen(a) - 1] != '\n');
                size_t nb = count_lines(b) + (b[0] && b[strlen(b) - 1] != '\n');
                heal_diff_line *v;
                size_t n;

                cr_assert_geq(heal_diff_lines(&v, &n, a, b, NULL), 0);
                cr_assert_eq(n, na + nb - 2 * lcs(a, b), "%zu edits for:\n%s\n--\n%s", n, a, b);
                free(v);
                free(a);
                free(b);
        }
}

Test(diff, lines_and_map)
{
        heal_diff_line *v;
        size_t n;

        cr_assert_eq(heal_diff_lines(&v, &n, "a\nb\nc\nd\n", "a\nX\nY\nc\nd\nZ", NULL), 4);
        cr_assert_eq(v[0].op, '-');
        cr_assert_eq(v[0].old_line, 2);
        cr_assert_eq(v[0].new_line, 1);
        cr_assert_eq(v[0].len, 1);
        cr_assert_eq(v[0].text[0], 'b');
        cr_assert_eq(v[1].op, '+');
        cr_assert_eq(v[1].old_line, 2);
        cr_assert_eq(v[1].new_line, 2);
        cr_assert_eq(v[2].new_line, 3);
        cr_assert_eq(v[3].op, '+');
        cr_assert_eq(v[3].new_line, 6);
        cr_assert_eq(v[3].old_line, 4);
        cr_assert(v[3].no_newline);
        cr_assert_not(v[2].no_newline);
        cr_assert_eq(heal_diff_line_map(v, n, 1), 1);
        cr_assert_eq(heal_diff_line_map(v, n, 2), 0);
        cr_assert_eq(heal_diff_line_map(v, n, 3), 4);
        cr_assert_eq(heal_diff_line_map(v, n, 4), 5);
        free(v);
}

Test(diff, patch_stat_and_patch_diff)
{
        char a[] = "a.go", a0[] = "a\nb\n", a1[] = "a\nc\nd\n", n[] = "new.go", n1[] = "x\ny\n",
             s[] = "same.go", s0[] = "s\n";
        heal_file_change files[] = { { a, a0, a1 }, { n, NULL, n1 }, { s, s0, s0 } };
        heal_patch p = { files, 3 };
        heal_buf out = HEAL_BUF_INIT(1 << 20);
        heal_diff_stat st;
        char cmd[700];

        cr_assert_eq(heal_patch_diff_stat(&st, &p, NULL), 0);
        cr_assert_eq(st.files_changed, 2);
        cr_assert_eq(st.lines_added, 4);
        cr_assert_eq(st.lines_removed, 1);
        cr_assert_eq(heal_patch_diff(&out, &p, NULL), 2);
        put("a.go", "a\nb\n", 4);
        put("p.diff", out.data, out.len);
        snprintf(cmd, sizeof(cmd), "cd '%s' && git apply --check p.diff && git apply p.diff", dir);
        cr_assert_eq(system(cmd), 0, "%s", out.data);
        heal_buf_release(&out);
}

static char *numbered(size_t n, size_t changed)
{
        char *s = malloc(n * 24 + 1), *o = s;

        cr_assert_not_null(s);
        for (size_t i = 0; i < n; i++)
                o += sprintf(o, i == changed ? "changed %zu\n" : "line number %zu\n", i);
        return s;
}

Test(diff, large_file_small_change_is_fast)
{
        char *a = numbered(200000, (size_t)-1), *b = numbered(200000, 123456);
        struct timespec t0, t1;

        clock_gettime(CLOCK_MONOTONIC, &t0);
        cr_assert_eq(round_trip("patch -p1 -s", a, b), 1);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        cr_assert_lt(t1.tv_sec - t0.tv_sec, 3);
        free(a);
        free(b);
}

Test(diff, beyond_the_limits_replaces_whole_regions, .timeout = 60)
{
        size_t n = 30000;
        char *a = malloc(n * 16), *b = malloc(n * 16), *big = malloc((4u << 20) + 2);
        heal_diff_line *v;
        size_t nv;
        char *o = a, *q = b;

        cr_assert(a && b && big);
        for (size_t i = 0; i < n; i++) {
                o += sprintf(o, "a%zu\n", i);
                q += sprintf(q, "b%zu\n", i);
        }
        cr_assert_eq(heal_diff_lines(&v, &nv, a, b, NULL), (int)(2 * n));
        free(v);
        round_trip("patch -p1 -s", a, b);
        memset(big, 'x', (4u << 20) + 1);
        big[(4u << 20) + 1] = '\0';
        cr_assert_eq(heal_diff_lines(&v, &nv, big, "", NULL), -EFBIG);
        free(a);
        free(b);
        free(big);
}
