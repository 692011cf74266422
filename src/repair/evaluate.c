/* SPDX-License-Identifier: MIT */
/*
 * Evaluating candidates: each in its own workspace, up to s->workers at once (one thread per
 * run: a run is a blocking wait on a sandbox), then, on the calling thread, the outcome class
 * against the root's failure and the parent's, the reward, and its backing up to the root.
 */
#include <errno.h>
#include <ftw.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "heal/repair.h"

#include "repair/search-internal.h"

struct pool {
        struct search *s;
        const int *ids;
        size_t n;
        atomic_size_t next;
};

static void *worker(void *arg)
{
        struct pool *p = arg;
        size_t i;

        while ((i = atomic_fetch_add(&p->next, 1)) < p->n) {
                struct snode *x = &p->s->v[p->ids[i]];

                if (x->evaluated)
                        continue;
                x->run_r = workspace_run(&x->res, &p->s->ws, p->s->o->argv, &x->pub.patch, NULL,
                                         NULL, &x->run_err);
        }
        return NULL;
}

static void run_all(struct search *s, const int *ids, size_t n)
{
        struct pool p = { .s = s, .ids = ids, .n = n };
        pthread_t t[16];
        size_t nt = s->workers < n ? s->workers : n, started = 0;

        if (nt > 16)
                nt = 16;
        atomic_init(&p.next, 0);
        for (size_t i = 1; i < nt; i++)
                if (pthread_create(&t[started], NULL, worker, &p) == 0)
                        started++;
        worker(&p); /* this thread works too, so a failed pthread_create only slows it down */
        for (size_t i = 0; i < started; i++)
                pthread_join(t[i], NULL);
}

static void __attribute__((format(printf, 2, 3))) set_why(struct snode *x, const char *fmt, ...)
{
        va_list ap;

        free(x->pub.why);
        va_start(ap, fmt);
        if (vasprintf(&x->pub.why, fmt, ap) < 0)
                x->pub.why = NULL;
        va_end(ap);
}

static void why_from_diag(struct snode *x, const heal_diag *d)
{
        char loc[PATH_MAX + 32] = "";

        if (!d)
                return;
        if (d->file)
                snprintf(loc, sizeof(loc), "%s:%u: ", d->file, d->line);
        set_why(x, "%s%s", loc, d->message);
}

/* An earlier node on @x's path that failed the same way, or -1. */
static int loop_of(const struct search *s, const struct snode *x)
{
        for (int p = x->pub.parent; p >= 0; p = s->v[p].pub.parent) {
                const struct snode *a = &s->v[p];

                if (!strcmp(a->pub.exact, x->pub.exact) || !strcmp(a->pub.cause, x->pub.cause))
                        return p;
        }
        return -1;
}

static bool has_compile_error(const heal_analysis *a)
{
        for (size_t i = 0; i < a->n_diags; i++)
                if (a->diags[i].kind == HEAL_DIAG_COMPILE_ERROR)
                        return true;
        return false;
}

static int has_test_func(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
        const char *base = path + ftw->base;
        char line[512];
        bool found = false;
        FILE *f;

        if (type == FTW_D && ftw->level > 0 &&
            (base[0] == '.' || !strcmp(base, "vendor") || !strcmp(base, "testdata")))
                return FTW_SKIP_SUBTREE;
        if (type != FTW_F || !S_ISREG(st->st_mode) || strlen(base) < 8 ||
            strcmp(base + strlen(base) - 8, "_test.go") != 0 || !(f = fopen(path, "re")))
                return FTW_CONTINUE;
        while (!found && fgets(line, sizeof(line), f))
                found = !strncmp(line, "func Test", 9);
        fclose(f);
        return found ? FTW_STOP : FTW_CONTINUE;
}

/* Does the tree have a Go test function (a *_test.go file with a line "func Test...")? */
static bool tree_has_tests(struct search *s)
{
        if (s->has_tests < 0)
                s->has_tests = nftw(s->o->tree, has_test_func, 32, FTW_PHYS | FTW_ACTIONRETVAL) ==
                               FTW_STOP;
        return s->has_tests;
}

static bool rule_allowed(const struct search *s, const char *rule)
{
        for (size_t i = 0; s->o->allow && s->o->allow[i]; i++)
                if (!strcmp(s->o->allow[i], rule))
                        return true;
        return false;
}

static int classify_passed(struct search *s, struct snode *x, heal_error *err)
{
        heal_gaming_report rep = { 0 };
        heal_gaming_opts go = { .disabled = s->o->allow };
        int r;

        x->pub.outcome = HEAL_OUTCOME_PASSES;
        set_why(x, "passes");
        if (!s->base->go_test)
                return 0;
        r = baseline_analyze(&x->an, &x->res, &s->ws, s->o->argv, err);
        if (r < 0)
                return r;
        x->an_owned = true;
        set_why(x, "passes (%zu tests)", x->an.n_tests_passed);
        /* Passing by running fewer tests, or skipping the failing one, is gaming. */
        r = heal_tests_compare(&rep, &s->v[0].an, &x->an, &go, err);
        if (r >= 0 && node_add_rules(x, &rep) < 0)
                r = heal_error_set(err, -ENOMEM, "out of memory");
        heal_gaming_report_release(&rep);
        /* The baseline may have listed no test (its build failed): a pass must run some. */
        if (r >= 0 && x->pub.outcome == HEAL_OUTCOME_PASSES && !x->an.n_tests_passed &&
            !rule_allowed(s, "no_tests_ran") && tree_has_tests(s)) {
                static const heal_gaming_hit hit = {
                        .rule = "no_tests_ran",
                        .reject = true,
                        .detail = (char *)(uintptr_t) "go test passed without running a test, "
                                                      "and the tree has tests",
                };
                heal_gaming_report one = { .v = (heal_gaming_hit *)(uintptr_t)&hit, .n = 1 };

                if (node_add_rules(x, &one) < 0)
                        r = heal_error_set(err, -ENOMEM, "out of memory");
        }
        return r;
}

static int classify_failed(struct search *s, struct snode *x, heal_error *err)
{
        const struct snode *root = &s->v[0], *parent = &s->v[x->pub.parent];
        int r = baseline_analyze(&x->an, &x->res, &s->ws, s->o->argv, err), loop;

        if (r < 0)
                return r;
        x->an_owned = true;
        memcpy(x->pub.exact, x->an.exact, sizeof(x->pub.exact));
        memcpy(x->pub.cause, x->an.cause, sizeof(x->pub.cause));
        diag_compare(&x->delta, &parent->an, &parent->pub.patch, &x->an, &x->pub.patch);
        why_from_diag(x, x->delta.first_new ? x->delta.first_new
                         : x->an.n_diags    ? &x->an.diags[0]
                                            : NULL);
        if (!strcmp(x->pub.cause, root->pub.cause) || !strcmp(x->pub.exact, root->pub.exact))
                x->pub.outcome = HEAL_OUTCOME_SAME_FAILURE;
        else if (has_compile_error(&x->an))
                x->pub.outcome = HEAL_OUTCOME_BUILD_FAILS;
        else
                x->pub.outcome = HEAL_OUTCOME_NEW_FAILURE;
        loop = x->pub.outcome == HEAL_OUTCOME_SAME_FAILURE ? -1 : loop_of(s, x);
        if (loop >= 0) {
                x->pub.outcome = HEAL_OUTCOME_PRUNED;
                set_why(x, "loop: the failure of node %d again", loop);
        }
        return 0;
}

static double reward_of(const struct search *s, const struct snode *x)
{
        const heal_reward_weights *w = &s->w;
        double r = 0, size;

        switch (x->pub.outcome) {
        case HEAL_OUTCOME_PASSES:
                r = w->build + w->original_gone + w->passes;
                break;
        case HEAL_OUTCOME_NEW_FAILURE:
                r = w->build + w->original_gone;
                break;
        case HEAL_OUTCOME_SAME_FAILURE:
                r = has_compile_error(&x->an) ? 0 : w->build;
                break;
        case HEAL_OUTCOME_BUILD_FAILS:
                r = w->fixed_errors * x->delta.removed;
                r = r > w->build ? w->build : r;
                break;
        default:
                return 0;
        }
        size = w->diff_line * x->pub.lines_changed;
        r -= size > 0.1 ? 0.1 : size;
        r *= 1 - (w->penalty * x->penalty > 1 ? 1 : w->penalty * x->penalty);
        return r < 0 ? 0 : r;
}

static void backup(struct search *s, struct snode *x)
{
        for (int p = x->pub.id; p >= 0; p = s->v[p].pub.parent) {
                s->v[p].visits++;
                s->v[p].value += x->pub.reward;
        }
}

bool node_expandable(const struct search *s, const struct snode *x)
{
        heal_outcome o = x->pub.outcome;

        if (x->pub.depth >= s->max_depth || x->expansions >= s->max_expansions)
                return false;
        return x->pub.id == 0 || o == HEAL_OUTCOME_BUILD_FAILS || o == HEAL_OUTCOME_NEW_FAILURE;
}

static int classify(struct search *s, struct snode *x, heal_error *err)
{
        int r;

        if (x->run_r == -ECANCELED)
                return heal_error_set(err, -ECANCELED, "canceled");
        if (x->run_r < 0)
                return heal_error_set(err, x->run_r, "candidate %d: %s", x->pub.id, x->run_err.msg);
        x->pub.wall_ms = x->res.wall_ms;
        r = run_passed(&x->res) ? classify_passed(s, x, err) : classify_failed(s, x, err);
        heal_sandbox_result_release(&x->res);
        return r;
}

int search_evaluate(struct search *s, const int *ids, size_t n, heal_error *err)
{
        int r = 0;

        run_all(s, ids, n);
        for (size_t i = 0; i < n; i++) {
                struct snode *x = &s->v[ids[i]];

                if (!x->evaluated) {
                        int q = classify(s, x, err);

                        x->evaluated = true;
                        if (q < 0 && r == 0)
                                r = q;
                        if (q < 0)
                                continue;
                }
                x->pub.reward = reward_of(s, x);
                backup(s, x);
                if (s->o->trace)
                        trace_node(s->o->trace, s, x);
                if (s->o->on_event)
                        s->o->on_event(HEAL_EVENT_EVALUATED, &x->pub, 0, s->o->userdata);
        }
        return r;
}
