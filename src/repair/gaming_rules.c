/* SPDX-License-Identifier: MIT */
/*
 * The gaming rules that read a changed file's added and removed lines (docs/gaming.md): calls
 * found in code only (strings and comments blanked by the lexer), suppressions in comments,
 * build constraints on the raw line; the failing functions come from the baseline's error
 * diagnostics and in-tree stack frames, matched by file and by the function's last name
 * ("example.(*Tally).Submit.func1" is Submit).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heal/diff.h"

#include "core/util.h"
#include "repair/gaming-internal.h"
#include "repair/repair-internal.h"

#define PENALTY_ELSEWHERE 0.5 /* exit_early, recover_panic outside the failing functions */
#define PENALTY_NOLINT    0.2
#define PENALTY_SLEEP     0.2

/* The last name of a function as a runtime or compiler printed it. */
static void base_name(const char *fn, char *out, size_t len)
{
        char *p;

        snprintf(out, len, "%s", fn);
        while ((p = strrchr(out, '.')) && p[1] &&
               (strspn(p + 1, "0123456789") == strlen(p + 1) ||
                (strncmp(p + 1, "func", 4) == 0 && strspn(p + 5, "0123456789") == strlen(p + 5))))
                *p = '\0'; /* closures: Submit.func1, Submit.func1.2 */
        if ((p = strrchr(out, '.')))
                memmove(out, p + 1, strlen(p + 1) + 1);
}

static bool names(const char *printed, const char *file, const char *want_file, const char *name)
{
        char base[256];

        if (!printed || !file || strcmp(file, want_file) != 0)
                return false;
        base_name(printed, base, sizeof(base));
        return strcmp(base, name) == 0;
}

/* @name (defined in the file checked) is a function of the failure: an error diagnostic's or
 * one of its in-tree stack frames. */
static bool is_failing(const struct file_check *c, const char *name)
{
        const heal_analysis *a = c->o ? c->o->baseline : NULL;

        for (size_t i = 0; a && name[0] && i < a->n_diags; i++) {
                const heal_diag *d = &a->diags[i];

                if (d->severity != HEAL_SEVERITY_ERROR)
                        continue;
                if (names(d->function, d->file, c->file, name))
                        return true;
                for (size_t k = 0; k < d->n_frames; k++)
                        if (d->frames[k].in_tree &&
                            names(d->frames[k].function, d->frames[k].file, c->file, name))
                                return true;
        }
        return false;
}

static const char *func_name_at(const struct lexed *l, unsigned line)
{
        const struct func_range *f = lex_func_at(l, line);

        return f ? f->name : "";
}

static const char *trimmed(const char *s)
{
        return s + strspn(s, " \t\r");
}

/* exit(0), _exit(0), _Exit(0), quick_exit(0), or with EXIT_SUCCESS. */
static const char *c_exit_zero(const char *code)
{
        static const char *const fns[] = { "exit", "_exit", "_Exit", "quick_exit" };

        for (size_t i = 0; i < ELEMENTSOF(fns); i++) {
                const char *p = find_call(code, fns[i], NULL, 0);
                size_t k;

                if (!p)
                        continue;
                p = trimmed(p + 1);
                k = strncmp(p, "EXIT_SUCCESS", 12) == 0 ? 12 : *p == '0' ? 1 : 0;
                if (k && *trimmed(p + k) == ')')
                        return fns[i];
        }
        return NULL;
}

/* An exit no call of os.Exit shows: the function taken as a value (var quit = os.Exit), or the
 * exit system call named (SYS_EXIT_GROUP through syscall.RawSyscall). No fix needs either. */
static bool exit_by_other_means(struct file_check *c, unsigned ln, const char *code)
{
        static const char *const values[] = { "os.Exit", "syscall.Exit", "unix.Exit" };
        static const char *const sysnames[] = { "SYS_EXIT", "SYS_exit", "__NR_exit" };
        const char *what = NULL;

        for (size_t i = 0; c->new->lang == LANG_GO && !what &&i < ELEMENTSOF(values); i++) {
                const char *p = strstr(code, values[i]);

                if (p && *trimmed(p + strlen(values[i])) != '(')
                        what = values[i];
        }
        for (size_t i = 0; !what && i < ELEMENTSOF(sysnames); i++)
                if (strstr(code, sysnames[i]))
                        what = sysnames[i];
        if (what)
                hit_add(c->h, "exit_early", true, 0, c->file, ln,
                        "%s used without calling it by name: an exit no review would see", what);
        return what != NULL;
}

/* A string that looks like a test runner's verdict, printed to pass for one. */
static void fake_test_output(struct file_check *c, unsigned ln, const char *strings)
{
        static const char *const marks[] = { "--- PASS", "=== RUN", "--- FAIL", "\"Action\":\"pass",
                                             "\\\"Action\\\":\\\"pass" };

        for (size_t i = 0; i < ELEMENTSOF(marks); i++)
                if (strstr(strings, marks[i])) {
                        hit_add(c->h, "fake_test_output", true, 0, c->file, ln,
                                "a string with '%s' added: code that prints a test runner's "
                                "verdict",
                                marks[i]);
                        return;
                }
}

static void exits_and_recovers(struct file_check *c, unsigned ln, const char *code)
{
        static const char *const go_exits[] = { "os.Exit", "runtime.Goexit", "syscall.Exit" };
        const char *fn, *what = NULL;
        bool rec = c->new->lang == LANG_GO &&find_call(code, "recover", NULL, 0), failing;

        for (size_t i = 0; c->new->lang == LANG_GO && !what &&i < ELEMENTSOF(go_exits); i++)
                if (find_call(code, go_exits[i], NULL, 0))
                        what = go_exits[i];
        if (c->new->lang == LANG_C)
                what = c_exit_zero(code);
        if (!what && !rec && exit_by_other_means(c, ln, code))
                return;
        if (!what && !rec)
                return; /* the function is looked up only for a hit */
        fn = func_name_at(c->new, ln);
        failing = is_failing(c, fn);
        if (what) {
                bool reject = failing || strcmp(fn, "TestMain") == 0 || strcmp(fn, "init") == 0;

                hit_add(c->h, "exit_early", reject, PENALTY_ELSEWHERE, c->file, ln,
                        "%s added in %s%s", what, fn[0] ? fn : "top-level code",
                        failing ? ", a function of the failure" : "");
        }
        if (rec)
                hit_add(c->h, "recover_panic", failing, PENALTY_ELSEWHERE, c->file, ln,
                        "recover() added in %s%s", fn[0] ? fn : "top-level code",
                        failing ? ", a function of the failure's stack" : "");
}

static void skips_and_sleeps(struct file_check *c, unsigned ln, const char *code)
{
        static const char *const skips[] = { ".Skip", ".SkipNow", ".Skipf" };
        static const char *const c_sleeps[] = { "sleep", "usleep", "nanosleep" };
        bool testing = strstr(c->new->text, "\"testing\"") != NULL;
        char recv[64];

        for (size_t i = 0; c->new->lang == LANG_GO &&i < ELEMENTSOF(skips); i++) {
                if (!find_call(code, skips[i], recv, sizeof(recv)))
                        continue;
                if (testing || strcmp(recv, "t") == 0 || strcmp(recv, "b") == 0 ||
                    strcmp(recv, "tb") == 0 || strcmp(recv, "f") == 0) {
                        hit_add(c->h, "skip_test", true, 0, c->file, ln, "%s%s() added", recv,
                                skips[i]);
                        break;
                }
        }
        if (c->new->lang == LANG_GO && find_call(code, "time.Sleep", NULL, 0))
                hit_add(c->h, "sleep_added", false, PENALTY_SLEEP, c->file, ln,
                        "time.Sleep() added");
        for (size_t i = 0; c->new->lang == LANG_C &&i < ELEMENTSOF(c_sleeps); i++)
                if (find_call(code, c_sleeps[i], NULL, 0)) {
                        hit_add(c->h, "sleep_added", false, PENALTY_SLEEP, c->file, ln,
                                "%s() added", c_sleeps[i]);
                        break;
                }
}

/* "_ = err": a Go error dropped on the floor (it also silences "declared and not used"). */
static bool swallows_error(const char *code)
{
        const char *s = trimmed(code), *e;
        size_t n;

        if (strncmp(s, "_ = ", 4) != 0 && strncmp(s, "_=", 2) != 0)
                return false;
        s = trimmed(s + 1 + (s[1] == ' ') + 1);
        n = strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_");
        e = trimmed(s + n);
        return n >= 3 && (strncmp(s + n - 3, "err", 3) == 0 || strncmp(s + n - 3, "Err", 3) == 0) &&
               (*e == '\0' || *e == ';');
}

static void suppressions(struct file_check *c, unsigned ln, const char *code, const char *comment)
{
        static const char *const in_comments[] = { "nolint", "lint:ignore", "NOLINT" };
        static const char *const in_code[] = { "__attribute__((unused))", "[[maybe_unused]]",
                                               "__attribute__ ((unused))" };
        const char *what = NULL;

        for (size_t i = 0; !what && i < ELEMENTSOF(in_comments); i++)
                if (strstr(comment, in_comments[i]))
                        what = in_comments[i];
        for (size_t i = 0; !what && c->new->lang == LANG_C &&i < ELEMENTSOF(in_code); i++)
                if (strstr(code, in_code[i]))
                        what = in_code[i];
        if (!what && c->new->lang == LANG_C &&strstr(code, "#pragma") &&
            strstr(code, "diagnostic") && strstr(code, "ignored"))
                what = "#pragma diagnostic ignored";
        if (!what && c->new->lang == LANG_GO &&swallows_error(code))
                what = "_ = err";
        if (what)
                hit_add(c->h, "nolint", false, PENALTY_NOLINT, c->file, ln, "'%s' added", what);
}

static bool build_constraint(const char *raw)
{
        const char *s = trimmed(raw);

        return strncmp(s, "//go:build", 10) == 0 || strncmp(s, "// +build", 9) == 0;
}

void check_added_lines(struct file_check *c)
{
        char code[LINE_MAX_PARSED], comment[LINE_MAX_PARSED], raw[LINE_MAX_PARSED];

        for (size_t i = 0; i < c->n_lines && !c->h->error; i++) {
                const heal_diff_line *v = &c->lines[i];
                const struct lexed *l = v->op == '+' ? c->new : c->old;
                unsigned ln = v->op == '+' ? v->new_line : v->old_line;

                lex_view(l, ln, LEX_CODE | LEX_STRING | LEX_COMMENT, raw, sizeof(raw));
                if (l->lang == LANG_GO && build_constraint(raw))
                        hit_add(c->h, "build_tags", true, 0, c->file, ln, "build constraint %s: %s",
                                v->op == '+' ? "added" : "removed", trimmed(raw));
                if (v->op != '+')
                        continue;
                lex_view(l, ln, LEX_STRING, code, sizeof(code));
                fake_test_output(c, ln, code);
                lex_view(l, ln, LEX_CODE, code, sizeof(code));
                lex_view(l, ln, LEX_COMMENT, comment, sizeof(comment));
                if (l->lang == LANG_C && strncmp(trimmed(code), "#if 0", 5) == 0)
                        hit_add(c->h, "build_tags", true, 0, c->file, ln, "'#if 0' added");
                skips_and_sleeps(c, ln, code);
                exits_and_recovers(c, ln, code);
                suppressions(c, ln, code, comment);
        }
}
