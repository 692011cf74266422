/* SPDX-License-Identifier: MIT */
#ifndef HEAL_RUNNER_TOOL_H
#define HEAL_RUNNER_TOOL_H

/* The run_code tool's arguments and results, shared by heal ask (a model's tool call) and the
 * MCP server (a host's tools/call). */

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "heal/error.h"
#include "heal/runner.h"

/* What a caller may ask for at most; a larger timeout_ms or memory_mb is lowered to it. */
struct run_code_caps {
        uint64_t default_wall_ms; /* without timeout_ms (0: the run limits', else the driver's) */
        uint64_t max_wall_ms;
        uint64_t max_mem_bytes;
        uint64_t max_out_bytes;
        bool share_net;
        const char *const *keys; /* the arguments taken (NULL: all of run_code's) */
};

/* One call, ready for heal_runner_exec(): its strings point into @held. */
struct run_code_call {
        heal_runner_opts ro;
        heal_runner_file *files;
        const char **args;
        json_t *held;
};

/*
 * Arguments: language (a driver name or alias), code (the main file's text) or files
 * ([{name, content}], the first the main one), stdin, args (strings), timeout_ms, memory_mb.
 * language may be left out when files name it by extension. @run and @compile hold the other
 * limits of each stage (0 fields: the drivers' defaults).
 * Return: 0; -EINVAL naming the field that is missing or wrong (a message for whoever called);
 *         -ENOMEM.
 */
int run_code_parse(struct run_code_call *c, json_t *args, const heal_runner_limits *run,
                   const heal_runner_limits *compile, const struct run_code_caps *caps,
                   heal_error *err);
void run_code_release(struct run_code_call *c);

/* The result for a model: status, message, exit_code, signal, stdout, stderr, compile_output
 * (when the build failed or warned); each output cut to its last @tail_max bytes. Nothing in
 * it changes from run to run of the same program (no times), so that a conversation replays
 * from a cassette or the cache. */
json_t *run_code_brief(const heal_runner_result *res, size_t tail_max);

/* @key of @args: an array of @min to @max strings without NUL, as a NULL-terminated array of
 * the strings (borrowed from @args; the array is the caller's, free(3)), and its length;
 * NULL when absent and @min is 0. -EINVAL naming @key; -ENOMEM. */
int tool_arg_strings(const char ***ret, size_t *ret_n, json_t *args, const char *key, size_t min,
                     size_t max, heal_error *err);
/* Every key of @args is one of @known (NULL-terminated): 0; else -EINVAL naming the first one
 * that is not and listing @known (a misspelt limit must not be ignored silently). */
int tool_args_known(json_t *args, const char *const *known, heal_error *err);
/* @key of @args: a positive integer, at most @max, into *@ret; 0 when absent. -EINVAL. */
int tool_arg_uint(uint64_t *ret, json_t *args, const char *key, uint64_t max, heal_error *err);

/* JSON text of @v (compact, UTF-8), or NULL when out of memory; consumes @v. */
char *json_text_take(json_t *v);

#endif
