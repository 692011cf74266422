/* SPDX-License-Identifier: MIT */
/* The main job's flow: baseline, search, verdict, write-back. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "heal/buf.h"
#include "heal/diff.h"
#include "heal/repair.h"
#include "heal/writeback.h"

#include "cli/fix.h"

struct job {
        struct run_opts *o;
        struct fix_opts *f;
        struct fix_view view;
        char tree[PATH_MAX];
        char cmdline[4096];
        const char *env[64];
        char *env_store[64];
        const char *verify_argv[4];
        heal_llm_selection sel;
        heal_llm_client *llm;
        char cache[PATH_MAX];
        char no_model[HEAL_ERROR_MSG_MAX];
        FILE *trace;
        heal_repair_opts ro;
};

/* Output of the baseline, as CMD would print it; with --json all of it goes to stderr. */
static void stream_out(int stream, const char *data, size_t len, void *userdata)
{
        const struct job *j = userdata;
        FILE *f = stream == 1 && !j->f->json ? stdout : stderr;

        fwrite(data, 1, len, f);
        fflush(f);
}

static int setup_env(struct job *j)
{
        size_t n = 0;

        for (size_t i = 0; i < j->o->n_env_ops && n < 63; i += 2) {
                if (!j->o->env_ops[i + 1])
                        continue; /* --unsetenv: heal's runs set nothing it could remove */
                if (asprintf(&j->env_store[n], "%s=%s", j->o->env_ops[i], j->o->env_ops[i + 1]) < 0)
                        return -ENOMEM;
                j->env[n] = j->env_store[n];
                n++;
        }
        j->env[n] = NULL;
        return 0;
}

static int setup_model(struct job *j)
{
        heal_error err = HEAL_ERROR_INIT;
        heal_llm_budget budget = { .max_requests = j->f->max_requests,
                                   .max_cost_micro_usd = (uint64_t)(j->f->max_cost * 1e6),
                                   .max_wall_ms = j->f->wall_ms ? j->f->wall_ms : 600000 };
        int r = llm_opts_select(&j->f->llm, &j->sel, 0, &err);

        if (r == -ENOENT) { /* free candidates only; say how to get more at the end */
                snprintf(j->no_model, sizeof(j->no_model), "%s", err.msg);
                return 0;
        }
        /* Answers are cached per request, so running heal again on the same failure costs
         * nothing; not for replay (a cassette already) nor exec (a local command). */
        if (r == 0 && !j->f->no_cache && strcmp(j->sel.provider, "replay") &&
            strcmp(j->sel.provider, "exec") && llm_cache_dir(j->cache, sizeof(j->cache)))
                j->sel.config.cache_dir = j->cache;
        if (r == 0)
                r = heal_llm_client_new(&j->llm, &j->sel.config, &err);
        if (r < 0) {
                log_error("%s", err.msg);
                return r;
        }
        heal_llm_client_set_budget(j->llm, &budget);
        snprintf(j->view.model, sizeof(j->view.model), "%s:%s", j->sel.provider, j->sel.model);
        return 0;
}

static int setup(struct job *j)
{
        struct fix_opts *f = j->f;
        heal_repair_opts *ro = &j->ro;

        if (!getcwd(j->tree, sizeof(j->tree))) {
                log_error("cannot read the working directory: %s", strerror(errno));
                return -errno;
        }
        if (!strcmp(j->tree, "/") || !strcmp(j->tree, "/tmp")) {
                log_error("heal repairs a project: run it in the project's directory, not in %s "
                          "itself",
                          j->tree);
                return -EINVAL;
        }
        if (getenv("HOME") && !strcmp(j->tree, getenv("HOME")))
                fprintf(stderr, "heal: note: the tree is your whole home directory; a fix may "
                                "touch any file in it that is not hidden or a test\n");
        join_argv(j->cmdline, sizeof(j->cmdline), j->o->argv);
        if (setup_env(j) < 0 || setup_model(j) < 0)
                return -EINVAL;
        if (f->trace_path && !(j->trace = fopen(f->trace_path, "we"))) {
                log_error("--trace '%s': %s", f->trace_path, strerror(errno));
                return -errno;
        }
        if (f->verify) {
                j->verify_argv[0] = "/bin/sh";
                j->verify_argv[1] = "-c";
                j->verify_argv[2] = f->verify;
        }
        f->protect[f->n_protect] = NULL;
        f->allow[f->n_allow] = NULL;
        *ro = (heal_repair_opts){ .tree = j->tree,
                                  .argv = (const char *const *)j->o->argv,
                                  .verify = f->verify ? j->verify_argv : NULL,
                                  .limits = &j->o->limits,
                                  .sandbox_flags = j->o->flags,
                                  .env = j->env,
                                  .llm = j->llm,
                                  .model = j->llm ? j->sel.model : NULL,
                                  .k = f->k,
                                  .workers = f->workers,
                                  .max_nodes = f->max_nodes,
                                  .max_depth = f->max_depth,
                                  .wall_ms = f->wall_ms,
                                  .c_uct = f->c_uct,
                                  .best = f->best,
                                  .protected = f->n_protect ? f->protect : NULL,
                                  .allow = f->n_allow ? f->allow : NULL,
                                  .context_budget = f->context,
                                  .on_event = fix_on_event,
                                  .userdata = &j->view,
                                  .trace = j->trace };
        return 0;
}

static void cleanup(struct job *j)
{
        for (size_t i = 0; j->env_store[i]; i++)
                free(j->env_store[i]);
        if (j->trace)
                fclose(j->trace);
        heal_llm_client_free(j->llm);
        heal_llm_selection_release(&j->sel);
}

/* Write the winner (unless --dry-run); the exit code. */
static int conclude(struct job *j, const heal_baseline *base, const heal_repair_result *res)
{
        const heal_node *w = res->winner >= 0 ? &res->nodes[res->winner] : NULL;
        heal_buf diff = HEAL_BUF_INIT(16u << 20);
        heal_error err = HEAL_ERROR_INIT;
        heal_writeback_opts wo = { .tree = j->tree, .command = j->cmdline };
        char *id = NULL, note[HEAL_ERROR_MSG_MAX + 64] = "";
        int code;

        if (w && heal_patch_diff(&diff, &w->patch, &err) < 0)
                snprintf(note, sizeof(note), "the diff could not be shown: %s", err.msg);
        if (!w)
                code = res->verdict == HEAL_VERDICT_CANCELED ? EXIT_CANCELED
                       : res->verdict == HEAL_VERDICT_BUDGET ? EXIT_BUDGET
                                                             : EXIT_NOT_FIXED;
        else if (j->f->dry_run)
                code = 0;
        else if (heal_baseline_check(base, &w->patch, j->tree, &err) < 0 ||
                 heal_writeback(&id, &w->patch, &wo, &err) < 0) {
                snprintf(note, sizeof(note), "%s", err.msg);
                code = EXIT_NOT_WRITTEN;
        } else {
                code = 0;
        }
        if (!w && j->no_model[0])
                snprintf(note, sizeof(note), "%s", j->no_model);
        if (j->f->json)
                fix_report_json(NULL, res, j->cmdline, diff.data, id, note);
        else
                fix_print_verdict(&j->view, res, diff.data, id, note);
        free(id);
        heal_buf_release(&diff);
        return code;
}

static int run_search(struct job *j, const heal_baseline *base)
{
        heal_repair_result res = { 0 };
        heal_error err = HEAL_ERROR_INIT;
        int code;

        if (heal_repair(&res, &j->ro, base, &err) < 0) {
                log_error("%s", err.msg);
                return err.code == -ECANCELED ? EXIT_CANCELED : EXIT_SETUP;
        }
        code = conclude(j, base, &res);
        heal_repair_result_release(&res);
        return code;
}

int fix_run(struct run_opts *o, struct fix_opts *f)
{
        struct job j = { .o = o, .f = f };
        heal_baseline base = { 0 };
        heal_error err = HEAL_ERROR_INIT;
        int code;

        fix_view_init(&j.view, f);
        if (setup(&j) < 0) {
                cleanup(&j);
                return EXIT_USAGE;
        }
        if (heal_repair_baseline(&base, &j.ro, stream_out, &j, &err) < 0) {
                log_error("%s", err.msg);
                cleanup(&j);
                return err.code == -ECANCELED ? EXIT_CANCELED : EXIT_SETUP;
        }
        if (base.passed) {
                code = base.result.exit_code;
                if (f->json)
                        fix_report_json(&base, NULL, j.cmdline, NULL, NULL, NULL);
        } else if (base.flaky) {
                log_error("'%s' failed, then passed when run again: a flaky failure, not one "
                          "a patch can be verified against",
                          j.cmdline);
                code = EXIT_FLAKY;
        } else {
                if (!f->json)
                        fix_print_failure(&j.view, &base, j.cmdline);
                code = run_search(&j, &base);
        }
        heal_baseline_release(&base);
        cleanup(&j);
        return code;
}
