/* SPDX-License-Identifier: MIT */
/* heal [options] -- CMD: the main job. Run CMD in a workspace; when it fails, search candidate
 * patches in sandboxes and write back only a verified fix. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "heal/gaming.h"
#include "heal/repair.h"

#include "cli/cli.h"
#include "cli/fix.h"
#include "core/parse.h"

static const char fix_usage[] =
        "usage: heal [options] -- CMD [ARG...]\n"
        "\n"
        "Run CMD (a build or test command) in a sandbox over a copy-on-write view of the\n"
        "current directory. If it passes, that is all: its output and exit status are\n"
        "CMD's own. If it fails, heal analyses the failure, asks a model for candidate\n"
        "patches (and tries the compiler's own fix-its first, for free), runs each candidate\n"
        "in its own throwaway sandbox, searches further from the promising ones (Monte Carlo\n"
        "Tree Search), and writes back only a patch that passed twice: once in the search,\n"
        "once more from a fresh workspace. Your files are not touched until then; test files\n"
        "are never edited; candidates that pass by skipping or hiding tests are rejected.\n"
        "\n"
        "search options:\n"
        "  --candidates N      candidates asked per model call (default 3)\n"
        "  --workers N         candidates evaluated at once (default: the CPUs, at most 8)\n"
        "  --max-nodes N       candidates evaluated at most (default 24)\n"
        "  --max-depth N       fixes stacked on one another at most (default 4)\n"
        "  --search-time TIME  the search's wall-time limit (default 10m)\n"
        "  --exploration C     UCT's exploration constant (default 1.0)\n"
        "  --best              search to the limits and pick among the passing candidates by\n"
        "                      agreement, then smallest diff (default: the first verified)\n"
        "  --verify CMD        a shell command the fix must pass too (e.g. 'go test -race ./...')\n"
        "  --protect PATTERN   a path pattern candidates may not edit (repeatable; default:\n"
        "                      *_test.go, testdata, tests)\n"
        "  --context TOKENS    tokens of source shown to the model (default 6000)\n"
        "  --allow RULE        do not apply the gaming rule RULE (repeatable): skip_test,\n"
        "                      exit_early, recover_panic, build_tags, nolint,\n"
        "                      delete_failing_code, test_literals, sleep_added, noop,\n"
        "                      fewer_tests, new_skips, failing_test_gone (docs/gaming.md)\n"
        "\n"
        "model options:\n" LLM_OPTS_HELP
        "  --max-requests N    model requests at most (default 16)\n"
        "  --max-cost USD      money at most, e.g. 0.50 (default 1.00)\n"
        "  --no-cache          ask the model even when the same request was answered before\n"
        "                      (answers are kept in ~/.cache/heal/llm; not for replay or exec)\n"
        "\n"
        "output:\n"
        "  --dry-run           print the verified fix, write nothing\n"
        "  --json              one JSON report on stdout (docs/repair.md)\n"
        "  --trace FILE        every candidate as JSON Lines (parent, edit, outcome, reward)\n"
        "  -q, --quiet         no progress: CMD's own output, then the verdict\n"
        "\n"
        "sandbox options: the limits of 'heal run' apply to every run of CMD: --timeout\n"
        "(default 2m), --memory, --cpu-time, --pids, --output-limit, --tmp-size, --share-net,\n"
        "--setenv NAME VALUE.\n"
        "\n"
        "exit status: 0 CMD passed at once, or a verified fix was written (with --dry-run:\n"
        "found); 3 no fix found; 4 the model budget ran out first; 5 nothing written because\n"
        "the tree changed or the write failed; 6 CMD failed once, then passed (flaky);\n"
        "2 usage error; 125 the sandbox could not run; 130 interrupted. docs/exit-codes.md\n"
        "\n"
        "examples:\n"
        "  heal -- go test ./...\n"
        "  heal --model openai:gpt-4.1-mini --verify 'go vet ./...' -- go test ./...\n"
        "  HEAL_MODEL=replay:demo HEAL_CASSETTE=fix.jsonl heal --dry-run -- go test ./...\n"
        "  heal undo            # restore the files of the last fix\n";

static int parse_count(const char *name, const char *v, uint64_t max, unsigned *ret)
{
        uint64_t n;

        if (parse_uint(v, &n) < 0 || n == 0 || n > max) {
                log_error("%s '%s': expected a number from 1 to %llu", name, v,
                          (unsigned long long)max);
                return -EINVAL;
        }
        *ret = (unsigned)n;
        return 1;
}

static int valued_option(struct fix_opts *f, const char *name, const char *v)
{
        uint64_t ms;

        if (!strcmp(name, "--candidates"))
                return parse_count(name, v, 8, &f->k);
        if (!strcmp(name, "--workers"))
                return parse_count(name, v, 16, &f->workers);
        if (!strcmp(name, "--max-nodes"))
                return parse_count(name, v, 1000, &f->max_nodes);
        if (!strcmp(name, "--max-depth"))
                return parse_count(name, v, 16, &f->max_depth);
        if (!strcmp(name, "--max-requests"))
                return parse_count(name, v, 100000, &f->max_requests);
        if (!strcmp(name, "--context"))
                return parse_count(name, v, 200000, &f->context);
        if (!strcmp(name, "--search-time")) {
                if (parse_duration_ms(v, &ms) < 0 || ms == 0) {
                        log_error("--search-time '%s': expected a time like 90s or 10m", v);
                        return -EINVAL;
                }
                f->wall_ms = ms;
                return 1;
        }
        if (!strcmp(name, "--exploration") || !strcmp(name, "--max-cost")) {
                char *end;
                double d = strtod(v, &end);

                if (*end || !(d > 0) || d > 1000) {
                        log_error("%s '%s': expected a positive number", name, v);
                        return -EINVAL;
                }
                *(name[2] == 'e' ? &f->c_uct : &f->max_cost) = d;
                return 1;
        }
        if (!strcmp(name, "--allow")) {
                if (!heal_gaming_rule_find(v)) {
                        log_error("--allow '%s': no such rule; the rules are in docs/gaming.md", v);
                        return -EINVAL;
                }
                if (f->n_allow == PROTECT_MAX)
                        return log_error("--allow: at most %d rules", PROTECT_MAX), -EINVAL;
                f->allow[f->n_allow++] = v;
                return 1;
        }
        if (!strcmp(name, "--verify"))
                f->verify = v;
        else if (!strcmp(name, "--trace"))
                f->trace_path = v;
        else if (!*v)
                return log_error("--protect: an empty pattern"), -EINVAL;
        else if (f->n_protect < PROTECT_MAX)
                f->protect[f->n_protect++] = v;
        else
                return log_error("--protect: at most %d patterns", PROTECT_MAX), -EINVAL;
        return 1;
}

static int extra_option(struct run_opts *o, int argc, char **argv, int *i)
{
        static const char *const valued[] = {
                "--candidates",   "--workers",  "--max-nodes", "--max-depth", "--search-time",
                "--exploration",  "--max-cost", "--verify",    "--trace",     "--protect",
                "--max-requests", "--context",  "--allow",
        };
        struct fix_opts *f = o->extra_data;
        const char *name = argv[*i];
        int r = llm_opts_parse(&f->llm, argc, argv, i);

        if (r)
                return r < 0 ? -EINVAL : 1;
        if (!strcmp(name, "--best") || !strcmp(name, "--dry-run")) {
                *(name[2] == 'b' ? &f->best : &f->dry_run) = true;
                return 1;
        }
        if (!strcmp(name, "-q") || !strcmp(name, "--quiet")) {
                f->quiet = true;
                return 1;
        }
        if (!strcmp(name, "--no-cache")) {
                f->no_cache = true;
                return 1;
        }
        for (size_t k = 0; k < sizeof(valued) / sizeof(valued[0]); k++) {
                if (strcmp(name, valued[k]) != 0)
                        continue;
                if (*i + 1 >= argc || (argv[*i + 1][0] == '-' && argv[*i + 1][1])) {
                        log_error("%s needs a value%s%s", name, *i + 1 < argc ? ", not " : "",
                                  *i + 1 < argc ? argv[*i + 1] : "");
                        return -EINVAL;
                }
                return valued_option(f, name, argv[++*i]);
        }
        return 0;
}

static void on_signal(int sig)
{
        (void)sig;
        heal_repair_cancel();
        /* A model request cannot be interrupted; nothing runs or is written meanwhile, and the
         * exec provider's command dies with heal (PR_SET_PDEATHSIG): end now. */
        if (heal_repair_waiting_for_model()) {
                static const char msg[] = "\nheal: interrupted while waiting for the model: "
                                          "nothing was written\n";
                ssize_t w = write(STDERR_FILENO, msg, sizeof(msg) - 1);

                (void)w;
                _exit(EXIT_CANCELED);
        }
}

static void install_signals(void)
{
        struct sigaction sa = { .sa_handler = on_signal };

        sigemptyset(&sa.sa_mask);
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGTERM, &sa, NULL);
        sigaction(SIGHUP, &sa, NULL);
}

static int check_opts(struct run_opts *o, struct fix_opts *f)
{
        if (o->n_mounts) {
                log_error("the repair job runs CMD in workspaces over the current directory; "
                          "mount options (--bind, --tmpfs, ...) are for 'heal run'");
                return -EINVAL;
        }
        if (o->flags & HEAL_SANDBOX_ISOLATION_NONE) {
                log_error("the repair job needs the sandbox's overlay workspaces: "
                          "--isolation=none is for 'heal run'");
                return -EINVAL;
        }
        if (o->stdin_pass) {
                log_error("--stdin: candidates run many times, none of them can read your "
                          "terminal");
                return -EINVAL;
        }
        if (o->chdir) {
                log_error("--chdir: run heal in the directory CMD runs in (the tree it repairs)");
                return -EINVAL;
        }
        f->json = o->json;
        return 0;
}

int cmd_fix(int argc, char **argv)
{
        struct run_opts *o = calloc(1, sizeof(*o));
        struct fix_opts f = { .max_requests = 16, .max_cost = 1.0 };
        int code;

        if (!o || !(o->env_ops = calloc((size_t)argc * 2, sizeof(char *)))) {
                log_error("out of memory");
                free(o);
                return EXIT_SETUP;
        }
        o->limits = (heal_sandbox_limits)HEAL_SANDBOX_LIMITS_INIT;
        o->limits.wall_ms = 120000;
        o->command = "heal";
        o->usage = fix_usage;
        o->extra = extra_option;
        o->extra_data = &f;
        if (run_opts_parse(o, argc, argv) < 0 || check_opts(o, &f) < 0) {
                code = EXIT_USAGE;
                goto out;
        }
        install_signals();
        code = fix_run(o, &f);
out:
        free(o->env_ops);
        free(o);
        return code;
}
