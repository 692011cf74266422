/* SPDX-License-Identifier: MIT */
/*
 * The repair search: Monte Carlo Tree Search over edit sequences. The root is the failing
 * tree; a node's children are candidates for the node's own failure, each evaluated at once
 * (the "simulation" is the real build and test run), its reward backed up to the root.
 * Selection descends from the root by UCT (Kocsis and Szepesvari, ECML 2006), where each node
 * also offers "ask again for this failure" valued by its own mean and how often it was asked
 * (at most max_expansions times; progressive widening). Several expansions per round, each
 * marked with a virtual loss along its path so that the next selection goes elsewhere, keep
 * the workers busy. Cheap first: the compiler's fix-its, then one batch from the root; the
 * tree only grows while nothing passes.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "heal/repair.h"

#include "repair/search-internal.h"

#define ROUND_MAX 8

const char *heal_outcome_name(heal_outcome o)
{
        static const char *const names[] = {
                [HEAL_OUTCOME_DOES_NOT_APPLY] = "does_not_apply",
                [HEAL_OUTCOME_REJECTED] = "rejected",
                [HEAL_OUTCOME_PRUNED] = "pruned",
                [HEAL_OUTCOME_BUILD_FAILS] = "build_fails",
                [HEAL_OUTCOME_SAME_FAILURE] = "same_failure",
                [HEAL_OUTCOME_NEW_FAILURE] = "new_failure",
                [HEAL_OUTCOME_PASSES] = "passes",
        };

        return (unsigned)o < _HEAL_OUTCOME_MAX ? names[o] : "?";
}

static uint64_t now_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static double mean_of(const struct snode *x)
{
        unsigned n = x->visits + x->vloss;

        return n ? x->value / n : 0;
}

static double uct(const struct search *s, const struct snode *parent, const struct snode *x)
{
        unsigned n = x->visits + x->vloss;

        if (!n)
                return INFINITY;
        return mean_of(x) + s->c_uct * sqrt(log((double)(parent->visits + parent->vloss) + 1) / n);
}

/* open[i]: node i or a node below it can be expanded. Children have higher ids. */
static void mark_open(const struct search *s, bool *open)
{
        for (size_t i = s->n; i-- > 0;)
                open[i] = node_expandable(s, &s->v[i]);
        for (size_t i = s->n; i-- > 1;)
                if (open[i])
                        open[s->v[i].pub.parent] = true;
}

/* Descend from the root by UCT to the node to expand; -1 when none is left. */
static int select_node(struct search *s, const bool *open)
{
        int id = 0;

        if (!open[0])
                return -1;
        for (;;) {
                const struct snode *x = &s->v[id];
                double own = -INFINITY, best = -INFINITY;
                int next = -1;

                if (node_expandable(s, x))
                        own = mean_of(x) + s->c_uct * sqrt(log((double)(x->visits + x->vloss) + 1) /
                                                           (x->expansions + x->vloss + 1));
                for (size_t c = (size_t)id + 1; c < s->n; c++)
                        if (s->v[c].pub.parent == id && open[c] && uct(s, x, &s->v[c]) > best) {
                                best = uct(s, x, &s->v[c]);
                                next = (int)c;
                        }
                if (next < 0 || own >= best)
                        return node_expandable(s, x) ? id : -1;
                id = next;
        }
}

static void virtual_loss(struct search *s, int id, int delta)
{
        for (int p = id; p >= 0; p = s->v[p].pub.parent)
                s->v[p].vloss = (unsigned)((int)s->v[p].vloss + delta);
}

static bool stop_check(struct search *s, heal_repair_result *ret)
{
        size_t evaluated = s->n - 1;

        if (repair_canceled())
                ret->verdict = HEAL_VERDICT_CANCELED;
        else if (s->budget_out)
                ret->verdict = HEAL_VERDICT_BUDGET;
        else if (evaluated >= s->max_nodes)
                ret->verdict = HEAL_VERDICT_LIMIT;
        else if (now_ms() - s->start_ns >= s->wall_ms)
                ret->verdict = HEAL_VERDICT_LIMIT;
        else
                return false;
        if (ret->verdict == HEAL_VERDICT_CANCELED)
                snprintf(ret->stop, sizeof(ret->stop), "canceled");
        else if (ret->verdict == HEAL_VERDICT_BUDGET)
                snprintf(ret->stop, sizeof(ret->stop), "the model budget is spent");
        else if (evaluated >= s->max_nodes)
                snprintf(ret->stop, sizeof(ret->stop), "node limit (%u candidates)", s->max_nodes);
        else
                snprintf(ret->stop, sizeof(ret->stop), "time limit (%llu s)",
                         (unsigned long long)(s->wall_ms / 1000));
        return true;
}

/* One round: pick up to @rounds nodes, ask for their children, evaluate them. */
static int round_run(struct search *s, int *new_ids, size_t *n_new, heal_error *err)
{
        int targets[ROUND_MAX];
        size_t n = 0, want = s->workers / s->k;
        bool *open = calloc(s->n, sizeof(bool));
        int r;

        if (!open)
                return heal_error_set(err, -ENOMEM, "out of memory");
        want = want < 1 ? 1 : want > ROUND_MAX ? ROUND_MAX : want;
        while (n < want) {
                int id;

                mark_open(s, open);
                id = select_node(s, open);
                if (id < 0)
                        break;
                for (size_t i = 0; i < n && id >= 0; i++)
                        id = targets[i] == id ? -1 : id;
                if (id < 0)
                        break;
                targets[n++] = id;
                virtual_loss(s, id, 1);
        }
        free(open);
        *n_new = 0;
        r = n ? search_expand(s, targets, n, new_ids, n_new, err) : 0;
        for (size_t i = 0; i < n; i++)
                virtual_loss(s, targets[i], -1);
        if (r >= 0 && *n_new)
                r = search_evaluate(s, new_ids, *n_new, err);
        return r < 0 ? r : (int)n;
}

/* The node's patch made again from the answers along its path, as write-back will. */
static int rebuild_patch(const struct search *s, int id, heal_patch *ret, heal_error *err)
{
        int path[64];
        size_t n = 0;
        heal_patch cur = { 0 };
        int r = 0;

        for (int p = id; p > 0 && n < 64; p = s->v[p].pub.parent)
                path[n++] = p;
        while (n-- > 0 && r >= 0) {
                const struct snode *x = &s->v[path[n]];
                heal_apply_opts ao = { .tree = s->o->tree,
                                       .protected = s->o->protected,
                                       .base = &cur };
                heal_edits e = { 0 };
                heal_patch next = { 0 };

                if (!x->pub.answer) { /* a free candidate: its content is the edit */
                        heal_patch_release(&cur);
                        r = heal_patch_copy(&cur, &x->pub.patch);
                        continue;
                }
                r = heal_edits_parse(&e, x->pub.answer, err);
                if (r >= 0)
                        r = heal_edits_apply(&e, &ao, &next, err);
                heal_edits_release(&e);
                heal_patch_release(&cur);
                cur = next;
        }
        if (r < 0) {
                heal_patch_release(&cur);
                return r;
        }
        *ret = cur;
        return 0;
}

/* Re-run @id from a fresh workspace: the command as given, then --verify. 1 verified, 0 not
 * (why in the node), < 0 error. */
static int verify(struct search *s, int id, heal_error *err)
{
        struct snode *x = &s->v[id];
        struct ws_config plain;
        heal_patch p = { 0 };
        heal_sandbox_result res = { 0 };
        const char *const *cmds[2] = { s->o->argv, s->o->verify };
        int r = rebuild_patch(s, id, &p, err), ok = 1;

        if (s->o->on_event)
                s->o->on_event(HEAL_EVENT_VERIFY, &x->pub, 0, s->o->userdata);
        if (r >= 0)
                r = ws_config_init(&plain, s->o, false, err);
        for (size_t i = 0; r >= 0 && ok && i < 2; i++) {
                if (!cmds[i])
                        continue;
                r = workspace_run(&res, &plain, cmds[i], &p, NULL, NULL, err);
                if (r >= 0 && !run_passed(&res)) {
                        ok = 0;
                        free(x->pub.why);
                        x->pub.why = strdup(i ? "passed, but the --verify command failed"
                                              : "passed once, failed when run again (flaky)");
                        x->pub.outcome = HEAL_OUTCOME_NEW_FAILURE;
                }
                heal_sandbox_result_release(&res);
        }
        if (r >= 0 && ok) { /* write-back uses the rebuilt patch: make sure it is the same */
                heal_patch_release(&x->pub.patch);
                x->pub.patch = p;
                memset(&p, 0, sizeof(p));
        }
        heal_patch_release(&p);
        return r < 0 ? r : ok;
}

/* Among the passing nodes: the least penalised by gaming rules, then the content most of them
 * converged on, then the smallest diff, then the first found. */
static int pick_best(const struct search *s)
{
        int best = -1;
        unsigned best_votes = 0;

        for (size_t i = 1; i < s->n; i++) {
                unsigned votes = 0;

                if (s->v[i].pub.outcome != HEAL_OUTCOME_PASSES)
                        continue;
                for (size_t j = 1; j < s->n; j++)
                        votes += s->v[j].pub.outcome == HEAL_OUTCOME_PASSES &&
                                 !strcmp(s->v[i].content, s->v[j].content);
                if (best < 0 || s->v[i].penalty < s->v[best].penalty ||
                    (s->v[i].penalty == s->v[best].penalty &&
                     (votes > best_votes ||
                      (votes == best_votes &&
                       s->v[i].pub.lines_changed < s->v[best].pub.lines_changed)))) {
                        best = (int)i;
                        best_votes = votes;
                }
        }
        return best;
}

/* The best of the passing nodes (pick_best()), verified; until one is or none is left. */
static int verify_best(struct search *s, heal_repair_result *ret, heal_error *err)
{
        int best;

        ret->winner = -1;
        while (ret->winner < 0 && (best = pick_best(s)) >= 0) {
                int r = verify(s, best, err);

                if (r < 0)
                        return r;
                if (r == 1)
                        ret->winner = best;
        }
        return 0;
}

/* *@winner: the first node of @ids that passes and is verified, or stays -1. */
static int first_verified(struct search *s, const int *ids, size_t n, int *winner, heal_error *err)
{
        for (size_t i = 0; i < n && *winner < 0; i++) {
                int r;

                /* a pass that fired a penalising rule does not end the search: a clean one
                 * may come; it is picked at the end only when none does */
                if (s->v[ids[i]].pub.outcome != HEAL_OUTCOME_PASSES || s->v[ids[i]].penalty > 0)
                        continue;
                r = verify(s, ids[i], err);
                if (r < 0)
                        return r;
                if (r == 1)
                        *winner = ids[i];
        }
        return 0;
}

static int search_init(struct search *s, const heal_repair_opts *o, const heal_baseline *base,
                       heal_error *err)
{
        static const heal_reward_weights defaults = HEAL_REWARD_WEIGHTS_INIT;
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        struct snode *root;
        int r;

        memset(s, 0, sizeof(*s));
        if (!o || !base || base->passed || base->flaky || (o->llm && !o->model))
                return heal_error_set(err, -EINVAL,
                                      "a failed baseline (and a model name with a client) is "
                                      "needed");
        r = ws_config_init(&s->ws, o, true, err);
        if (r < 0)
                return r;
        s->o = o;
        s->base = base;
        s->has_tests = -1;
        s->w = o->weights ? *o->weights : defaults;
        s->k = o->k ? (o->k > 8 ? 8 : o->k) : 3;
        s->workers = o->workers ? o->workers : (unsigned)(cpus > 0 ? (cpus > 8 ? 8 : cpus) : 1);
        s->max_nodes = o->max_nodes ? o->max_nodes : 24;
        s->max_depth = o->max_depth ? o->max_depth : 4;
        s->max_expansions = 3;
        s->c_uct = o->c_uct > 0 ? o->c_uct : 1.0;
        s->wall_ms = o->wall_ms ? o->wall_ms : 600000;
        s->start_ns = now_ms();
        r = search_add_node(s, -1, "baseline", NULL, NULL);
        if (r < 0)
                return heal_error_set(err, r, "out of memory");
        root = &s->v[0];
        root->an = base->analysis; /* borrowed: an_owned stays false */
        root->pub.outcome = HEAL_OUTCOME_SAME_FAILURE;
        root->exit_code = base->result.exit_code;
        root->evaluated = true;
        root->visits = 1;
        memcpy(root->pub.exact, base->analysis.exact, sizeof(root->pub.exact));
        memcpy(root->pub.cause, base->analysis.cause, sizeof(root->pub.cause));
        return 0;
}

static void search_finish(struct search *s, heal_repair_result *ret)
{
        ret->nodes = calloc(s->n, sizeof(*ret->nodes));
        for (size_t i = 0; i < s->n; i++) {
                if (ret->nodes)
                        ret->nodes[i] = s->v[i].pub;
                else
                        free(s->v[i].pub.why), free(s->v[i].pub.answer), free(s->v[i].pub.rules),
                                heal_patch_release(&s->v[i].pub.patch);
                if (s->v[i].an_owned)
                        heal_analysis_release(&s->v[i].an);
                heal_sandbox_result_release(&s->v[i].res);
        }
        ret->n_nodes = ret->nodes ? s->n : 0;
        ret->model_calls = s->model_calls;
        if (s->o->llm)
                heal_llm_client_tally(s->o->llm, &ret->tally);
        ret->wall_ms = now_ms() - s->start_ns;
        free(s->v);
        s->v = NULL;
}

/* The free candidates (the compiler's fix-its, goimports): each evaluated, the first that
 * passes verified. */
static int free_candidates(struct search *s, heal_repair_result *ret, heal_error *err)
{
        int (*const makers[])(struct search *, heal_error *) = { search_fixits, search_goimports };

        for (size_t i = 0; i < 2 && ret->winner < 0; i++) {
                int id = makers[i](s, err), r;

                if (id < -1)
                        return id;
                if (id < 0)
                        continue;
                r = search_evaluate(s, &id, 1, err);
                if (r >= 0)
                        r = first_verified(s, &id, 1, &ret->winner, err);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int search_loop(struct search *s, heal_repair_result *ret, heal_error *err)
{
        int ids[ROUND_MAX * 8];
        size_t n = 0;
        int r = free_candidates(s, ret, err);

        while (r >= 0 && (ret->winner < 0 || s->o->best)) {
                if (stop_check(s, ret))
                        break;
                if (!s->o->llm) {
                        /* node 0 is the baseline: the others are the fix-its and goimports */
                        snprintf(ret->stop, sizeof(ret->stop), "%s",
                                 s->n > 1 ? "no model configured, and the compiler's own "
                                            "fixes (fix-its, goimports) did not fix it"
                                          : "no model configured, and the compiler offered no "
                                            "fix of its own to try");
                        break;
                }
                r = round_run(s, ids, &n, err);
                if (r == 0 || (r > 0 && n == 0 && s->stop[0])) {
                        snprintf(ret->stop, sizeof(ret->stop), "%s",
                                 s->stop[0] ? s->stop : "no candidate left to try");
                        break;
                }
                if (r > 0 && !s->o->best)
                        r = first_verified(s, ids, n, &ret->winner, err);
        }
        if (r >= 0 && (s->o->best || ret->winner < 0) && !repair_canceled())
                r = verify_best(s, ret, err);
        if (r >= 0 && s->budget_out && ret->winner < 0) {
                ret->verdict = HEAL_VERDICT_BUDGET;
                snprintf(ret->stop, sizeof(ret->stop), "the model budget is spent");
        }
        return r == -ECANCELED ? 0 : r < 0 ? r : 0;
}

int heal_repair(heal_repair_result *ret, const heal_repair_opts *o, const heal_baseline *base,
                heal_error *err)
{
        struct search s;
        heal_repair_result res = { .verdict = HEAL_VERDICT_NOT_FOUND, .winner = -1 };
        int r;

        if (!ret)
                return heal_error_set(err, -EINVAL, "invalid argument");
        r = search_init(&s, o, base, err);
        if (r >= 0)
                r = search_loop(&s, &res, err);
        if (r >= 0 && repair_canceled()) {
                res.verdict = HEAL_VERDICT_CANCELED;
                snprintf(res.stop, sizeof(res.stop), "canceled");
        } else if (r >= 0 && res.winner >= 0) {
                res.verdict = HEAL_VERDICT_FIXED;
                snprintf(res.stop, sizeof(res.stop), "candidate %d passes, verified", res.winner);
        }
        search_finish(&s, &res);
        if (r < 0) {
                heal_repair_result_release(&res);
                return r;
        }
        *ret = res;
        return 0;
}

void heal_repair_result_release(heal_repair_result *r)
{
        if (!r)
                return;
        for (size_t i = 0; i < r->n_nodes; i++) {
                free(r->nodes[i].rules);
                free(r->nodes[i].why);
                free(r->nodes[i].answer);
                heal_patch_release(&r->nodes[i].patch);
        }
        free(r->nodes);
        memset(r, 0, sizeof(*r));
}
