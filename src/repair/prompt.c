/* SPDX-License-Identifier: MIT */
/*
 * The prompt: a system message with the edit format and the rules, a user message with the
 * failure and its context. Built from the analysis and the windows alone (no time, no random,
 * no path outside the tree), so the same failure gives the same bytes.
 * Edit format: search/replace blocks naming the file, the format aider measured as the most
 * reliable for whole-function edits (aider's docs, "Edit formats"); diffs and whole files are
 * accepted too, since models fall back to them.
 */
#include "heal/prompt.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heal/buf.h"

#include "core/util.h"
#include "repair/repair-internal.h"

static void system_prompt(heal_buf *b, const heal_prompt_opts *o)
{
        const char *const *prot = o->protected ? o->protected : repair_default_protected;

        heal_buf_puts(b,
                      "You repair a failing build or test. You are shown the command that "
                      "failed, the end of its output, the diagnostics heal found in it, and the "
                      "source around them with line numbers.\n\n"
                      "Reply with edits, one block per change, in this form:\n\n"
                      "path/relative/to/the/project.go\n"
                      "<<<<<<< SEARCH\n"
                      "lines copied exactly from the file, enough of them to match one place\n"
                      "=======\n"
                      "the lines that replace them\n"
                      ">>>>>>> REPLACE\n\n"
                      "An empty SEARCH part creates a new file. A unified diff, or a whole "
                      "file in a fenced code block preceded by its path, is accepted too. Do not "
                      "repeat line numbers in the edits. A short explanation before the edits "
                      "is welcome; nothing after them.\n\n"
                      "Rules:\n"
                      "- Fix the cause of the failure, not its symptom; the smallest change "
                      "that does it, in the style of the surrounding code.\n"
                      "- These paths are read-only: ");
        for (size_t i = 0; prot[i]; i++)
                heal_buf_printf(b, "%s%s", i ? ", " : "", prot[i]);
        heal_buf_puts(b,
                      ". The tests say what the code must do; change the code, not the tests.\n"
                      "- Do not hide the failure: no recover() around the failing call, no "
                      "t.Skip, no os.Exit(0), no build tags or deleted tests, no sleeps to dodge "
                      "a race, no catch-all exception handler, no weakened assertions.\n"
                      "- Keep everything else as it is: no reformatting, renaming or refactoring "
                      "the fix does not need.\n");
}

/* @text in a fence; with @tail only its last @max_lines lines. */
static void fence(heal_buf *b, const char *text, size_t max_lines, bool tail)
{
        size_t k = strlen(text), lines = 0;

        if (tail) {
                if (k && text[k - 1] == '\n')
                        k--;
                while (k > 0 && !(text[k - 1] == '\n' && ++lines >= max_lines))
                        k--;
                text += k;
        }
        heal_buf_puts(b, "```\n");
        heal_buf_puts(b, text);
        if (!*text || text[strlen(text) - 1] != '\n')
                heal_buf_puts(b, "\n");
        heal_buf_puts(b, "```\n");
}

static void diagnostic(heal_buf *b, size_t n, const heal_diag *d)
{
        size_t shown = 0;

        heal_buf_printf(b, "%zu. %s", n, heal_diag_kind_name(d->kind));
        if (d->file && d->line)
                heal_buf_printf(b, " at %s:%u", d->file, d->line);
        else if (d->file)
                heal_buf_printf(b, " in %s", d->file);
        if (d->function)
                heal_buf_printf(b, " in %s", d->function);
        if (d->test)
                heal_buf_printf(b, " (test %s)", d->test);
        heal_buf_printf(b, ": %s\n", d->message);
        for (size_t k = 0; k < d->n_frames && shown < 8; k++) {
                const heal_frame *f = &d->frames[k];

                if (!f->in_tree)
                        continue;
                heal_buf_printf(b, "   %s %s %s:%u\n", shown ? "  " : "at", f->function,
                                f->file ? f->file : "?", f->line);
                shown++;
        }
        for (size_t k = 0; k < d->n_notes && k < 6; k++)
                heal_buf_printf(b, "   note: %s\n", d->notes[k]);
        for (size_t k = 0; k < d->n_fixits && k < 6; k++)
                heal_buf_printf(
                        b,
                        "   the compiler suggests%s: at %s:%u:%u, replace up to %u:%u with \"%s\"\n",
                        d->fixits[k].from_note ? " (in a note)" : "", d->fixits[k].file,
                        d->fixits[k].line, d->fixits[k].col, d->fixits[k].end_line,
                        d->fixits[k].end_col, d->fixits[k].text);
}

static const char *language(const char *file)
{
        const char *dot = strrchr(file, '.');

        if (!dot)
                return "";
        if (strcmp(dot, ".go") == 0)
                return "go";
        if (strcmp(dot, ".c") == 0 || strcmp(dot, ".h") == 0)
                return "c";
        if (strcmp(dot, ".py") == 0)
                return "python";
        return "";
}

static void window(heal_buf *b, const heal_window *w)
{
        unsigned line = w->first;
        const char *p = w->text;

        heal_buf_printf(b, "%s lines %u-%u (%s):\n```%s\n", w->file, w->first, w->last, w->why,
                        language(w->file));
        while (*p) {
                size_t n = strcspn(p, "\n");

                heal_buf_printf(b, "%4u| %.*s\n", line++, (int)n, p);
                p += n + (p[n] == '\n');
        }
        heal_buf_puts(b, "```\n\n");
}

/* @text without "@tree/": paths relative, the same in every checkout. */
static char *relative(const char *text, const char *tree)
{
        heal_buf b = HEAL_BUF_INIT((size_t)-1);
        char prefix[4200];
        size_t n;
        char *out;

        if (!tree || !tree[0] ||
            snprintf(prefix, sizeof(prefix), "%s/", tree) >= (int)sizeof(prefix))
                return strdup(text);
        n = strlen(prefix);
        for (const char *p = text, *hit; *p; p = hit + n) {
                hit = strstr(p, prefix);
                if (!hit) {
                        heal_buf_puts(&b, p);
                        break;
                }
                heal_buf_append(&b, p, (size_t)(hit - p));
        }
        out = heal_buf_detach(&b, NULL);
        heal_buf_release(&b);
        return out;
}

static void user_prompt(heal_buf *b, const heal_analysis *a, const heal_context *ctx,
                        const heal_prompt_opts *o, const char *tail)
{
        size_t n = 0;

        heal_buf_printf(b, "Command: %s\nExit status: %d\n\n", o->command, o->exit_code);
        heal_buf_printf(b, "End of its output:\n");
        fence(b, tail, o->failure_lines ? o->failure_lines : 60, true);
        heal_buf_puts(b, "\nDiagnostics:\n");
        for (size_t i = 0; i < a->n_diags; i++)
                if (a->diags[i].severity == HEAL_SEVERITY_ERROR)
                        diagnostic(b, ++n, &a->diags[i]);
        if (n == 0)
                heal_buf_puts(b, "(none recognised; see the output)\n");
        if (a->n_tests_failed) {
                heal_buf_puts(b, "\nFailing tests:");
                for (size_t i = 0; i < a->n_tests_failed && i < 20; i++)
                        heal_buf_printf(b, " %s", a->tests_failed[i]);
                heal_buf_puts(b, "\n");
        }
        if (ctx && ctx->n_windows) {
                heal_buf_puts(b, "\nSource:\n\n");
                for (size_t i = 0; i < ctx->n_windows; i++)
                        window(b, &ctx->windows[i]);
        }
        for (size_t i = 0; ctx && i < ctx->n_outlines; i++)
                heal_buf_printf(
                        b, "Outline of %s (types and signatures, no bodies):\n```%s\n%s```\n\n",
                        ctx->outlines[i].file, language(ctx->outlines[i].file),
                        ctx->outlines[i].text);
        heal_buf_puts(b, "\nFix the failure.\n");
}

int heal_prompt_build(heal_prompt *ret, const heal_analysis *a, const heal_context *ctx,
                      const heal_prompt_opts *o, heal_error *err)
{
        heal_buf sys = HEAL_BUF_INIT(1u << 20), user = HEAL_BUF_INIT(16u << 20);
        heal_prompt p = { 0 };
        char *tail;

        if (!ret || !a || !o || !o->command)
                return heal_error_set(err, -EINVAL, "invalid argument");
        tail = relative(a->tail ? a->tail : "", o->tree);
        for (size_t i = 0; tail && o->aliases && o->aliases[i]; i++) {
                char *next = relative(tail, o->aliases[i]);

                free(tail);
                tail = next;
        }
        if (!tail)
                return heal_error_set(err, -ENOMEM, "out of memory");
        /* what changes from run to run (durations, addresses, goroutine ids, ports) would make
         * the same failure a new prompt: the tail is shown as the exact fingerprint sees it */
        {
                char *norm = NULL;

                if (heal_fingerprint_normalize(&norm, tail, strlen(tail), NULL, err) < 0) {
                        free(tail);
                        return -ENOMEM;
                }
                free(tail);
                tail = norm;
        }
        system_prompt(&sys, o);
        user_prompt(&user, a, ctx, o, tail);
        free(tail);
        p.system = heal_buf_detach(&sys, NULL);
        p.user = heal_buf_detach(&user, NULL);
        heal_buf_release(&sys);
        heal_buf_release(&user);
        if (!p.system || !p.user) {
                heal_prompt_release(&p);
                return heal_error_set(err, -ENOMEM, "out of memory");
        }
        p.tokens = heal_token_estimate(strlen(p.system)) + heal_token_estimate(strlen(p.user));
        *ret = p;
        return 0;
}

void heal_prompt_release(heal_prompt *p)
{
        if (!p)
                return;
        free(p->system);
        free(p->user);
        memset(p, 0, sizeof(*p));
}
