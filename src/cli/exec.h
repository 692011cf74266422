/* SPDX-License-Identifier: MIT */
#ifndef HEAL_CLI_EXEC_H
#define HEAL_CLI_EXEC_H

#include "heal/runner.h"

#include "cli/cli.h"

/* What heal exec reads, at most: files, and bytes together (code, not data sets). */
#define EXEC_FILES_MAX 1000
#define EXEC_BYTES_MAX (64ULL << 20)

/* The program's files, owned (names and data are malloc'ed). */
struct exec_input {
        heal_runner_file *files;
        size_t n;
        size_t total;
};

/* Each reports its own error on stderr and returns < 0. */
int exec_input_files(struct exec_input *in, char **paths, size_t n);
/* Every regular file of @dir; *@lang detected when NULL; the main file moved first. */
int exec_input_dir(struct exec_input *in, const char *dir, const char **lang);
/* The code on stdin, named after @lang's main file. */
int exec_input_stdin(struct exec_input *in, const char *lang);
void exec_input_release(struct exec_input *in);

#endif
