/* SPDX-License-Identifier: MIT */
#ifndef HEAL_RUNNER_H
#define HEAL_RUNNER_H

/*
 * libheal's code runner: build and run one program (Go, C, Python 3, sh, bash) in the sandbox
 * and report what happened, stage by stage, the way code-execution services do (Piston's
 * per-stage compile/run objects, Judge0's status vocabulary).
 *
 * Lifecycle:
 *   1. heal_runner_new()
 *   2. heal_runner_exec() with a struct heal_runner_opts, as many times as wanted
 *   3. heal_runner_result_release() for each result, heal_runner_free()
 *
 * Code always travels as files written with write(2) into a fresh private directory, and the
 * stages run as argument vectors: no shell ever sees the code, so quotes, backticks and $(...)
 * in it stay what they are. The compile stage shares that directory read-write (and, for Go,
 * heal's own build cache); the run stage sees it as an overlay whose writes go to a capped
 * tmpfs and vanish, so the program writes nothing on the host. The directory is removed before
 * heal_runner_exec() returns. Drivers live in one table (src/runner/drivers.c). See docs/exec.md.
 */

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "heal/error.h"
#include "heal/sandbox.h"

typedef struct heal_runner heal_runner;

/**
 * enum heal_exec_status - The overall verdict of an exec (a verdict is not an error).
 * @HEAL_EXEC_OK:             the program ran and exited with status 0.
 * @HEAL_EXEC_COMPILE_ERROR:  the compile stage failed (the compiler's status, a limit, or a
 *                            signal); the run stage did not run.
 * @HEAL_EXEC_RUNTIME_ERROR:  the program exited with a nonzero status or was killed by a signal
 *                            heal did not send.
 * @HEAL_EXEC_TIMEOUT:        the run stage reached its wall-time limit (also when the program
 *                            stopped itself with SIGSTOP).
 * @HEAL_EXEC_MEMORY_LIMIT:   the run stage went over its memory limit (killed by the memory
 *                            cgroup; with RLIMIT_DATA enforcement, a failed run that reports
 *                            running out of memory).
 * @HEAL_EXEC_CPU_LIMIT:      the run stage went over its CPU-time limit.
 * @HEAL_EXEC_OUTPUT_LIMIT:   the run stage's output reached its cap; heal stopped it.
 * @HEAL_EXEC_INTERNAL_ERROR: heal could not carry out the exec (sandbox setup, a missing
 *                            toolchain or interpreter); the message says why.
 * @HEAL_EXEC_CANCELED:       heal_runner_cancel() stopped it.
 */
typedef enum heal_exec_status {
        HEAL_EXEC_OK,
        HEAL_EXEC_COMPILE_ERROR,
        HEAL_EXEC_RUNTIME_ERROR,
        HEAL_EXEC_TIMEOUT,
        HEAL_EXEC_MEMORY_LIMIT,
        HEAL_EXEC_CPU_LIMIT,
        HEAL_EXEC_OUTPUT_LIMIT,
        HEAL_EXEC_INTERNAL_ERROR,
        HEAL_EXEC_CANCELED,
        _HEAL_EXEC_STATUS_MAX,
        _HEAL_EXEC_STATUS_INVALID = -EINVAL,
} heal_exec_status;

/**
 * struct heal_runner_file - One source file of the program.
 * @name: path relative to the program's directory ("main.go", "pkg/util.go"): no leading '/',
 *        no "." or ".." component, no empty component; borrowed.
 * @data: the file's bytes (need not be NUL-terminated); borrowed.
 * @len:  length of @data, bytes.
 */
typedef struct heal_runner_file {
        const char *name;
        const char *data;
        size_t len;
} heal_runner_file;

/**
 * struct heal_runner_limits - Limits of one stage. 0 in a field means "the driver's default"
 * (docs/exec.md lists them); there is no way to ask for no limit.
 * @wall_ms:       wall-clock time, ms.
 * @cpu_ms:        CPU time per process, ms (RLIMIT_CPU, rounded up to whole seconds).
 * @mem_max_bytes: memory, bytes (cgroup where writable, else RLIMIT_DATA per process).
 * @out_max_bytes: stdout + stderr kept, bytes; reaching it stops the stage.
 */
typedef struct heal_runner_limits {
        uint64_t wall_ms;
        uint64_t cpu_ms;
        uint64_t mem_max_bytes;
        uint64_t out_max_bytes;
} heal_runner_limits;

/**
 * struct heal_runner_opts - What to run and how.
 * @lang:           driver name or alias ("go", "c", "python3"/"python"/"py", "sh", "bash"); NULL
 *                  picks the driver from the first file's extension. Borrowed.
 * @files:          the program's files; the first is the main file (the script the interpreter
 *                  runs). Borrowed.
 * @n_files:        number of @files, >= 1.
 * @args:           NULL-terminated arguments for the program (not for the compiler), or NULL.
 *                  Borrowed.
 * @stdin_data:     the program's stdin, or NULL; borrowed. Wins over @stdin_fd.
 * @stdin_len:      length of @stdin_data, bytes.
 * @stdin_fd:       the program's stdin when @stdin_data is NULL; borrowed; -1: /dev/null.
 * @compile_limits: limits of the compile stage (0 fields: the driver's defaults).
 * @run_limits:     limits of the run stage (0 fields: the driver's defaults).
 * @share_net:      both stages use the host's network, and Go may download modules
 *                  (default: loopback only, GOPROXY=off).
 * @on_stage:       called on the calling thread before each stage starts, with "compile" or
 *                  "run" (static strings), for progress; may be NULL.
 * @stage_data:     passed to @on_stage.
 */
typedef struct heal_runner_opts {
        const char *lang;
        const heal_runner_file *files;
        size_t n_files;
        const char *const *args;
        const char *stdin_data;
        size_t stdin_len;
        int stdin_fd;
        heal_runner_limits compile_limits;
        heal_runner_limits run_limits;
        bool share_net;
        void (*on_stage)(void *stage_data, const char *stage);
        void *stage_data;
} heal_runner_opts;

#define HEAL_RUNNER_OPTS_INIT \
 {                            \
  .stdin_fd = -1,             \
 }

/**
 * struct heal_runner_stage - One stage (compile or run) of an exec.
 * @ran: false when the stage did not run (a driver without a compile step; the run stage after
 *       a failed compile, or after an internal error); @res is then zeroed.
 * @res: the sandbox's verdict and usage of the stage (heal_sandbox_result: status, exit_code,
 *       signal, limits_hit, wall_ms, cpu_ms, mem_peak_bytes, out/err with their truncated
 *       flags, the process snapshot on timeout). Owned by the enclosing result.
 */
typedef struct heal_runner_stage {
        bool ran;
        heal_sandbox_result res;
} heal_runner_stage;

/**
 * struct heal_runner_result - What heal_runner_exec() found.
 * @status:  the overall verdict.
 * @lang:    canonical name of the driver used ("go", "c", "python3", "sh", "bash"); static.
 * @compile: the compile stage.
 * @run:     the run stage.
 * @message: a one-line explanation when @status is not OK ("" otherwise): the limit reached,
 *           the internal error, the compiler's failure.
 */
typedef struct heal_runner_result {
        heal_exec_status status;
        const char *lang;
        heal_runner_stage compile;
        heal_runner_stage run;
        char message[HEAL_ERROR_MSG_MAX];
} heal_runner_result;

/**
 * heal_runner_new() - Create a runner: two sandboxes, one per stage, sharing heal's Go build
 * cache ($XDG_CACHE_HOME/heal/go-build, else ~/.cache/heal/go-build; created when missing)
 * read-write with the compile stage and the user's module cache read-only.
 * @ret: on success, the runner; free with heal_runner_free(). Untouched on failure.
 * @err: optional.
 *
 * Context: does not fork; not thread-safe (use one runner per thread).
 * Return: 0; -EINVAL if @ret is NULL; -ENOMEM; -ENOENT when a cache directory vanished while
 *         it was being added.
 */
int heal_runner_new(heal_runner **ret, heal_error *err);

/**
 * heal_runner_free() - Free @runner. Accepts NULL.
 * Return: NULL, for "r = heal_runner_free(r);".
 */
heal_runner *heal_runner_free(heal_runner *runner);

/**
 * heal_runner_exec() - Write @opts' files into a fresh directory, build them, run the program.
 * @ret_result: on success, the verdict and each stage; release with
 *              heal_runner_result_release(). Untouched on failure.
 * @runner:     the runner; borrowed.
 * @opts:       what to run; borrowed for the duration of the call.
 * @err:        optional; filled on failure.
 *
 * The directory is made under $TMPDIR (else /tmp) with mode 0700 and removed, whatever
 * happened, before the call returns. The compile stage (when the driver has one) runs with
 * @opts->compile_limits; if it fails, the run stage does not run and the status is
 * HEAL_EXEC_COMPILE_ERROR. Go: a go.mod ("module main", go 1.19) is written when none is
 * given; GOFLAGS=-mod=mod -buildvcs=false, GOTOOLCHAIN=local, GOPROXY=off unless @share_net.
 *
 * Context: blocking (up to both stages' wall limits plus grace); forks; safe in a multi-threaded
 *          process.
 * Return: 0 whenever a verdict was reached, including HEAL_EXEC_INTERNAL_ERROR for a sandbox
 *         that could not be set up or a toolchain that is missing; -EINVAL for bad arguments
 *         (no files, a bad file name, an unknown @lang, no driver for the file's extension);
 *         -ENOMEM; -EPERM / -ENOSPC when user namespaces are refused (the message names the
 *         setting and the fix); other -errno from mkdtemp(3) or write(2) of the files.
 * See: docs/exec.md; Piston's /api/v2/execute; isolate(1) for the verdict model.
 */
int heal_runner_exec(heal_runner_result *ret_result, heal_runner *runner,
                     const heal_runner_opts *opts, heal_error *err);

/**
 * heal_runner_cancel() - Stop the exec in progress on @runner (status HEAL_EXEC_CANCELED) and
 * every later one on it.
 *
 * Context: async-signal-safe and thread-safe, like heal_sandbox_cancel().
 */
void heal_runner_cancel(heal_runner *runner);

/**
 * heal_runner_result_release() - Free what @result owns and zero it. Accepts a zeroed result.
 */
void heal_runner_result_release(heal_runner_result *result);

/**
 * heal_runner_lang_canonical() - The driver for a name or alias.
 * @name: "go", "golang", "c", "python3", "python", "py", "sh", "bash" (case-sensitive).
 * Return: the driver's canonical name (static), or NULL when no driver has that name.
 */
const char *heal_runner_lang_canonical(const char *name);

/**
 * heal_runner_lang_for_file() - The driver whose file extensions match @path ("x.go" -> "go").
 * Return: the canonical name (static), or NULL when no driver claims the extension.
 */
const char *heal_runner_lang_for_file(const char *path);

/**
 * heal_runner_lang_main_file() - The file name a driver gives code that comes without one
 * ("main.go", "main.c", "main.py", "main.sh", "main.bash").
 * @name: a driver name or alias.
 * Return: the name (static), or NULL when no driver has that name.
 */
const char *heal_runner_lang_main_file(const char *name);

/**
 * heal_runner_lang_is_compiled() - Whether a driver has a compile stage (then the order of the
 * files does not matter; otherwise the first is the script the interpreter runs).
 * @name: a driver name or alias.
 * Return: true for "go" and "c"; false for the interpreters and for unknown names.
 */
bool heal_runner_lang_is_compiled(const char *name);

/**
 * heal_runner_lang_limits() - A driver's default limits (what 0 fields stand for).
 * @name:        a driver name or alias.
 * @ret_compile: optional; the compile stage's (all 0 for an interpreter).
 * @ret_run:     optional; the run stage's.
 * Return: 0; -EINVAL when no driver has that name.
 */
int heal_runner_lang_limits(const char *name, heal_runner_limits *ret_compile,
                            heal_runner_limits *ret_run);

/**
 * heal_runner_langs() - Canonical names of every driver, for help texts and error messages.
 * Return: a static ", "-separated list ("go, c, python3, sh, bash").
 */
const char *heal_runner_langs(void);

/**
 * heal_exec_status_to_string() - "ok", "compile_error", "runtime_error", "timeout",
 * "memory_limit", "cpu_limit", "output_limit", "internal_error", "canceled"; NULL if out of
 * range.
 */
const char *heal_exec_status_to_string(heal_exec_status status);

#endif
