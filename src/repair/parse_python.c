/* SPDX-License-Identifier: MIT */
/*
 * Python's tracebacks: "Traceback (most recent call last):", then for each frame
 * '  File "path", line N, in func' and usually the source line, then the exception line
 * ("ValueError: msg", unindented). Frames print outermost first: heal stores innermost first.
 * A SyntaxError has no "in func" and is a compile error.
 * See: https://docs.python.org/3/library/traceback.html
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "repair/repair-internal.h"

struct pyframe {
        const char *file, *fn;
        size_t file_len, fn_len;
        unsigned line;
};

static bool py_frame(const char *s, struct pyframe *f)
{
        const char *q, *in;

        if (!starts_with(s, "  File \""))
                return false;
        f->file = s + 8;
        q = strchr(f->file, '"');
        if (!q || !starts_with(q, "\", line "))
                return false;
        f->file_len = (size_t)(q - f->file);
        f->line = (unsigned)strtoul(q + 8, NULL, 10);
        in = strstr(q, ", in ");
        f->fn = in ? in + 5 : "";
        f->fn_len = strlen(f->fn);
        return true;
}

static size_t traceback(struct actx *x, size_t i)
{
        const struct lines *L = x->lines;
        struct pyframe frames[FRAMES_MAX];
        size_t n = 0;
        heal_diag *d;

        for (i++; i < L->n; i++) {
                struct pyframe f;

                if (py_frame(L->v[i], &f)) {
                        if (n < FRAMES_MAX)
                                frames[n++] = f;
                        else
                                memmove(frames, frames + 1, sizeof(frames[0]) * --n),
                                        frames[n++] = f;
                } else if (L->v[i][0] != ' ' && L->v[i][0] != '\0') {
                        break; /* the exception line */
                }
        }
        if (i >= L->n)
                return i;
        d = diag_add(x,
                     starts_with(L->v[i], "SyntaxError") || starts_with(L->v[i], "IndentationError")
                             ? HEAL_DIAG_COMPILE_ERROR
                             : HEAL_DIAG_PANIC,
                     HEAL_SEVERITY_ERROR, L->v[i]);
        while (d && n > 0) {
                struct pyframe *f = &frames[--n];

                diag_add_frame(x, d, f->fn, f->fn_len, f->file, f->file_len, f->line);
        }
        diag_locate_from_frames(x, d);
        return i + 1;
}

/* A syntax error in the main script has no "Traceback" header: '  File "x.py", line 2', the
 * line, a caret, then "SyntaxError: ..." (IndentationError, TabError). */
static size_t syntax_error(struct actx *x, size_t i)
{
        const struct lines *L = x->lines;
        struct pyframe f;
        heal_diag *d;
        char file[1024];

        if (!py_frame(L->v[i], &f))
                return i + 1;
        for (size_t j = i + 1; j < L->n && j <= i + 4; j++) {
                const char *s = L->v[j];

                if (!starts_with(s, "SyntaxError") && !starts_with(s, "IndentationError") &&
                    !starts_with(s, "TabError"))
                        continue;
                d = diag_add(x, HEAL_DIAG_COMPILE_ERROR, HEAL_SEVERITY_ERROR, s);
                snprintf(file, sizeof(file), "%.*s", (int)f.file_len, f.file);
                diag_set_loc(x, d, file, f.line, 0);
                return j + 1;
        }
        return i + 1;
}

void parse_python(struct actx *x)
{
        const struct lines *L = x->lines;

        for (size_t i = 0; i < L->n && !x->error;) {
                if (strcmp(L->v[i], "Traceback (most recent call last):") == 0)
                        i = traceback(x, i);
                else if (starts_with(L->v[i], "  File \""))
                        i = syntax_error(x, i);
                else
                        i++;
        }
}
