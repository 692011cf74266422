/* SPDX-License-Identifier: MIT */
#ifndef HEAL_CLI_FIX_H
#define HEAL_CLI_FIX_H

#include <stdbool.h>
#include <stdint.h>

#include "heal/repair.h"

#include "cli/cli.h"

/* The main job's exit codes (docs/exit-codes.md); 0 when CMD passes or a fix was written. */
enum {
        EXIT_NOT_FIXED = 3,
        EXIT_BUDGET = 4,
        EXIT_NOT_WRITTEN = 5,
        EXIT_FLAKY = 6,
};

#define PROTECT_MAX 32

struct fix_opts {
        struct llm_opts llm;
        unsigned k, workers, max_nodes, max_depth, max_requests, context;
        uint64_t wall_ms;
        double c_uct, max_cost;
        bool best, dry_run, json, quiet, no_cache;
        const char *verify;
        const char *trace_path;
        const char *protect[PROTECT_MAX + 1];
        size_t n_protect;
        const char *allow[PROTECT_MAX + 1];
        size_t n_allow;
};

/* fix_run.c: the job, once the options are parsed; returns the exit code. */
int fix_run(struct run_opts *o, struct fix_opts *f);

/* fix_report.c: what the user sees */
struct fix_view {
        const struct fix_opts *f;
        bool tty, color;
        uint64_t start_ms;
        char model[300];
};
void fix_view_init(struct fix_view *v, const struct fix_opts *f);
void fix_on_event(heal_repair_event ev, const heal_node *node, unsigned count, void *userdata);
void fix_print_failure(const struct fix_view *v, const heal_baseline *b, const char *cmdline);
void fix_print_verdict(const struct fix_view *v, const heal_repair_result *res, const char *diff,
                       const char *written_id, const char *note);
int fix_report_json(const heal_baseline *b, const heal_repair_result *res, const char *cmdline,
                    const char *diff, const char *written_id, const char *note);

#endif
