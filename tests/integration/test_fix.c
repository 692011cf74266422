/* SPDX-License-Identifier: MIT */
/*
 * The main job end to end: `heal -- CMD` on copies of the corpus, with real sandboxes, real Go
 * builds and a scripted model (tests/helpers/fake-model.py through the exec provider) or a
 * recorded cassette (the replay provider). Each test checks the user's tree afterwards: fixed
 * only when heal says so, byte-identical otherwise.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "httpd.h"

#define REVERSE "34-test-reverse-even-length"

TestSuite(fix, .timeout = 300);

static char *slurp(const char *path)
{
        FILE *f = fopen(path, "re");
        char *s = NULL;
        size_t cap = 0, n = 0, r;

        if (!f)
                return NULL;
        do {
                if (n + 4096 + 1 > cap) {
                        cap = cap ? cap * 2 : 8192;
                        s = realloc(s, cap);
                        cr_assert_not_null(s);
                }
                r = fread(s + n, 1, cap - n - 1, f);
                n += r;
        } while (r > 0);
        fclose(f);
        s[n] = '\0';
        return s;
}

/* A copy of tests/data/broken/@name in a fresh directory (freed by the caller). */
static char *copy_case(const char *name)
{
        char *dir = test_tempdir(), cmd[PATH_MAX * 3];

        snprintf(cmd, sizeof(cmd), "cp -a '%s/broken/%s/.' '%s'", test_data_dir(), name, dir);
        cr_assert_eq(system(cmd), 0, "%s", cmd);
        return dir;
}

/* Prepended to heal's command line: "NAME=value " settings of the test's own. */
static char env_prefix[PATH_MAX + 32] = "";

struct heal_run {
        int status;
        char *out; /* stdout */
        char *err; /* stderr */
};

/* Run heal in @dir with the scripted model answering from tests/data/repair/@script (or the
 * environment @env as given, NULL-terminated "NAME=value"); @args is "ARGS -- CMD". */
static void run_heal(struct heal_run *r, const char *dir, const char *script, const char *args)
{
        char cmd[PATH_MAX * 4], out[PATH_MAX], err[PATH_MAX];
        int st;

        snprintf(out, sizeof(out), "%s.out", dir);
        snprintf(err, sizeof(err), "%s.err", dir);
        if (script && strncmp(script, "replay:", 7) == 0)
                snprintf(cmd, sizeof(cmd),
                         "cd '%s' && HEAL_MODEL=replay:fake HEAL_CASSETTE='%s/repair/%s' "
                         "%s%s %s >'%s' 2>'%s'",
                         dir, test_data_dir(), script + 7, env_prefix, HEAL_TEST_BIN, args, out,
                         err);
        else if (script)
                snprintf(cmd, sizeof(cmd),
                         "cd '%s' && HEAL_MODEL=exec:fake HEAL_LLM_COMMAND='python3 "
                         "%s/fake-model.py %s%s%s' %s %s >'%s' 2>'%s'",
                         dir, HEAL_TEST_HELPERS_SRC, script[0] == '/' ? "" : test_data_dir(),
                         script[0] == '/' ? "" : "/repair/", script, HEAL_TEST_BIN, args, out, err);
        else
                snprintf(cmd, sizeof(cmd),
                         "cd '%s' && env -u HEAL_MODEL -u OPENAI_API_KEY -u ANTHROPIC_API_KEY "
                         "-u OPENROUTER_API_KEY -u GEMINI_API_KEY %s%s %s >'%s' 2>'%s'",
                         dir, env_prefix, HEAL_TEST_BIN, args, out, err);
        st = system(cmd);
        r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        r->out = slurp(out);
        r->err = slurp(err);
        cr_assert(r->out && r->err);
        unlink(out);
        unlink(err);
}

static void run_release(struct heal_run *r)
{
        free(r->out);
        free(r->err);
}

static bool same_file(const char *a_dir, const char *b_dir, const char *file)
{
        char a[PATH_MAX], b[PATH_MAX];
        char *x, *y;
        bool same;

        snprintf(a, sizeof(a), "%s/%s", a_dir, file);
        snprintf(b, sizeof(b), "%s/%s", b_dir, file);
        x = slurp(a);
        y = slurp(b);
        same = x && y && strcmp(x, y) == 0;
        free(x);
        free(y);
        return same;
}

/* The command passes in @dir now, run in a plain sandbox. */
static void assert_passes(const char *dir, const char *cmd)
{
        heal_sandbox_result res = { 0 };
        char script[512];

        /* LeakSanitizer needs ptrace, which the default sandbox refuses */
        snprintf(script, sizeof(script), "export GOFLAGS=-count=1 ASAN_OPTIONS=detect_leaks=0; %s",
                 cmd);
        test_sh(dir, script, &res);
        cr_assert_eq(res.exit_code, 0, "'%s' still fails:\n%.*s%.*s", cmd, (int)res.out_len,
                     res.out, (int)res.err_len, res.err);
        heal_sandbox_result_release(&res);
}

static json_t *find_outcome(json_t *doc, const char *outcome)
{
        json_t *c, *cands = json_object_get(doc, "candidates");
        size_t i;

        json_array_foreach(cands, i, c) {
                if (!strcmp(json_string_value(json_object_get(c, "outcome")), outcome))
                        return c;
        }
        return NULL;
}

static bool has_rule(json_t *cand, const char *rule)
{
        json_t *x, *rules = json_object_get(cand, "rules");
        size_t i;

        json_array_foreach(rules, i, x) {
                if (!strcmp(json_string_value(x), rule))
                        return true;
        }
        return false;
}

Test(fix, a_failing_test_is_fixed_gaming_rejected_and_undone)
{
        char *dir = copy_case(REVERSE), orig[PATH_MAX];
        struct heal_run r;
        json_t *doc, *rejected;

        test_require("go");
        snprintf(orig, sizeof(orig), "%s/broken/%s", test_data_dir(), REVERSE);
        run_heal(&r, dir, REVERSE ".json", "--json --workers 2 -- go test ./...");
        cr_assert_eq(r.status, 0, "status %d\n%s", r.status, r.err);
        doc = json_loads(r.out, 0, NULL);
        cr_assert_not_null(doc, "%s", r.out);
        cr_assert_str_eq(json_string_value(json_object_get(doc, "verdict")), "fixed");
        cr_assert_not_null(json_string_value(json_object_get(doc, "written")));
        cr_assert(strstr(json_string_value(json_object_get(doc, "patch")),
                         "+\tfor i, j := 0, len(s)-1; i < j; i, j = i+1, j-1 {"),
                  "%s", r.out);
        rejected = find_outcome(doc, "rejected");
        cr_assert_not_null(rejected, "the os.Exit(0) answer is rejected: %s", r.out);
        cr_assert(has_rule(rejected, "exit_early"), "%s", r.out);
        cr_assert_not_null(find_outcome(doc, "does_not_apply"));
        cr_assert_not_null(find_outcome(doc, "build_fails"));
        json_decref(doc);
        run_release(&r);
        assert_passes(dir, "go test ./...");
        cr_assert(same_file(orig, dir, "reverse_test.go"), "the test file is untouched");
        cr_assert(!same_file(orig, dir, "reverse.go"));

        run_heal(&r, dir, NULL, "undo");
        cr_assert_eq(r.status, 0, "%s", r.err);
        cr_assert(same_file(orig, dir, "reverse.go"), "undo restores the original bytes");
        run_release(&r);
        test_rmtree(dir);
        free(dir);
}

Test(fix, dry_run_writes_nothing)
{
        char *dir = copy_case(REVERSE), orig[PATH_MAX];
        struct heal_run r;

        test_require("go");
        snprintf(orig, sizeof(orig), "%s/broken/%s", test_data_dir(), REVERSE);
        run_heal(&r, dir, REVERSE ".json", "--dry-run -- go test ./...");
        cr_assert_eq(r.status, 0, "%s", r.err);
        cr_assert(strstr(r.out, "--- a/reverse.go\n+++ b/reverse.go\n"), "the diff: %s", r.out);
        cr_assert(strstr(r.err, "dry run"), "%s", r.err);
        cr_assert(same_file(orig, dir, "reverse.go"));
        {
                char heal_dir[PATH_MAX];

                snprintf(heal_dir, sizeof(heal_dir), "%s/.heal", dir);
                cr_assert_neq(access(heal_dir, F_OK), 0, "no .heal/ made by a dry run");
        }
        run_release(&r);
        test_rmtree(dir);
        free(dir);
}

Test(fix, a_passing_command_is_only_run)
{
        char *dir = test_tempdir();
        struct heal_run r;

        test_write_file(dir, "ok.sh", "echo out; echo err >&2; exit 0\n");
        run_heal(&r, dir, NULL, "-- sh ok.sh");
        cr_assert_eq(r.status, 0);
        cr_assert_str_eq(r.out, "out\n");
        cr_assert_str_eq(r.err, "err\n", "nothing of heal's own: %s", r.err);
        run_release(&r);
        test_rmtree(dir);
        free(dir);
}

Test(fix, without_a_model_it_says_how_to_configure_one)
{
        char *dir = test_tempdir();
        struct heal_run r;

        test_write_file(dir, "fail.sh", "echo 'boom: something broke' >&2; exit 7\n");
        run_heal(&r, dir, NULL, "-- sh fail.sh");
        cr_assert_eq(r.status, 3, "no fix found: %d %s", r.status, r.err);
        cr_assert(strstr(r.err, "boom: something broke"), "CMD's output is shown: %s", r.err);
        cr_assert(strstr(r.err, "HEAL_MODEL"), "how to configure a model: %s", r.err);
        run_release(&r);
        test_rmtree(dir);
        free(dir);
}

Test(fix, usage_errors)
{
        char *dir = test_tempdir();
        struct heal_run r;

        run_heal(&r, dir, NULL, "--bind / /x -- true");
        cr_assert_eq(r.status, 2);
        cr_assert(strstr(r.err, "heal run"), "%s", r.err);
        run_release(&r);
        run_heal(&r, dir, NULL, "--candidates 0 -- true");
        cr_assert_eq(r.status, 2);
        cr_assert(strstr(r.err, "--candidates '0'"), "%s", r.err);
        run_release(&r);
        run_heal(&r, dir, NULL, "--trace -q -- true");
        cr_assert_eq(r.status, 2, "an option is no value");
        run_release(&r);
        run_heal(&r, dir, NULL, "--allow nope -- true");
        cr_assert_eq(r.status, 2);
        cr_assert(strstr(r.err, "no such rule"), "%s", r.err);
        run_release(&r);
        run_heal(&r, dir, NULL, "--allow skip_test --allow no_tests_ran -- true");
        cr_assert_eq(r.status, 0, "%s", r.err);
        run_release(&r);
        test_rmtree(dir);
        free(dir);
}

/* The reverse case's script with @key set to @value in its first rule (the root's answers). */
static char *script_with(const char *key, json_t *value)
{
        char path[PATH_MAX], *out = malloc(PATH_MAX);
        json_t *doc, *rule;

        snprintf(path, sizeof(path), "%s/repair/%s.json", test_data_dir(), REVERSE);
        doc = json_load_file(path, 0, NULL);
        cr_assert_not_null(doc);
        rule = json_array_get(json_object_get(doc, "rules"), 2); /* the root's rule */
        cr_assert(strstr(json_dumps(json_object_get(rule, "when"), 0), "Reverse("));
        json_object_set_new(rule, key, value);
        cr_assert_not_null(out);
        snprintf(out, PATH_MAX, "/tmp/heal-test-script-%d.json", (int)getpid());
        cr_assert_eq(json_dump_file(doc, out, 0), 0);
        json_decref(doc);
        return out;
}

/* Entries of @dir (heal's workspace layers, when it is heal's XDG_RUNTIME_DIR). */
static int entries_of(const char *dir)
{
        DIR *d = opendir(dir);
        struct dirent *e;
        int n = 0;

        cr_assert_not_null(d);
        while ((e = readdir(d)))
                n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
        closedir(d);
        return n;
}

Test(fix, a_tree_changed_during_the_search_is_not_written)
{
        char *dir = copy_case(REVERSE), *script, path[PATH_MAX], *now;
        struct heal_run r;
        json_t *append = json_object();

        test_require("go");
        json_object_set_new(append, "reverse.go", json_string("// the user was here\n"));
        script = script_with("append", append);
        run_heal(&r, dir, script, "-- go test ./...");
        cr_assert_eq(r.status, 5, "nothing written: %d\n%s", r.status, r.err);
        cr_assert(strstr(r.err, "the tree changed during the search: reverse.go"), "%s", r.err);
        snprintf(path, sizeof(path), "%s/reverse.go", dir);
        now = slurp(path);
        cr_assert(strstr(now, "i <= n/2") && strstr(now, "// the user was here\n"),
                  "the user's edit is kept, heal's is not: %s", now);
        free(now);
        run_release(&r);
        unlink(script);
        free(script);
        test_rmtree(dir);
        free(dir);
}

Test(fix, ctrl_c_during_the_search_leaves_the_tree_and_nothing_behind)
{
        char *dir = copy_case(REVERSE), *script, orig[PATH_MAX], *runtime = test_tempdir();
        struct heal_run r;

        test_require("go");
        snprintf(orig, sizeof(orig), "%s/broken/%s", test_data_dir(), REVERSE);
        script = script_with("interrupt", json_true());
        snprintf(env_prefix, sizeof(env_prefix), "XDG_RUNTIME_DIR=%s ", runtime);
        run_heal(&r, dir, script, "-- go test ./...");
        env_prefix[0] = '\0';
        cr_assert_eq(r.status, 130, "interrupted: %d\n%s", r.status, r.err);
        cr_assert(same_file(orig, dir, "reverse.go"));
        cr_assert_eq(entries_of(runtime), 0, "no workspace layer left");
        test_rmtree(runtime);
        free(runtime);
        for (int i = 0; i < 100 && test_count_cmdline(script); i++)
                usleep(20000); /* it ends on the supervisor's SIGTERM, a moment after heal */
        cr_assert_eq(test_count_cmdline(script), 0, "the model's command is gone too");
        run_release(&r);
        unlink(script);
        free(script);
        test_rmtree(dir);
        free(dir);
}

/* The recorded cassettes still answer every request heal makes (after a change to the prompts:
 * scripts/record-cassettes). */
static void replay(const char *tree, const char *cassette)
{
        char *dir = test_tempdir(), cmd[PATH_MAX * 3];
        struct heal_run r;

        snprintf(cmd, sizeof(cmd), "cp -a '%s/.' '%s'", tree, dir);
        cr_assert_eq(system(cmd), 0);
        run_heal(&r, dir, cassette, "-- go test ./...");
        cr_assert_eq(r.status, 0,
                     "%s no longer answers heal's requests (prompts changed? run "
                     "scripts/record-cassettes): %s",
                     cassette, r.err);
        assert_passes(dir, "go test ./...");
        run_release(&r);
        test_rmtree(dir);
        free(dir);
}

Test(fix, recorded_cassettes_replay)
{
        char tree[PATH_MAX], cassette[PATH_MAX];

        test_require("go");
        snprintf(tree, sizeof(tree), "%s/broken/%s", test_data_dir(), REVERSE);
        replay(tree, "replay:" REVERSE ".jsonl");
        snprintf(tree, sizeof(tree), "%s/../../examples/nil-map", test_data_dir());
        snprintf(cassette, sizeof(cassette), "replay:../../../examples/cassettes/nil-map.jsonl");
        replay(tree, cassette);
}

/* Every case of the corpus (tests/data/broken) with its scripted model (tests/data/repair),
 * and the impossible cases: index -> name. */
static int corpus_cases(char names[][256], int max)
{
        const char *dirs[] = { "broken", "repair/impossible" };
        int n = 0;

        for (size_t d = 0; d < 2; d++) {
                char path[PATH_MAX];
                struct dirent **list;
                int k;

                snprintf(path, sizeof(path), "%s/%s", test_data_dir(), dirs[d]);
                k = scandir(path, &list, NULL, alphasort);
                for (int i = 0; i < k; i++) {
                        const char *name = list[i]->d_name;

                        if (name[0] != '.' && list[i]->d_type == DT_DIR && n < max &&
                            strcmp(name, "tools") != 0)
                                snprintf(names[n++], 256, "%s", name);
                        free(list[i]);
                }
                free(list);
        }
        return n;
}

ParameterizedTestParameters(fix, corpus)
{
        static int idx[64];
        char names[64][256];
        int n = corpus_cases(names, 64);

        for (int i = 0; i < n; i++)
                idx[i] = i;
        return cr_make_param_array(int, idx, (size_t)n);
}

/* heal ends each case with its real fix in the tree (the case's command passes there) and
 * each impossible case with "no fix found" and the tree as it was. */
ParameterizedTest(int *i, fix, corpus, .timeout = 240)
{
        char names[64][256], cmd[PATH_MAX * 3], copy[PATH_MAX], src[PATH_MAX];
        char *tmp = test_tempdir();
        bool impossible;
        int n = corpus_cases(names, 64), st;

        cr_assert_lt(*i, n);
        test_require("go");
        snprintf(src, sizeof(src), "%s/repair/impossible/%s", test_data_dir(), names[*i]);
        impossible = access(src, F_OK) == 0;
        snprintf(cmd, sizeof(cmd),
                 "HEAL='%s' HEAL_CASE_TMP='%s' '%s/repair/run-case.sh' '%s' >'%s/log' 2>&1",
                 HEAL_TEST_BIN, tmp, test_data_dir(), names[*i], tmp);
        st = system(cmd);
        snprintf(copy, sizeof(copy), "%s/log", tmp);
        {
                char *log = slurp(copy);

                cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == (impossible ? 3 : 0),
                          "%s: status %d\n%s", names[*i], st, log ? log : "");
                free(log);
        }
        snprintf(copy, sizeof(copy), "%s/heal-case-%s", tmp, names[*i]);
        if (impossible) {
                snprintf(cmd, sizeof(cmd), "diff -r -x .heal '%s' '%s' >/dev/null", src, copy);
                cr_assert_eq(system(cmd), 0, "%s: the tree is as it was", names[*i]);
        } else {
                char *line, path[PATH_MAX + 8];

                snprintf(path, sizeof(path), "%s/cmd", copy);
                line = slurp(path);
                cr_assert_not_null(line);
                line[strcspn(line, "\n")] = '\0';
                assert_passes(copy, line);
                free(line);
        }
        test_rmtree(tmp);
        free(tmp);
}

/* The compiler's fix-its and goimports fix what they can with no model at all. */
Test(fix, free_candidates_need_no_model)
{
        static const char clang_run[] =
                "-- sh -c 'clang -fdiagnostics-parseable-fixits -o x main.c && ./x'";
        char *dir = test_tempdir(), path[PATH_MAX], *now;
        struct heal_run r;

        test_require("clang");
        test_write_file(dir, "main.c",
                        "#include <stdio.h>\n\nint main(void)\n{\n\tint x = 1\n\t"
                        "return x - 1;\n}\n");
        run_heal(&r, dir, NULL, clang_run);
        cr_assert_eq(r.status, 0, "%s", r.err);
        cr_assert(strstr(r.err, "fixit "), "%s", r.err);
        snprintf(path, sizeof(path), "%s/main.c", dir);
        now = slurp(path);
        cr_assert(strstr(now, "int x = 1;\n"), "%s", now);
        free(now);
        run_release(&r);
        /* A fix-it that compiles but does not pass, then a failure with no fix-it at all: no
         * fix, and the message says which. */
        test_write_file(dir, "main.c",
                        "#include <stdio.h>\n\nint main(void)\n{\n\tint x = 1\n\t"
                        "return x;\n}\n");
        run_heal(&r, dir, NULL, clang_run);
        cr_assert_eq(r.status, 3, "%s", r.err);
        cr_assert(strstr(r.err, "the compiler's own fixes (fix-its, goimports) did not fix it"),
                  "%s", r.err);
        run_release(&r);
        run_heal(&r, dir, NULL, "-- sh -c 'echo broken; exit 1'");
        cr_assert_eq(r.status, 3, "%s", r.err);
        cr_assert(strstr(r.err, "the compiler offered no fix of its own to try"), "%s", r.err);
        run_release(&r);
        test_rmtree(dir);
        free(dir);

        test_require("goimports");
        dir = test_tempdir();
        test_write_file(dir, "go.mod", "module example\n\ngo 1.19\n");
        test_write_file(dir, "up.go",
                        "package example\n\nimport \"fmt\"\n\nfunc Shout(s string) "
                        "string {\n\treturn strings.ToUpper(s) + \"!\"\n}\n");
        test_write_file(dir, "up_test.go",
                        "package example\n\nimport \"testing\"\n\nfunc TestShout(t *testing.T) "
                        "{\n\tif Shout(\"hi\") != \"HI!\" {\n\t\tt.Fail()\n\t}\n}\n");
        run_heal(&r, dir, NULL, "-- go test ./...");
        cr_assert_eq(r.status, 0, "%s", r.err);
        cr_assert(strstr(r.err, "goimports passes"), "%s", r.err);
        snprintf(path, sizeof(path), "%s/up.go", dir);
        now = slurp(path);
        cr_assert(strstr(now, "import \"strings\"\n") && !strstr(now, "fmt"), "%s", now);
        free(now);
        run_release(&r);
        test_rmtree(dir);
        free(dir);
}

/* An OpenAI-compatible server on loopback answers the first run; the second run of the same
 * failure is answered from heal's response cache and sends nothing. */
Test(fix, a_real_provider_then_the_cache)
{
        char *dir, *cache = test_tempdir(), path[PATH_MAX], args[512];
        json_t *body = json_object(), *choices = json_array(), *script, *answers;
        struct httpd_reply reply = { .status = 200 };
        struct httpd srv;
        struct heal_run r;
        char *text;

        test_require("go");
        snprintf(path, sizeof(path), "%s/repair/%s.json", test_data_dir(), REVERSE);
        script = json_load_file(path, 0, NULL);
        cr_assert_not_null(script);
        /* the first batch's three answers, then the right one (rule 1's) */
        answers = json_object_get(json_array_get(json_object_get(script, "rules"), 2), "answers");
        json_array_append(
                answers,
                json_array_get(json_object_get(json_array_get(json_object_get(script, "rules"), 1),
                                               "answers"),
                               0));
        for (size_t i = 1; i < 4; i++) {
                json_t *c = json_object(), *m = json_object();

                json_object_set_new(m, "role", json_string("assistant"));
                json_object_set(m, "content", json_array_get(answers, i));
                json_object_set_new(c, "index", json_integer((json_int_t)i - 1));
                json_object_set_new(c, "message", m);
                json_object_set_new(c, "finish_reason", json_string("stop"));
                json_array_append_new(choices, c);
        }
        json_object_set_new(body, "id", json_string("chatcmpl-heal-test"));
        json_object_set_new(body, "choices", choices);
        json_object_set_new(
                body, "usage",
                json_pack("{s:i, s:i}", "prompt_tokens", 900, "completion_tokens", 300));
        text = json_dumps(body, JSON_COMPACT);
        reply.body = text;
        httpd_start(&srv, &reply, 1);
        snprintf(env_prefix, sizeof(env_prefix), "XDG_CACHE_HOME=%s OPENAI_API_KEY=sk-test ",
                 cache);
        snprintf(args, sizeof(args),
                 "--json --model openai:gpt-4.1-mini --llm-url %s -- go test ./...", srv.base_url);
        for (int run = 0; run < 2; run++) {
                json_t *doc, *llm;

                dir = copy_case(REVERSE);
                run_heal(&r, dir, NULL, args);
                cr_assert_eq(r.status, 0, "run %d: %s", run, r.err);
                doc = json_loads(r.out, 0, NULL);
                cr_assert_not_null(doc, "%s", r.out);
                llm = json_object_get(doc, "llm");
                cr_assert_eq(json_integer_value(json_object_get(llm, "requests")), run ? 0 : 1,
                             "run %d: %s", run, r.out);
                cr_assert_eq(json_integer_value(json_object_get(llm, "cache_hits")), run ? 1 : 0);
                json_decref(doc);
                assert_passes(dir, "go test ./...");
                run_release(&r);
                test_rmtree(dir);
                free(dir);
        }
        env_prefix[0] = '\0';
        httpd_stop(&srv);
        cr_assert_eq(srv.served, 1, "one request reached the server");
        cr_assert(strstr(srv.requests[0], "\"n\":3"), "the k candidates in one request");
        free(text);
        json_decref(body);
        json_decref(script);
        test_rmtree(cache);
        free(cache);
}

/* The baseline (as every candidate) runs in a workspace: the tree's .git is not there, writes
 * do not reach the tree, the test cache and VCS stamping are off, Go's build cache is heal's. */
Test(fix, the_command_runs_in_a_workspace)
{
        char *dir = test_tempdir(), path[PATH_MAX];
        struct heal_run r;

        test_write_file(dir, "probe.sh",
                        "set -e\n"
                        "test -d .git && test ! -e .git/HEAD\n"
                        "echo scratch > written-by-cmd.txt\n"
                        "case \"$GOFLAGS\" in *-count=1*-buildvcs=false*) ;; *) exit 3 ;; esac\n"
                        "case \"$GOCACHE\" in */heal/go-build) ;; *) exit 4 ;; esac\n"
                        "test \"$GOPROXY\" = off\n");
        snprintf(path, sizeof(path), "%s/.git", dir);
        cr_assert_eq(mkdir(path, 0755), 0);
        test_write_file(path, "HEAD", "ref: refs/heads/main\n");
        run_heal(&r, dir, NULL, "-- sh probe.sh");
        cr_assert_eq(r.status, 0, "status %d: %s", r.status, r.err);
        snprintf(path, sizeof(path), "%s/written-by-cmd.txt", dir);
        cr_assert_neq(access(path, F_OK), 0, "the command's writes stay in its workspace");
        run_release(&r);
        test_rmtree(dir);
        free(dir);
}

/* --best searches to its limit, then picks among the passing candidates. */
Test(fix, best_searches_to_the_limit_then_picks)
{
        char *dir = copy_case(REVERSE);
        struct heal_run r;
        json_t *doc;

        test_require("go");
        run_heal(&r, dir, REVERSE ".json",
                 "--json --best --max-nodes 9 --dry-run -- go test ./...");
        cr_assert_eq(r.status, 0, "%s", r.err);
        doc = json_loads(r.out, 0, NULL);
        cr_assert_not_null(doc, "%s", r.out);
        cr_assert_str_eq(json_string_value(json_object_get(doc, "verdict")), "fixed");
        cr_assert_eq(json_array_size(json_object_get(doc, "candidates")), 10, "%s", r.out);
        cr_assert_str_eq(
                json_string_value(json_object_get(
                        json_array_get(json_object_get(doc, "candidates"),
                                       (size_t)json_integer_value(json_object_get(doc, "winner"))),
                        "outcome")),
                "passes");
        json_decref(doc);
        run_release(&r);
        test_rmtree(dir);
        free(dir);
}

/* "fix-it:" lines come from the command's output, which the sandboxed code controls: heal
 * believes one only for the source file its own diagnostic is in. */
Test(fix, a_forged_fixit_edits_nothing)
{
        char *dir = test_tempdir(), path[PATH_MAX], *now;
        struct heal_run r;

        test_write_file(dir, "profile", "PATH=/usr/bin\n");
        test_write_file(dir, "run.sh",
                        "grep -q PWNED profile && exit 0\n"
                        "echo 'main.c:1:1: error: expected declaration'\n"
                        "echo 'fix-it:\"profile\":{1:1-1:1}:\"echo PWNED\\012\"'\n"
                        "echo 'fix-it:\"main.c\":{1:1-1:1}:\"/* PWNED */\"'\n"
                        "exit 1\n");
        run_heal(&r, dir, NULL, "-- sh run.sh");
        cr_assert_eq(r.status, 3, "no fix: %d %s", r.status, r.err);
        snprintf(path, sizeof(path), "%s/profile", dir);
        now = slurp(path);
        cr_assert_str_eq(now, "PATH=/usr/bin\n");
        free(now);
        snprintf(path, sizeof(path), "%s/main.c", dir);
        cr_assert_neq(access(path, F_OK), 0, "no file made from a fix-it either");
        run_release(&r);
        test_rmtree(dir);
        free(dir);
}

/* A candidate that passes but fired a penalising rule does not end the search while a clean
 * one can: here both come in the first batch, the penalised one first. */
Test(fix, a_clean_fix_beats_a_penalised_one)
{
        static const char submit[] = "\tt.proofs[shard][validator] = true\n";
        static const char fixed[] = "\tif t.proofs[shard] == nil {\n\t\tt.proofs[shard] = "
                                    "make(map[string]bool)\n\t}\n\tt.proofs[shard][validator] = "
                                    "true\n";
        char *dir = copy_case("14-panic-nil-inner-map"), script[PATH_MAX], answer[2][1024];
        json_t *doc, *w;
        struct heal_run r;

        test_require("go");
        snprintf(answer[0], sizeof(answer[0]),
                 "tally.go\n<<<<<<< SEARCH\n%s=======\n%s\ttime.Sleep(0)\n>>>>>>> REPLACE\n"
                 "tally.go\n<<<<<<< SEARCH\npackage example\n=======\npackage example\n\n"
                 "import \"time\"\n>>>>>>> REPLACE\n",
                 submit, fixed);
        snprintf(answer[1], sizeof(answer[1]),
                 "tally.go\n<<<<<<< SEARCH\n%s=======\n%s>>>>>>> "
                 "REPLACE\n",
                 submit, fixed);
        doc = json_pack("{s:[{s:[s], s:[s,s]}]}", "rules", "when", "assignment to entry in nil map",
                        "answers", answer[0], answer[1]);
        snprintf(script, sizeof(script), "%s.script.json", dir);
        cr_assert_eq(json_dump_file(doc, script, 0), 0);
        json_decref(doc);
        run_heal(&r, dir, script, "--json --candidates 2 -- go test ./...");
        cr_assert_eq(r.status, 0, "%s", r.err);
        doc = json_loads(r.out, 0, NULL);
        cr_assert_not_null(doc, "%s", r.out);
        w = json_array_get(json_object_get(doc, "candidates"),
                           (size_t)json_integer_value(json_object_get(doc, "winner")));
        cr_assert_eq(json_array_size(json_object_get(w, "rules")), 0, "the clean one: %s", r.out);
        cr_assert(has_rule(json_array_get(json_object_get(doc, "candidates"), 1), "sleep_added"),
                  "%s", r.out);
        json_decref(doc);
        run_release(&r);
        unlink(script);
        test_rmtree(dir);
        free(dir);
}

/* heal report draws a trace; what a trace holds is data, never markup or DOT attributes. */
Test(fix, report_draws_a_trace_and_escapes_it)
{
        char *dir = copy_case(REVERSE), trace[PATH_MAX], args[PATH_MAX * 3], out[PATH_MAX], *page;
        struct heal_run r;

        test_require("go");
        test_require("dot");
        snprintf(trace, sizeof(trace), "%s.trace", dir);
        snprintf(args, sizeof(args), "--dry-run --trace %s -- go test ./...", trace);
        run_heal(&r, dir, REVERSE ".json", args);
        cr_assert_eq(r.status, 0, "%s", r.err);
        run_release(&r);
        snprintf(out, sizeof(out), "%s.html", dir);
        snprintf(args, sizeof(args), "report -o %s %s", out, trace);
        run_heal(&r, dir, NULL, args);
        cr_assert_eq(r.status, 0, "%s", r.err);
        page = slurp(out);
        cr_assert(strstr(page, "<svg") && strstr(page, "build_fails") && strstr(page, "exit_early"),
                  "the tree, outcomes and rules are drawn");
        free(page);
        run_release(&r);
        /* a hostile trace: quotes that would end a DOT string, markup, a cut last line */
        test_write_file("/", trace,
                        "{\"id\":1,\"parent\":0,\"source\":\"m\\\", URL=\\\"javascript:x\\\", "
                        "t=\\\"\",\"outcome\":\"passes\",\"reward\":1,\"why\":\"<script>\","
                        "\"rules\":[]}\n{\"id\":2,\"par");
        run_heal(&r, dir, NULL, args);
        cr_assert_eq(r.status, 0, "%s", r.err);
        page = slurp(out);
        cr_assert(!strstr(page, "xlink:href=\"javascript") && !strstr(page, "<script>"), "%s",
                  page);
        free(page);
        run_release(&r);
        unlink(trace);
        unlink(out);
        test_rmtree(dir);
        free(dir);
}

/* Ctrl-C while heal waits for the model: it ends at once, writes nothing, leaves no model
 * command behind (the request cannot be interrupted; nothing else runs meanwhile). */
Test(fix, ctrl_c_while_the_model_thinks)
{
        char *dir = copy_case(REVERSE), fifo[PATH_MAX], cmd[PATH_MAX * 2], line[64] = "";
        struct timespec t0, t1;
        int st, fd;
        pid_t pid;

        test_require("go");
        snprintf(fifo, sizeof(fifo), "%s.fifo", dir);
        cr_assert_eq(mkfifo(fifo, 0600), 0);
        snprintf(cmd, sizeof(cmd), "echo thinking > %s; exec sleep 4243.5", fifo);
        pid = fork();
        if (pid == 0) {
                if (chdir(dir) < 0)
                        _exit(127);
                setenv("HEAL_MODEL", "exec:slow", 1);
                setenv("HEAL_LLM_COMMAND", cmd, 1);
                execl(HEAL_TEST_BIN, "heal", "-q", "--", "go", "test", "./...", NULL);
                _exit(127);
        }
        fd = open(fifo, O_RDONLY | O_CLOEXEC); /* until the model command opens it */
        cr_assert_gt(read(fd, line, sizeof(line) - 1), 0);
        close(fd);
        clock_gettime(CLOCK_MONOTONIC, &t0);
        kill(pid, SIGINT);
        cr_assert_eq(waitpid(pid, &st, 0), pid);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 130, "status %d", st);
        cr_assert_lt(t1.tv_sec - t0.tv_sec, 3, "at once, not when the model answers");
        for (int i = 0; i < 100 && test_count_cmdline("sleep 4243.5"); i++)
                usleep(20000); /* the supervisor's SIGTERM takes a moment to land */
        cr_assert_eq(test_count_cmdline("sleep 4243.5"), 0, "the model command is gone");
        unlink(fifo);
        test_rmtree(dir);
        free(dir);
}
