/* SPDX-License-Identifier: MIT */
/*
 * The search trace: one JSON object per evaluated node, one per line (JSON Lines), written as
 * each node is classified, so that a run can be replayed, debugged and drawn (heal report).
 * Fields: id, parent, depth, source, outcome, reward, why, rules, exact, cause, files (each
 * changed file's path), lines_changed, wall_ms, visits, value.
 */
#include <jansson.h>
#include <stdio.h>

#include "core/json.h"
#include "repair/search-internal.h"

void trace_node(FILE *f, const struct search *s, const struct snode *x)
{
        json_t *o = json_object(), *files = json_array(), *rules = json_array();
        char *line;

        (void)s;
        for (size_t i = 0; i < x->pub.patch.n_files; i++)
                json_array_append_new(files, json_string_or_null(x->pub.patch.files[i].file));
        for (size_t i = 0; x->pub.rules && x->pub.rules[i]; i++)
                json_array_append_new(rules, json_string(x->pub.rules[i]));
        json_object_set_new(o, "id", json_integer(x->pub.id));
        json_object_set_new(o, "parent", json_integer(x->pub.parent));
        json_object_set_new(o, "depth", json_integer(x->pub.depth));
        json_object_set_new(o, "source", json_string_or_null(x->pub.source));
        json_object_set_new(o, "outcome", json_string(heal_outcome_name(x->pub.outcome)));
        json_object_set_new(o, "reward", json_real(x->pub.reward));
        json_object_set_new(o, "why", json_string_or_null(x->pub.why));
        json_object_set_new(o, "rules", rules);
        json_object_set_new(o, "exact", json_string(x->pub.exact));
        json_object_set_new(o, "cause", json_string(x->pub.cause));
        json_object_set_new(o, "files", files);
        json_object_set_new(o, "lines_changed", json_integer(x->pub.lines_changed));
        json_object_set_new(o, "wall_ms", json_integer((json_int_t)x->pub.wall_ms));
        json_object_set_new(o, "visits", json_integer(x->visits));
        json_object_set_new(o, "value", json_real(x->value));
        json_object_set_new(o, "answer", json_string_or_null(x->pub.answer));
        line = json_dumps(o, JSON_COMPACT);
        if (line) {
                fprintf(f, "%s\n", line);
                fflush(f);
        }
        free(line);
        json_decref(o);
}
