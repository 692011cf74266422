/* SPDX-License-Identifier: MIT */
/* Edits from model answers: the three formats, matching (exact, trailing space, indentation),
 * one place only, the errors a model is told, and the paths that may not be edited. */
#include <criterion/criterion.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "heal/edit.h"

static char tree[] = "/tmp/heal-test-edit-XXXXXX";
static heal_edits e;
static heal_patch p;
static heal_error err;

static void put(const char *file, const char *text)
{
        char path[512];
        FILE *f;

        snprintf(path, sizeof(path), "%s/%s", tree, file);
        f = fopen(path, "we");
        cr_assert_not_null(f, "%s", path);
        fputs(text, f);
        fclose(f);
}

static void init(void)
{
        cr_assert_not_null(mkdtemp(tree));
        put("tally.go", "package example\n\nfunc (t *Tally) Submit(shard int, v string) {\n"
                        "\tt.proofs[shard][v] = true\n}\n");
}

static void fini(void)
{
        char cmd[600];

        heal_edits_release(&e);
        heal_patch_release(&p);
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tree);
        cr_assert_eq(system(cmd), 0);
}

TestSuite(edit, .init = init, .fini = fini);

static bool starts_with_text(const char *s, const char *prefix)
{
        return strncmp(s, prefix, strlen(prefix)) == 0;
}

static int apply(const char *answer)
{
        heal_apply_opts o = { .tree = tree };
        int r;

        heal_edits_release(&e);
        heal_patch_release(&p);
        err = (heal_error)HEAL_ERROR_INIT;
        r = heal_edits_parse(&e, answer, &err);
        if (r < 0)
                return r;
        return heal_edits_apply(&e, &o, &p, &err);
}

#define FIXED                                                                    \
 "package example\n\nfunc (t *Tally) Submit(shard int, v string) {\n"            \
 "\tif t.proofs[shard] == nil {\n\t\tt.proofs[shard] = map[string]bool{}\n\t}\n" \
 "\tt.proofs[shard][v] = true\n}\n"

Test(edit, search_replace_in_a_fence_under_its_path)
{
        cr_assert_eq(apply("The inner map is nil for new shards.\n\n`tally.go`\n```go\n"
                           "<<<<<<< SEARCH\n\tt.proofs[shard][v] = true\n=======\n"
                           "\tif t.proofs[shard] == nil {\n\t\tt.proofs[shard] = "
                           "map[string]bool{}\n\t}\n\tt.proofs[shard][v] = true\n"
                           ">>>>>>> REPLACE\n```\n"),
                     0, "%s", err.msg);
        cr_assert_eq(p.n_files, 1);
        cr_assert_str_eq(p.files[0].file, "tally.go");
        cr_assert_str_eq(p.files[0].after, FIXED);
        cr_assert(strstr(p.files[0].before, "Submit"), "the tree's content, untouched");
}

Test(edit, tolerant_of_trailing_space_and_indentation)
{
        /* the model lost the tab and added trailing spaces: matched, and re-indented */
        cr_assert_eq(apply("tally.go\n<<<<<<< SEARCH\nt.proofs[shard][v] = true   \n=======\n"
                           "if t.proofs[shard] == nil {\n\tt.proofs[shard] = "
                           "map[string]bool{}\n}\nt.proofs[shard][v] = true\n>>>>>>> REPLACE\n"),
                     0, "%s", err.msg);
        cr_assert_str_eq(p.files[0].after, FIXED);
}

Test(edit, unified_diff_and_whole_file_and_new_file)
{
        cr_assert_eq(apply("--- a/tally.go\n+++ b/tally.go\n@@ -3,3 +3,6 @@\n func (t *Tally) "
                           "Submit(shard int, v string) {\n+\tif t.proofs[shard] == nil {\n"
                           "+\t\tt.proofs[shard] = map[string]bool{}\n+\t}\n \tt.proofs[shard][v]"
                           " = true\n }\n"),
                     0, "%s", err.msg);
        cr_assert_str_eq(p.files[0].after, FIXED);
        cr_assert_eq(apply("Here is the whole file:\n\ntally.go\n```go\n" FIXED "```\n"), 0, "%s",
                     err.msg);
        cr_assert(e.v[0].whole_file);
        cr_assert_str_eq(p.files[0].after, FIXED);
        cr_assert_eq(apply("util/new.go\n<<<<<<< SEARCH\n=======\npackage util\n>>>>>>> REPLACE\n"),
                     0, "%s", err.msg);
        cr_assert_null(p.files[0].before, "a new file");
        cr_assert_str_eq(p.files[0].after, "package util\n");
}

Test(edit, two_edits_of_one_file_apply_in_order)
{
        cr_assert_eq(apply("tally.go\n<<<<<<< SEARCH\npackage example\n=======\npackage tally\n"
                           ">>>>>>> REPLACE\n\ntally.go\n<<<<<<< SEARCH\npackage tally\n"
                           "=======\n// Package tally counts.\npackage tally\n>>>>>>> REPLACE\n"),
                     0, "%s", err.msg);
        cr_assert_eq(p.n_files, 1);
        cr_assert(starts_with_text(p.files[0].after,
                                   "// Package tally counts.\npackage tally\n\nfunc (t"),
                  "%s", p.files[0].after);
}

Test(edit, what_does_not_apply_says_why)
{
        cr_assert_eq(apply("tally.go\n<<<<<<< SEARCH\n\tt.proof[shard][v] = false\n=======\nx\n"
                           ">>>>>>> REPLACE\n"),
                     -ENOENT);
        cr_assert(strstr(err.msg, "edit 1 ('tally.go'): the search text matches no place") &&
                          strstr(err.msg, "   4| \tt.proofs[shard][v] = true"),
                  "the nearest lines go back to the model: %s", err.msg);
        put("dup.go", "x := 1\ny := 2\nx := 1\n");
        cr_assert_eq(apply("dup.go\n<<<<<<< SEARCH\nx := 1\n=======\nx := 3\n>>>>>>> REPLACE\n"),
                     -EEXIST);
        cr_assert(strstr(err.msg, "matches 2 places (lines 1 and 3)"), "%s", err.msg);
        cr_assert_eq(apply("gone.go\n<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n"), -ENOENT);
        cr_assert(strstr(err.msg, "does not exist"), "%s", err.msg);
        cr_assert_eq(apply("tally.go\n<<<<<<< SEARCH\na\n=======\nb\n"), -EBADMSG);
        cr_assert(strstr(err.msg, "never ends"), "%s", err.msg);
        cr_assert_eq(apply("<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n"), -EBADMSG);
        cr_assert(strstr(err.msg, "names no file"), "%s", err.msg);
        cr_assert_eq(apply("Nothing to change here.\n"), 0);
        cr_assert_eq(e.n, 0);
}

Test(edit, paths_that_may_not_be_edited)
{
        char link[600];
        static const char *const bad[][2] = {
                { "../outside.go", "leaves the tree" },
                { "/etc/passwd", "absolute path" },
                { ".git/config", ".git" },
                { "sub/../../x.go", "leaves the tree" },
                { "tally_test.go", "protected" },
                { "testdata/in.txt", "protected" },
                { "pkg/tests/a.go", "protected" },
                { "via-link/x.go", "symlink" },
        };

        snprintf(link, sizeof(link), "%s/via-link", tree);
        cr_assert_eq(symlink("/etc", link), 0);
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                char answer[512];

                snprintf(answer, sizeof(answer),
                         "%s\n<<<<<<< SEARCH\n=======\nx\n>>>>>>> REPLACE\n", bad[i][0]);
                cr_assert_eq(apply(answer), -EPERM, "%s: %s", bad[i][0], err.msg);
                cr_assert(strstr(err.msg, bad[i][1]), "%s: %s", bad[i][0], err.msg);
        }
        cr_assert_eq(access("/etc/x.go", F_OK), -1, "nothing was written anywhere");
}

Test(edit, a_makefile_is_named_without_a_dot)
{
        cr_assert_eq(apply("Makefile\n<<<<<<< SEARCH\n=======\nall:\n\tcc -o x x.c -lm\n"
                           ">>>>>>> REPLACE\n"),
                     0, "%s", err.msg);
        cr_assert_str_eq(p.files[0].file, "Makefile");
        cr_assert_str_eq(p.files[0].after, "all:\n\tcc -o x x.c -lm\n");
        cr_assert_eq(apply("Then run it\n<<<<<<< SEARCH\n=======\nx\n>>>>>>> REPLACE\n"), -EBADMSG,
                     "a sentence is still no file name");
}

Test(edit, binary_files_and_heal_s_own_are_not_edited)
{
        char path[PATH_MAX];
        FILE *f;

        snprintf(path, sizeof(path), "%s/data.bin", tree);
        f = fopen(path, "we");
        cr_assert_not_null(f);
        fwrite("ABC\n\0\1\2\377binary", 1, 14, f);
        fclose(f);
        cr_assert_eq(apply("data.bin\n<<<<<<< SEARCH\nABC\n=======\nXYZ\n>>>>>>> REPLACE\n"),
                     -EMEDIUMTYPE);
        cr_assert(strstr(err.msg, "binary"), "%s", err.msg);
        cr_assert_eq(apply(".heal/undo/x\n<<<<<<< SEARCH\n=======\nx\n>>>>>>> REPLACE\n"), -EPERM);
        cr_assert_eq(apply(".GIT/config\n<<<<<<< SEARCH\n=======\nx\n>>>>>>> REPLACE\n"), -EPERM);
}
