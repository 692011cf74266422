/* SPDX-License-Identifier: MIT */
/*
 * Failure analysis on the real broken programs of tests/data/broken: the recorded failure of
 * each parses into the expected diagnostic; each run live in the sandbox (heal analyze) gives
 * the recorded cause fingerprint and the same exact fingerprint twice; pairs of failures that
 * must collide at the cause level only, or differ; the timeout trace of a spinning Go program.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <errno.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "heal/analyze.h"
#include "heal/prompt.h"

#include "harness.h"

struct expect {
        const char *name;
        heal_diag_kind kind;
        const char *file;
        unsigned line;
        const char *function; /* a substring of the diagnostic's function, or NULL: none */
        const char *test;
        const char *message; /* a substring */
        const char *frame;   /* a function among the frames, or NULL */
        size_t n_diags;      /* 0: not checked */
        bool racy;           /* the program's own output varies with scheduling */
};

static char *slurp(const char *path, size_t *len)
{
        FILE *f = fopen(path, "re");
        char *buf;
        long n;

        cr_assert_not_null(f, "%s", path);
        fseek(f, 0, SEEK_END);
        n = ftell(f);
        rewind(f);
        buf = malloc((size_t)n + 1);
        cr_assert_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
        buf[n] = '\0';
        fclose(f);
        if (len)
                *len = (size_t)n;
        return buf;
}

static char *case_file(const char *name, const char *file, size_t *len)
{
        char path[1024];

        snprintf(path, sizeof(path), "%s/broken/%s/%s", test_data_dir(), name, file);
        return slurp(path, len);
}

/* The recorded failure of case @name analysed as if it had happened in @tree. */
static void analyze_recorded(heal_analysis *a, const char *name, const char *tree)
{
        char alias[256], dir[1024], *cmd = case_file(name, "cmd", NULL);
        char *code = case_file(name, "expected_exit_code", NULL);
        const char *aliases[] = { alias, NULL };
        heal_analyze_opts o = { .aliases = aliases };
        heal_error err = HEAL_ERROR_INIT;
        size_t len;
        char *out = case_file(name, "expected_failure.txt", &len);

        snprintf(alias, sizeof(alias), "/home/dev/src/%s", name);
        snprintf(dir, sizeof(dir), "%s/broken/%s", test_data_dir(), name);
        cmd[strcspn(cmd, "\n")] = '\0';
        o.tree = tree ? tree : dir;
        o.exit_code = atoi(code);
        o.command = cmd;
        cr_assert_eq(heal_analyze(a, out, len, &o, &err), 0, "%s", err.msg);
        free(out);
        free(cmd);
        free(code);
}

static const heal_diag *first_error(const heal_analysis *a)
{
        for (size_t i = 0; i < a->n_diags; i++)
                if (a->diags[i].severity == HEAL_SEVERITY_ERROR)
                        return &a->diags[i];
        cr_assert_fail("no error diagnostic");
        return NULL;
}

/* Criterion passes parameters by value to a worker that may be a new process image (ASLR):
 * no pointers in them, only indexes into these tables. */
static const struct expect cases[] = {
        { "01-compile-if-scope-err", HEAL_DIAG_COMPILE_ERROR, "main.go", 25, "setup", NULL,
          "result declared but not used", NULL, 7, false },
        { "02-compile-duration-int", HEAL_DIAG_COMPILE_ERROR, "backoff.go", 15, "Delay", NULL,
          "mismatched types int and time.Duration", NULL, 1, false },
        { "04-compile-missing-return-helper", HEAL_DIAG_COMPILE_ERROR, "level.go", 24, "ParseLevel",
          NULL, "missing return", NULL, 1, false },
        { "06-compile-generic-map-key", HEAL_DIAG_COMPILE_ERROR, "set.go", 5, NULL, NULL,
          "invalid map key type K", NULL, 2, false },
        { "08-compile-closure-unused-var", HEAL_DIAG_COMPILE_ERROR, "main.go", 17, "record", NULL,
          "previousNote declared but not used", NULL, 1, false },
        { "10-compile-import-cycle", HEAL_DIAG_COMPILE_ERROR, NULL, 0, NULL, NULL,
          "import cycle not allowed", NULL, 1, false },
        { "12-vet-printf-verb", HEAL_DIAG_VET, "label.go", 13, "Label", NULL,
          "format %d has arg o.ID of wrong type string", NULL, 1, false },
        { "14-panic-nil-inner-map", HEAL_DIAG_PANIC, "tally.go", 21, "Submit", "TestTally",
          "assignment to entry in nil map", "example.TestTally", 1, false },
        { "15-panic-defer-before-err", HEAL_DIAG_PANIC, "main.go", 17, "main.ping", NULL,
          "invalid memory address or nil pointer dereference", "main.main", 1, false },
        { "16-panic-json-float64", HEAL_DIAG_PANIC, "main.go", 21, "main.handle", NULL,
          "interface {} is float64, not int", "main.main", 1, false },
        { "19-panic-close-closed-chan", HEAL_DIAG_PANIC, "main.go", 17, "main.worker", NULL,
          "send on closed channel", "main.main.func1", 1, false },
        { "22-panic-stack-overflow-string", HEAL_DIAG_FATAL_ERROR, "main.go", 13, "String", NULL,
          "stack overflow", NULL, 1, false },
        { "24-deadlock-wg-add-continue", HEAL_DIAG_DEADLOCK, "main.go", 60, "main.getInfos", NULL,
          "all goroutines are asleep", "main.main", 1, false },
        { "26-deadlock-missing-unlock", HEAL_DIAG_DEADLOCK, "main.go", 32, "Run", NULL,
          "all goroutines are asleep", NULL, 1, false },
        { "27-hang-test-reentrant-lock", HEAL_DIAG_TIMEOUT, "lessor.go", 43, "Checkpoint", NULL,
          "test timed out after 5s", "example.TestRenewClearsCheckpoint", 1, false },
        { "30-race-loopvar-capture", HEAL_DIAG_DATA_RACE, "versions.go", 24,
          "SupportedVersions.func1", NULL, "data race: Read / Previous write", NULL, 0, true },
        { "33-test-truncate-utf8", HEAL_DIAG_TEST_FAILURE, "truncate_test.go", 22, "TestTruncate",
          "TestTruncate", "is not valid UTF-8", NULL, 4, false },
        { "34-test-reverse-even-length", HEAL_DIAG_TEST_FAILURE, "reverse_test.go", 20,
          "TestReverse", "TestReverse", "want [3 2 1 0]", NULL, 2, false },
        { "36-test-panic-command-parse", HEAL_DIAG_PANIC, "command.go", 16, "example.Parse",
          "TestParse", "slice bounds out of range [10:9]", "example.TestParse", 1, false },
        { "39-c-strdup-c99", HEAL_DIAG_COMPILE_ERROR, "main.c", 28, "main", NULL,
          "implicit declaration of function", NULL, 3, false },
        { "41-c-getenv-null-segv", HEAL_DIAG_CRASH, NULL, 0, NULL, NULL,
          "killed by signal 11: Segmentation fault", NULL, 1, false },
        { "43-c-asan-strlen-malloc", HEAL_DIAG_SANITIZER, "main.c", 16, "context_open", NULL,
          "AddressSanitizer: heap-buffer-overflow", "main", 1, false },
        { "45-c-link-order-lm", HEAL_DIAG_COMPILE_ERROR, "stats.c", 0, "magnitude", NULL,
          "undefined reference to `sqrt'", NULL, 1, false },
};
#define N_CASES (sizeof(cases) / sizeof(cases[0]))

ParameterizedTestParameters(analyze, recorded_failure_parses)
{
        static size_t idx[N_CASES];

        for (size_t k = 0; k < N_CASES; k++)
                idx[k] = k;
        return cr_make_param_array(size_t, idx, N_CASES);
}

ParameterizedTest(size_t *i, analyze, recorded_failure_parses)
{
        const struct expect *e = &cases[*i];
        heal_analysis a;
        const heal_diag *d;
        bool frame = e->frame == NULL;

        analyze_recorded(&a, e->name, NULL);
        d = first_error(&a);
        cr_assert_str_eq(heal_diag_kind_name(d->kind), heal_diag_kind_name(e->kind), "%s: %s",
                         e->name, d->message);
        if (e->file)
                cr_assert(d->file && strcmp(d->file, e->file) == 0, "%s: file %s", e->name,
                          d->file ? d->file : "(none)");
        else
                cr_assert_null(d->file, "%s: %s", e->name, d->file);
        cr_assert_eq(d->line, e->line, "%s: line %u", e->name, d->line);
        if (e->function)
                cr_assert(d->function && strstr(d->function, e->function), "%s: function %s",
                          e->name, d->function ? d->function : "(none)");
        else
                cr_assert_null(d->function, "%s: %s", e->name, d->function);
        if (e->test)
                cr_assert(d->test && strcmp(d->test, e->test) == 0, "%s: test %s", e->name,
                          d->test ? d->test : "(none)");
        cr_assert(strstr(d->message, e->message), "%s: %s", e->name, d->message);
        for (size_t k = 0; k < d->n_frames && !frame; k++)
                frame = strcmp(d->frames[k].function, e->frame) == 0 && d->frames[k].in_tree;
        cr_assert(frame, "%s: no in-tree frame %s", e->name, e->frame);
        if (e->n_diags)
                cr_assert_eq(a.n_diags, e->n_diags, "%s: %zu diagnostics", e->name, a.n_diags);
        cr_assert_eq(strlen(a.exact), 32);
        cr_assert_eq(strlen(a.cause), 32);
        heal_analysis_release(&a);
}

struct live {
        int exit_code;
        char exact[33], cause[33];
        char tail[4200];
};

/* `heal analyze --json` of case @name's command in @dir, with a Go build cache shared between
 * runs (warm builds) in its own plan: / read-only, the case and the cache read-write. Heal's
 * stderr goes to @dir.err, shown when the run is not what the test expects. */
static void analyze_live(const char *name, const char *dir, const char *cmd, struct live *ret)
{
        char cache[128], line[8192], errf[1100];
        json_t *doc = NULL, *fp;
        FILE *p;
        size_t n;
        int rc;
        static char out[1 << 20];

        snprintf(cache, sizeof(cache), "/var/tmp/heal-test-gocache-%d", (int)getuid());
        snprintf(errf, sizeof(errf), "%s.err", dir);
        cr_assert(mkdir(cache, 0700) == 0 || errno == EEXIST, "%s", strerror(errno));
        snprintf(line, sizeof(line),
                 "cd / && %s analyze --json --timeout 120s --ro-bind / / --dev /dev --proc /proc "
                 "--tmpfs /tmp --bind %s %s --bind %s %s --setenv GOCACHE %s --setenv GOFLAGS "
                 "-mod=mod --chdir %s -- bash -c '%s' 2>%s",
                 HEAL_TEST_BIN, dir, dir, cache, cache, cache, dir, cmd, errf);
        p = popen(line, "r");
        cr_assert_not_null(p);
        n = fread(out, 1, sizeof(out) - 1, p);
        out[n] = '\0';
        rc = pclose(p);
        if (!WIFEXITED(rc) || WEXITSTATUS(rc) != 1 || !(doc = json_loads(out, 0, NULL))) {
                char *err = slurp(errf, NULL);

                cr_assert_fail(
                        "%s: heal analyze exited %d (1: the command failed and was analyzed)\n"
                        "stderr: %.3000s\nstdout: %.3000s",
                        name, WIFEXITED(rc) ? WEXITSTATUS(rc) : 128 + WTERMSIG(rc), err, out);
        }
        unlink(errf);
        fp = json_object_get(doc, "fingerprints");
        ret->exit_code = (int)json_integer_value(json_object_get(doc, "exit_code"));
        snprintf(ret->exact, sizeof(ret->exact), "%s",
                 json_string_value(json_object_get(fp, "exact")));
        snprintf(ret->cause, sizeof(ret->cause), "%s",
                 json_string_value(json_object_get(fp, "cause")));
        snprintf(ret->tail, sizeof(ret->tail), "%s",
                 json_string_value(json_object_get(doc, "tail")));
        json_decref(doc);
}

ParameterizedTestParameters(analyze, live_run_matches_the_recording)
{
        static size_t idx[N_CASES];

        for (size_t k = 0; k < N_CASES; k++)
                idx[k] = k;
        return cr_make_param_array(size_t, idx, N_CASES);
}

/* Run live twice: the same exact fingerprint both times (ports, addresses, goroutine ids and
 * timings absorbed), the recorded exit status, and the recording's cause fingerprint. */
ParameterizedTest(size_t *i, analyze, live_run_matches_the_recording, .timeout = 300)
{
        const char *const *name = &cases[*i].name;
        char *dir = test_tempdir(), copy[2048], *cmd = case_file(*name, "cmd", NULL);
        char *code = case_file(*name, "expected_exit_code", NULL);
        struct live one, two;
        heal_analysis rec;

        cmd[strcspn(cmd, "\n")] = '\0';
        snprintf(copy, sizeof(copy), "cp -r %s/broken/%s/. %s && chmod -R u+w %s", test_data_dir(),
                 *name, dir, dir);
        cr_assert_eq(system(copy), 0);
        analyze_live(*name, dir, cmd, &one);
        /* A fresh copy for the second run: make would not rebuild what the first one left. */
        snprintf(copy, sizeof(copy), "rm -rf %s/* && cp -r %s/broken/%s/. %s && chmod -R u+w %s",
                 dir, test_data_dir(), *name, dir, dir);
        cr_assert_eq(system(copy), 0);
        analyze_live(*name, dir, cmd, &two);
        analyze_recorded(&rec, *name, dir);
        cr_assert_eq(one.exit_code, atoi(code), "%s: exit %d", *name, one.exit_code);
        /* The race case prints values the race decides ("[v1.19 v1.19 v1.22 ...]"): its exact
         * fingerprint may rightly move; its cause may not. */
        if (!cases[*i].racy)
                cr_assert_str_eq(one.exact, two.exact,
                                 "%s: the exact fingerprint moved between runs:\n%s\n---\n%s",
                                 *name, one.tail, two.tail);
        cr_assert_str_eq(one.cause, two.cause, "%s: the cause moved between runs:\n%s\n---\n%s",
                         *name, one.tail, two.tail);
        cr_assert_str_eq(one.cause, rec.cause, "%s: live and recorded causes differ:\n%s", *name,
                         one.tail);
        heal_analysis_release(&rec);
        test_rmtree(dir);
        free(dir);
        free(cmd);
        free(code);
}

/* A program that never ends prints nothing to learn from: the timeout trace names the loop
 * from the stacks Go prints on SIGQUIT, with the limit, the output so far and the processes. */
Test(analyze, timeout_trace_names_the_spinning_function, .timeout = 120)
{
        char *dir = test_tempdir(), build[1024];
        const char *argv[] = { "./spin", NULL };
        heal_sandbox_limits lim = HEAL_SANDBOX_LIMITS_INIT;
        heal_analyze_opts o = { .command = "./spin" };
        heal_error err = HEAL_ERROR_INIT;
        heal_sandbox_result res = { 0 };
        heal_sandbox *sb;
        heal_analysis a;
        const heal_diag *d;
        bool named = false;

        test_require("go");
        test_copy_case("04-spin-go", dir);
        snprintf(build, sizeof(build),
                 "cd %s && GOFLAGS=-mod=mod GOCACHE=/var/tmp/heal-test-gocache-%d "
                 "go build -o spin . 2>&1",
                 dir, (int)getuid());
        cr_assert_eq(system(build), 0);
        sb = test_sandbox(dir);
        lim.wall_ms = 2000;
        cr_assert_eq(heal_sandbox_set_limits(sb, &lim, &err), 0, "%s", err.msg);
        test_run(sb, argv, &res);
        cr_assert_eq(res.status, HEAL_STATUS_TIMEOUT);
        o.tree = dir;
        cr_assert_eq(heal_analyze_result(&a, &res, &o, &err), 0, "%s", err.msg);
        d = first_error(&a);
        cr_assert_eq(d->kind, HEAL_DIAG_TIMEOUT, "%s", heal_diag_kind_name(d->kind));
        cr_assert(strstr(d->message, "timed out after") && strstr(d->message, "./spin"), "%s",
                  d->message);
        for (size_t i = 0; i < d->n_frames; i++)
                named |= strcmp(d->frames[i].function, "main.collatzSteps") == 0 &&
                         d->frames[i].in_tree;
        cr_assert(named, "the trace names main.collatzSteps:\n%s", res.err);
        cr_assert_str_eq(d->file, "main.go");
        cr_assert_str_eq(d->function, "main.collatzSteps");
        cr_assert(strstr(a.tail, "27 111") && strstr(a.tail, "97 118"), "the output so far");
        cr_assert_geq(d->n_notes, 1, "the process snapshot");
        cr_assert(strstr(d->notes[d->n_notes - 1], "spin"), "%s", d->notes[d->n_notes - 1]);
        heal_analysis_release(&a);
        heal_sandbox_result_release(&res);
        heal_sandbox_free(sb);
        test_rmtree(dir);
        free(dir);
}

/* The context and the prompt for a recorded failure, analysed in its case directory. */
static void prompt_for(const char *name, size_t budget, heal_analysis *a, heal_context *ctx,
                       heal_prompt *p)
{
        char dir[1024], alias[256], *cmd = case_file(name, "cmd", NULL);
        const char *aliases[] = { alias, NULL };
        heal_error err = HEAL_ERROR_INIT;
        heal_context_opts co = { .token_budget = budget };
        heal_prompt_opts po = { .exit_code = 1, .aliases = aliases };

        snprintf(dir, sizeof(dir), "%s/broken/%s", test_data_dir(), name);
        snprintf(alias, sizeof(alias), "/home/dev/src/%s", name);
        cmd[strcspn(cmd, "\n")] = '\0';
        analyze_recorded(a, name, NULL);
        co.tree = dir;
        po.tree = dir;
        po.command = cmd;
        cr_assert_eq(heal_context_build(ctx, a, &co, &err), 0, "%s", err.msg);
        cr_assert_eq(heal_prompt_build(p, a, ctx, &po, &err), 0, "%s", err.msg);
        free(cmd);
}

Test(analyze, prompt_shows_the_place_and_the_failing_test)
{
        heal_analysis a, a2;
        heal_context ctx, ctx2;
        heal_prompt p, p2;

        prompt_for("14-panic-nil-inner-map", 0, &a, &ctx, &p);
        cr_assert_geq(ctx.n_windows, 2);
        cr_assert_str_eq(ctx.windows[0].file, "tally.go");
        cr_assert_eq(ctx.windows[0].priority, 0);
        cr_assert(ctx.windows[0].first <= 21 && ctx.windows[0].last >= 21);
        cr_assert(strstr(ctx.windows[0].text, "t.proofs[shard][validator] = true"), "%s",
                  ctx.windows[0].text);
        cr_assert_str_eq(ctx.windows[1].file, "tally_test.go");
        cr_assert(strstr(ctx.windows[1].why, "test TestTally"), "%s", ctx.windows[1].why);
        cr_assert(strstr(ctx.windows[1].text, "func TestTally("));
        cr_assert(strstr(p.system, "<<<<<<< SEARCH") && strstr(p.system, "*_test.go") &&
                          strstr(p.system, "recover()"),
                  "%s", p.system);
        cr_assert(strstr(p.user, "Command: go test ./...") &&
                          strstr(p.user, "1. panic at tally.go:21 in example.(*Tally).Submit "
                                         "(test TestTally): assignment to entry in nil map") &&
                          strstr(p.user, "  21| \tt.proofs[shard][validator] = true"),
                  "%s", p.user);
        cr_assert_null(strstr(p.user, "/home/dev/src"), "paths relative: %s", p.user);
        /* the outline: the type with its fields, signatures, no bodies (Universal Ctags) */
        cr_assert_eq(ctx.n_outlines, 1, "ctags is installed by scripts/install-deps");
        cr_assert_str_eq(ctx.outlines[0].file, "tally.go");
        cr_assert(strstr(ctx.outlines[0].text, "   4| type Tally struct {") &&
                          strstr(ctx.outlines[0].text, "proofs map[int]map[string]bool") &&
                          strstr(ctx.outlines[0].text, "   9| func NewTally(shards int) *Tally {"),
                  "%s", ctx.outlines[0].text);
        cr_assert_null(strstr(ctx.outlines[0].text, "make("), "no bodies: %s",
                       ctx.outlines[0].text);
        cr_assert(strstr(p.user, "Outline of tally.go"));
        cr_assert_gt(p.tokens, 100);
        /* same input, same bytes: the response cache and cassettes depend on it */
        prompt_for("14-panic-nil-inner-map", 0, &a2, &ctx2, &p2);
        cr_assert_str_eq(p.system, p2.system);
        cr_assert_str_eq(p.user, p2.user);
        heal_prompt_release(&p), heal_prompt_release(&p2);
        heal_context_release(&ctx), heal_context_release(&ctx2);
        heal_analysis_release(&a), heal_analysis_release(&a2);
}

Test(analyze, windows_merge_and_fit_the_budget)
{
        heal_analysis a;
        heal_context ctx;
        heal_prompt p;

        /* seven errors in one function: one window, every reason kept once */
        prompt_for("01-compile-if-scope-err", 0, &a, &ctx, &p);
        cr_assert_eq(ctx.n_windows, 1, "%zu windows", ctx.n_windows);
        cr_assert_str_eq(ctx.windows[0].file, "main.go");
        cr_assert(ctx.windows[0].first <= 25 && ctx.windows[0].last >= 32);
        cr_assert(strstr(ctx.windows[0].why, "compile_error at line 25"), "%s", ctx.windows[0].why);
        heal_prompt_release(&p), heal_context_release(&ctx), heal_analysis_release(&a);
        /* a budget too small for the test's body: the place stays, the rest is left out */
        prompt_for("14-panic-nil-inner-map", 100, &a, &ctx, &p);
        cr_assert_eq(ctx.n_windows, 1);
        cr_assert_str_eq(ctx.windows[0].file, "tally.go");
        cr_assert_geq(ctx.dropped, 1);
        cr_assert_leq(ctx.tokens, 100);
        heal_prompt_release(&p), heal_context_release(&ctx), heal_analysis_release(&a);
}

/* A diagnostic that names a symlink out of the tree (or a path with ..) shows nothing of the
 * host in the prompt: files are opened beneath the tree. */
Test(analyze, windows_never_leave_the_tree)
{
        char *dir = test_tempdir(), path[1024];
        static const char out[] = "./evil.go:1:1: syntax error\n./sub/../../x.go:1:1: nope\n"
                                  "./ok.go:2:1: missing return\n";
        heal_analyze_opts ao = { .exit_code = 2, .command = "go build" };
        heal_context_opts co = { 0 };
        heal_error err = HEAL_ERROR_INIT;
        heal_analysis a;
        heal_context ctx;

        snprintf(path, sizeof(path), "%s/evil.go", dir);
        cr_assert_eq(symlink("/etc/passwd", path), 0);
        test_write_file(dir, "ok.go", "package main\nfunc f() int {\n}\n");
        ao.tree = co.tree = dir;
        cr_assert_eq(heal_analyze(&a, out, strlen(out), &ao, &err), 0, "%s", err.msg);
        cr_assert_eq(heal_context_build(&ctx, &a, &co, &err), 0, "%s", err.msg);
        cr_assert_eq(ctx.n_windows, 1, "only ok.go: %zu windows", ctx.n_windows);
        cr_assert_str_eq(ctx.windows[0].file, "ok.go");
        for (size_t i = 0; i < ctx.n_windows; i++)
                cr_assert_null(strstr(ctx.windows[i].text, "root:"), "host file leaked");
        heal_context_release(&ctx);
        heal_analysis_release(&a);
        test_rmtree(dir);
        free(dir);
}

/* Outlines from running language servers: gopls for Go, clangd for C, kept warm between
 * files; the same types and signatures ctags gives, no bodies. */
static void server_outline(const char *lang, const char *name, const char *file, const char *want1,
                           const char *want2, const char *not_body)
{
        char *dir = test_tempdir(), copy[2048];
        heal_error err = HEAL_ERROR_INIT;
        heal_lsp *l = NULL;
        heal_analysis a;
        heal_context ctx;
        heal_lsp *servers[2] = { NULL, NULL };
        heal_context_opts co = { .servers = servers };

        snprintf(copy, sizeof(copy), "cp -r %s/broken/%s/. %s && chmod -R u+w %s", test_data_dir(),
                 name, dir, dir);
        cr_assert_eq(system(copy), 0);
        cr_assert_eq(heal_lsp_start(&l, lang, dir, 20000, &err), 0, "%s", err.msg);
        servers[0] = l;
        co.tree = dir;
        analyze_recorded(&a, name, dir);
        for (int round = 0; round < 2; round++) { /* the second time the server is warm */
                cr_assert_eq(heal_context_build(&ctx, &a, &co, &err), 0, "%s", err.msg);
                cr_assert_eq(ctx.n_outlines, 1);
                cr_assert_str_eq(ctx.outlines[0].file, file);
                cr_assert_str_eq(ctx.outlines[0].source, strcmp(lang, "go") ? "clangd" : "gopls");
                cr_assert(strstr(ctx.outlines[0].text, want1) &&
                                  strstr(ctx.outlines[0].text, want2),
                          "%s", ctx.outlines[0].text);
                cr_assert_null(strstr(ctx.outlines[0].text, not_body), "no bodies: %s",
                               ctx.outlines[0].text);
                heal_context_release(&ctx);
        }
        heal_lsp_free(l);
        heal_analysis_release(&a);
        test_rmtree(dir);
        free(dir);
}

Test(analyze, gopls_outline, .timeout = 120)
{
        test_require("gopls");
        server_outline("go", "14-panic-nil-inner-map", "tally.go", "   4| type Tally struct {",
                       "   9| func NewTally(shards int) *Tally {", "make(");
}

Test(analyze, clangd_outline, .timeout = 120)
{
        test_require("clangd");
        server_outline("c", "39-c-strdup-c99", "main.c", "   5| struct param {",
                       "  21| int main(void)", "strdup(defaults");
}

/* A fake language server in PATH: @script is its body. */
static char *fake_server(const char *script)
{
        char *dir = test_tempdir(), path[1024];
        FILE *f;

        snprintf(path, sizeof(path), "%s/gopls", dir);
        f = fopen(path, "we");
        cr_assert_not_null(f);
        fprintf(f, "#!/bin/sh\n%s\n", script);
        fclose(f);
        chmod(path, 0755);
        return dir;
}

Test(analyze, a_language_server_that_is_missing_hangs_or_dies_is_an_error)
{
        heal_error err = HEAL_ERROR_INIT;
        heal_lsp *l = NULL;
        char *dir, path[2048], *pid;
        const char *old = getenv("PATH");

        setenv("PATH", "/nonexistent", 1);
        cr_assert_eq(heal_lsp_start(&l, "go", "/tmp", 2000, &err), -ENOENT, "%s", err.msg);
        cr_assert(strstr(err.msg, "cannot start the gopls language server"), "%s", err.msg);

        /* It says which process it is: other processes of the machine may run sleep too. */
        dir = fake_server("echo $$ > \"$(dirname \"$0\")/pid\"; exec sleep 300");
        snprintf(path, sizeof(path), "%s:%s", dir, old);
        setenv("PATH", path, 1);
        cr_assert_eq(heal_lsp_start(&l, "go", "/tmp", 500, &err), -ETIMEDOUT, "%s", err.msg);
        cr_assert(strstr(err.msg, "no answer in time"), "%s", err.msg);
        snprintf(path, sizeof(path), "%s/pid", dir);
        pid = slurp(path, NULL);
        cr_assert(atoi(pid) > 0, "the fake server wrote its pid: '%s'", pid);
        cr_assert(kill(atoi(pid), 0) < 0 && errno == ESRCH, "the hung server %d was killed",
                  atoi(pid));
        free(pid);
        test_rmtree(dir);
        free(dir);

        dir = fake_server("exit 3");
        snprintf(path, sizeof(path), "%s:%s", dir, old);
        setenv("PATH", path, 1);
        cr_assert_eq(heal_lsp_start(&l, "go", "/tmp", 2000, &err), -EPIPE, "%s", err.msg);
        cr_assert(strstr(err.msg, "it exited"), "%s", err.msg);
        test_rmtree(dir);
        free(dir);
        cr_assert_eq(heal_lsp_start(&l, "rust", "/tmp", 2000, &err), -EINVAL);
        setenv("PATH", old, 1);
}

/* go test names a test's file relative to its package: the package line says which. */
Test(analyze, test_files_of_subpackages_are_found)
{
        char *dir = test_tempdir(), sub[1024];
        static const char out[] = "--- FAIL: TestF (0.00s)\n    sub_test.go:7: F() = 1, want 2\n"
                                  "FAIL\nFAIL\texample.com/m/sub\t0.002s\n--- FAIL: TestG (0.00s)\n"
                                  "    g_test.go:3: bad\nFAIL\nFAIL\texample.com/m\t0.001s\n";
        heal_analyze_opts o = { .exit_code = 1, .command = "go test ./..." };
        heal_error err = HEAL_ERROR_INIT;
        heal_analysis a;

        test_write_file(dir, "go.mod", "module example.com/m\n\ngo 1.19\n");
        snprintf(sub, sizeof(sub), "%s/sub", dir);
        cr_assert_eq(mkdir(sub, 0755), 0);
        o.tree = dir;
        cr_assert_eq(heal_analyze(&a, out, strlen(out), &o, &err), 0, "%s", err.msg);
        cr_assert_eq(a.n_diags, 2);
        cr_assert_str_eq(a.diags[0].file, "sub/sub_test.go");
        cr_assert_str_eq(a.diags[0].test, "TestF");
        cr_assert_str_eq(a.diags[1].file, "g_test.go", "the module's root package");
        heal_analysis_release(&a);
        test_rmtree(dir);
        free(dir);
}

/* The names an error mentions, looked up where they are declared (here another file). */
Test(analyze, gopls_finds_the_definitions_an_error_names, .timeout = 120)
{
        char *dir = test_tempdir();
        static const char out[] = "# example\n./main.go:6:9: invalid operation: c.BackoffMillis * "
                                  "time.Millisecond (mismatched types int and time.Duration)\n";
        heal_analyze_opts ao = { .exit_code = 2, .command = "go build ./..." };
        heal_error err = HEAL_ERROR_INIT;
        heal_lsp *l = NULL, *servers[2] = { NULL, NULL };
        heal_context_opts co = { .servers = servers };
        heal_analysis a;
        heal_context ctx;
        bool found = false;

        test_require("gopls");
        test_write_file(dir, "go.mod", "module example\n\ngo 1.19\n");
        test_write_file(dir, "config.go",
                        "package main\n\ntype Config struct {\n\tRetries int\n\tBackoffMillis "
                        "int\n}\n");
        test_write_file(dir, "main.go",
                        "package main\n\nimport \"time\"\n\nfunc delay(c Config) time.Duration "
                        "{\n\treturn c.BackoffMillis * time.Millisecond\n}\n\nfunc main() { _ = "
                        "delay(Config{}) }\n");
        ao.tree = co.tree = dir;
        cr_assert_eq(heal_analyze(&a, out, strlen(out), &ao, &err), 0, "%s", err.msg);
        cr_assert_eq(heal_lsp_start(&l, "go", dir, 20000, &err), 0, "%s", err.msg);
        servers[0] = l;
        cr_assert_eq(heal_context_build(&ctx, &a, &co, &err), 0, "%s", err.msg);
        for (size_t i = 0; i < ctx.n_windows; i++)
                found |= strcmp(ctx.windows[i].file, "config.go") == 0 &&
                         strstr(ctx.windows[i].why, "definition of BackoffMillis") &&
                         strstr(ctx.windows[i].text, "BackoffMillis int");
        cr_assert(found, "config.go's struct is shown (%zu windows)", ctx.n_windows);
        heal_context_release(&ctx);
        heal_lsp_free(l);
        heal_analysis_release(&a);
        test_rmtree(dir);
        free(dir);
}
