/* SPDX-License-Identifier: MIT */
#ifndef HEAL_ANALYZE_H
#define HEAL_ANALYZE_H

/*
 * libheal's failure analysis: a command's output and exit status become diagnostics (what
 * failed, where, with which stack), an exact fingerprint (the same failure, run again, gives the
 * same one) and a cause fingerprint (the same root cause in other words collides). The repair
 * search uses them to recognise a failure that comes back and to prune loops.
 *
 * Formats: Go (compiler, vet, go test -v text and -json events, panics, fatal errors, deadlocks,
 * race reports, test timeouts), C (gcc and clang diagnostics with notes, linker errors,
 * AddressSanitizer and UBSan reports, assertion failures, a signal with no output), Python
 * tracebacks; anything else is one "unknown" diagnostic with the output's tail. Every parser
 * reads the output line by line, each line at most once per parser: linear in the output size.
 *
 * Lifecycle: heal_analyze() or heal_analyze_result() fills a heal_analysis; release it with
 * heal_analysis_release().
 */

#include <stdbool.h>
#include <stddef.h>

#include "heal/error.h"
#include "heal/sandbox.h"

typedef enum heal_diag_kind {
        HEAL_DIAG_COMPILE_ERROR, /* the build failed: compiler, linker, import cycle */
        HEAL_DIAG_VET,           /* a static check failed (go vet, also inside go test) */
        HEAL_DIAG_TEST_FAILURE,  /* a test reported failure (t.Errorf, assertion in a test) */
        HEAL_DIAG_PANIC,         /* a Go panic, a Python exception */
        HEAL_DIAG_FATAL_ERROR,   /* a Go fatal error (stack overflow, concurrent map writes) */
        HEAL_DIAG_DEADLOCK,      /* "all goroutines are asleep - deadlock!" */
        HEAL_DIAG_DATA_RACE,     /* a race detector report */
        HEAL_DIAG_TIMEOUT,       /* go test -timeout, or the sandbox's wall-time limit */
        HEAL_DIAG_SANITIZER,     /* AddressSanitizer, UndefinedBehaviorSanitizer */
        HEAL_DIAG_CRASH,         /* a signal (SIGSEGV, SIGABRT from assert) */
        HEAL_DIAG_UNKNOWN,       /* nothing recognised: the output's tail */
        _HEAL_DIAG_KIND_MAX,
} heal_diag_kind;

typedef enum heal_diag_severity {
        HEAL_SEVERITY_ERROR,
        HEAL_SEVERITY_WARNING,
        HEAL_SEVERITY_NOTE,
} heal_diag_severity;

/**
 * struct heal_frame - One stack frame.
 * @function: as the runtime printed it ("main.(*Tally).Submit", "context_open").
 * @file:     a path relative to the tree when the file is in it, else as printed; NULL if none.
 * @line:     1-based; 0 when unknown.
 * @in_tree:  @file is in the analysed tree (user code, not the runtime or libc).
 */
typedef struct heal_frame {
        char *function;
        char *file;
        unsigned line;
        bool in_tree;
} heal_frame;

/**
 * struct heal_fixit - A compiler's suggested edit (gcc and clang -fdiagnostics-parseable-fixits):
 * replace the text from @line:@col up to, not including, @end_line:@end_col (1-based, columns
 * in bytes) with @text; an empty range inserts.
 * @from_note: it belongs to a note (often one of several alternatives), not to the diagnostic.
 */
typedef struct heal_fixit {
        char *file;
        unsigned line, col, end_line, end_col;
        char *text;
        bool from_note;
} heal_fixit;

/**
 * struct heal_diag - One diagnostic; every string owned by the analysis.
 * @kind, @severity: what it is.
 * @file, @line, @column: where (file relative to the tree when in it; NULL, 0, 0 if unknown).
 * @function: the enclosing function when known (from the compiler's "In function", the first
 *            in-tree stack frame, or the source), else NULL.
 * @message:  the message, one line.
 * @test:     the failing test ("TestTally", "TestParse/empty"), or NULL.
 * @frames, @n_frames: the stack, innermost first (the first goroutine's, or the first access's
 *            for a race); @n_frames <= 64.
 * @notes, @n_notes: related lines: compiler notes, "created by", the race's other access.
 * @fixits, @n_fixits: the compiler's suggested edits for it and its notes (at most 16).
 */
typedef struct heal_diag {
        heal_diag_kind kind;
        heal_diag_severity severity;
        char *file;
        unsigned line;
        unsigned column;
        char *function;
        char *message;
        char *test;
        heal_frame *frames;
        size_t n_frames;
        char **notes;
        size_t n_notes;
        heal_fixit *fixits;
        size_t n_fixits;
} heal_diag;

/**
 * struct heal_analysis - The analysis of one failure; release with heal_analysis_release().
 * @diags, @n_diags:   diagnostics in output order (at most 256).
 * @exact:             exact fingerprint: XXH3-128 (32 hex digits) of the normalized output.
 * @cause:             cause fingerprint: XXH3-128 of the error diagnostics' kind, file,
 *                     function and message template (docs/analysis.md says what each catches).
 * @tests_passed, @n_tests_passed: tests reported passing (go test -v "--- PASS", -json "pass").
 * @tests_failed, @n_tests_failed: tests reported failing.
 * @tests_skipped, @n_tests_skipped: tests reported skipped (go test -v "--- SKIP", -json "skip"
 *                     events naming a test); a test-set invariant (heal_tests_compare()) needs
 *                     them. Each list holds a name once, at most 4096 names, in output order.
 * @tail:              the last lines of the output (at most 4 KiB), for the prompt.
 */
typedef struct heal_analysis {
        heal_diag *diags;
        size_t n_diags;
        char exact[33];
        char cause[33];
        char **tests_passed;
        size_t n_tests_passed;
        char **tests_failed;
        size_t n_tests_failed;
        char **tests_skipped;
        size_t n_tests_skipped;
        char *tail;
} heal_analysis;

/**
 * struct heal_analyze_opts - Where the output came from; all borrowed.
 * @tree:         the user's tree (absolute), to make paths relative and read sources; may be
 *                NULL (paths are then kept as printed and no source is read).
 * @aliases:      NULL-terminated absolute paths that also mean @tree (the path the tree had
 *                inside the sandbox, or where the output was recorded), or NULL.
 * @exit_code:    the command's exit status (a crash with no output is found from 128+N).
 * @command:      the command line, for the timeout trace and the "unknown" diagnostic.
 */
typedef struct heal_analyze_opts {
        const char *tree;
        const char *const *aliases;
        int exit_code;
        const char *command;
} heal_analyze_opts;

/**
 * heal_analyze() - Parse a command's output into diagnostics and fingerprints.
 * @ret:    filled on success; release with heal_analysis_release(). Untouched on failure.
 * @output: the combined output (stdout then stderr, or interleaved), @len bytes; need not be
 *          NUL-terminated; NUL bytes and invalid UTF-8 are tolerated.
 * @opts:   borrowed; NULL means no tree and exit code 1.
 * Return: 0 (every output gives at least one diagnostic, "unknown" at worst); -ENOMEM; -EINVAL
 *         for a NULL @ret or @output with a nonzero @len.
 */
int heal_analyze(heal_analysis *ret, const char *output, size_t len, const heal_analyze_opts *opts,
                 heal_error *err);

/**
 * heal_analyze_result() - heal_analyze() on a sandbox run's output (stdout, then stderr), with a
 * synthetic failure when the run hit its wall-time limit: the limit, the elapsed time and the
 * output's tail, the goroutine stacks Go printed on SIGQUIT (the running ones first), else each
 * process's state, wait channel and current syscall from the snapshot.
 * @res: borrowed; @opts->exit_code is taken from it.
 * Return: as heal_analyze().
 */
int heal_analyze_result(heal_analysis *ret, const heal_sandbox_result *res,
                        const heal_analyze_opts *opts, heal_error *err);

/**
 * heal_analysis_release() - Free what @a owns and zero it; accepts a zeroed analysis.
 */
void heal_analysis_release(heal_analysis *a);

/**
 * heal_diag_kind_name() - "compile_error", "vet", "test_failure", "panic", "fatal_error",
 * "deadlock", "data_race", "timeout", "sanitizer", "crash" or "unknown".
 */
const char *heal_diag_kind_name(heal_diag_kind kind);

/**
 * heal_fingerprint_normalize() - The output as the exact fingerprint sees it: addresses, offsets,
 * goroutine numbers, durations, timestamps, temporary and sandbox paths, PIDs and ports replaced
 * by placeholders, goroutine dumps in a stable order. For tests and `heal analyze --normalized`.
 * @ret: a NUL-terminated string the caller frees with free(3).
 * Return: 0; -ENOMEM.
 * See: docs/analysis.md for the table of normalizers (PCRE2 patterns, compiled with JIT).
 */
int heal_fingerprint_normalize(char **ret, const char *output, size_t len,
                               const heal_analyze_opts *opts, heal_error *err);

#endif
