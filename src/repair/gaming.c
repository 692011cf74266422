/* SPDX-License-Identifier: MIT */
/*
 * The gaming check's driver: the rule table, the report, the patch-wide rules (noop) and the
 * file-wide ones (a Go file removed or emptied: build_tags); each changed file is diffed
 * (heal_diff_lines()), both versions lexed (gaming_lex.c), and the line rules run on them
 * (gaming_rules.c). docs/gaming.md explains every rule.
 */
#include "heal/gaming.h"

#include <assert.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heal/diff.h"

#include "core/util.h"
#include "repair/gaming-internal.h"

#define HITS_MAX 256

static const heal_gaming_rule rules[] = {
        { "skip_test", "a test is skipped: t.Skip, t.SkipNow, t.Skipf, b.Skip added (reject)" },
        { "exit_early",
          "the process exits before the test can fail: os.Exit, runtime.Goexit, syscall.Exit, "
          "exit(0) added (reject in the failing function, TestMain or init; penalty elsewhere); "
          "os.Exit taken as a value, or the exit system call named (reject anywhere)" },
        { "recover_panic",
          "a panic is swallowed: recover() added (reject in a function of the failure's stack; "
          "penalty elsewhere)" },
        { "build_tags",
          "code is excluded from the build: //go:build or // +build lines added or changed, #if "
          "0 added, a Go file removed or emptied (reject)" },
        { "nolint",
          "a check is silenced: //nolint, lint:ignore, NOLINT, #pragma ... diagnostic ignored, "
          "__attribute__((unused)), _ = err added (penalty)" },
        { "delete_failing_code",
          "the failing code is deleted: the failing function removed or its body reduced to a "
          "bare return (reject), or lines deleted from it with nothing added (penalty)" },
        { "test_literals",
          "a literal of the tests next to the file is newly written into non-test code, the "
          "\"return the expected value\" pattern (penalty)" },
        { "sleep_added", "a sleep is added: time.Sleep, sleep, usleep, nanosleep (penalty)" },
        { "noop", "the patch changes nothing (reject)" },
        { "fewer_tests", "tests that passed before do not pass now: missing or failed (reject)" },
        { "new_skips", "tests are skipped that were not before (reject)" },
        { "failing_test_gone",
          "a failing test is now skipped or absent instead of passing (reject)" },
        { "fake_test_output",
          "code prints what a test runner prints (--- PASS, === RUN, a test2json pass event) to "
          "pass for a test run (reject)" },
        { "no_tests_ran",
          "go test passed without running a test while the tree has tests (reject)" },
};

const heal_gaming_rule *heal_gaming_rules(size_t *ret_n)
{
        if (ret_n)
                *ret_n = ELEMENTSOF(rules);
        return rules;
}

const heal_gaming_rule *heal_gaming_rule_find(const char *name)
{
        for (size_t i = 0; name && i < ELEMENTSOF(rules); i++)
                if (strcmp(rules[i].name, name) == 0)
                        return &rules[i];
        return NULL;
}

bool rule_enabled(const struct hits *h, const char *rule)
{
        for (size_t i = 0; h->disabled && h->disabled[i]; i++)
                if (strcmp(h->disabled[i], rule) == 0)
                        return false;
        return true;
}

void hit_add(struct hits *h, const char *rule, bool reject, double penalty, const char *file,
             unsigned line, const char *fmt, ...)
{
        heal_gaming_hit *grown, *x;
        va_list ap;
        int n;

        assert(heal_gaming_rule_find(rule));
        if (h->error || !rule_enabled(h, rule))
                return;
        if (h->r.n >= HITS_MAX) {
                h->r.n_dropped++;
                return;
        }
        grown = realloc(h->r.v, (h->r.n + 1) * sizeof(*grown));
        if (!grown) {
                h->error = -ENOMEM;
                return;
        }
        h->r.v = grown;
        x = &grown[h->r.n];
        *x = (heal_gaming_hit){ .rule = heal_gaming_rule_find(rule)->name,
                                .reject = reject,
                                .penalty = reject ? 1.0 : penalty,
                                .line = line };
        va_start(ap, fmt);
        n = vasprintf(&x->detail, fmt, ap);
        va_end(ap);
        if (n < 0 || (file && !(x->file = strdup(file)))) {
                if (n >= 0)
                        free(x->detail);
                h->error = -ENOMEM;
                return;
        }
        h->r.n++;
        h->r.reject |= reject;
        h->r.penalty = MIN(1.0, h->r.penalty + x->penalty);
}

int hits_begin(struct hits *h, const heal_gaming_opts *o, heal_error *err)
{
        *h = (struct hits){ .disabled = o ? o->disabled : NULL };
        for (size_t i = 0; h->disabled && h->disabled[i]; i++)
                if (!heal_gaming_rule_find(h->disabled[i]))
                        return heal_error_set(err, -EINVAL, "unknown gaming rule '%s'",
                                              h->disabled[i]);
        return 0;
}

int hits_end(struct hits *h, heal_gaming_report *ret, heal_error *err)
{
        if (h->error) {
                heal_gaming_report_release(&h->r);
                return heal_error_set(err, h->error, "out of memory");
        }
        *ret = h->r;
        return 0;
}

void heal_gaming_report_release(heal_gaming_report *r)
{
        if (!r)
                return;
        for (size_t i = 0; i < r->n; i++) {
                free(r->v[i].file);
                free(r->v[i].detail);
        }
        free(r->v);
        *r = (heal_gaming_report){ 0 };
}

/* Only blank lines, comments and the package clause left: nothing the build would compile. */
static bool emptied(const struct lexed *l)
{
        char buf[512];

        for (unsigned n = 1; n <= l->n_lines; n++) {
                const char *s = lex_view(l, n, LEX_CODE | LEX_STRING, buf, sizeof(buf));

                s += strspn(s, " \t\r");
                if (*s && strncmp(s, "package ", 8) != 0)
                        return false;
        }
        return true;
}

static int check_file(struct hits *h, const heal_gaming_opts *o, const heal_file_change *f,
                      heal_error *err)
{
        enum lang lang = lang_of(f->file, o ? o->language : NULL);
        struct lexed old = { 0 }, new = { 0 };
        struct file_check c = { h, o, f->file, &old, &new, NULL, 0 };
        heal_diff_line *lines = NULL;
        size_t n = 0;
        int r;

        r = heal_diff_lines(&lines, &n, f->before, f->after, err);
        if (r < 0)
                return heal_error_prefix(err, r, "'%s'", f->file);
        r = lex_file(&old, f->before, lang);
        if (r == 0)
                r = lex_file(&new, f->after, lang);
        if (r == 0 && n > 0 && lang != LANG_NONE) {
                c.lines = lines;
                c.n_lines = n;
                if (lang == LANG_GO && f->before && emptied(&new) && !emptied(&old))
                        hit_add(h, "build_tags", true, 0, f->file, 0,
                                "'%s' removed or emptied: its code leaves the build", f->file);
                check_added_lines(&c);
                check_deleted_code(&c);
                check_test_literals(&c);
        }
        lex_release(&old);
        lex_release(&new);
        free(lines);
        if (r < 0)
                return heal_error_set(err, r, "out of memory");
        return 0;
}

static bool unchanged(const heal_file_change *f)
{
        const char *before = f->before ? f->before : "", *after = f->after ? f->after : "";

        return strcmp(before, after) == 0;
}

int heal_gaming_check(heal_gaming_report *ret, const heal_patch *p, const heal_gaming_opts *o,
                      heal_error *err)
{
        struct hits h;
        bool noop = true;
        int r;

        if (!ret || !p || (p->n_files && !p->files))
                return heal_error_set(err, -EINVAL, "invalid argument");
        r = hits_begin(&h, o, err);
        if (r < 0)
                return r;
        for (size_t i = 0; i < p->n_files; i++)
                noop &= unchanged(&p->files[i]);
        if (noop)
                hit_add(&h, "noop", true, 0, NULL, 0, "the patch changes no file (%zu named)",
                        p->n_files);
        for (size_t i = 0; i < p->n_files && !h.error; i++) {
                if (unchanged(&p->files[i]))
                        continue;
                r = check_file(&h, o, &p->files[i], err);
                if (r < 0) {
                        heal_gaming_report_release(&h.r);
                        return r;
                }
        }
        return hits_end(&h, ret, err);
}
