/* SPDX-License-Identifier: MIT */
#ifndef HEAL_PROMPT_H
#define HEAL_PROMPT_H

/*
 * What the model is shown about a failure: source windows around the places an analysis names
 * (heal_context_build()), and the prompt made of them (heal_prompt_build()). Both are
 * deterministic: the same analysis and tree give the same bytes, so the response cache and
 * replay cassettes keep working.
 *
 * Token counts are estimates: bytes / 4, rounded up (BPE tokenizers average 3.5 to 4.5 bytes
 * per token on English and source code); budgets leave room for the error of that estimate.
 */

#include <stddef.h>
#include <stdint.h>

#include "heal/analyze.h"
#include "heal/error.h"

/**
 * struct heal_window - Lines of one file of the tree; strings owned by the context.
 * @file:     relative to the tree.
 * @first, @last: 1-based, inclusive.
 * @text:     those lines as in the file, each ending in '\n'.
 * @why:      what asked for them: "panic at line 21", "test TestTally", "frame main.main",
 *            several joined with "; " when windows were merged.
 * @priority: 0 most needed (the first error's place); windows with higher numbers go first
 *            when the budget is short.
 */
typedef struct heal_window {
        char *file;
        unsigned first;
        unsigned last;
        char *text;
        char *why;
        unsigned priority;
} heal_window;

/**
 * struct heal_outline - A file's outline: its types (with fields, up to 30 lines each) and the
 * signature line of each function, no bodies, each line as "NNNN| text", gaps as "    | ...".
 * @file:   relative to the tree.
 * @text:   the outline.
 * @source: what made it: "gopls", "clangd" (a language server) or "ctags" (Universal Ctags).
 */
typedef struct heal_outline {
        char *file;
        char *text;
        const char *source;
} heal_outline;

/**
 * struct heal_context - Source windows for a failure; release with heal_context_release().
 * @windows, @n_windows: ordered by priority, then file, then line.
 * @outlines, @n_outlines: outlines of the files of the first errors (at most 2, test files
 *            excepted), when the budget has room after the windows.
 * @tokens:   estimate of the windows' and outlines' text.
 * @dropped:  windows left out to stay within the budget.
 */
typedef struct heal_context {
        heal_window *windows;
        size_t n_windows;
        heal_outline *outlines;
        size_t n_outlines;
        size_t tokens;
        size_t dropped;
} heal_context;

/**
 * typedef heal_lsp - A language server kept running for outlines (gopls for Go, clangd for C).
 */
typedef struct heal_lsp heal_lsp;

/**
 * heal_lsp_start() - Start the language server for @language in @tree and initialize it.
 * @ret:        on success the server; stop it with heal_lsp_free().
 * @language:   "go" (gopls) or "c" (clangd), found in PATH.
 * @tree:       the workspace root.
 * @timeout_ms: the limit of each exchange with it, ms (0: 10000); it is run as a plain child
 *              (it reads the tree and runs `go list`, nothing of the tree's code).
 * Return: 0; -EINVAL for another language; -ENOENT when the server is not installed;
 *         -ETIMEDOUT when it did not answer initialize in time; -EPIPE when it exited;
 *         -EPROTO for a broken message; -ENOMEM.
 * See: Language Server Protocol 3.17 (Base Protocol, initialize, documentSymbol).
 */
int heal_lsp_start(heal_lsp **ret, const char *language, const char *tree, uint64_t timeout_ms,
                   heal_error *err);

/** heal_lsp_free() - Ask @l to shut down (1 s), then kill it; accepts NULL. Return: NULL. */
heal_lsp *heal_lsp_free(heal_lsp *l);

/** heal_lsp_language() - "go" or "c"; NULL for NULL. */
const char *heal_lsp_language(const heal_lsp *l);

/**
 * struct heal_context_opts - How much to show.
 * @tree:         the tree the analysis's paths are relative to (absolute); required.
 * @token_budget: at most this many tokens of windows (estimate); 0: 6000.
 * @lines_around: lines shown on each side of a place when its function is too long to show
 *                whole (over 60 lines) or not found; 0: 8.
 * @servers:      NULL-terminated running language servers (borrowed), asked first for
 *                outlines of files of their language; NULL: ctags only.
 */
typedef struct heal_context_opts {
        const char *tree;
        size_t token_budget;
        unsigned lines_around;
        heal_lsp *const *servers;
} heal_context_opts;

/**
 * heal_context_build() - Source windows for @a's error diagnostics (at most 8): the function
 * around each place (or lines around it), the functions of up to 3 stack frames in the tree,
 * the failing test's function (found in the *_test.go files next to the place, or at the
 * tree's top), and with a language server the definitions of names the first errors mention
 * (textDocument/definition of each identifier of the message found on the error's line);
 * overlapping or adjacent windows of a file merged; the lowest priorities dropped first to fit
 * @o->token_budget (the most needed one cut to lines around its place if it alone does not fit);
 * then the outlines of the first errors' files (from a matching language server of @o->servers,
 * else Universal Ctags run for at most 5 s; none when neither answers) if they fit. Files over 4
 * MiB, outside the tree (symlinks and ".." resolved beneath it) or unreadable are skipped.
 * @ret: filled on success; release with heal_context_release().
 * Return: 0 (possibly with no window); -EINVAL for a NULL argument or tree; -ENOMEM.
 */
int heal_context_build(heal_context *ret, const heal_analysis *a, const heal_context_opts *o,
                       heal_error *err);

/** heal_context_release() - Free what @c owns and zero it; accepts a zeroed context. */
void heal_context_release(heal_context *c);

/**
 * struct heal_prompt - A conversation's opening; strings owned, release with
 * heal_prompt_release().
 * @system: the edit format and the rules.
 * @user:   the command, the failure, the diagnostics and the source windows.
 * @tokens: estimate of both.
 */
typedef struct heal_prompt {
        char *system;
        char *user;
        size_t tokens;
} heal_prompt;

/**
 * struct heal_prompt_opts - What the prompt says besides the analysis.
 * @command:       the command line that failed; required.
 * @exit_code:     its exit status.
 * @protected:     NULL-terminated path patterns the model may not edit (fnmatch(3), matched
 *                 against the relative path and each of its directories), or NULL for the
 *                 defaults of heal_apply_opts.
 * @failure_lines: lines of the output's tail to quote; 0: 60.
 * @tree:          the tree's absolute path, or NULL: "TREE/" is removed from the quoted output
 *                 so that the prompt is the same in every checkout.
 * @aliases:       NULL-terminated other paths of the tree (as in heal_analyze_opts), removed
 *                 the same way; or NULL.
 */
typedef struct heal_prompt_opts {
        const char *command;
        int exit_code;
        const char *tree;
        const char *const *aliases;
        const char *const *protected;
        unsigned failure_lines;
} heal_prompt_opts;

/**
 * heal_prompt_build() - The system prompt (search/replace blocks naming the file as the edit
 * format, unified diffs and whole files accepted; fix the root cause, protected files are
 * read-only, no recover()/skip/exit/build tags to hide a failure, minimal diff) and the user
 * message (command, exit status, the output's last lines, the diagnostics with their stacks,
 * the windows with line numbers). Same input, same bytes.
 * @ctx: may be NULL (no source shown).
 * Return: 0; -EINVAL for a NULL @ret, @a or @o->command; -ENOMEM.
 */
int heal_prompt_build(heal_prompt *ret, const heal_analysis *a, const heal_context *ctx,
                      const heal_prompt_opts *o, heal_error *err);

/** heal_prompt_release() - Free what @p owns and zero it; accepts a zeroed prompt. */
void heal_prompt_release(heal_prompt *p);

/** heal_token_estimate() - Tokens in @len bytes of text: (len + 3) / 4. */
size_t heal_token_estimate(size_t len);

#endif
