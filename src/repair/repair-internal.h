/* SPDX-License-Identifier: MIT */
#ifndef HEAL_REPAIR_INTERNAL_H
#define HEAL_REPAIR_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "heal/analyze.h"
#include "heal/edit.h"

#define DIAGS_MAX       256
#define FRAMES_MAX      64
#define NOTES_MAX       16
#define LINE_MAX_PARSED 4096 /* longer lines are parsed by their first 4 KiB */
#define TAIL_BYTES      4096

/* The output as lines: each is NUL-terminated, at most LINE_MAX_PARSED bytes, without its
 * newline; NUL bytes inside a line end it. */
struct lines {
        char **v;
        size_t n;
        char *store;
};
int lines_split(struct lines *l, const char *text, size_t len);
void lines_release(struct lines *l);

/* What a parser works on and adds to. */
struct actx {
        const struct lines *lines;
        const heal_analyze_opts *opts;
        heal_analysis *a;
        const char *timeout_msg; /* the run hit its wall-time limit: what to say */
        int error;               /* -ENOMEM once an allocation failed: stop */
};

/* diag.c: building diagnostics */
heal_diag *diag_add(struct actx *x, heal_diag_kind kind, heal_diag_severity severity,
                    const char *message);
void diag_set_loc(struct actx *x, heal_diag *d, const char *file, unsigned line, unsigned col);
void diag_set_function(struct actx *x, heal_diag *d, const char *fn, size_t len);
void diag_set_test(struct actx *x, heal_diag *d, const char *test);
void diag_add_note(struct actx *x, heal_diag *d, const char *note);
heal_frame *diag_add_frame(struct actx *x, heal_diag *d, const char *fn, size_t fn_len,
                           const char *file, size_t file_len, unsigned line);
/* The first frame in the tree, or NULL. */
const heal_frame *diag_first_in_tree(const heal_diag *d);
/* Take the location and function from the first in-tree frame when the diagnostic has none. */
void diag_locate_from_frames(struct actx *x, heal_diag *d);
void test_list_add(struct actx *x, char ***v, size_t *n, const char *name, size_t len);
/* @path relative to the tree when it is in it (a new string), else a copy; *in_tree set. */
char *path_in_tree(const heal_analyze_opts *o, const char *path, size_t len, bool *in_tree);
char *xstrndup(struct actx *x, const char *s, size_t n);

/* Parse "FILE:LINE[:COL]: REST" at @s; the file must end in one of @exts (NULL: any). */
struct loc {
        const char *file;
        size_t file_len;
        unsigned line, col;
        const char *rest;
};
bool parse_loc(const char *s, struct loc *l, const char *const *exts);
bool starts_with(const char *s, const char *prefix);

/* The parsers: each reads every line once. */
void parse_go(struct actx *x);
void parse_go_test(struct actx *x);
void parse_go_json(struct actx *x, const char *text, size_t len, char **ret_text, size_t *ret_len);
void parse_c(struct actx *x);
void parse_c_signal(struct actx *x);
void parse_python(struct actx *x);

/* source.c: the enclosing function of FILE:LINE read from the tree, and the line's text */
bool source_function(const heal_analyze_opts *o, const char *file, unsigned line, char *fn,
                     size_t fn_len, char *text, size_t text_len);

/* The paths candidates may not edit unless told otherwise (fnmatch(3) patterns). */
extern const char *const repair_default_protected[];

/* Files tree_open() reads from @p (their after) instead of the tree, on this thread, until
 * reset with NULL: the analysis and context of a search node see its workspace. */
void repair_overlay_set(const heal_patch *p);

/* @rel opened for reading beneath @tree (no "..", no symlink out of it), if a regular file of
 * at most @max_bytes; NULL otherwise. */
FILE *tree_open(const char *tree, const char *rel, size_t max_bytes);

/* The name defined on @s (a line of @file: Go, C or Python by its extension) if @s starts a
 * function definition, else "". */
void source_definition(const char *s, const char *file, char *fn, size_t len);

/* A symbol an outline shows: a type whole (up to 30 lines), else its first line. */
struct tag {
        unsigned line, end; /* 1-based */
        bool type;
};
/* @file's lines for @tags (sorted here) as "NNNN| text", gaps as "    | ..."; -ENOENT. */
int outline_render(const char *tree, const char *file, struct tag *tags, size_t n, char **ret);

/* skeleton.c: @file's outline (types whole up to 30 lines, function signature lines, each
 * "NNNN| line"), from Universal Ctags; -ENOENT when ctags is missing, fails or finds nothing. */
int skeleton_outline(const char *tree, const char *file, char **ret);

/* lsp.c: @file's outline from a running language server; -ENOENT, -ETIMEDOUT, -EPIPE, ... */
struct heal_lsp;
int lsp_outline(struct heal_lsp *l, const char *file, char **ret);
/* Where what is at @file:@line:@col (1-based) is defined, when that is in the tree. */
int lsp_definition(struct heal_lsp *l, const char *file, unsigned line, unsigned col,
                   char *ret_file, size_t len, unsigned *ret_line);

/* fingerprint.c */
int fingerprint_exact(heal_analysis *a, const char *text, size_t len, const heal_analyze_opts *o,
                      heal_error *err);
int fingerprint_cause(heal_analysis *a, const heal_analyze_opts *o, heal_error *err);
/* The message with literals, numbers and identifiers abstracted; @code: the source line or NULL. */
void message_template(char *out, size_t len, const char *msg, const char *code);

#endif
