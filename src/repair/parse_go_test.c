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

/* A message under "--- FAIL": "    file_test.go:22: text" at the test's indentation + 4. */
static void test_message(struct actx *x, const char *s, const char *test)
{
        struct loc l;
        char file[1024];
        heal_diag *d;

        while (*s == ' ')
                s++;
        if (!parse_loc(s, &l, go_ext) || l.col != 0)
                return;
        d = diag_add(x, HEAL_DIAG_TEST_FAILURE, HEAL_SEVERITY_ERROR, l.rest);
        snprintf(file, sizeof(file), "%.*s", (int)l.file_len, l.file);
        diag_set_loc(x, d, file, l.line, 0);
        diag_set_test(x, d, test);
}

void parse_go_test(struct actx *x)
{
        const struct lines *L = x->lines;
        heal_analysis *a = x->a;
        char test[256] = "";
        size_t indent = 0;

        for (size_t i = 0; i < L->n && !x->error; i++) {
                const char *s = L->v[i], *t = s + strspn(s, " ");
                size_t ind = (size_t)(t - s);

                if (starts_with(t, "--- FAIL: ") || starts_with(t, "--- PASS: ") ||
                    starts_with(t, "--- SKIP: ")) {
                        size_t n = strcspn(t + 10, " ");

                        if (t[4] == 'P')
                                test_list_add(x, &a->tests_passed, &a->n_tests_passed, t + 10, n);
                        else if (t[4] == 'F')
                                test_list_add(x, &a->tests_failed, &a->n_tests_failed, t + 10, n);
                        snprintf(test, sizeof(test), "%.*s", (int)n, t + 10);
                        indent = t[4] == 'F' ? ind + 4 : (size_t)-1;
                        continue;
                }
                if (indent != (size_t)-1 && test[0] && ind >= indent && ind > 0)
                        test_message(x, s, test);
                else if (ind < indent)
                        indent = (size_t)-1;
        }
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

void parse_go_json(struct actx *x, const char *text, size_t len, char **ret_text, size_t *ret_len)
{
        heal_buf out = HEAL_BUF_INIT(len + 1);
        bool any = false;

        *ret_text = NULL;
        for (size_t i = 0; i < len;) {
                const char *nl = memchr(text + i, '\n', len - i);
                size_t end = nl ? (size_t)(nl - text) : len;
                json_t *ev = NULL;

                if (end > i && text[i] == '{')
                        ev = json_loadb(text + i, end - i, 0, NULL);
                if (json_is_object(ev) && json_is_string(json_object_get(ev, "Action"))) {
                        json_t *o = json_object_get(ev, "Output");

                        any = true;
                        if (json_is_string(o))
                                heal_buf_append(&out, json_string_value(o), json_string_length(o));
                } else {
                        heal_buf_append(&out, text + i, end - i); /* build output around events */
                        heal_buf_append(&out, "\n", 1);
                }
                json_decref(ev);
                i = end + 1;
        }
        if (any) {
                *ret_text = heal_buf_detach(&out, ret_len);
                if (!*ret_text)
                        x->error = -ENOMEM;
        }
        heal_buf_release(&out);
}
