/* SPDX-License-Identifier: MIT */
#ifndef HEAL_CLI_H
#define HEAL_CLI_H

#include <jansson.h>
#include <limits.h>
#include <stdio.h>

#include "heal/llm.h"
#include "heal/runner.h"
#include "heal/sandbox.h"

#include "core/json.h"

/* heal run's own exit codes (docs/exit-codes.md); otherwise it exits with the command's status. */
enum {
        EXIT_COMPILE_ERROR = 120, /* heal exec */
        EXIT_OUTPUT_LIMIT = 121,
        EXIT_CPU_LIMIT = 122,
        EXIT_MEMORY_LIMIT = 123,
        EXIT_TIMEOUT = 124,
        EXIT_SETUP = 125,
        EXIT_CANCELED = 130,
};

/* Subcommands' usage errors exit with this (heal run: 125, since 2 may be the command's). */
#define EXIT_USAGE 2

int cmd_run(int argc, char **argv);
int cmd_doctor(int argc, char **argv);
int cmd_analyze(int argc, char **argv);
int cmd_undo(int argc, char **argv);
int cmd_fix(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_exec(int argc, char **argv);
int cmd_gen(int argc, char **argv);
int cmd_ask(int argc, char **argv);
int cmd_mcp(int argc, char **argv);

/* run_opts.c: heal run's sandbox options, for every command that runs one */
#define MAX_MOUNTS 64
#define MAX_OPTS   16

struct cli_mount {
        const char *type, *src, *dst;
        const char *opts[MAX_OPTS + 1];
        size_t n_opts;
};

struct run_opts {
        struct cli_mount mounts[MAX_MOUNTS];
        size_t n_mounts;
        const char *next_size, *next_perms;
        char size_opt[MAX_MOUNTS][64], perms_opt[MAX_MOUNTS][64];
        heal_sandbox_limits limits;
        unsigned flags;
        const char *chdir;
        char chdir_abs[PATH_MAX];
        const char **env_ops; /* pairs: name, value (NULL value = unset) */
        size_t n_env_ops;
        bool stdin_pass, json, home_set;
        bool go_crash_traceback; /* GOTRACEBACK=crash: all threads' stacks (changes exit codes) */
        char **argv;
        const char *command;   /* "heal run", "heal analyze": for usage errors */
        bool command_optional; /* no CMD is fine (set by an extra option, e.g. --log) */
        const char *usage;     /* printed by --help */
        /* The command's own options: 1 when argv[*i] was one (its value consumed), 0 when not,
         * < 0 for a usage error (already printed). */
        int (*extra)(struct run_opts *o, int argc, char **argv, int *i);
        void *extra_data;
};

/* Parse options, then "--" (optional) and the command into o->argv. Prints usage errors. */
int run_opts_parse(struct run_opts *o, int argc, char **argv);
/* A relative --chdir made absolute; options that contradict each other; a missing directory. */
int run_opts_check(struct run_opts *o, heal_error *err);
/* Mounts, limits, flags, environment and cwd into @sb; @stream: live output, or NULL to capture. */
int run_opts_build(heal_sandbox *sb, struct run_opts *o, heal_sandbox_output_fn stream,
                   heal_error *err);
/* Say so when the default view would share the whole /tmp or the home directory. */
void run_opts_notice_shared(const struct run_opts *o);

/* llm_opts.c: --model PROVIDER:MODEL, --llm-url URL, --record FILE (each also as --flag=value) */
struct llm_opts {
        const char *model;
        const char *url;
        const char *record;
        const char *timeout; /* --llm-timeout TIME, or NULL */
};
#define LLM_OPTS_HELP                                                                       \
 "  --model PROVIDER:MODEL   e.g. openai:gpt-4.1-mini, anthropic:claude-sonnet-4-5,\n"      \
 "                           ollama:qwen2.5-coder:7b (default: HEAL_MODEL, .heal/config,\n" \
 "                           or the provider of the API key set; see docs/llm.md)\n"        \
 "  --llm-url URL            the provider's base URL (a local or proxy server)\n"           \
 "  --record FILE            append every answer to the cassette FILE (keys never\n"        \
 "                           written); replay it with HEAL_MODEL=replay:MODEL\n"            \
 "                           HEAL_CASSETTE=FILE\n"
/* argv[*i] is one of the flags: store it (and skip its value); 1. Not one: 0. Usage error: -1. */
int llm_opts_parse(struct llm_opts *o, int argc, char **argv, int *i);
/* heal_llm_select() with the flags (.heal/config looked up from the working directory
 * upwards), the cassette to record into, and the timeout: --llm-timeout, else @timeout_ms
 * (0: the library's default). */
int llm_opts_select(const struct llm_opts *o, heal_llm_selection *sel, uint64_t timeout_ms,
                    heal_error *err);
/* $XDG_CACHE_HOME/heal/llm, else ~/.cache/heal/llm, made when missing; false when neither
 * works. */
bool llm_cache_dir(char *out, size_t len);

/* limit_opts.c: --timeout, --cpu-time, --memory, --output-limit into @run and --compile-timeout,
 * --compile-memory, --compile-output-limit into @compile (NULL: not taken). 0 when @name was
 * one, 1 when not, < 0 for a bad value (printed, prefixed with @cmd). */
int limit_opt(heal_runner_limits *run, heal_runner_limits *compile, const char *cmd,
              const char *name, const char *v);

/* cmd_analyze.c: "go test ./..." from argv, for messages and reports; an argument with a space
 * or a shell character is single-quoted, so that the line reads back as the same arguments. */
void join_argv(char *out, size_t len, char **argv);

/* json.c: @doc (its reference taken) indented on stdout, flushed; 0, or -1 with a message
 * when it could not be formatted or written (a full disk, a closed pipe). */
int json_print(json_t *doc);

#define log_error(fmt, ...) (fprintf(stderr, "heal: " fmt "\n", ##__VA_ARGS__))

#endif
