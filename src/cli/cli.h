/* SPDX-License-Identifier: MIT */
#ifndef HEAL_CLI_H
#define HEAL_CLI_H

#include <jansson.h>
#include <stdio.h>

#include "heal/sandbox.h"

/* heal run's own exit codes (docs/exit-codes.md); otherwise it exits with the command's status. */
enum {
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

/* json.c */
json_t *json_string_bytes(const char *data, size_t len);
json_t *result_to_json(const heal_sandbox_result *res);
int json_print(json_t *doc);

#define log_error(fmt, ...) (fprintf(stderr, "heal: " fmt "\n", ##__VA_ARGS__))

#endif
