/* SPDX-License-Identifier: MIT */
/*
 * heal_analyze(): the output split into lines once, every parser run over them (each is linear),
 * a fallback "unknown" diagnostic when nothing explains a failure, the output's tail, and both
 * fingerprints. heal_analyze_result() adds what a timed-out sandbox run leaves: the limit, and
 * the stacks Go printed on SIGQUIT or the process snapshot.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heal/buf.h"

#include "core/util.h"
#include "repair/repair-internal.h"

static bool has_error(const heal_analysis *a)
{
        for (size_t i = 0; i < a->n_diags; i++)
                if (a->diags[i].severity == HEAL_SEVERITY_ERROR)
                        return true;
        return false;
}

/* The nearest definition above the place, for diagnostics no parser could give one. */
static void functions_from_source(struct actx *x)
{
        char fn[256], code[LINE_MAX_PARSED];

        for (size_t i = 0; i < x->a->n_diags && !x->error; i++) {
                heal_diag *d = &x->a->diags[i];

                if (!d->function && d->file && d->line &&
                    source_function(x->opts, d->file, d->line, fn, sizeof(fn), code, sizeof(code)))
                        diag_set_function(x, d, fn, strlen(fn));
        }
}

static bool has_kind(const heal_analysis *a, heal_diag_kind kind)
{
        for (size_t i = 0; i < a->n_diags; i++)
                if (a->diags[i].kind == kind)
                        return true;
        return false;
}

/* The last nonblank line, for the "unknown" diagnostic. */
static void unknown(struct actx *x)
{
        const struct lines *L = x->lines;
        const char *last = NULL;
        char msg[256];

        for (size_t i = L->n; i > 0 && !last; i--) {
                const char *t = L->v[i - 1] + strspn(L->v[i - 1], " \t");

                /* go test's summary says nothing of the failure: "FAIL", "FAIL\tpkg 0.1s" */
                if (*t && strcmp(t, "FAIL") != 0 && !starts_with(t, "FAIL\t") &&
                    !starts_with(t, "ok  \t") && strcmp(t, "PASS") != 0)
                        last = t;
        }
        if (last)
                snprintf(msg, sizeof(msg), "%s", last);
        else
                snprintf(msg, sizeof(msg), "exited with status %d and printed nothing",
                         x->opts->exit_code);
        diag_add(x, HEAL_DIAG_UNKNOWN, HEAL_SEVERITY_ERROR, msg);
}

static char *tail_of(const char *text, size_t len)
{
        size_t start = len > TAIL_BYTES ? len - TAIL_BYTES : 0;

        while (start > 0 && start < len && text[start - 1] != '\n') /* start on a line */
                start++;
        char *tail = malloc(len - start + 1); /* @text need not be NUL-terminated */
        size_t o = 0;

        for (size_t i = start; tail && i < len; i++) /* NULs would end the string */
                if (text[i])
                        tail[o++] = text[i];
        if (tail)
                tail[o] = '\0';
        return tail;
}

static int analyze(heal_analysis *ret, const char *output, size_t len, const heal_analyze_opts *o,
                   const char *timeout_msg, heal_error *err)
{
        heal_analysis a = { 0 };
        struct lines L = { 0 };
        struct actx x = { .lines = &L, .opts = o, .a = &a, .timeout_msg = timeout_msg };
        char *events = NULL;
        size_t n_events = 0;
        int r;

        parse_go_json(&x, output, len, &events, &n_events);
        if (events)
                output = events, len = n_events;
        r = x.error ? x.error : lines_split(&L, output, len);
        if (r == 0) {
                parse_go(&x);
                parse_go_test(&x);
                parse_c(&x);
                parse_python(&x);
                parse_c_signal(&x);
                functions_from_source(&x);
                if (timeout_msg && starts_with(timeout_msg, "stopped by a limit"))
                        diag_add(&x, HEAL_DIAG_CRASH, HEAL_SEVERITY_ERROR, timeout_msg);
                else if (timeout_msg && !has_kind(&a, HEAL_DIAG_TIMEOUT))
                        diag_add(&x, HEAL_DIAG_TIMEOUT, HEAL_SEVERITY_ERROR, timeout_msg);
                if (!has_error(&a) && o->exit_code != 0)
                        unknown(&x);
                a.tail = tail_of(output, len);
                r = x.error ? x.error : !a.tail ? -ENOMEM : 0;
        }
        if (r == 0)
                r = fingerprint_exact(&a, output, len, o, err);
        if (r == 0)
                r = fingerprint_cause(&a, o, err);
        lines_release(&L);
        free(events);
        if (r < 0) {
                heal_analysis_release(&a);
                return r == -ENOMEM ? heal_error_set(err, r, "out of memory") : r;
        }
        *ret = a;
        return 0;
}

int heal_analyze(heal_analysis *ret, const char *output, size_t len, const heal_analyze_opts *opts,
                 heal_error *err)
{
        heal_analyze_opts def = { .exit_code = 1 };

        if (!ret || (!output && len))
                return heal_error_set(err, -EINVAL, "invalid argument");
        return analyze(ret, output ? output : "", len, opts ? opts : &def, NULL, err);
}

/* Each process of the snapshot, as a note of the timeout diagnostic. */
static void snapshot_notes(heal_analysis *a, const heal_sandbox_result *res)
{
        heal_diag *d = NULL;

        for (size_t i = 0; i < a->n_diags && !d; i++)
                if (a->diags[i].kind == HEAL_DIAG_TIMEOUT)
                        d = &a->diags[i];
        for (size_t i = 0; d && i < res->n_procs && d->n_notes < NOTES_MAX; i++) {
                const heal_sandbox_proc *p = &res->procs[i];
                char note[400], **v;

                if (p->pid == 1 && strcmp(p->comm, "heal-init") == 0)
                        continue; /* the sandbox's own init: not the command */
                v = realloc(d->notes, (d->n_notes + 1) * sizeof(*v));
                if (!v)
                        return;
                d->notes = v;
                snprintf(note, sizeof(note),
                         "process %d (%s): state %c, waiting in %s, syscall %s, %llu ms of CPU",
                         p->pid, p->comm, p->state, p->wchan, p->syscall,
                         (unsigned long long)p->cpu_ms);
                if ((v[d->n_notes] = strdup(note)))
                        d->n_notes++;
        }
}

int heal_analyze_result(heal_analysis *ret, const heal_sandbox_result *res,
                        const heal_analyze_opts *opts, heal_error *err)
{
        heal_analyze_opts o = opts ? *opts : (heal_analyze_opts){ 0 };
        heal_buf text = HEAL_BUF_INIT((size_t)-1);
        char msg[HEAL_ERROR_MSG_MAX + 64] = "";
        bool timeout;
        int r;

        if (!ret || !res)
                return heal_error_set(err, -EINVAL, "invalid argument");
        timeout = res->status == HEAL_STATUS_TIMEOUT;
        o.exit_code = res->exit_code;
        heal_buf_append(&text, res->out ? res->out : "", res->out_len);
        if (res->out_len && res->out[res->out_len - 1] != '\n')
                heal_buf_puts(&text, "\n");
        heal_buf_append(&text, res->err ? res->err : "", res->err_len);
        if (timeout)
                snprintf(msg, sizeof(msg), "timed out after %llu ms (wall-time limit)%s%s",
                         (unsigned long long)res->wall_ms, o.command ? ": " : "",
                         o.command ? o.command : "");
        else if (res->status == HEAL_STATUS_MEMORY_LIMIT || res->status == HEAL_STATUS_CPU_LIMIT ||
                 res->status == HEAL_STATUS_OUTPUT_LIMIT)
                snprintf(msg, sizeof(msg), "stopped by a limit: %s", res->message);
        if (!text.data && (res->out_len || res->err_len || !(text.data = strdup("")))) {
                heal_buf_release(&text);
                return heal_error_set(err, -ENOMEM, "out of memory");
        }
        r = analyze(ret, text.data ? text.data : "", text.len, &o, msg[0] ? msg : NULL, err);
        if (r == 0 && timeout)
                snapshot_notes(ret, res);
        heal_buf_release(&text);
        return r;
}
