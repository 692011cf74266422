/* SPDX-License-Identifier: MIT */
/*
 * go test's own reports: "--- FAIL: TestX (0.00s)" with the test's messages indented under it
 * ("    file_test.go:22: got 1, want 2"; subtests indent further), "--- PASS" and "--- SKIP";
 * and the -json event stream (one JSON object per line: Action run/pass/fail/skip/output,
 * Package, Test, Output), whose Output fields are the -v text.
 * See: `go help testflag`, `go doc test2json` (the event format).
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heal/buf.h"

#include "core/util.h"
#include "repair/repair-internal.h"

static const char *const go_ext[] = { ".go", NULL };

static bool has_test_diag(const heal_analysis *a, const char *test)
{
        for (size_t i = 0; i < a->n_diags; i++)
                if (a->diags[i].test && strcmp(a->diags[i].test, test) == 0)
                        return true;
        return false;
}

static bool failed(const heal_analysis *a, const char *test)
{
        for (size_t i = 0; i < a->n_tests_failed; i++)
                if (strcmp(a->tests_failed[i], test) == 0)
                        return true;
        return false;
}

/* A test's message, "    file_test.go:22: text" (an indentation of 4 per subtest level): with
 * go test -v it comes before the test's "--- FAIL", without -v after it. go test names the
 * file relative to the package's directory, found later on the package's summary line. */
static void test_message(struct actx *x, const char *s, const char *test)
{
        struct loc l;
        char file[1024];
        heal_diag *d;

        while (*s == ' ')
                s++;
        if (!parse_loc(s, &l, go_ext) || l.col != 0)
                return;
        /* the testing package's own line under -race: the race report says it all */
        if (l.file_len == 10 && strncmp(l.file, "testing.go", 10) == 0)
                return;
        for (size_t i = 0; i < x->a->n_diags; i++) /* -v and the summary both print it */
                if (x->a->diags[i].line == l.line && x->a->diags[i].test &&
                    strcmp(x->a->diags[i].test, test) == 0 &&
                    strcmp(x->a->diags[i].message, l.rest) == 0)
                        return;
        d = diag_add(x, HEAL_DIAG_TEST_FAILURE, HEAL_SEVERITY_ERROR, l.rest);
        snprintf(file, sizeof(file), "%.*s", (int)l.file_len, l.file);
        diag_set_loc(x, d, file, l.line, 0);
        diag_set_test(x, d, test);
}

/* The module path in the tree's go.mod, to turn a package's import path into its directory. */
static void module_path(const heal_analyze_opts *o, char *out, size_t len)
{
        FILE *f = o ? tree_open(o->tree, "go.mod", 1u << 20) : NULL;
        char line[1024];

        out[0] = '\0';
        while (f && fgets(line, sizeof(line), f))
                if (starts_with(line, "module ")) {
                        const char *m = line + 7 + (line[7] == '"');

                        snprintf(out, len, "%.*s", (int)strcspn(m, " \t\r\n\""), m);
                        break;
                }
        if (f)
                fclose(f);
}

/* "FAIL\texample.com/m/sub\t0.003s" or "ok  \texample.com/m/sub\t...": the diagnostics of
 * that package (those since @from) get its directory in front of a bare file name. */
static void package_dir(struct actx *x, const char *s, const char *module, size_t from)
{
        const char *pkg = s + (starts_with(s, "FAIL\t") ? 5 : 4);
        size_t n = strcspn(pkg, " \t"), m = strlen(module);
        char dir[512];

        if (!m || n <= m || strncmp(pkg, module, m) != 0 || pkg[m] != '/')
                return; /* the module's root package: file names are right as they are */
        snprintf(dir, sizeof(dir), "%.*s", (int)(n - m - 1), pkg + m + 1);
        for (size_t i = from; i < x->a->n_diags; i++) {
                heal_diag *d = &x->a->diags[i];
                char *joined;

                if (d->kind != HEAL_DIAG_TEST_FAILURE || !d->file || strchr(d->file, '/'))
                        continue;
                if (asprintf(&joined, "%s/%s", dir, d->file) < 0) {
                        x->error = -ENOMEM;
                        return;
                }
                free(d->file);
                d->file = joined;
        }
}

/* Which tests failed, passed and were skipped, from every "--- FAIL", "--- PASS" and
 * "--- SKIP" line, before the messages are read. */
static void failed_tests(struct actx *x)
{
        const struct lines *L = x->lines;
        heal_analysis *a = x->a;

        for (size_t i = 0; i < L->n && !x->error; i++) {
                const char *t = L->v[i] + strspn(L->v[i], " ");
                size_t n;

                if (!starts_with(t, "--- FAIL: ") && !starts_with(t, "--- PASS: ") &&
                    !starts_with(t, "--- SKIP: "))
                        continue;
                n = strcspn(t + 10, " ");
                if (t[4] == 'P')
                        test_list_add(x, &a->tests_passed, &a->n_tests_passed, t + 10, n);
                else if (t[4] == 'S')
                        test_list_add(x, &a->tests_skipped, &a->n_tests_skipped, t + 10, n);
                else
                        test_list_add(x, &a->tests_failed, &a->n_tests_failed, t + 10, n);
        }
}

void parse_go_test(struct actx *x)
{
        const struct lines *L = x->lines;
        heal_analysis *a = x->a;
        char test[256] = "", module[256];
        size_t from = 0;

        failed_tests(x);
        module_path(x->opts, module, sizeof(module));
        for (size_t i = 0; i < L->n && !x->error; i++) {
                const char *s = L->v[i], *t = s + strspn(s, " ");
                size_t ind = (size_t)(t - s);

                /* the test a message belongs to: the last one started, resumed or ended */
                if (starts_with(t, "=== RUN ") || starts_with(t, "=== CONT ") ||
                    starts_with(t, "=== NAME ") || starts_with(t, "--- FAIL: ") ||
                    starts_with(t, "--- PASS: ") || starts_with(t, "--- SKIP: ")) {
                        const char *name = strchr(t + 4, ' ');

                        name = name ? name + strspn(name, " ") : "";
                        if (starts_with(t, "--- "))
                                name = t + 10;
                        snprintf(test, sizeof(test), "%.*s", (int)strcspn(name, " "), name);
                        continue;
                }
                if (starts_with(s, "FAIL\t") || starts_with(s, "ok  \t")) {
                        package_dir(x, s, module, from);
                        from = a->n_diags;
                        test[0] = '\0';
                        continue;
                }
                if (ind >= 4 && test[0] && failed(a, test))
                        test_message(x, s, test);
        }
        package_dir(x, "FAIL\t", module, from);
        /* A failed test that printed nothing we could place (a timeout, os.Exit, log.Fatal). */
        for (size_t i = 0; i < a->n_tests_failed && !x->error; i++) {
                bool parent = false;

                for (size_t k = 0; k < a->n_tests_failed; k++) /* TestA fails when TestA/b does */
                        parent |= k != i && starts_with(a->tests_failed[k], a->tests_failed[i]) &&
                                  a->tests_failed[k][strlen(a->tests_failed[i])] == '/';
                if (!parent && !has_test_diag(a, a->tests_failed[i])) {
                        char msg[300];
                        heal_diag *d;

                        snprintf(msg, sizeof(msg), "%s failed", a->tests_failed[i]);
                        d = diag_add(x, HEAL_DIAG_TEST_FAILURE, HEAL_SEVERITY_ERROR, msg);
                        diag_set_test(x, d, a->tests_failed[i]);
                }
        }
}

struct event {
        char *package;
        size_t seq;
        char *output;
};

static int by_package(const void *x, const void *y)
{
        const struct event *a = x, *b = y;
        int r = strcmp(a->package, b->package);

        return r ? r : (a->seq > b->seq) - (a->seq < b->seq);
}

/* One event's Output, kept with its package; other lines (the build's) come first, in order.
 * A "skip" event names a skipped test even when its "--- SKIP" output line is missing. */
static void add_event(struct actx *x, struct event **v, size_t *n, json_t *ev, int *error)
{
        json_t *o = json_object_get(ev, "Output");
        const char *pkg = json_string_value(json_object_get(ev, "Package"));
        const char *test = json_string_value(json_object_get(ev, "Test"));
        struct event *grown;

        if (test && strcmp(json_string_value(json_object_get(ev, "Action")), "skip") == 0)
                test_list_add(x, &x->a->tests_skipped, &x->a->n_tests_skipped, test, strlen(test));
        if (!json_is_string(o))
                return;
        grown = realloc(*v, (*n + 1) * sizeof(*grown));
        if (!grown) {
                *error = -ENOMEM;
                return;
        }
        *v = grown;
        grown[*n] = (struct event){ strdup(pkg ? pkg : ""), *n, strdup(json_string_value(o)) };
        if (!grown[*n].package || !grown[*n].output)
                *error = -ENOMEM;
        (*n)++;
}

/*
 * go test -json: the Output of every event, grouped by package in name order (packages run in
 * parallel and their events interleave differently each time; within a package the order is
 * the test binary's). Lines that are not events (the build's output) come first.
 */
void parse_go_json(struct actx *x, const char *text, size_t len, char **ret_text, size_t *ret_len)
{
        heal_buf out = HEAL_BUF_INIT(len + 1);
        struct event *events = NULL;
        size_t n = 0;
        int error = 0;

        *ret_text = NULL;
        for (size_t i = 0; i < len && !error;) {
                const char *nl = memchr(text + i, '\n', len - i);
                size_t end = nl ? (size_t)(nl - text) : len;
                json_t *ev = NULL;

                if (end > i && text[i] == '{')
                        ev = json_loadb(text + i, end - i, 0, NULL);
                if (json_is_object(ev) && json_is_string(json_object_get(ev, "Action"))) {
                        add_event(x, &events, &n, ev, &error);
                } else {
                        heal_buf_append(&out, text + i, end - i);
                        heal_buf_append(&out, "\n", 1);
                }
                json_decref(ev);
                i = end + 1;
        }
        if (n > 1)
                qsort(events, n, sizeof(*events), by_package);
        for (size_t i = 0; i < n; i++) {
                heal_buf_puts(&out, events[i].output);
                free(events[i].package);
                free(events[i].output);
        }
        free(events);
        if (error)
                x->error = error;
        else if (n > 0 && !(*ret_text = heal_buf_detach(&out, ret_len)))
                x->error = -ENOMEM;
        heal_buf_release(&out);
}
