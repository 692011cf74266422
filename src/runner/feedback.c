/* SPDX-License-Identifier: MIT */
/*
 * What a model is told about a run of its program: the verdict in words, then the part of the
 * output that explains it (the compiler's messages, the end of stderr and stdout, the stacks a
 * timed-out program printed on SIGQUIT, the processes heal saw at the timeout). Output is cut
 * to its last lines: the end of a log is where the failure is, and a model's context is small.
 */
#include <stdio.h>
#include <string.h>

#include "core/util.h"
#include "runner/runner-internal.h"

const char *text_tail(const char *s, size_t len, size_t max, size_t *ret_len)
{
        const char *start;

        if (!s) {
                *ret_len = 0;
                return "";
        }
        if (len <= max) {
                *ret_len = len;
                return s;
        }
        start = s + len - max;
        for (const char *p = start; p < s + len; p++)
                if (*p == '\n') { /* start on a whole line when one begins near */
                        if (p + 1 - start < (ptrdiff_t)(max / 4))
                                start = p + 1;
                        break;
                }
        *ret_len = (size_t)(s + len - start);
        return start;
}

/* The longest run of backticks in @s. */
static size_t backtick_run(const char *s, size_t len)
{
        size_t best = 0, run = 0;

        for (size_t i = 0; i < len; i++) {
                run = s[i] == '`' ? run + 1 : 0;
                best = MAX(best, run);
        }
        return best;
}

/* The tail of @s in a fence longer than any backtick run in it (CommonMark: it cannot close
 * early), after @title, when @s holds anything; a NUL becomes U+FFFD, since the turn is a C
 * string (and the model's JSON holds none either). */
static void quote_tail(heal_buf *b, const char *title, const char *s, size_t len, size_t max,
                       bool cut_before)
{
        char fence[64];
        size_t n, k;
        const char *t;

        while (len && (s[len - 1] == '\n' || s[len - 1] == ' '))
                len--;
        if (!len)
                return;
        t = text_tail(s, len, max, &n);
        k = MIN(MAX(backtick_run(t, n) + 1, (size_t)3), sizeof(fence) - 1);
        memset(fence, '`', k);
        fence[k] = '\0';
        heal_buf_printf(b, "\n%s%s:\n%s\n", title, cut_before || n < len ? " (its last lines)" : "",
                        fence);
        for (const char *p = t, *end = t + n; p < end;) {
                const char *nul = memchr(p, '\0', (size_t)(end - p));

                heal_buf_append(b, p, (size_t)((nul ? nul : end) - p));
                if (!nul)
                        break;
                heal_buf_puts(b, "\xef\xbf\xbd");
                p = nul + 1;
        }
        heal_buf_printf(b, "\n%s\n", fence);
}

static void quote_procs(heal_buf *b, const heal_sandbox_result *r)
{
        if (!r->n_procs)
                return;
        heal_buf_puts(b, "\nThe processes when the time was up (pid, name, state, waiting in, "
                         "system call):\n");
        for (size_t i = 0; i < r->n_procs && i < 8; i++)
                heal_buf_printf(b, "- %d %s %c %s %s\n", r->procs[i].pid, r->procs[i].comm,
                                r->procs[i].state ? r->procs[i].state : '?',
                                *r->procs[i].wchan ? r->procs[i].wchan : "-",
                                *r->procs[i].syscall ? r->procs[i].syscall : "-");
}

void feedback_describe(heal_buf *b, const heal_runner_result *res, size_t max)
{
        const heal_sandbox_result *c = &res->compile.res, *r = &res->run.res;

        switch (res->status) {
        case HEAL_EXEC_COMPILE_ERROR:
                heal_buf_printf(b, "The program did not compile: %s.\n", res->message);
                quote_tail(b, "The compiler's output", c->err, c->err_len, max, c->err_truncated);
                quote_tail(b, "Its standard output", c->out, c->out_len, max / 4, c->out_truncated);
                return;
        case HEAL_EXEC_TIMEOUT:
                heal_buf_printf(b, "The program did not finish in time and was stopped: %s.\n",
                                res->message);
                break;
        case HEAL_EXEC_RUNTIME_ERROR:
                heal_buf_printf(b, "The program failed: %s.\n", res->message);
                break;
        default:
                heal_buf_printf(b, "The program was stopped: %s.\n", res->message);
                break;
        }
        if (!res->run.ran)
                return;
        quote_tail(b, "Its standard error", r->err, r->err_len, max, r->err_truncated);
        quote_tail(b, "Its standard output", r->out, r->out_len, max / 2, r->out_truncated);
        if (res->status == HEAL_EXEC_TIMEOUT)
                quote_procs(b, r);
}
