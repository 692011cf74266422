/* SPDX-License-Identifier: MIT */
/*
 * The gaming rules (heal/gaming.h) applied to search nodes: a rule that rejects makes the node
 * "rejected" with the rule's finding as the reason the model is told next time; penalties add
 * up (at most the whole reward) and scale the node's reward down. Every rule that fired is
 * named in the node, the trace and the report.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "repair/search-internal.h"

static int add_name(struct snode *x, const char *rule)
{
        size_t n = 0;
        const char **v;

        while (x->pub.rules && x->pub.rules[n]) {
                if (!strcmp(x->pub.rules[n], rule))
                        return 0;
                n++;
        }
        v = realloc(x->pub.rules, (n + 2) * sizeof(*v));
        if (!v)
                return -ENOMEM;
        v[n] = rule;
        v[n + 1] = NULL;
        x->pub.rules = v;
        return 0;
}

int node_add_rules(struct snode *x, const heal_gaming_report *rep)
{
        for (size_t i = 0; i < rep->n; i++) {
                const heal_gaming_hit *h = &rep->v[i];

                if (add_name(x, h->rule) < 0)
                        return -ENOMEM;
                if (h->reject && x->pub.outcome != HEAL_OUTCOME_REJECTED) {
                        char *why = NULL;

                        if (h->file && asprintf(&why, "%s: %s:%u: %s", h->rule, h->file, h->line,
                                                h->detail ? h->detail : "") < 0)
                                why = NULL;
                        else if (!h->file &&
                                 asprintf(&why, "%s: %s", h->rule, h->detail ? h->detail : "") < 0)
                                why = NULL;
                        free(x->pub.why);
                        x->pub.why = why;
                        x->pub.outcome = HEAL_OUTCOME_REJECTED;
                }
        }
        x->penalty += rep->penalty;
        if (x->penalty > 1)
                x->penalty = 1;
        return 0;
}

int node_check_gaming(struct search *s, struct snode *x, heal_error *err)
{
        heal_gaming_report rep = { 0 };
        heal_gaming_opts go = { .tree = s->o->tree,
                                .baseline = &s->v[0].an,
                                .disabled = s->o->allow };
        int r;

        if (x->evaluated) /* did not apply, or a workspace already seen */
                return 0;
        r = heal_gaming_check(&rep, &x->pub.patch, &go, err);
        if (r < 0)
                return r;
        r = node_add_rules(x, &rep);
        if (x->pub.outcome == HEAL_OUTCOME_REJECTED)
                x->evaluated = true; /* not run: rejected by its edit alone */
        heal_gaming_report_release(&rep);
        return r < 0 ? heal_error_set(err, r, "out of memory") : 0;
}
