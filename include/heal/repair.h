/* SPDX-License-Identifier: MIT */
#ifndef HEAL_REPAIR_H
#define HEAL_REPAIR_H

/*
 * The main job: a failing command, candidate patches from a model (and free ones from the
 * compiler), each evaluated in its own sandbox over its own workspace, a Monte Carlo Tree Search
 * over edit sequences, and the verified winner. Nothing here writes the user's tree:
 * heal_writeback() (heal/writeback.h) does that with the patch heal_repair() returns.
 *
 * A workspace is an overlay of the tree: the tree itself as the read-only lowest layer, a small
 * host directory holding only the candidate's changed files above it, writes going to a hidden
 * tmpfs that vanishes with the run. No file of the tree is copied, so a workspace costs the same
 * for 10 files or 100,000. The sandbox sees no .git, Go's build cache is heal's own (shared by
 * every run, warm, never the user's), the module cache is the user's, read-only.
 *
 * Lifecycle: heal_repair_baseline() runs the command once as the user would; when it failed,
 * heal_repair() searches; both fill structs released by their own release function.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "heal/analyze.h"
#include "heal/edit.h"
#include "heal/error.h"
#include "heal/llm.h"
#include "heal/prompt.h"
#include "heal/sandbox.h"

/**
 * enum heal_outcome - What evaluating a candidate gave.
 * @HEAL_OUTCOME_DOES_NOT_APPLY: the edits did not apply (no match, several matches, a path
 *                               outside the tree or protected); nothing was run.
 * @HEAL_OUTCOME_REJECTED:       a rule against gaming the tests fired (named in the node).
 * @HEAL_OUTCOME_PRUNED:         its failure already occurred on its path (a loop), or its
 *                               workspace content equals an evaluated node's.
 * @HEAL_OUTCOME_BUILD_FAILS:    it does not build (a compile error that is not the original).
 * @HEAL_OUTCOME_SAME_FAILURE:   the original failure is still there (same cause fingerprint).
 * @HEAL_OUTCOME_NEW_FAILURE:    the original failure is gone, another one came.
 * @HEAL_OUTCOME_PASSES:         the command exits 0 and the tests that passed still pass.
 */
typedef enum heal_outcome {
        HEAL_OUTCOME_DOES_NOT_APPLY,
        HEAL_OUTCOME_REJECTED,
        HEAL_OUTCOME_PRUNED,
        HEAL_OUTCOME_BUILD_FAILS,
        HEAL_OUTCOME_SAME_FAILURE,
        HEAL_OUTCOME_NEW_FAILURE,
        HEAL_OUTCOME_PASSES,
        _HEAL_OUTCOME_MAX,
} heal_outcome;

/** heal_outcome_name() - "does_not_apply", "rejected", ..., "passes"; "?" when out of range. */
const char *heal_outcome_name(heal_outcome o);

/**
 * struct heal_reward_weights - The reward of an evaluated candidate, in [0, 1] before
 * penalties; docs/repair.md gives the reasoning for each default.
 * @build:        it builds (default 0.2).
 * @original_gone: the original failure is gone (default 0.3).
 * @passes:       the command passes (default 0.5).
 * @fixed_errors: per error of its parent it removed, up to @build ("only new errors count":
 *                old locations shifted by the edit's line delta; default 0.05).
 * @diff_line:    subtracted per changed line (default 0.002, at most 0.1 in all).
 * @penalty:      scales the gaming rules' penalties (each a fraction of the reward taken
 *                away, heal_gaming_hit.penalty; default 1: as the rules say).
 */
typedef struct heal_reward_weights {
        double build, original_gone, passes, fixed_errors, diff_line, penalty;
} heal_reward_weights;

#define HEAL_REWARD_WEIGHTS_INIT                                                               \
 {                                                                                             \
  .build = 0.2, .original_gone = 0.3, .passes = 0.5, .fixed_errors = 0.05, .diff_line = 0.002, \
  .penalty = 0.25                                                                              \
 }

/**
 * struct heal_node - One candidate in the search tree (the root is the failing tree); owned by
 * the search, borrowed by event callbacks and the result.
 * @id:          0 for the root, then in creation order.
 * @parent:      the parent's id (-1 for the root).
 * @depth:       edits applied along the path (0 for the root).
 * @source:      "baseline", "model", "fixit" (a compiler's suggestion) or "goimports".
 * @outcome:     the class; for the root HEAL_OUTCOME_SAME_FAILURE.
 * @reward:      of this evaluation, [0, 1] minus penalties.
 * @why:         one line: the first new error, the edit's failure, the rule that fired.
 * @rules:       NULL-terminated names of the gaming rules that fired (heal_gaming_rules()),
 *               or NULL; the array is owned by the node, the names are static.
 * @exact, @cause: fingerprints of its failure ("" when it passes or did not run).
 * @patch:       every change from the tree along the path (before = the tree's content).
 * @answer:      the model's answer it came from, or NULL.
 * @lines_changed: lines added plus removed by @patch.
 * @wall_ms:     evaluation time, ms.
 */
typedef struct heal_node {
        int id;
        int parent;
        unsigned depth;
        const char *source;
        heal_outcome outcome;
        double reward;
        char *why;
        const char **rules;
        char exact[33];
        char cause[33];
        heal_patch patch;
        char *answer;
        unsigned lines_changed;
        uint64_t wall_ms;
} heal_node;

/**
 * enum heal_repair_event - What a progress callback is told.
 * @HEAL_EVENT_EXPAND:    asking the model for candidates for @node (the k in @count).
 * @HEAL_EVENT_EVALUATED: @node was evaluated.
 * @HEAL_EVENT_VERIFY:    re-running @node's patch in a fresh workspace.
 */
typedef enum heal_repair_event {
        HEAL_EVENT_EXPAND,
        HEAL_EVENT_EVALUATED,
        HEAL_EVENT_VERIFY,
} heal_repair_event;

typedef void (*heal_repair_event_fn)(heal_repair_event ev, const heal_node *node, unsigned count,
                                     void *userdata);

/**
 * struct heal_repair_opts - A search's inputs; every pointer borrowed for the call.
 * @tree:        the tree (absolute; the command's working directory); required.
 * @argv:        the command, NULL-terminated; required.
 * @verify:      a second command the winner must pass too (e.g. go test -race ./...), or NULL.
 * @limits, @sandbox_flags: of every run (heal_sandbox_set_limits(), set_flags()); NULL limits:
 *               HEAL_SANDBOX_LIMITS_INIT with a 120 s wall time.
 * @env:         NULL-terminated "NAME=value" set in every run (after heal's own), or NULL.
 * @llm:         the model client, or NULL: free candidates only.
 * @model:       the model name for requests (required with @llm).
 * @k:           candidates asked per expansion (0: 3).
 * @workers:     evaluations in parallel (0: the online CPUs, at most 8).
 * @max_nodes:   candidates evaluated at most (0: 24).
 * @max_depth:   edits along one path at most (0: 4).
 * @wall_ms:     the search's wall time, ms (0: 600000).
 * @c_uct:       the exploration constant of UCT (0: 1.0).
 * @best:        keep searching until the limits and pick among the candidates that pass by
 *               agreement (normalized patches several samples converged on), then smallest
 *               diff; default: stop at the first verified one.
 * @protected:   as heal_apply_opts (NULL: the defaults).
 * @allow:       NULL-terminated names of gaming rules not to apply (heal/gaming.h), or NULL.
 * @weights:     NULL: HEAL_REWARD_WEIGHTS_INIT.
 * @context_budget: tokens of source in a prompt (0: 6000).
 * @on_event:    progress, called from the calling thread; may be NULL.
 * @trace:       JSON Lines of every node (parent, edit, outcome, fingerprints, reward), or NULL.
 * @servers:     running language servers for the prompts' context, or NULL.
 */
typedef struct heal_repair_opts {
        const char *tree;
        const char *const *argv;
        const char *const *verify;
        const heal_sandbox_limits *limits;
        unsigned sandbox_flags;
        const char *const *env;
        heal_llm_client *llm;
        const char *model;
        unsigned k, workers, max_nodes, max_depth;
        uint64_t wall_ms;
        double c_uct;
        bool best;
        const char *const *protected;
        const char *const *allow;
        const heal_reward_weights *weights;
        size_t context_budget;
        heal_repair_event_fn on_event;
        void *userdata;
        FILE *trace;
        heal_lsp *const *servers;
} heal_repair_opts;

/** typedef heal_tree_stamp - Each file's size, inode and times as the baseline saw them. */
typedef struct heal_tree_stamp heal_tree_stamp;

/**
 * struct heal_baseline - The command run once in a workspace of the unchanged tree.
 * @result:   the sandbox's result (output, status, usage).
 * @analysis: its analysis when it failed (zeroed when it passed); for `go test` from a second,
 *            verbose run of the same command, which also lists the tests that ran.
 * @passed:   it exited 0 within its limits.
 * @go_test:  the command is `go test` (tests are listed with GOFLAGS=-v).
 * @flaky:    it failed, then passed when run again to list the tests: nothing to repair
 *            (@result is the failed run; @analysis zeroed).
 * @stamp:    the tree's files as they were when it ran (for heal_baseline_check()).
 */
typedef struct heal_baseline {
        heal_sandbox_result result;
        heal_analysis analysis;
        bool passed;
        bool go_test;
        bool flaky;
        heal_tree_stamp *stamp;
} heal_baseline;

/**
 * heal_repair_baseline() - Run @o->argv as given in a workspace of the unchanged tree (output
 * to @stream as it comes, when not NULL), then, if it failed, analyse it (for `go test` after
 * a second run with GOFLAGS=-v that lists the tests).
 * @ret: filled on success; release with heal_baseline_release().
 * Return: 0 whatever the command did; -EINVAL for missing options; the errors of
 *         heal_sandbox_run() (-EPERM/-ENOSPC when user namespaces are refused, ...) and of
 *         heal_analyze_result() and the walk of the tree (-ENOMEM, -EACCES); -EIO when the
 *         sandbox was set up but could not start CMD (HEAL_STATUS_SETUP_ERROR: the message
 *         says why); -ECANCELED after heal_repair_cancel().
 */
int heal_repair_baseline(heal_baseline *ret, const heal_repair_opts *o,
                         heal_sandbox_output_fn stream, void *userdata, heal_error *err);

/**
 * heal_baseline_check() - Are @p's files in @tree as they were when @b ran? Compares each
 * file's size, inode, modification and change times (ns) with those taken before the baseline
 * (a walk of @tree, .git and .heal left out, not following symlinks, at most 1,000,000 files);
 * a file new in @p must still not exist. Call it right before heal_writeback(), which then
 * compares contents too.
 * Return: 0; -ESTALE naming the first file that changed (nothing should be written).
 */
int heal_baseline_check(const heal_baseline *b, const heal_patch *p, const char *tree,
                        heal_error *err);

/** heal_baseline_release() - Free what @b owns and zero it; accepts a zeroed baseline. */
void heal_baseline_release(heal_baseline *b);

/**
 * enum heal_verdict - How a search ended.
 * @HEAL_VERDICT_FIXED:        a candidate passed and its re-run in a fresh workspace did too.
 * @HEAL_VERDICT_NOT_FOUND:    every path was explored or pruned within the limits.
 * @HEAL_VERDICT_BUDGET:       the model's budget ran out (heal_llm_budget).
 * @HEAL_VERDICT_LIMIT:        the node, depth or wall-time limit was reached (@stop says which).
 * @HEAL_VERDICT_CANCELED:     heal_repair_cancel() was called.
 */
typedef enum heal_verdict {
        HEAL_VERDICT_FIXED,
        HEAL_VERDICT_NOT_FOUND,
        HEAL_VERDICT_BUDGET,
        HEAL_VERDICT_LIMIT,
        HEAL_VERDICT_CANCELED,
} heal_verdict;

/**
 * struct heal_repair_result - What a search found; release with heal_repair_result_release().
 * @verdict:  how it ended.
 * @stop:     why it stopped, one line ("node limit (24)", "no candidate left", ...).
 * @winner:   the verified node (an index into @nodes), or -1.
 * @nodes, @n_nodes: every node, the root first; owned.
 * @model_calls: expansions that asked the model.
 * @tally:    the model's usage (requests, tokens, cost).
 * @wall_ms:  the search's time, ms.
 */
typedef struct heal_repair_result {
        heal_verdict verdict;
        char stop[128];
        int winner;
        heal_node *nodes;
        size_t n_nodes;
        unsigned model_calls;
        heal_llm_tally tally;
        uint64_t wall_ms;
} heal_repair_result;

/**
 * heal_repair() - Search candidate patches for @base's failure.
 * @ret:  filled on success, whatever the verdict; release with heal_repair_result_release().
 * @o:    as for heal_repair_baseline().
 * @base: a failed baseline from heal_repair_baseline() with the same @o.
 *
 * Cheap first: the compiler's fix-its (free), then one batch of @o->k model candidates; only
 * while nothing passes does the tree grow. Selection descends from the root by UCT (Kocsis and
 * Szepesvari, "Bandit based Monte-Carlo Planning", ECML 2006), where a node may also be expanded
 * again (up to 3 times, each request told what its children did), with a virtual loss on nodes
 * being evaluated so that parallel workers spread out. A child whose exact or cause fingerprint
 * occurred on its path is pruned; a workspace identical to an evaluated one is not run again.
 * The first candidate that passes (with @o->best: the chosen one) is re-run from a fresh
 * workspace, with @o->verify too; only then is the verdict HEAL_VERDICT_FIXED.
 *
 * Return: 0; -EINVAL for missing options or a baseline that passed; -ENOMEM; the errors of
 *         heal_sandbox_run() when the sandbox itself fails. Model errors other than the budget
 *         end the search with HEAL_VERDICT_NOT_FOUND and the error in @ret->stop.
 */
int heal_repair(heal_repair_result *ret, const heal_repair_opts *o, const heal_baseline *base,
                heal_error *err);

/** heal_repair_result_release() - Free what @r owns and zero it; accepts a zeroed result. */
void heal_repair_result_release(heal_repair_result *r);

/**
 * heal_repair_cancel() - Stop the baseline or search in progress: every running sandbox is
 * canceled and no new one starts; heal_repair() returns HEAL_VERDICT_CANCELED.
 * Context: async-signal-safe (meant for a SIGINT handler); process-wide.
 */
void heal_repair_cancel(void);

/**
 * heal_repair_waiting_for_model() - Is a search blocked in a model request now? A model call
 * cannot be interrupted from a signal handler; when this is true no sandbox runs and nothing
 * of the tree is being written, so a program may end itself at once (_exit(2)) on SIGINT.
 * Context: async-signal-safe; process-wide.
 */
bool heal_repair_waiting_for_model(void);

#endif
