/* SPDX-License-Identifier: MIT */
/* What the main job shows: progress on stderr, the diff and a verdict, or a JSON report. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/fix.h"
#include "core/json.h"

static uint64_t now_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

void fix_view_init(struct fix_view *v, const struct fix_opts *f)
{
        const char *nc = getenv("NO_COLOR");

        memset(v, 0, sizeof(*v));
        v->f = f;
        v->tty = isatty(STDERR_FILENO);
        v->color = v->tty && !(nc && *nc);
        v->start_ms = now_ms();
}

/* @s up to its first newline, control characters shown as '?': text from the command's
 * output or a model must not drive the terminal (OSC title or clipboard sequences). */
static void put_line(const char *s)
{
        for (; s && *s && *s != '\n'; s++)
                fputc((unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s, stderr);
}

static const char *paint(const struct fix_view *v, heal_outcome o)
{
        if (!v->color)
                return "";
        return o == HEAL_OUTCOME_PASSES        ? "\033[32m"
               : o == HEAL_OUTCOME_NEW_FAILURE ? "\033[33m"
                                               : "\033[2m";
}

void fix_on_event(heal_repair_event ev, const heal_node *node, unsigned count, void *userdata)
{
        const struct fix_view *v = userdata;
        double t = (double)(now_ms() - v->start_ms) / 1000;

        if (v->f->quiet || v->f->json)
                return;
        if (ev == HEAL_EVENT_EXPAND && !node->id) {
                fprintf(stderr, "heal: [%5.1fs] asking %s for %u candidate%s\n", t, v->model, count,
                        count == 1 ? "" : "s");
        } else if (ev == HEAL_EVENT_EXPAND) {
                fprintf(stderr, "heal: [%5.1fs] asking %s for %u candidate%s for #%d's failure\n",
                        t, v->model, count, count == 1 ? "" : "s", node->id);
        } else if (ev == HEAL_EVENT_VERIFY) {
                fprintf(stderr, "heal: [%5.1fs] verifying #%d in a fresh workspace\n", t, node->id);
        } else {
                fprintf(stderr, "heal: [%5.1fs]   #%-2d %-9s %s%-14s%s ", t, node->id, node->source,
                        paint(v, node->outcome), heal_outcome_name(node->outcome),
                        v->color ? "\033[0m" : "");
                put_line(node->why);
                fputc('\n', stderr);
                for (size_t i = 0; node->rules && node->rules[i]; i++)
                        fprintf(stderr, "heal:          rule fired: %s\n", node->rules[i]);
        }
}

void fix_print_failure(const struct fix_view *v, const heal_baseline *b, const char *cmdline)
{
        const heal_analysis *a = &b->analysis;

        if (v->f->quiet)
                return;
        fprintf(stderr, "\nheal: '%s' failed (exit %d, %.1f s): %zu diagnostic%s\n", cmdline,
                b->result.exit_code, (double)b->result.wall_ms / 1000, a->n_diags,
                a->n_diags == 1 ? "" : "s");
        for (size_t i = 0; i < a->n_diags && i < 5; i++) {
                const heal_diag *d = &a->diags[i];

                fprintf(stderr, "heal:   %s ", heal_diag_kind_name(d->kind));
                if (d->file) {
                        put_line(d->file);
                        fprintf(stderr, ":%u: ", d->line);
                }
                put_line(d->message);
                fputc('\n', stderr);
        }
        fprintf(stderr, "heal:   fingerprint %s, cause %s\n", a->exact, a->cause);
}

void fix_print_verdict(const struct fix_view *v, const heal_repair_result *res, const char *diff,
                       const char *written_id, const char *note)
{
        char tally[256];

        heal_llm_tally_format(&res->tally, tally, sizeof(tally));
        if (diff && *diff)
                fputs(diff, stdout);
        fflush(stdout);
        if (res->verdict == HEAL_VERDICT_FIXED && written_id)
                fprintf(stderr, "heal: fixed: the patch above is written (undo: heal undo %s)\n",
                        written_id);
        else if (res->verdict == HEAL_VERDICT_FIXED && v->f->dry_run)
                fprintf(stderr, "heal: fixed (dry run): the patch above passes; nothing was "
                                "written\n");
        else if (res->verdict == HEAL_VERDICT_FIXED)
                fprintf(stderr, "heal: a verified fix was found but not written\n");
        else if (res->verdict == HEAL_VERDICT_CANCELED)
                fprintf(stderr, "heal: interrupted: nothing was written\n");
        else
                fprintf(stderr, "heal: no fix found: %s\n", res->stop);
        if (res->winner >= 0 && res->nodes[res->winner].rules) {
                const heal_node *w = &res->nodes[res->winner];

                fprintf(stderr, "heal: review it: no clean candidate passed, and this one fired");
                for (size_t i = 0; w->rules[i]; i++)
                        fprintf(stderr, "%s %s", i ? "," : "", w->rules[i]);
                fprintf(stderr, " (penalties, docs/gaming.md)\n");
        }
        if (note && *note)
                fprintf(stderr, "heal: %s\n", note);
        fprintf(stderr, "heal: %zu candidate%s, %u model call%s (%s), %.1f s\n",
                res->n_nodes ? res->n_nodes - 1 : 0, res->n_nodes == 2 ? "" : "s", res->model_calls,
                res->model_calls == 1 ? "" : "s", tally, (double)(now_ms() - v->start_ms) / 1000);
}

static json_t *node_json(const heal_node *n)
{
        json_t *o = json_object(), *files = json_array(), *rules = json_array();

        for (size_t i = 0; i < n->patch.n_files; i++)
                json_array_append_new(files, json_string_or_null(n->patch.files[i].file));
        for (size_t i = 0; n->rules && n->rules[i]; i++)
                json_array_append_new(rules, json_string(n->rules[i]));
        json_object_set_new(o, "id", json_integer(n->id));
        json_object_set_new(o, "parent", json_integer(n->parent));
        json_object_set_new(o, "depth", json_integer(n->depth));
        json_object_set_new(o, "source", json_string_or_null(n->source));
        json_object_set_new(o, "outcome", json_string(heal_outcome_name(n->outcome)));
        json_object_set_new(o, "reward", json_real(n->reward));
        json_object_set_new(o, "why", json_string_or_null(n->why));
        json_object_set_new(o, "rules", rules);
        json_object_set_new(o, "files", files);
        json_object_set_new(o, "lines_changed", json_integer(n->lines_changed));
        json_object_set_new(o, "exact", json_string(n->exact));
        json_object_set_new(o, "cause", json_string(n->cause));
        json_object_set_new(o, "wall_ms", json_integer((json_int_t)n->wall_ms));
        return o;
}

static const char *verdict_name(heal_verdict v)
{
        static const char *const names[] = { "fixed", "not_found", "budget", "limit", "canceled" };

        return (unsigned)v < 5 ? names[v] : "?";
}

int fix_report_json(const heal_baseline *b, const heal_repair_result *res, const char *cmdline,
                    const char *diff, const char *written_id, const char *note)
{
        json_t *doc = json_object(), *nodes = json_array(), *llm = json_object();

        json_object_set_new(doc, "command", json_string_or_null(cmdline));
        if (b) {
                json_object_set_new(doc, "verdict", json_string("passed"));
                json_object_set_new(doc, "exit_code", json_integer(b->result.exit_code));
                return json_print(doc);
        }
        json_object_set_new(doc, "verdict", json_string(verdict_name(res->verdict)));
        json_object_set_new(doc, "stop", json_string_or_null(res->stop));
        json_object_set_new(doc, "winner",
                            res->winner >= 0 ? json_integer(res->winner) : json_null());
        json_object_set_new(doc, "patch", json_string_or_null(diff));
        json_object_set_new(doc, "written", json_string_or_null(written_id));
        json_object_set_new(doc, "note", note && *note ? json_string_or_null(note) : json_null());
        for (size_t i = 0; i < res->n_nodes; i++)
                json_array_append_new(nodes, node_json(&res->nodes[i]));
        json_object_set_new(doc, "candidates", nodes);
        json_object_set_new(llm, "calls", json_integer(res->model_calls));
        json_object_set_new(llm, "requests", json_integer((json_int_t)res->tally.requests));
        json_object_set_new(llm, "cache_hits", json_integer((json_int_t)res->tally.cache_hits));
        json_object_set_new(llm, "input_tokens", json_integer((json_int_t)res->tally.input_tokens));
        json_object_set_new(llm, "output_tokens",
                            json_integer((json_int_t)res->tally.output_tokens));
        json_object_set_new(llm, "cost_usd", json_real((double)res->tally.cost_micro_usd / 1e6));
        json_object_set_new(doc, "llm", llm);
        json_object_set_new(doc, "wall_ms", json_integer((json_int_t)res->wall_ms));
        return json_print(doc);
}
