/* SPDX-License-Identifier: MIT */
#ifndef HEAL_DIFF_H
#define HEAL_DIFF_H

/*
 * Line diffs between two versions of a file: the added and removed lines with their numbers
 * (for rules that look at what a candidate patch adds, and to move an old diagnostic's line to
 * where it is after the patch), unified diffs that patch(1) and git-apply(1) accept, and the
 * size of a patch in lines.
 *
 * Lines end at '\n', which belongs to the line: a last line without '\n' differs from the same
 * text with one (the unified diff then says "\ No newline at end of file"). The script is a
 * shortest one (Myers' greedy algorithm in linear space, after the common prefix and suffix are
 * set aside) unless the work grows past HEAL_DIFF_D_MAX differences or HEAL_DIFF_WORK_MAX steps
 * for a region; that region is then replaced whole: still a correct diff, only a longer one,
 * and never quadratic time or memory.
 */

#include <stdbool.h>
#include <stddef.h>

#include "heal/buf.h"
#include "heal/edit.h"
#include "heal/error.h"

#define HEAL_DIFF_FILE_MAX_BYTES (4u << 20) /* each side; larger inputs are refused (-EFBIG) */
#define HEAL_DIFF_D_MAX          10000      /* edit distance past which a region is replaced */
#define HEAL_DIFF_WORK_MAX       100000000  /* Myers steps (diagonals + snake moves) per diff */

/**
 * struct heal_diff_line - One added or removed line.
 * @op:         '+' added (a line of after) or '-' removed (a line of before).
 * @old_line:   '-': the line's number in before (1-based); '+': the number of before's lines
 *              that precede the insertion point (0 = at the start).
 * @new_line:   '+': the line's number in after (1-based); '-': the number of after's lines that
 *              precede the place the line was removed from.
 * @text, @len: the line without its '\n'; borrowed from the before or after string given to
 *              heal_diff_lines(), valid as long as it is.
 * @no_newline: the line is its file's last and has no '\n'.
 *
 * Within a change, removed lines come before added ones; changes are in file order.
 */
typedef struct heal_diff_line {
        char op;
        unsigned old_line;
        unsigned new_line;
        const char *text;
        size_t len;
        bool no_newline;
} heal_diff_line;

/**
 * heal_diff_lines() - The lines @after adds to @before and the lines it removes.
 * @ret:    on success a malloc(3)ed array the caller frees with free(3) (NULL when @ret_n is 0);
 *          untouched on failure.
 * @ret_n:  the number of entries.
 * @before: NUL-terminated old content, or NULL for none (a new file); borrowed, and the
 *          entries' @text points into it.
 * @after:  NUL-terminated new content, or NULL for none (a deleted file); borrowed likewise.
 * @err:    optional.
 *
 * Context: pure computation; thread-safe. Time O((N+M)·D) at most HEAL_DIFF_WORK_MAX steps
 *          (N, M lines; D differences), memory O(N+M).
 * Return: the number of entries (0 for identical contents); -EFBIG when a side exceeds
 *         HEAL_DIFF_FILE_MAX_BYTES; -ENOMEM; -EINVAL for NULL @ret or @ret_n.
 * See: E. W. Myers, "An O(ND) Difference Algorithm and Its Variations", Algorithmica 1(2),
 *      1986, 251-266 (section 4b: the linear-space refinement, "middle snake").
 */
int heal_diff_lines(heal_diff_line **ret, size_t *ret_n, const char *before, const char *after,
                    heal_error *err);

/**
 * heal_diff_line_map() - Where a line of before is after the change @v describes.
 * @v, @n:    heal_diff_lines() output; borrowed.
 * @old_line: a line number in before (1-based).
 *
 * Return: its line number in after; 0 when the line was removed (or @old_line is 0).
 */
unsigned heal_diff_line_map(const heal_diff_line *v, size_t n, unsigned old_line);

/**
 * heal_diff_unified() - Append the unified diff from @before to @after to @out.
 * @out:           the buffer appended to; its cap applies.
 * @path:          the file's path relative to the tree, printed as "a/@path" and "b/@path";
 *                 borrowed; must not contain '\n' or '\t'.
 * @before:        old content, NUL-terminated, or NULL for a new file ("--- /dev/null").
 * @after:         new content, NUL-terminated, or NULL for a deleted file ("+++ /dev/null").
 * @context_lines: unchanged lines shown around each change (3 is diff -u's default).
 * @err:           optional.
 *
 * The output is byte-exact for `patch -p1` and `git apply`: "@@ -l,s +l,s @@" headers (",s"
 * left out when s is 1; l is the line before the hunk when s is 0) and "\ No newline at end of
 * file" after a last line without '\n'. Identical contents append nothing, and so does a new
 * or deleted file that is empty (a plain unified diff cannot say so; git's headers can). With
 * @context_lines 0, `git apply` needs --unidiff-zero.
 *
 * Context: pure computation; thread-safe; costs as heal_diff_lines().
 * Return: the number of hunks appended (0 for identical contents); -E2BIG when @out's cap cut
 *         the text; -EFBIG, -ENOMEM as heal_diff_lines(); -EINVAL for a NULL @out or @path or
 *         a @path with a newline or tab.
 * See: GNU diffutils manual, "Detailed Description of Unified Format"; Myers 1986 (above).
 */
int heal_diff_unified(heal_buf *out, const char *path, const char *before, const char *after,
                      unsigned context_lines, heal_error *err);

/**
 * heal_patch_diff() - heal_diff_unified() of every file of @p, in order, 3 lines of context.
 * @out: the buffer appended to.
 * @p:   the patch; borrowed.
 * @err: optional; on failure names the file.
 *
 * Return: the number of hunks in all; errors as heal_diff_unified().
 */
int heal_patch_diff(heal_buf *out, const heal_patch *p, heal_error *err);

/**
 * struct heal_diff_stat - The size of a patch.
 * @files_changed: files whose content differs.
 * @lines_added:   lines added, over all files.
 * @lines_removed: lines removed, over all files.
 */
typedef struct heal_diff_stat {
        size_t files_changed;
        size_t lines_added;
        size_t lines_removed;
} heal_diff_stat;

/**
 * heal_patch_diff_stat() - Count what @p adds and removes (as `git diff --numstat` would).
 * @ret: filled on success; untouched on failure.
 * @p:   the patch; borrowed.
 * @err: optional.
 *
 * Return: 0; -EFBIG, -ENOMEM as heal_diff_lines(); -EINVAL for NULL arguments.
 */
int heal_patch_diff_stat(heal_diff_stat *ret, const heal_patch *p, heal_error *err);

#endif
