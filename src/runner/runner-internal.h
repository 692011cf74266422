/* SPDX-License-Identifier: MIT */
#ifndef HEAL_RUNNER_INTERNAL_H
#define HEAL_RUNNER_INTERNAL_H

#include <limits.h>

#include "heal/buf.h"
#include "heal/runner.h"

#define DRIVER_ARGV_MAX 12

/*
 * One language. An argv template's words are copied as they are, except "@sources" (every
 * file of the program whose name ends in @src_ext, in the order given) and "@main" (the main
 * file). The run stage's argv is followed by the program's own arguments.
 */
struct runner_driver {
        const char *name;
        const char *aliases[4];
        const char *exts[4];   /* file extensions that pick this driver (with the dot) */
        const char *main_file; /* the name code read from stdin gets */
        const char *src_ext;   /* files that "@sources" expands to */
        const char *compile[DRIVER_ARGV_MAX]; /* empty: no compile stage */
        const char *run[DRIVER_ARGV_MAX];
        heal_runner_limits compile_limits, run_limits; /* the defaults */
        /* Called after the files are written, before the compile stage; may add files. */
        int (*prepare)(int dirfd, const heal_runner_opts *o, heal_error *err);
};

/* drivers.c */
const struct runner_driver *driver_find(const char *name);
const struct runner_driver *driver_for_file(const char *path);

/* files.c */
/* mkdtemp under $TMPDIR or /tmp into @dir (PATH_MAX); the open directory fd in *ret_fd. */
int files_mkdtemp(char *dir, int *ret_fd, heal_error *err);
/* Write @files below @dirfd (parents made, nothing overwritten, no symlink followed). */
int files_write(int dirfd, const heal_runner_file *files, size_t n, heal_error *err);
/* Write one file; -EEXIST when it exists. */
int files_write_one(int dirfd, const char *name, const char *data, size_t len, heal_error *err);
/* true when @dirfd holds a regular file @name. */
bool files_exists(int dirfd, const char *name);
/* rm -rf @dir, whatever modes the program left behind. 0 or -errno. */
int files_rmtree(const char *dir);
/* Once per process: remove the heal-exec-PID-* directories under @tmp that processes of this
 * user left when they were killed (PID no longer running). */
void files_sweep(const char *tmp);

/* stage.c */
struct runner_stage_io {
        const char *dir; /* the program's directory (cwd) */
        const char *const *argv;
        const heal_runner_limits *limits; /* already merged with the driver's defaults */
        int stdin_fd;                     /* -1: /dev/null */
        bool overlay;                     /* the run stage: the directory as an overlay */
        bool share_net;
};
int stage_run(heal_sandbox *sb, heal_runner_stage *st, const struct runner_stage_io *io,
              heal_error *err);
/* The sandbox of each stage: environment, caches; @compile adds heal's Go cache (rw) and the
 * module cache (ro). */
int stage_sandbox_new(heal_sandbox **ret, bool compile, heal_error *err);
/* GOPROXY per exec: off unless the network is shared. */
int stage_set_net_env(heal_sandbox *sb, bool share_net, heal_error *err);

/* verdict.c: the compile stage's verdict (true: go on to the run stage), the run stage's.
 * @tool names the program that could not be found on a setup error. */
bool verdict_compile(heal_runner_result *res, const char *tool);
void verdict_run(heal_runner_result *res, const char *tool, uint64_t mem_max_bytes);

/* feedback.c */
/* The last @max bytes of @s (a whole line when one starts in the first quarter of them). */
const char *text_tail(const char *s, size_t len, size_t max, size_t *ret_len);
/* What went wrong with @res, for a model: the verdict in words, then the compiler's output, or
 * stderr and stdout, each cut to its last @max bytes, and the processes at a timeout. */
void feedback_describe(heal_buf *b, const heal_runner_result *res, size_t max);

#endif
