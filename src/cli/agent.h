/* SPDX-License-Identifier: MIT */
#ifndef HEAL_CLI_AGENT_H
#define HEAL_CLI_AGENT_H

/* What heal gen and heal ask share: the model and budget flags, the limits of each run, the
 * client and runner they make, progress on stderr, and Ctrl-C. */

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "heal/llm.h"
#include "heal/runner.h"

#include "cli/cli.h"

/* Exit codes of heal gen and heal ask (docs/exit-codes.md). */
enum {
        EXIT_AGENT_FAILED = 3,      /* no working program / no answer within the turns */
        EXIT_AGENT_BUDGET = 4,      /* the model budget ran out */
        EXIT_AGENT_MODEL_ERROR = 5, /* the model could not be asked */
};

#define AGENT_OPTS_HELP                                                                      \
 LLM_OPTS_HELP                                                                               \
 "  --max-requests N         model requests at most (default 20)\n"                          \
 "  --max-cost USD           money at most, e.g. 0.50 (default 1.00)\n"                      \
 "  --no-cache               ask the model even when the same request was answered before\n" \
 "                           (answers are kept in ~/.cache/heal/llm; not for replay or\n"    \
 "                           exec)\n"

struct agent_opts {
        const char *cmd; /* "heal gen", for messages */
        struct llm_opts llm;
        unsigned max_requests;
        bool max_requests_set; /* --max-requests given: no command raises it */
        double max_cost;
        bool no_cache, json, quiet, verbose, share_net;
        const char *stdin_path;
        heal_runner_limits run, compile;
};

#define AGENT_OPTS_INIT(name)                         \
 {                                                    \
  .cmd = (name), .max_requests = 20, .max_cost = 1.0, \
 }

struct agent {
        heal_llm_selection sel;
        heal_llm_client *llm;
        heal_runner *runner;
        char *stdin_data; /* the programs' stdin (--stdin, read once: every run gets all of it) */
        size_t stdin_len;
        char cache[PATH_MAX];
        char model[300]; /* "provider:model", for progress */
        uint64_t start_ms;
        bool color;
};

/* argv[*i] is one of the shared options (its value consumed): 1; not one: 0; a usage error
 * (printed): -1. */
int agent_opt(struct agent_opts *o, int argc, char **argv, int *i);

/* The model client (with the budget and the cache), the runner, the stdin file, Ctrl-C.
 * 0, or the exit code after printing the error. */
int agent_open(struct agent *a, const struct agent_opts *o);
void agent_close(struct agent *a);

/* Tell Ctrl-C whether a model request is in flight: it cannot be interrupted, and nothing runs
 * or is written meanwhile, so heal may end at once. */
void agent_waiting_for_model(bool waiting);

/* Seconds since agent_open(). */
double agent_elapsed_s(const struct agent *a);

/* @len bytes of @s on @f, control characters but newline and tab shown as '?' (a model's or a
 * program's text must not drive the terminal); @one_line stops at the first newline. */
void agent_put_text(FILE *f, const char *s, size_t len, bool one_line);

/* The usage document of the JSON reports: requests, cache_hits, tokens, cost_usd, wall_ms. */
json_t *agent_tally_json(const heal_llm_tally *t);

#endif
