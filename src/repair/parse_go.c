/* SPDX-License-Identifier: MIT */
/*
 * Go's failures: compiler and vet diagnostics ("./file.go:LINE:COL: msg" under a "# pkg"
 * header), import cycles, panics and fatal errors with their goroutine dumps, deadlocks, test
 * timeouts, and race detector reports. A dump's frames come in pairs: the call
 * ("pkg.(*T).Method(args)" or "created by pkg.F") then "\tFILE:LINE +0xOFF".
 * See: go/src/runtime/traceback.go (the dump format), go/src/cmd/go/internal/test (headers),
 *      https://go.dev/doc/articles/race_detector (report format).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "repair/repair-internal.h"

static const char *const go_ext[] = { ".go", NULL };

/* The function named on a dump's call line: the text before the argument list. */
static size_t call_name(const char *s)
{
        size_t n = strlen(s);

        if (starts_with(s, "created by "))
                return strcspn(s + 11, " ") + 11;
        if (n > 0 && s[n - 1] == ')') {
                const char *open = strrchr(s, '(');

                if (open && open > s)
                        return (size_t)(open - s);
        }
        return n;
}

/* "\t/path/file.go:21 +0x207 fp=..." -> file, line. */
static bool frame_loc(const char *s, const char **file, size_t *file_len, unsigned *line)
{
        const char *colon;

        if (s[0] != '\t')
                return false;
        s++;
        colon = strrchr(s, ':');
        while (colon && !(colon[1] >= '0' && colon[1] <= '9'))
                colon = colon > s ? memrchr(s, ':', (size_t)(colon - s)) : NULL;
        if (!colon)
                return false;
        *file = s;
        *file_len = (size_t)(colon - s);
        *line = (unsigned)strtoul(colon + 1, NULL, 10);
        return true;
}

static bool goroutine_header(const char *s)
{
        return (starts_with(s, "goroutine ") && strchr(s, '[') && s[strlen(s) - 1] == ':') ||
               strcmp(s, "runtime stack:") == 0;
}

/* Read the dump's blocks from line @i; the first block with a frame in the tree gives @d its
 * frames (else the first block), the others with one become notes. Returns the next line. */
static size_t read_dump(struct actx *x, size_t i, heal_diag *d)
{
        const struct lines *L = x->lines;
        bool chosen = false;

        while (i < L->n && (goroutine_header(L->v[i]) || L->v[i][0] == '\0')) {
                const char *head = L->v[i];
                heal_diag block = { 0 };
                bool in_tree = false;

                if (head[0] == '\0') {
                        i++;
                        continue;
                }
                for (i++; i < L->n && L->v[i][0] != '\0' && !goroutine_header(L->v[i]); i++) {
                        const char *file;
                        size_t file_len;
                        unsigned line;
                        heal_frame *f;

                        if (i + 1 < L->n && frame_loc(L->v[i + 1], &file, &file_len, &line)) {
                                f = diag_add_frame(x, &block, L->v[i], call_name(L->v[i]), file,
                                                   file_len, line);
                                in_tree |= f && f->in_tree;
                                i++;
                        } else if (starts_with(L->v[i], "\tgoroutine running on other thread")) {
                                char note[256];

                                snprintf(note, sizeof(note),
                                         "%.*s: its stack is unavailable (it runs on another "
                                         "thread; GOTRACEBACK=crash makes Go print it)",
                                         (int)strcspn(head, ":"), head);
                                diag_add_note(x, d, note);
                        } else if (L->v[i][0] != '\t' && !starts_with(L->v[i], "...")) {
                                break; /* the dump is over: "exit status 2", "FAIL ..." */
                        }
                }
                if (!chosen && (in_tree || !d->n_frames)) {
                        for (size_t k = 0; k < d->n_frames; k++)
                                free(d->frames[k].function), free(d->frames[k].file);
                        free(d->frames);
                        d->frames = block.frames;
                        d->n_frames = block.n_frames;
                        chosen = in_tree;
                        block.frames = NULL, block.n_frames = 0;
                } else if (in_tree) {
                        const heal_frame *f = diag_first_in_tree(&block);
                        char note[512];

                        snprintf(note, sizeof(note), "%.*s at %s:%u in %s", (int)strcspn(head, ":"),
                                 head, f->file, f->line, f->function);
                        diag_add_note(x, d, note);
                }
                for (size_t k = 0; k < block.n_frames; k++)
                        free(block.frames[k].function), free(block.frames[k].file);
                free(block.frames);
                if (i < L->n && L->v[i][0] != '\0' && !goroutine_header(L->v[i]))
                        break;
        }
        diag_locate_from_frames(x, d);
        return i;
}

/* "panic: MSG [recovered]" (and "\tpanic: MSG" repeated), "fatal error: MSG". */
static size_t runtime_failure(struct actx *x, size_t i, const char *test)
{
        const struct lines *L = x->lines;
        const char *s = L->v[i];
        bool panic = starts_with(s, "panic: ");
        const char *msg = s + (panic ? 7 : 13);
        char buf[LINE_MAX_PARSED];
        heal_diag_kind kind = HEAL_DIAG_PANIC;
        heal_diag *d;
        size_t j;

        snprintf(buf, sizeof(buf), "%s", msg);
        if (strlen(buf) > 12 && strcmp(buf + strlen(buf) - 12, " [recovered]") == 0)
                buf[strlen(buf) - 12] = '\0';
        if (panic && starts_with(buf, "test timed out after"))
                kind = HEAL_DIAG_TIMEOUT;
        else if (!panic && strstr(buf, "all goroutines are asleep"))
                kind = HEAL_DIAG_DEADLOCK;
        else if (!panic)
                kind = HEAL_DIAG_FATAL_ERROR;
        d = diag_add(x, kind, HEAL_SEVERITY_ERROR, buf);
        if (!d)
                return i + 1;
        diag_set_test(x, d, kind == HEAL_DIAG_TIMEOUT ? NULL : test);
        /* Lines up to the dump: the repeated panic line, "[signal SIGSEGV ...]", "runtime: ..." */
        for (j = i + 1; j < L->n && j < i + 8 && !goroutine_header(L->v[j]); j++)
                if (starts_with(L->v[j], "[signal ") || starts_with(L->v[j], "runtime: "))
                        diag_add_note(x, d, L->v[j]);
        if (j < L->n && goroutine_header(L->v[j]))
                return read_dump(x, j, d);
        return i + 1;
}

/* "SIGQUIT: quit" then "PC=... m=0 sigcode=0", then the dump: the sandbox stopped a run that
 * hit its wall-time limit and Go printed where every goroutine was. */
static size_t sigquit(struct actx *x, size_t i)
{
        const struct lines *L = x->lines;
        heal_diag *d = NULL, scratch = { 0 };
        size_t j;

        /* GOTRACEBACK=crash: every thread prints its own "SIGQUIT: quit" section; one
         * diagnostic, with the first section that shows code of the tree. */
        for (size_t k = 0; k < x->a->n_diags && !d; k++)
                if (x->a->diags[k].kind == HEAL_DIAG_TIMEOUT)
                        d = &x->a->diags[k];
        if (d && diag_first_in_tree(d))
                d = &scratch;
        else if (!d)
                d = diag_add(x, HEAL_DIAG_TIMEOUT, HEAL_SEVERITY_ERROR,
                             x->timeout_msg ? x->timeout_msg : "stopped by SIGQUIT");
        for (j = i + 1; d && j < L->n && j < i + 8 && !goroutine_header(L->v[j]); j++)
                ;
        if (d && j < L->n && goroutine_header(L->v[j]))
                i = read_dump(x, j, d) - 1;
        for (size_t k = 0; k < scratch.n_frames; k++)
                free(scratch.frames[k].function), free(scratch.frames[k].file);
        free(scratch.frames);
        for (size_t k = 0; k < scratch.n_notes; k++)
                free(scratch.notes[k]);
        free(scratch.notes);
        free(scratch.file);
        free(scratch.function);
        return i + 1;
}

/* "WARNING: DATA RACE" ... "==================" */
static size_t race(struct actx *x, size_t i, const char *test)
{
        const struct lines *L = x->lines;
        heal_diag *d = diag_add(x, HEAL_DIAG_DATA_RACE, HEAL_SEVERITY_ERROR, "data race");
        char msg[256] = "data race:";
        int accesses = 0;

        if (!d)
                return i + 1;
        diag_set_test(x, d, test);
        for (i++; i < L->n && !starts_with(L->v[i], "=================="); i++) {
                const char *s = L->v[i];
                const char *at = strstr(s, " at 0x");

                /* "Read at 0x... by goroutine 12:", "Previous write at ...", "Goroutine 12
                 * (running) created at:" */
                if (at && s[0] != ' ' && accesses < 2 && !strstr(s, "created at")) {
                        snprintf(msg + strlen(msg), sizeof(msg) - strlen(msg), "%s %.*s",
                                 accesses ? " /" : "", (int)(at - s), s);
                        accesses++;
                        continue;
                }
                if (s[0] == ' ' && s[1] == ' ' && s[2] != ' ' && i + 1 < L->n &&
                    starts_with(L->v[i + 1], "      ")) {
                        const char *loc = L->v[i + 1] + 6;
                        const char *colon = strrchr(loc, ':');
                        size_t fn_len = call_name(s + 2);

                        if (colon && accesses == 1)
                                diag_add_frame(x, d, s + 2, fn_len, loc, (size_t)(colon - loc),
                                               (unsigned)strtoul(colon + 1, NULL, 10));
                        else if (colon && accesses == 2 && d->n_notes == 0) {
                                char note[512];
                                bool in;
                                char *rel = path_in_tree(x->opts, loc, (size_t)(colon - loc), &in);

                                snprintf(note, sizeof(note), "other access: %.*s at %s:%lu",
                                         (int)fn_len, s + 2, rel ? rel : "?",
                                         strtoul(colon + 1, NULL, 10));
                                free(rel);
                                diag_add_note(x, d, note);
                        }
                        i++;
                }
        }
        free(d->message);
        d->message = xstrndup(x, msg, strlen(msg));
        diag_locate_from_frames(x, d);
        return i + 1;
}

/* "package example\n\timports a\n\timports b: import cycle not allowed" */
static size_t import_cycle(struct actx *x, size_t i)
{
        const struct lines *L = x->lines;
        size_t j = i + 1;
        heal_diag *d;

        while (j < L->n && starts_with(L->v[j], "\timports "))
                if (strstr(L->v[j++], "import cycle not allowed"))
                        break;
        if (j == i + 1 || !strstr(L->v[j - 1], "import cycle not allowed"))
                return i + 1;
        for (size_t k = 0; k < x->a->n_diags; k++) /* go vet and go run print it once each */
                if (x->a->diags[k].n_notes == j - i &&
                    strcmp(x->a->diags[k].message, "import cycle not allowed") == 0 &&
                    strcmp(x->a->diags[k].notes[j - i - 1], L->v[j - 1] + 1) == 0)
                        return j;
        d = diag_add(x, HEAL_DIAG_COMPILE_ERROR, HEAL_SEVERITY_ERROR, "import cycle not allowed");
        for (size_t k = i; d && k < j; k++)
                diag_add_note(x, d, L->v[k] + (L->v[k][0] == '\t'));
        return j;
}

/* The type checker's messages: a build error whichever header announced it ("# pkg" without
 * "[pkg.test]" is also how go test shows a package without tests that does not build). */
static bool type_error(const char *msg)
{
        static const char *const marks[] = {
                "undefined: ",
                "undeclared name",
                "declared but not used",
                "declared and not used",
                "imported and not used",
                "cannot use ",
                "mismatched types",
                "missing return",
                "syntax error",
                "invalid operation",
                "too many arguments",
                "not enough arguments",
                "redeclared",
                "cannot convert",
                "non-name",
                "assignment mismatch",
                "has no field or method",
                "is not a type",
                "invalid map key",
        };

        for (size_t i = 0; i < ELEMENTSOF(marks); i++)
                if (strstr(msg, marks[i]))
                        return true;
        return false;
}

/* A "# pkg" header: under go test without "[pkg.test]" (or under go vet) it announces vet. */
static bool vet_header(const char *s, const char *command)
{
        bool test = command && strstr(command, "go test");
        bool vet = command && strstr(command, "go vet");

        return vet || (test && !strchr(s, '['));
}

static bool duplicate(const heal_analysis *a, const struct loc *l, const char *msg)
{
        for (size_t k = 0; k < a->n_diags; k++) {
                const heal_diag *d = &a->diags[k];

                if (d->line == l->line && d->column == l->col && strcmp(d->message, msg) == 0)
                        return true;
        }
        return false;
}

static void compiler_line(struct actx *x, const struct loc *l, bool vet)
{
        char file[1024], fn[256], code[LINE_MAX_PARSED];
        heal_diag *d;

        if (strcmp(l->rest, "too many errors") == 0 || duplicate(x->a, l, l->rest))
                return;
        d = diag_add(x, vet ? HEAL_DIAG_VET : HEAL_DIAG_COMPILE_ERROR, HEAL_SEVERITY_ERROR,
                     l->rest);
        snprintf(file, sizeof(file), "%.*s", (int)l->file_len, l->file);
        diag_set_loc(x, d, file, l->line, l->col);
        if (d && d->file &&
            source_function(x->opts, d->file, d->line, fn, sizeof(fn), code, sizeof(code)))
                diag_set_function(x, d, fn, strlen(fn));
}

void parse_go(struct actx *x)
{
        const struct lines *L = x->lines;
        const char *command = x->opts ? x->opts->command : NULL;
        char test[256] = "";
        bool vet = command && strstr(command, "go vet");

        for (size_t i = 0; i < L->n && !x->error;) {
                const char *s = L->v[i];
                struct loc l;

                if (starts_with(s, "--- FAIL: "))
                        snprintf(test, sizeof(test), "%.*s", (int)strcspn(s + 10, " "), s + 10);
                else if (starts_with(s, "FAIL\t") || starts_with(s, "ok  \t"))
                        test[0] = '\0'; /* the package's end: its tests' names end too */
                if (starts_with(s, "# ")) {
                        vet = vet_header(s, command);
                } else if (starts_with(s, "panic: ") || starts_with(s, "fatal error: ")) {
                        i = runtime_failure(x, i, test[0] ? test : NULL);
                        continue;
                } else if (starts_with(s, "SIGQUIT: quit")) {
                        i = sigquit(x, i);
                        continue;
                } else if (strcmp(s, "WARNING: DATA RACE") == 0) {
                        i = race(x, i, test[0] ? test : NULL);
                        continue;
                } else if (starts_with(s, "package ") && i + 1 < L->n &&
                           starts_with(L->v[i + 1], "\timports ")) {
                        i = import_cycle(x, i);
                        continue;
                } else if (s[0] != ' ' && s[0] != '\t' && parse_loc(s, &l, go_ext) &&
                           !strstr(l.rest, "+0x")) {
                        compiler_line(x, &l, vet && !type_error(l.rest));
                } else if (starts_with(s, "vet: ") && parse_loc(s + 5, &l, go_ext)) {
                        compiler_line(x, &l, !type_error(l.rest)); /* go vet's type check */
                }
                i++;
        }
}
