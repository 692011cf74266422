/* SPDX-License-Identifier: MIT */
#ifndef HEAL_GAMING_H
#define HEAL_GAMING_H

/*
 * Test gaming: a candidate patch can make a failing test "pass" without fixing anything (skip
 * the test, exit before it fails, swallow the panic, exclude the file, delete the failing code,
 * return the value the test expects). heal_gaming_check() reads the lines a patch adds and
 * removes (heal_diff_lines()), with a lexer-level scan of Go and C that ignores string literals
 * and comments where they do not matter, and reports each named rule that fires with a verdict:
 * reject the candidate, or a reward penalty. heal_tests_compare() checks the test-set
 * invariants between the baseline run and the candidate's. docs/gaming.md gives each rule's
 * reasoning and an example; every rule can be switched off by name (the CLI's --allow RULE).
 *
 * See: docs/gaming.md; Qi, Long, Achour, Rinard, "An Analysis of Patch Plausibility and
 *      Correctness for Generate-and-Validate Patch Generation Systems" (ISSTA 2015) for
 *      deletion as a "fix"; ImpossibleBench (arXiv 2510.20270) for test gaming by LLM agents.
 */

#include <stdbool.h>
#include <stddef.h>

#include "heal/analyze.h"
#include "heal/edit.h"
#include "heal/error.h"

/**
 * struct heal_gaming_rule - A rule of the static table.
 * @name:    "skip_test", "exit_early", ...; what a hit's @rule points to.
 * @summary: one line for --help and the docs.
 */
typedef struct heal_gaming_rule {
        const char *name;
        const char *summary;
} heal_gaming_rule;

/**
 * heal_gaming_rules() - Every rule, heal_gaming_check()'s and heal_tests_compare()'s, in a
 * fixed order: skip_test, exit_early, recover_panic, build_tags, nolint, delete_failing_code,
 * test_literals, sleep_added, noop, fewer_tests, new_skips, failing_test_gone.
 * @ret_n: optional; receives the number of rules.
 * Return: the static table; borrowed, valid for the program's life.
 */
const heal_gaming_rule *heal_gaming_rules(size_t *ret_n);

/**
 * heal_gaming_rule_find() - The rule called @name (for validating --allow), or NULL.
 */
const heal_gaming_rule *heal_gaming_rule_find(const char *name);

/**
 * struct heal_gaming_hit - One rule that fired.
 * @rule:    the rule's name; static (from heal_gaming_rules()).
 * @reject:  the candidate must be rejected.
 * @penalty: else the reward penalty, in (0, 1]: a fraction of the reward taken away.
 * @file:    the changed file (relative to the tree), or NULL for a whole-patch or test rule;
 *           owned by the report.
 * @line:    the line in the new file (for a removed line, in the old file; 1-based), or 0.
 * @detail:  one line for a human and the model's next prompt: what was found; owned.
 */
typedef struct heal_gaming_hit {
        const char *rule;
        bool reject;
        double penalty;
        char *file;
        unsigned line;
        char *detail;
} heal_gaming_hit;

/**
 * struct heal_gaming_report - Every hit, grouped by file in patch order (whole-patch hits
 * first); release with heal_gaming_report_release().
 * @v, @n:   the hits (at most 256; more are counted in @n_dropped only).
 * @reject:  some hit rejects the candidate.
 * @penalty: the sum of the hits' penalties, at most 1 (1 too when @reject).
 * @n_dropped: hits past the cap.
 */
typedef struct heal_gaming_report {
        heal_gaming_hit *v;
        size_t n;
        bool reject;
        double penalty;
        size_t n_dropped;
} heal_gaming_report;

/**
 * struct heal_gaming_opts - What the check may look at; all borrowed, all optional.
 * @tree:     the tree the patch applies to (absolute), to read the protected test files next
 *            to a changed file (test_literals); NULL skips that rule.
 * @baseline: the analysis of the failure being repaired: its error diagnostics and in-tree
 *            stack frames name the failing functions (exit_early, recover_panic,
 *            delete_failing_code); NULL: none known.
 * @disabled: NULL-terminated rule names not to check (the CLI's --allow), or NULL.
 * @language: "go" or "c" for files whose extension says neither (.go is Go; .c and .h are
 *            C); NULL: such files get only the language-independent rules.
 */
typedef struct heal_gaming_opts {
        const char *tree;
        const heal_analysis *baseline;
        const char *const *disabled;
        const char *language;
} heal_gaming_opts;

/**
 * heal_gaming_check() - The gaming rules that fire on @p.
 * @ret: filled on success (possibly with no hit); untouched on failure.
 * @p:   the candidate (heal_edits_apply()'s output); borrowed.
 * @o:   optional (NULL: no tree, no baseline, every rule, no language hint).
 * @err: optional.
 *
 * Context: reads files under @o->tree (at most 4 MiB each, beneath the tree only); no other
 *          side effect; thread-safe.
 * Return: 0; -EFBIG for a changed file over HEAL_DIFF_FILE_MAX_BYTES; -ENOMEM; -EINVAL for a
 *         NULL @ret or @p, or an unknown rule name in @o->disabled.
 * See: docs/gaming.md (each rule with an example); the research notes on test gaming by
 *      repair agents, section 4.3.
 */
int heal_gaming_check(heal_gaming_report *ret, const heal_patch *p, const heal_gaming_opts *o,
                      heal_error *err);

/**
 * heal_tests_compare() - The test-set invariants between two runs of the same test command.
 * @ret:       filled on success; untouched on failure.
 * @baseline:  the failing run's analysis (tests_passed, tests_failed, tests_skipped); borrowed.
 * @candidate: the candidate's run; borrowed.
 * @o:         optional; only @o->disabled is used.
 * @err:       optional.
 *
 * Rules, each one hit whose detail lists the test names (at most 10, then "and N more"):
 * fewer_tests (reject): tests that passed in the baseline and did not pass in the candidate
 * (missing or failed); new_skips (reject): tests skipped in the candidate and not in the
 * baseline; failing_test_gone (reject): tests that failed in the baseline and are now skipped
 * or absent instead of passing. A test still failing is no invariant's business.
 *
 * Return: 0; -ENOMEM; -EINVAL for NULL @ret, @baseline or @candidate, or an unknown rule name.
 * See: `go doc test2json` (the actions); docs/gaming.md.
 */
int heal_tests_compare(heal_gaming_report *ret, const heal_analysis *baseline,
                       const heal_analysis *candidate, const heal_gaming_opts *o, heal_error *err);

/**
 * heal_gaming_report_release() - Free what @r owns and zero it; accepts a zeroed report.
 */
void heal_gaming_report_release(heal_gaming_report *r);

#endif
