/* SPDX-License-Identifier: MIT */
#ifndef HEAL_EDIT_H
#define HEAL_EDIT_H

/*
 * Edits from a model's answer, and their application to a tree, in memory: nothing here writes
 * a file. Formats: search/replace blocks naming the file (the primary one, see
 * heal_prompt_build()), unified diffs (each hunk becomes a search/replace pair), and whole files
 * in a fenced code block preceded by their path. Matching is exact first, then tolerant of
 * trailing whitespace, then of indentation (the replacement re-indented by the same amount); an
 * edit must match exactly one place. An edit that does not apply says why, with the file's
 * nearest lines, so that the model can be told on its next try.
 */

#include <stdbool.h>
#include <stddef.h>

#include "heal/error.h"

/**
 * struct heal_edit - One change to one file; strings owned by the list.
 * @file:       the path as the answer gave it (relative to the tree).
 * @search:     the text to find; "" with @whole_file or to create a file.
 * @replace:    its replacement (the whole new file with @whole_file).
 * @whole_file: the block is the file's whole new content.
 */
typedef struct heal_edit {
        char *file;
        char *search;
        char *replace;
        bool whole_file;
} heal_edit;

/** struct heal_edits - The edits of one answer, in answer order. */
typedef struct heal_edits {
        heal_edit *v;
        size_t n;
} heal_edits;

/**
 * heal_edits_parse() - Every edit in @answer (NUL-terminated; a model's free text).
 * @ret: filled on success (possibly with no edit); release with heal_edits_release().
 * Return: 0; -EBADMSG for a block that starts and never ends (the message names its file and
 *         line in the answer); -ENOMEM.
 */
int heal_edits_parse(heal_edits *ret, const char *answer, heal_error *err);

/** heal_edits_release() - Free what @e owns and zero it; accepts a zeroed list. */
void heal_edits_release(heal_edits *e);

/**
 * struct heal_file_change - A file's content before and after; owned by the patch.
 * @file:   relative to the tree, normalised.
 * @before: NULL when the file is new.
 * @after:  the new content.
 */
typedef struct heal_file_change {
        char *file;
        char *before;
        char *after;
} heal_file_change;

/** struct heal_patch - The files an answer changes, each once, in first-edit order. */
typedef struct heal_patch {
        heal_file_change *files;
        size_t n_files;
} heal_patch;

/**
 * struct heal_apply_opts - Where and what may be edited.
 * @tree:      the tree (absolute); required.
 * @protected: NULL-terminated fnmatch(3) patterns matched against the relative path and each
 *             of its directories, or NULL for the defaults: "*_test.go", "*_test.*",
 *             "test_*", "testdata", "tests", "test", "conftest.py" (tests in Go, C and Python
 *             conventions) and ".*" (hidden files and directories: .github, .envrc).
 * @base:      a patch the edits apply on top of (a search node's edits so far), or NULL: its
 *             files are read from its @after instead of the tree, and the result holds its
 *             changes too (each file's @before stays the tree's).
 */
typedef struct heal_apply_opts {
        const char *tree;
        const char *const *protected;
        const heal_patch *base;
} heal_apply_opts;

/**
 * heal_edits_apply() - The files @e would produce in @o->tree; the tree is only read.
 * @ret: filled on success; release with heal_patch_release().
 *
 * Edits of one file apply in order, each to the result of the ones before.
 * Return: 0; -EPERM for a path that leaves the tree (absolute, ".."), goes through a symlink,
 *         touches .git (in any case) or .heal, or is protected (the message names the rule);
 * -ENOENT when a search text matches nowhere or the file does not exist (the message shows the
 * file's lines nearest to the search's first line); -EEXIST when it matches more than one place
 *         (the message gives the lines); -EFBIG for a file over 4 MiB; -EMEDIUMTYPE for a
 *         binary file (it holds NUL bytes); -ENOMEM. On failure
 *         @err names the edit (its file and number in the answer).
 */
int heal_edits_apply(const heal_edits *e, const heal_apply_opts *o, heal_patch *ret,
                     heal_error *err);

/**
 * heal_patch_copy() - A deep copy of @p into @ret (release it with heal_patch_release()).
 * Return: 0; -ENOMEM (@ret then zeroed).
 */
int heal_patch_copy(heal_patch *ret, const heal_patch *p);

/** heal_patch_release() - Free what @p owns and zero it; accepts a zeroed patch. */
void heal_patch_release(heal_patch *p);

#endif
