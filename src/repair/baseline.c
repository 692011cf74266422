/* SPDX-License-Identifier: MIT */
/*
 * The baseline: the command once, as the user gave it, in a workspace of the unchanged tree.
 * When it fails and is `go test`, it runs a second time with GOFLAGS=-v so that the analysis
 * lists the tests that ran and passed: the set every candidate must keep. Candidates run the
 * same way as that second run, so their fingerprints compare with the root's.
 */
#include <errno.h>
#include <string.h>

#include "heal/repair.h"

#include "repair/search-internal.h"

int baseline_analyze(heal_analysis *ret, const heal_sandbox_result *res, const struct ws_config *c,
                     const char *const *argv, heal_error *err)
{
        char cmdline[4096];
        size_t o = 0;
        heal_analyze_opts ao = { .tree = c->tree, .exit_code = res->exit_code };

        cmdline[0] = '\0';
        for (size_t i = 0; argv[i] && o + 2 < sizeof(cmdline); i++) {
                int n = snprintf(cmdline + o, sizeof(cmdline) - o, "%s%s", i ? " " : "", argv[i]);

                if (n < 0)
                        break;
                o += (size_t)n;
        }
        ao.command = cmdline;
        return heal_analyze_result(ret, res, &ao, err);
}

bool run_passed(const heal_sandbox_result *res)
{
        return res->status == HEAL_STATUS_OK && res->exit_code == 0;
}

int heal_repair_baseline(heal_baseline *ret, const heal_repair_opts *o,
                         heal_sandbox_output_fn stream, void *userdata, heal_error *err)
{
        struct ws_config c;
        heal_baseline b = { 0 };
        int r;

        if (!ret || !o)
                return heal_error_set(err, -EINVAL, "invalid argument");
        r = ws_config_init(&c, o, false, err);
        if (r < 0)
                return r;
        c.cache_rw = true; /* the user's own tree warms the cache; candidates only read it */
        workspace_sweep();
        r = tree_stamp_take(&b.stamp, o->tree, err);
        if (r < 0)
                return r;
        r = workspace_run(&b.result, &c, o->argv, NULL, stream, userdata, err);
        if (r >= 0 && b.result.status == HEAL_STATUS_SETUP_ERROR) /* the sandbox, not CMD */
                r = heal_error_set(err, -EIO, "the sandbox could not run '%s': %s", o->argv[0],
                                   b.result.message);
        if (r < 0) {
                heal_baseline_release(&b);
                return r;
        }
        b.passed = run_passed(&b.result);
        b.go_test = c.go_test;
        if (!b.passed && c.go_test) { /* again, listing the tests */
                heal_sandbox_result listed = { 0 };

                r = ws_config_init(&c, o, true, err);
                c.cache_rw = true;
                if (r >= 0)
                        r = workspace_run(&listed, &c, o->argv, NULL, NULL, NULL, err);
                if (r >= 0 && run_passed(&listed)) { /* failed once, passed once: flaky */
                        b.flaky = true;
                        heal_sandbox_result_release(&listed);
                } else if (r >= 0) {
                        heal_sandbox_result_release(&b.result);
                        b.result = listed;
                }
        }
        if (r >= 0 && !b.passed && !b.flaky)
                r = baseline_analyze(&b.analysis, &b.result, &c, o->argv, err);
        if (r < 0) {
                heal_baseline_release(&b);
                return r;
        }
        *ret = b;
        return 0;
}

void heal_baseline_release(heal_baseline *b)
{
        if (!b)
                return;
        heal_sandbox_result_release(&b->result);
        heal_analysis_release(&b->analysis);
        tree_stamp_free(b->stamp);
        memset(b, 0, sizeof(*b));
}
