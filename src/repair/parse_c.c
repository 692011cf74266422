/* SPDX-License-Identifier: MIT */
/*
 * C's failures: gcc and clang diagnostics ("file:line:col: error: msg [-Wflag]", notes attached
 * to the diagnostic before them, the enclosing function from "file: In function 'f':"), linker
 * errors ("/usr/bin/ld: obj.o: in function `f':" then "file.c:(.text+0x24): undefined reference
 * to `sqrt'"), AddressSanitizer and UBSan reports, glibc assertion failures, and a signal with no
 * output at all (exit status 128+N).
 * See: https://gcc.gnu.org/onlinedocs/gcc/Diagnostic-Message-Formatting-Options.html,
 *      https://github.com/google/sanitizers/wiki/AddressSanitizer (report format), assert(3).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "repair/repair-internal.h"

static const char *const c_ext[] = { ".c", ".h", ".cc", ".cpp", ".cxx", ".hpp", NULL };

/* "main.c: In function 'main':" (gcc uses U+2018/U+2019 quotes in UTF-8 locales). */
static bool in_function(const char *s, char *fn, size_t len)
{
        const char *p = strstr(s, ": In function ");
        const char *start, *end;

        if (!p)
                return false;
        start = p + 14;
        if (starts_with(start, "\xe2\x80\x98"))
                start += 3;
        else if (*start == '\'' || *start == '`')
                start++;
        end = strstr(start, "\xe2\x80\x99");
        if (!end)
                end = strpbrk(start, "'");
        if (!end)
                return false;
        snprintf(fn, len, "%.*s", (int)(end - start), start);
        return true;
}

static void strip_flag(char *msg)
{
        size_t n = strlen(msg);

        if (n > 4 && msg[n - 1] == ']') { /* " [-Wimplicit-function-declaration]" */
                char *open = strrchr(msg, '[');

                if (open && open > msg && open[-1] == ' ' && open[1] == '-')
                        open[-1] = '\0';
        }
}

static heal_diag *compiler(struct actx *x, const struct loc *l, const char *fn, heal_diag *last)
{
        static const struct {
                const char *tag;
                heal_diag_severity sev;
        } tags[] = {
                { "fatal error: ", HEAL_SEVERITY_ERROR },   { "error: ", HEAL_SEVERITY_ERROR },
                { "warning: ", HEAL_SEVERITY_WARNING },     { "note: ", HEAL_SEVERITY_NOTE },
                { "runtime error: ", HEAL_SEVERITY_ERROR }, /* UBSan */
        };
        char file[1024], msg[LINE_MAX_PARSED];
        heal_diag *d;

        for (size_t k = 0; k < ELEMENTSOF(tags); k++) {
                if (!starts_with(l->rest, tags[k].tag))
                        continue;
                snprintf(msg, sizeof(msg), "%s", l->rest + strlen(tags[k].tag));
                strip_flag(msg);
                snprintf(file, sizeof(file), "%.*s", (int)l->file_len, l->file);
                if (tags[k].sev == HEAL_SEVERITY_NOTE && last) {
                        char note[LINE_MAX_PARSED + 64];

                        snprintf(note, sizeof(note), "%s:%u: %s", file, l->line, msg);
                        diag_add_note(x, last, note);
                        return last;
                }
                d = diag_add(x, k == 4 ? HEAL_DIAG_SANITIZER : HEAL_DIAG_COMPILE_ERROR, tags[k].sev,
                             msg);
                diag_set_loc(x, d, file, l->line, l->col);
                if (fn[0])
                        diag_set_function(x, d, fn, strlen(fn));
                return d;
        }
        return last;
}

/* The text of a fix-it, as clang and gcc escape it: \\ \" and \ooo (octal). */
static size_t unescape(char *out, size_t len, const char *in, const char **end)
{
        size_t o = 0;

        for (; *in && *in != '"' && o + 1 < len; in++) {
                if (*in != '\\' || !in[1]) {
                        out[o++] = *in;
                } else if (in[1] >= '0' && in[1] <= '7') {
                        unsigned v = 0;
                        int k = 0;

                        for (in++; k < 3 && *in >= '0' && *in <= '7'; k++, in++)
                                v = v * 8 + (unsigned)(*in - '0');
                        in--;
                        out[o++] = (char)v;
                } else {
                        out[o++] = *++in;
                }
        }
        out[o] = '\0';
        *end = in;
        return o;
}

/* fix-it:"main.c":{28:33-28:39}:"strcmp" after the diagnostic (or note) it belongs to. */
static void fixit(struct actx *x, heal_diag *d, const char *s, bool from_note)
{
        unsigned l1, c1, l2, c2;
        const char *q = strchr(s + 8, '"'), *brace, *end;
        char file[1024], text[LINE_MAX_PARSED];
        heal_fixit *v;
        bool in_tree;

        if (!d || d->n_fixits >= 16 || !q || !(brace = strstr(q, "\":{")) ||
            sscanf(brace + 3, "%u:%u-%u:%u", &l1, &c1, &l2, &c2) != 4 ||
            !(q = strstr(brace, "}:\"")))
                return;
        snprintf(file, sizeof(file), "%.*s", (int)(brace - (s + 8)), s + 8);
        unescape(text, sizeof(text), q + 3, &end);
        if (*end != '"')
                return; /* cut off: not an edit to trust */
        v = realloc(d->fixits, (d->n_fixits + 1) * sizeof(*v));
        if (!v) {
                x->error = -ENOMEM;
                return;
        }
        d->fixits = v;
        v[d->n_fixits] = (heal_fixit){
                .line = l1, .col = c1, .end_line = l2, .end_col = c2, .from_note = from_note
        };
        v[d->n_fixits].file = path_in_tree(x->opts, file, strlen(file), &in_tree);
        v[d->n_fixits].text = strdup(text);
        if (!v[d->n_fixits].file || !v[d->n_fixits].text) {
                free(v[d->n_fixits].file), free(v[d->n_fixits].text);
                x->error = -ENOMEM;
                return;
        }
        d->n_fixits++;
}

/* "    #1 0x555c811f3291 in context_open /path/main.c:16" (also ":16:5", or "(module+0x..)") */
static void asan_frame(struct actx *x, heal_diag *d, const char *s)
{
        const char *in = strstr(s, " in ");
        const char *fn, *sp, *file, *colon;
        unsigned line = 0;

        if (!in)
                return;
        fn = in + 4;
        sp = strchr(fn, ' ');
        if (!sp) {
                diag_add_frame(x, d, fn, strlen(fn), NULL, 0, 0);
                return;
        }
        file = sp + 1;
        colon = strchr(file, ':');
        if (colon && colon[1] >= '0' && colon[1] <= '9')
                line = (unsigned)strtoul(colon + 1, NULL, 10);
        else
                colon = NULL;
        diag_add_frame(x, d, fn, (size_t)(sp - fn), colon ? file : NULL,
                       colon ? (size_t)(colon - file) : 0, line);
}

/* "==14857==ERROR: AddressSanitizer: heap-buffer-overflow on address ..." to its blank line
 * after the first stack; the allocation stack becomes a note. */
static size_t sanitizer(struct actx *x, size_t i)
{
        const struct lines *L = x->lines;
        const char *e = strstr(L->v[i], "ERROR: ") + 7;
        const char *on = strstr(e, " on ");
        char msg[256];
        heal_diag *d;
        int stacks = 0;

        /* "AddressSanitizer: heap-buffer-overflow", without "on address 0x..." */
        snprintf(msg, sizeof(msg), "%.*s", (int)MIN(on ? (size_t)(on - e) : strlen(e), 200), e);
        d = diag_add(x, HEAL_DIAG_SANITIZER, HEAL_SEVERITY_ERROR, msg);
        for (i++; d && i < L->n && !starts_with(L->v[i], "SUMMARY: "); i++) {
                const char *t = L->v[i] + strspn(L->v[i], " ");

                if (t[0] == '#' && t[1] >= '0' && t[1] <= '9') {
                        if (stacks == 0)
                                asan_frame(x, d, t);
                } else if (t[0] == '\0' && d->n_frames) {
                        stacks++;
                } else if (stacks == 0 && d->n_frames == 0 && t[0]) {
                        diag_add_note(x, d, t); /* "WRITE of size 9 at ... thread T0" */
                } else if (stacks > 0 && (strstr(t, "allocated by") || strstr(t, "freed by"))) {
                        diag_add_note(x, d, t);
                }
        }
        diag_locate_from_frames(x, d);
        return i;
}

/* "a.out: main.c:10: main: Assertion `x > 0' failed." */
static bool assertion(struct actx *x, const char *s)
{
        const char *a = strstr(s, ": Assertion `");
        const char *p = strchr(s, ' ');
        struct loc l;
        char file[1024];
        heal_diag *d;

        if (!a || !p || !parse_loc(p + 1, &l, c_ext))
                return false;
        d = diag_add(x, HEAL_DIAG_CRASH, HEAL_SEVERITY_ERROR, a + 2);
        snprintf(file, sizeof(file), "%.*s", (int)l.file_len, l.file);
        diag_set_loc(x, d, file, l.line, 0);
        diag_set_function(x, d, l.rest, (size_t)(a - l.rest));
        return true;
}

/* "stats.c:(.text+0x24): undefined reference to `sqrt'" after "ld: obj.o: in function `f':" */
static void linker(struct actx *x, const char *s, const char *fn)
{
        const char *p = strstr(s, ":(.");
        const char *msg = p ? strstr(p, "): ") : NULL;
        char file[1024];
        heal_diag *d;

        if (!p || !msg)
                return;
        if (strstr(s, "ld: ") && strstr(s, "ld: ") < p) /* "/usr/bin/ld: link.c:(.text..." */
                s = strstr(s, "ld: ") + 4;
        d = diag_add(x, HEAL_DIAG_COMPILE_ERROR, HEAL_SEVERITY_ERROR, msg + 3);
        snprintf(file, sizeof(file), "%.*s", (int)(p - s), s);
        diag_set_loc(x, d, file, 0, 0);
        if (fn[0])
                diag_set_function(x, d, fn, strlen(fn));
}

static void ld_function(const char *s, char *fn, size_t len)
{
        const char *p = strstr(s, ": in function `");
        const char *end;

        if (p && (end = strchr(p + 15, '\'')))
                snprintf(fn, len, "%.*s", (int)(end - (p + 15)), p + 15);
}

void parse_c(struct actx *x)
{
        const struct lines *L = x->lines;
        char fn[256] = "", ld_fn[256] = "";
        heal_diag *last = NULL;
        bool link = false, note = false;

        for (size_t i = 0; i < L->n && !x->error; i++) {
                const char *s = L->v[i];
                struct loc l;

                if (in_function(s, fn, sizeof(fn)))
                        continue;
                if (starts_with(s, "fix-it:\"")) {
                        fixit(x, last, s, note);
                        continue;
                }
                if (strstr(s, "ERROR: ") && strstr(s, "Sanitizer: ")) {
                        i = sanitizer(x, i);
                        last = NULL;
                } else if (strstr(s, ": Assertion `") && assertion(x, s)) {
                        last = NULL;
                } else if (strstr(s, "ld: ") && strstr(s, ": in function `")) {
                        ld_function(s, ld_fn, sizeof(ld_fn));
                } else if (strstr(s, ":(.") && strstr(s, "): ")) {
                        linker(x, s, ld_fn);
                        link = true;
                } else if ((strstr(s, "ld: cannot find ") || strstr(s, "ld returned")) && !link) {
                        heal_diag *d = diag_add(x, HEAL_DIAG_COMPILE_ERROR, HEAL_SEVERITY_ERROR,
                                                strstr(s, ": ") ? strstr(s, ": ") + 2 : s);

                        (void)d;
                        link = true;
                } else if (s[0] != ' ' && parse_loc(s, &l, c_ext)) {
                        heal_diag *d = compiler(x, &l, fn, last);

                        note = d == last && d && starts_with(l.rest, "note: ");
                        last = d;
                }
        }
}

/* A signal with nothing else said: "Segmentation fault" from the shell, or only the status. */
void parse_c_signal(struct actx *x)
{
        int code = x->opts ? x->opts->exit_code : 0;
        char msg[96];

        /* A run stopped at a limit was killed by heal (SIGQUIT, then SIGKILL): the limit is
         * the failure, said by heal_analyze_result(), not the signal. */
        if (code <= 128 || code > 128 + 64 || x->a->n_diags > 0 || x->timeout_msg)
                return;
        /* the signal's name in words ("Segmentation fault", "Aborted"): SIGSEGV and SIGKILL
         * must not share a message template */
        snprintf(msg, sizeof(msg), "killed by signal %d: %s", code - 128, strsignal(code - 128));
        diag_add(x, HEAL_DIAG_CRASH, HEAL_SEVERITY_ERROR, msg);
}
