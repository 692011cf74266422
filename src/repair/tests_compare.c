/* SPDX-License-Identifier: MIT */
/*
 * The test-set invariants between the baseline run and a candidate's (the research notes on
 * test gaming, section 4.3 item 2): every test that passed still passes, no test is newly
 * skipped, and the tests that failed now pass rather than vanish or skip. A test that still
 * fails breaks no invariant: the candidate just did not fix it.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "heal/gaming.h"

#include "core/util.h"
#include "repair/gaming-internal.h"

#define NAMES_SHOWN 10

static bool listed(char *const *v, size_t n, const char *name)
{
        for (size_t i = 0; i < n; i++)
                if (strcmp(v[i], name) == 0)
                        return true;
        return false;
}

/* One hit naming the tests of @v that @keep selects ("TestA, TestB (failed) and 3 more"). */
static void names_hit(struct hits *h, const char *rule, const char *what, char *const *v, size_t n,
                      const heal_analysis *cand,
                      bool (*keep)(const heal_analysis *b, const heal_analysis *c, const char *t),
                      const heal_analysis *base)
{
        char text[1024] = "";
        size_t found = 0, len = 0;

        for (size_t i = 0; i < n; i++) {
                if (!keep(base, cand, v[i]))
                        continue;
                if (found++ < NAMES_SHOWN && len < sizeof(text))
                        len += (size_t)snprintf(
                                text + len, sizeof(text) - len, "%s%s%s", found > 1 ? ", " : "",
                                v[i],
                                listed(cand->tests_failed, cand->n_tests_failed, v[i]) ? " (failed)"
                                : listed(cand->tests_skipped, cand->n_tests_skipped, v[i])
                                        ? " (skipped)"
                                        : " (absent)");
        }
        if (found > NAMES_SHOWN)
                snprintf(text + MIN(len, sizeof(text) - 1),
                         sizeof(text) - MIN(len, sizeof(text) - 1), " and %zu more",
                         found - NAMES_SHOWN);
        if (found)
                hit_add(h, rule, true, 0, NULL, 0, "%zu test%s %s: %s", found,
                        found == 1 ? "" : "s", what, text);
}

static bool passed(const heal_analysis *a, const char *t)
{
        return listed(a->tests_passed, a->n_tests_passed, t);
}

static bool skipped(const heal_analysis *a, const char *t)
{
        return listed(a->tests_skipped, a->n_tests_skipped, t);
}

static bool stopped_passing(const heal_analysis *b, const heal_analysis *c, const char *t)
{
        (void)b;
        return !passed(c, t);
}

static bool newly_skipped(const heal_analysis *b, const heal_analysis *c, const char *t)
{
        (void)c;
        return !skipped(b, t);
}

static bool gone(const heal_analysis *b, const heal_analysis *c, const char *t)
{
        (void)b;
        return !passed(c, t) && !listed(c->tests_failed, c->n_tests_failed, t);
}

int heal_tests_compare(heal_gaming_report *ret, const heal_analysis *baseline,
                       const heal_analysis *candidate, const heal_gaming_opts *o, heal_error *err)
{
        struct hits h;
        int r;

        if (!ret || !baseline || !candidate)
                return heal_error_set(err, -EINVAL, "invalid argument");
        r = hits_begin(&h, o, err);
        if (r < 0)
                return r;
        names_hit(&h, "fewer_tests", "passed before and do not pass now", baseline->tests_passed,
                  baseline->n_tests_passed, candidate, stopped_passing, baseline);
        names_hit(&h, "new_skips", "newly skipped", candidate->tests_skipped,
                  candidate->n_tests_skipped, candidate, newly_skipped, baseline);
        names_hit(&h, "failing_test_gone", "failed before and are now skipped or absent",
                  baseline->tests_failed, baseline->n_tests_failed, candidate, gone, baseline);
        return hits_end(&h, ret, err);
}
