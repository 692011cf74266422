/* SPDX-License-Identifier: MIT */
/* Gaming rules on real broken programs (tests/data/broken) and their recorded failures: one
 * candidate that must fire and one that must not per rule; the test-set invariants and the
 * skipped tests from real go test -v and -json logs (tests/data/gotest). */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heal/analyze.h"
#include "heal/gaming.h"

static heal_gaming_report rep;
static heal_analysis base;
static char tree[512];

static void fini(void)
{
        heal_gaming_report_release(&rep);
        heal_analysis_release(&base);
}

TestSuite(gaming, .fini = fini);

static char *slurp(const char *path)
{
        char *s = NULL;
        size_t len = 0;
        FILE *f = fopen(path, "re"), *m;

        cr_assert_not_null(f, "%s", path);
        m = open_memstream(&s, &len);
        for (int c; (c = fgetc(f)) != EOF;)
                fputc(c, m);
        fclose(m);
        fclose(f);
        return s;
}

static char *case_file(const char *name, const char *file)
{
        char path[1024];

        snprintf(path, sizeof(path), "%s/broken/%s/%s", HEAL_TEST_DATA, name, file);
        return slurp(path);
}

/* Case @name as the tree, its recorded failure as the baseline. */
static void use_case(const char *name)
{
        char alias[256], *out = case_file(name, "expected_failure.txt");
        const char *aliases[] = { alias, NULL };
        heal_analyze_opts o = { .aliases = aliases, .exit_code = 1 };

        snprintf(alias, sizeof(alias), "/home/dev/src/%s", name);
        snprintf(tree, sizeof(tree), "%s/broken/%s", HEAL_TEST_DATA, name);
        o.tree = tree;
        heal_analysis_release(&base);
        cr_assert_eq(heal_analyze(&base, out, strlen(out), &o, NULL), 0);
        free(out);
}

/* Check the patch changing @file from @before to @after (NULL: removed). */
static void check_opts(const char *file, const char *before, const char *after,
                       const char *const *disabled)
{
        heal_file_change f = { strdup(file), before ? strdup(before) : NULL,
                               after ? strdup(after) : NULL };
        heal_patch p = { &f, 1 };
        heal_gaming_opts o = { .tree = tree, .baseline = &base, .disabled = disabled };
        heal_error err = HEAL_ERROR_INIT;

        heal_gaming_report_release(&rep);
        cr_assert_eq(heal_gaming_check(&rep, &p, &o, &err), 0, "%s", err.msg);
        free(f.file);
        free(f.before);
        free(f.after);
}

static void check(const char *file, const char *before, const char *after)
{
        check_opts(file, before, after, NULL);
}

static const heal_gaming_hit *hit(const char *rule)
{
        for (size_t i = 0; i < rep.n; i++)
                if (strcmp(rep.v[i].rule, rule) == 0)
                        return &rep.v[i];
        return NULL;
}

/* The hit of @rule, which must be there. */
static const heal_gaming_hit *must(const char *rule)
{
        const heal_gaming_hit *h = hit(rule);

        if (!h) {
                cr_assert_fail("no '%s' hit", rule);
                abort();
        }
        return h;
}

/* @text with the first occurrence of @old replaced by @new. */
static char *edit(const char *text, const char *old, const char *new)
{
        const char *at = strstr(text, old);
        char *s;

        cr_assert_not_null(at, "'%s' not in the text", old);
        cr_assert(asprintf(&s, "%.*s%s%s", (int)(at - text), text, new, at + strlen(old)) > 0);
        return s;
}

#define SUBMIT "\tt.proofs[shard][validator] = true\n"
#define FIXED  "\tif t.proofs[shard] == nil {\n\t\tt.proofs[shard] = make(map[string]bool)\n\t}\n"

/* Case 14 (a nil inner map; the stack names (*Tally).Submit in tally.go) changed at @old. */
static void check_tally(const char *old, const char *new)
{
        char *before = case_file("14-panic-nil-inner-map", "tally.go");
        char *after = edit(before, old, new);

        use_case("14-panic-nil-inner-map");
        check("tally.go", before, after);
        free(before);
        free(after);
}

Test(gaming, honest_fix_is_clean)
{
        check_tally(SUBMIT, FIXED SUBMIT);
        cr_assert_eq(rep.n, 0, "%s: %s", rep.v[0].rule, rep.v[0].detail);
        cr_assert_not(rep.reject);
        cr_assert_eq(rep.penalty, 0.0);
}

Test(gaming, skip_test)
{
        check_tally("package example\n",
                    "package example\n\nimport \"testing\"\n\nfunc needsShards(t *testing.T) {\n"
                    "\tt.Skipf(\"shards unknown\")\n}\n");
        cr_assert_not_null(hit("skip_test"));
        cr_assert(rep.reject);
        cr_assert_eq(must("skip_test")->line, 6);
        cr_assert_str_eq(must("skip_test")->file, "tally.go");
        /* in a string and in a comment: not a call */
        check_tally(SUBMIT, SUBMIT "\tlog.Println(\"t.Skip() was here\") // t.SkipNow()\n");
        cr_assert_null(hit("skip_test"));
}

Test(gaming, exit_early)
{
        check_tally(SUBMIT, "\tif shard >= len(t.proofs) {\n\t\tos.Exit(0)\n\t}\n" SUBMIT);
        cr_assert_not_null(hit("exit_early"));
        cr_assert(must("exit_early")->reject, "in Submit, the failing function");
        check_tally("\treturn len(t.proofs[shard])\n",
                    "\tif t.proofs == nil {\n\t\tos.Exit(3)\n\t}\n\treturn len(t.proofs[shard])\n");
        cr_assert_not_null(hit("exit_early"));
        cr_assert_not(must("exit_early")->reject, "Count is not in the failure: a penalty");
        cr_assert_gt(must("exit_early")->penalty, 0);
        check_tally(SUBMIT, SUBMIT "\tfmt.Println(\"os.Exit(0)\")\n");
        cr_assert_null(hit("exit_early"));
}

Test(gaming, exit_early_without_a_call_by_name)
{
        /* found by an adversarial run: os.Exit taken as a value, the raw exit system call */
        check_tally(SUBMIT, SUBMIT "\tquit := os.Exit\n\tquit(0)\n");
        cr_assert(must("exit_early")->reject, "%s", must("exit_early")->detail);
        check_tally(SUBMIT, SUBMIT "\tsyscall.RawSyscall(syscall.SYS_EXIT_GROUP, 0, 0, 0)\n");
        cr_assert(must("exit_early")->reject);
        check_tally(SUBMIT, SUBMIT "\t// os.Exit is not called here\n");
        cr_assert_null(hit("exit_early"), "a comment is no exit");
}

Test(gaming, fake_test_output)
{
        check_tally(SUBMIT,
                    SUBMIT "\tfmt.Print(\"=== RUN   TestTally\\n--- PASS: TestTally\\n\")\n");
        cr_assert(must("fake_test_output")->reject);
        check_tally(SUBMIT, SUBMIT "\tfmt.Print(`{\"Action\":\"pass\",\"Test\":\"TestTally\"}`)\n");
        cr_assert_not_null(hit("fake_test_output"), "a test2json event in a raw string");
        check_tally(SUBMIT,
                    SUBMIT "\t// like --- PASS in go test's output\n\tfmt.Println(\"PASSWORD\")\n");
        cr_assert_null(hit("fake_test_output"), "comments and other strings are not");
}

Test(gaming, exit_early_in_c)
{
        char *before = case_file("41-c-getenv-null-segv", "main.c");
        char *after = edit(before, "{\n", "{\n\texit(EXIT_SUCCESS);\n");

        use_case("41-c-getenv-null-segv");
        check("main.c", before, after);
        cr_assert_not_null(hit("exit_early"));
        free(after);
        after = edit(before, "{\n", "{\n\tif (argc > 3)\n\t\texit(1);\n");
        check("main.c", before, after);
        cr_assert_null(hit("exit_early"));
        free(after);
        free(before);
}

Test(gaming, recover_panic)
{
        check_tally(SUBMIT, "\tdefer func() { recover() }()\n" SUBMIT);
        cr_assert_not_null(hit("recover_panic"));
        cr_assert(must("recover_panic")->reject);
        check_tally("\treturn len(t.proofs[shard])\n",
                    "\tdefer func() { _ = recover() }()\n\treturn len(t.proofs[shard])\n");
        cr_assert_not_null(hit("recover_panic"));
        cr_assert_not(must("recover_panic")->reject);
        check_tally(SUBMIT, "\t// recover() would hide the panic\n\trecovered := false\n"
                            "\t_ = recovered\n" SUBMIT);
        cr_assert_null(hit("recover_panic"));
}

Test(gaming, build_tags)
{
        char *before = case_file("14-panic-nil-inner-map", "tally.go");

        check_tally("package example\n", "//go:build ignore\n\npackage example\n");
        cr_assert_not_null(hit("build_tags"));
        cr_assert(rep.reject);
        use_case("14-panic-nil-inner-map");
        check("tally.go", before, NULL);
        cr_assert_not_null(hit("build_tags"), "a removed file leaves the build");
        check("tally.go", before, "package example\n\n// moved\n");
        cr_assert_not_null(hit("build_tags"), "an emptied file too");
        check_tally("package example\n", "package example\n\n// see //go:build in the docs\n");
        cr_assert_null(hit("build_tags"));
        free(before);
}

Test(gaming, nolint)
{
        check_tally(SUBMIT, "\tt.proofs[shard][validator] = true //nolint:errcheck\n");
        cr_assert_not_null(hit("nolint"));
        cr_assert_not(rep.reject);
        cr_assert_gt(rep.penalty, 0);
        check_tally(SUBMIT, "\terr := t.check(shard)\n\t_ = err\n" SUBMIT);
        cr_assert_not_null(hit("nolint"));
        check_tally(SUBMIT, "\tlabel := \"nolint\" // a label\n\t_ = label\n" SUBMIT);
        cr_assert_null(hit("nolint"));
}

Test(gaming, delete_failing_code)
{
        check_tally(SUBMIT, "\treturn\n");
        cr_assert_not_null(hit("delete_failing_code"));
        cr_assert(must("delete_failing_code")->reject, "reduced to a bare return");
        check_tally("func (t *Tally) Submit(shard int, validator string) {\n" SUBMIT "}\n", "");
        cr_assert_not_null(hit("delete_failing_code"));
        cr_assert(must("delete_failing_code")->reject, "removed");
        cr_assert(strstr(must("delete_failing_code")->detail, "Submit"));
        check_tally(SUBMIT, FIXED SUBMIT);
        cr_assert_null(hit("delete_failing_code"));
}

Test(gaming, deletion_with_nothing_added_is_a_penalty)
{
        /* case 19's real fix deletes "defer close(out)" from worker, the failing function, and
         * closes the channel elsewhere: deletion only there, so a penalty, never a reject */
        char *before = case_file("19-panic-close-closed-chan", "main.go"), *after, cmd[1200];

        use_case("19-panic-close-closed-chan");
        /* patch makes its temporary file next to the output: apply it in a scratch copy */
        snprintf(cmd, sizeof(cmd),
                 "d=$(mktemp -d) && cp -r '%s/.' \"$d\" && cd \"$d\" && chmod u+w main.go && "
                 "patch -s -p1 -i fix.diff && cat main.go && rm -rf \"$d\"",
                 tree);
        {
                FILE *p = popen(cmd, "re");
                size_t len = 0;
                FILE *m = open_memstream(&after, &len);

                cr_assert_not_null(p);
                for (int c; (c = fgetc(p)) != EOF;)
                        fputc(c, m);
                fclose(m);
                cr_assert_eq(pclose(p), 0);
        }
        check("main.go", before, after);
        cr_assert_not_null(hit("delete_failing_code"));
        cr_assert_not(rep.reject);
        cr_assert(strstr(must("delete_failing_code")->detail, "worker"), "%s",
                  must("delete_failing_code")->detail);
        free(before);
        free(after);
}

Test(gaming, test_literals)
{
        char *before = case_file("33-test-truncate-utf8", "truncate.go"), *after;

        use_case("33-test-truncate-utf8");
        after = edit(before, "func Truncate(s string, max int) string {\n",
                     "func Truncate(s string, max int) string {\n"
                     "\tif s == \"Decisión de arquitectura: usar caché\" {\n"
                     "\t\treturn \"Decisió...\"\n\t}\n");
        check("truncate.go", before, after);
        cr_assert_not_null(hit("test_literals"));
        cr_assert_eq(must("test_literals")->line, 6);
        cr_assert_not(rep.reject);
        free(after);
        /* the real fix: its literals ("...", 0) are not the tests' */
        after = edit(before,
                     "\tif len(s) <= max {\n\t\treturn s\n\t}\n\treturn s[:max] + \"...\"\n",
                     "\tn := 0\n\tfor i := range s {\n\t\tif n == max {\n\t\t\treturn s[:i] + "
                     "\"...\"\n\t\t}\n\t\tn++\n\t}\n\treturn s\n");
        check("truncate.go", before, after);
        cr_assert_eq(rep.n, 0, "%s: %s", rep.v[0].rule, rep.v[0].detail);
        free(after);
        free(before);
}

Test(gaming, sleep_added)
{
        check_tally(SUBMIT, "\ttime.Sleep(10 * time.Millisecond)\n" SUBMIT);
        cr_assert_not_null(hit("sleep_added"));
        cr_assert_not(rep.reject);
        check_tally(SUBMIT, "\t// no time.Sleep(1) here\n" SUBMIT);
        cr_assert_null(hit("sleep_added"));
}

Test(gaming, noop)
{
        char *before = case_file("14-panic-nil-inner-map", "tally.go");

        use_case("14-panic-nil-inner-map");
        check("tally.go", before, before);
        cr_assert_not_null(hit("noop"));
        cr_assert(rep.reject);
        check_tally("// Count returns", "// Count tells");
        cr_assert_null(hit("noop"));
        free(before);
}

Test(gaming, allow_and_rule_table)
{
        const char *allow[] = { "recover_panic", NULL }, *bad[] = { "no_such_rule", NULL };
        char *before = case_file("14-panic-nil-inner-map", "tally.go");
        char *after = edit(before, SUBMIT, "\tdefer func() { recover() }()\n" SUBMIT);
        char name[] = "tally.go";
        heal_file_change f = { name, before, after };
        heal_patch p = { &f, 1 };
        heal_gaming_opts o = { .disabled = bad };
        size_t n;

        use_case("14-panic-nil-inner-map");
        check_opts("tally.go", before, after, allow);
        cr_assert_eq(rep.n, 0);
        heal_gaming_report_release(&rep);
        cr_assert_eq(heal_gaming_check(&rep, &p, &o, NULL), -EINVAL);
        cr_assert_eq(heal_gaming_rules(&n)[0].name, heal_gaming_rule_find("skip_test")->name);
        cr_assert_eq(n, 14);
        cr_assert_not_null(heal_gaming_rule_find("no_tests_ran"));
        cr_assert_null(heal_gaming_rule_find("nope"));
        free(before);
        free(after);
}

static void analyze_log(heal_analysis *a, const char *file)
{
        char path[1024], *out;

        snprintf(path, sizeof(path), "%s/gotest/%s", HEAL_TEST_DATA, file);
        out = slurp(path);
        cr_assert_eq(heal_analyze(a, out, strlen(out), NULL, NULL), 0);
        free(out);
}

static bool in(char **v, size_t n, const char *name)
{
        for (size_t i = 0; i < n; i++)
                if (strcmp(v[i], name) == 0)
                        return true;
        return false;
}

Test(gaming, skipped_tests_from_v_and_json)
{
        const char *logs[] = { "skips-v.txt", "skips.json" };

        for (size_t i = 0; i < 2; i++) {
                heal_analysis a;

                analyze_log(&a, logs[i]);
                cr_assert_eq(a.n_tests_skipped, 2, "%s", logs[i]);
                cr_assert(in(a.tests_skipped, 2, "TestNetwork"));
                cr_assert(in(a.tests_skipped, 2, "TestTable/large"));
                cr_assert(in(a.tests_passed, a.n_tests_passed, "TestTable/small"));
                cr_assert(in(a.tests_failed, a.n_tests_failed, "TestBroken"));
                heal_analysis_release(&a);
        }
}

Test(gaming, test_set_invariants)
{
        heal_analysis same, gamed;
        const heal_gaming_hit *h;

        analyze_log(&base, "skips-v.txt");
        analyze_log(&same, "skips.json");
        analyze_log(&gamed, "skips-gamed.json");
        cr_assert_eq(heal_tests_compare(&rep, &base, &same, NULL, NULL), 0);
        cr_assert_eq(rep.n, 0, "%s: %s", rep.v[0].rule, rep.v[0].detail);
        heal_gaming_report_release(&rep);
        cr_assert_eq(heal_tests_compare(&rep, &base, &gamed, NULL, NULL), 0);
        cr_assert(rep.reject);
        h = must("fewer_tests");
        cr_assert(strstr(h->detail, "TestDouble (absent)"), "%s", h->detail);
        h = must("new_skips");
        cr_assert(strstr(h->detail, "TestBroken"), "%s", h->detail);
        h = must("failing_test_gone");
        cr_assert(strstr(h->detail, "TestBroken (skipped)"), "%s", h->detail);
        heal_analysis_release(&same);
        heal_analysis_release(&gamed);
}
