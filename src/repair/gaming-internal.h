/* SPDX-License-Identifier: MIT */
#ifndef HEAL_GAMING_INTERNAL_H
#define HEAL_GAMING_INTERNAL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#include "heal/gaming.h"

enum lang {
        LANG_NONE,
        LANG_GO,
        LANG_C,
};

/* What each byte of a source file is. */
enum lex_class {
        LEX_CODE = 1,
        LEX_STRING = 2, /* a string, rune or character literal, its quotes included */
        LEX_COMMENT = 4,
};

/* A function definition: its name (as source_definition() gives it) and lines, from the line
 * that names it to the one with its closing brace (1-based). */
struct func_range {
        char name[128];
        unsigned start, end;
};

/* A source file cut into lines, each byte classified, its functions found. */
struct lexed {
        const char *text;
        size_t len;
        unsigned char *cls;
        size_t *starts; /* starts[i]: offset of line i + 1; starts[n_lines] == len */
        unsigned n_lines;
        struct func_range *funcs;
        size_t n_funcs;
        enum lang lang;
};

/* gaming_lex.c */
enum lang lang_of(const char *file, const char *hint);
/* @text (NUL-terminated, borrowed) lexed as @lang; 0 or -ENOMEM. */
int lex_file(struct lexed *l, const char *text, enum lang lang);
void lex_release(struct lexed *l);
/* Line @n (1-based) into @buf with the bytes whose class is not in @mask blanked; "" past the
 * end. Lines longer than @len are cut. */
const char *lex_view(const struct lexed *l, unsigned n, unsigned mask, char *buf, size_t len);
/* The function whose lines hold @line, or NULL. */
const struct func_range *lex_func_at(const struct lexed *l, unsigned line);
const struct func_range *lex_func_named(const struct lexed *l, const char *name);
/* Each non-trivial literal of lines [@from, @to]: strings with at least 3 bytes between their
 * quotes (given without them), numbers other than 0 and 1. */
typedef void (*lex_literal_fn)(const char *s, size_t len, unsigned line, void *userdata);
void lex_literals(const struct lexed *l, unsigned from, unsigned to, lex_literal_fn fn,
                  void *userdata);
/* A call of @callee in @s at an identifier boundary ("os.Exit", "recover"): a pointer to its
 * '(', or NULL. A @callee that starts with '.' needs an identifier before it (any receiver),
 * copied to @recv if given. */
const char *find_call(const char *s, const char *callee, char *recv, size_t recv_len);

/* gaming.c: hits, shared with tests_compare.c */
struct hits {
        heal_gaming_report r;
        const char *const *disabled;
        int error; /* -ENOMEM once an allocation failed */
};
bool rule_enabled(const struct hits *h, const char *rule);
void hit_add(struct hits *h, const char *rule, bool reject, double penalty, const char *file,
             unsigned line, const char *fmt, ...) __attribute__((format(printf, 7, 8)));
/* Check @o->disabled names; fill a report; -EINVAL, -ENOMEM. */
int hits_begin(struct hits *h, const heal_gaming_opts *o, heal_error *err);
int hits_end(struct hits *h, heal_gaming_report *ret, heal_error *err);

/* gaming_rules.c: rules on a lexed file and its diff */
struct file_check {
        struct hits *h;
        const heal_gaming_opts *o;
        const char *file;
        const struct lexed *old, *new;
        const struct heal_diff_line *lines;
        size_t n_lines;
};
void check_added_lines(struct file_check *c);
void check_deleted_code(struct file_check *c);
void check_test_literals(struct file_check *c);

#endif
