/* SPDX-License-Identifier: MIT */
#ifndef HEAL_SEARCH_INTERNAL_H
#define HEAL_SEARCH_INTERNAL_H

#include <limits.h>
#include <stdbool.h>

#include "heal/buf.h"
#include "heal/gaming.h"
#include "heal/repair.h"

#define WS_ENV_MAX 40

/* How every run of a search is made (workspace.c, env.c). */
struct ws_config {
        const char *tree;
        const char *cwd;
        heal_sandbox_limits limits;
        unsigned sandbox_flags;
        bool git_is_dir, git_is_file; /* what the tree's .git is, to hide it */
        char gocache[PATH_MAX];       /* heal's Go build cache; "" none */
        bool cache_rw; /* bound read-write (the baseline); else an overlay whose writes vanish */
        char gomodcache[PATH_MAX];       /* the user's module cache, bound read-only; "" none */
        const char *env[WS_ENV_MAX + 1]; /* NAME=value, NULL-terminated */
        char env_store[4][PATH_MAX + 32];
        bool go_test; /* the command is `go test`: GOFLAGS also gets -v in listing runs */
};

/* env.c: the config for @o; @listing: add -v to GOFLAGS for `go test` (the tests that ran). */
int ws_config_init(struct ws_config *c, const heal_repair_opts *o, bool listing, heal_error *err);

/* workspace.c: @argv run over the tree with @p's files on top (NULL: the tree as it is).
 * -ECANCELED after heal_repair_cancel(); else as heal_sandbox_run(). */
int workspace_run(heal_sandbox_result *ret, const struct ws_config *c, const char *const *argv,
                  const heal_patch *p, heal_sandbox_output_fn stream, void *userdata,
                  heal_error *err);
bool repair_canceled(void);
/* Remove the layers a killed heal left behind (theirs: owned by us, their PID gone). */
void workspace_sweep(void);
/* Mark the time spent blocked in a model request (heal_repair_waiting_for_model()). */
void repair_model_call(bool on);
void repair_cancel_reset(void);

/* stamp.c */
int tree_stamp_take(heal_tree_stamp **ret, const char *tree, heal_error *err);
void tree_stamp_free(heal_tree_stamp *s);

/* baseline.c */
int baseline_analyze(heal_analysis *ret, const heal_sandbox_result *res, const struct ws_config *c,
                     const char *const *argv, heal_error *err);
bool run_passed(const heal_sandbox_result *res);

/* shift.c: a candidate's error diagnostics (@to, its workspace @to_p) against its parent's
 * (@from, @from_p), the parent's lines moved by the edit between them. */
struct diag_delta {
        unsigned removed;           /* parent errors gone */
        unsigned added;             /* candidate errors that are new */
        const heal_diag *first_new; /* the first of them (in @to), or NULL */
};
void diag_compare(struct diag_delta *ret, const heal_analysis *from, const heal_patch *from_p,
                  const heal_analysis *to, const heal_patch *to_p);

/* A node of the search tree; nodes live in one array and name each other by index. */
struct snode {
        heal_node pub;
        heal_analysis an; /* its failure (the root's is the baseline's, borrowed) */
        bool an_owned;
        unsigned visits; /* evaluations backed up through it */
        double value;    /* their reward sum */
        unsigned vloss;  /* virtual losses: expansions in flight below it */
        unsigned expansions;
        double penalty;          /* the gaming rules' penalties: a fraction of the reward, [0, 1] */
        struct diag_delta delta; /* its errors against its parent's (failed runs) */
        int exit_code;           /* of its run */
        bool evaluated;
        char content[33];        /* XXH3-128 of the workspace content (path + after of each file) */
        heal_sandbox_result res; /* the run, until classified */
        int run_r;
        heal_error run_err;
};

struct search {
        const heal_repair_opts *o;
        const heal_baseline *base;
        struct ws_config ws; /* runs listing tests, like the baseline's analysed run */
        heal_reward_weights w;
        struct snode *v;
        size_t n;
        unsigned k, workers, max_nodes, max_depth, max_expansions;
        double c_uct;
        uint64_t start_ns, wall_ms;
        unsigned model_calls;
        int has_tests; /* the tree has a Go test function: -1 not looked yet, 0, 1 */
        bool budget_out;
        char stop[128];
};

/* evaluate.c: run the unevaluated nodes among @ids (@n of them) in parallel, then classify
 * each against the root and its parent and back up its reward. */
int search_evaluate(struct search *s, const int *ids, size_t n, heal_error *err);
/* Is the node one the search may expand (a failure to fix, not too deep)? */
bool node_expandable(const struct search *s, const struct snode *x);

/* expand.c: ask the model for k children of each node of @ids; appends them to s->v (not yet
 * evaluated) and their ids to @out (room for n * k). -EDQUOT: budget. */
int search_expand(struct search *s, const int *ids, size_t n, int *out, size_t *n_out,
                  heal_error *err);
/* The prompt for node @id: @ret's system, and in @user its user message with the edits so far
 * and what earlier attempts from it did. */
int node_prompt(const struct search *s, int id, heal_prompt *ret, heal_buf *user, heal_error *err);
/* Classify at once a new node that needs no run: its edits did not apply (@apply_r < 0, why in
 * @e), change nothing, or give a workspace seen before. */
void search_preclassify(struct search *s, int id, int apply_r, const heal_error *e);
/* The compiler's fix-its of the root's failure as one candidate, appended; -1 when none. */
int search_fixits(struct search *s, heal_error *err);
/* goimports.c: goimports on the Go files whose errors it fixes, as one candidate; -1 when
 * none, or goimports is not installed or failed. */
int search_goimports(struct search *s, heal_error *err);
/* A new node under @parent with @patch (taken) from @source; its id or -ENOMEM. */
int search_add_node(struct search *s, int parent, const char *source, heal_patch *patch,
                    char *answer);

/* gaming_node.c: @rep's rules added to the node (names, penalty); when one rejects, the
 * node is rejected with the hit's detail as why. -ENOMEM. */
int node_add_rules(struct snode *x, const heal_gaming_report *rep);
/* heal_gaming_check() of a new node's patch; rejected nodes are classified at once. */
int node_check_gaming(struct search *s, struct snode *x, heal_error *err);

/* trace.c: one JSON line per evaluated node */
void trace_node(FILE *f, const struct search *s, const struct snode *x);

/* Is argv `go test ...`? */
bool argv_is_go_test(const char *const *argv);

#endif
