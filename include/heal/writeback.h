/* SPDX-License-Identifier: MIT */
#ifndef HEAL_WRITEBACK_H
#define HEAL_WRITEBACK_H

/*
 * Writing a verified patch into the user's tree, and taking it back. heal_writeback() checks
 * that every file is still what the search saw, saves the originals under
 * STATE_DIR/undo/<id>/ (STATE_DIR defaults to TREE/.heal), then replaces each file atomically
 * (temporary file, fsync, rename); a failure half-way puts back the files already replaced.
 * heal_undo() restores an entry's originals, refusing files changed since unless forced.
 * Layout and guarantees: docs/writeback.md.
 */

#include <stdbool.h>
#include <stddef.h>

#include "heal/edit.h"
#include "heal/error.h"

/**
 * struct heal_writeback_opts - Where to write and what to record.
 * @tree:      the tree the patch's paths are relative to; absolute, required; borrowed.
 * @state_dir: where the undo entries live (created if missing, with a .gitignore holding "*");
 *             absolute, or NULL for TREE/.heal; borrowed.
 * @command:   the command line the patch repairs, recorded in the entry; optional; copied.
 */
typedef struct heal_writeback_opts {
        const char *tree;
        const char *state_dir;
        const char *command;
} heal_writeback_opts;

/**
 * heal_writeback() - Write @p into @o->tree, all files or none, keeping the originals.
 * @ret_id: on success, the undo entry's id (e.g. "20261129-161530-001": UTC time, then a
 *          counter; ids sort in time order); owned by the caller, free(3). Untouched on failure.
 * @p:      the patch; borrowed. Each file's @before must be its content now (NULL: the file
 *          must not exist); @after is written. Paths are relative to the tree.
 * @o:      where; borrowed.
 * @err:    optional; receives a message on failure.
 *
 * Steps: (1) every path is checked (relative, no "." or "..", no ".git", not under ".heal", no
 * symlink at any component: each directory is opened with O_NOFOLLOW beneath the tree) and
 * every file compared byte for byte with @before; (2) the originals and a manifest.json are
 * written and fsync(2)ed under STATE_DIR/undo/<id>/; (3) with SIGINT, SIGTERM, SIGHUP and
 * SIGQUIT blocked in the calling thread, each file is written to a temporary file in its own
 * directory (".NAME.heal-XXXXXX"), fsync(2)ed, given the original's mode (new files: 0644 less
 * the umask) and owner (when permitted), rename(2)d over the original, and the directory
 * fsync(2)ed. Missing parent directories are made (0755) and recorded, so that heal_undo()
 * removes them. If a write fails, the files already replaced get their originals back the
 * same way, new files and directories are removed, and the entry is deleted; if that rollback
 * itself fails, the entry is kept and the message names the files "heal undo ID" restores.
 * A signal that arrives during (3) is delivered when the previous mask is restored.
 *
 * Context: blocking (disk I/O and fsync); changes the calling thread's signal mask during the
 *          write phase only; not safe against another writer of the same files.
 * Return: 0; -EINVAL bad arguments (relative tree, empty patch, a file listed twice); -EPERM a
 *         path that is absolute, has "." or "..", touches .git or .heal, or goes through a
 *         symlink, or a file that is not a regular file; -ENOTDIR a path component that is not
 *         a directory; -ESTALE a file differs from @before (nothing written; the message names
 *         it), or changed while heal was writing (rolled back); -ENAMETOOLONG; -EFBIG a file
 *         over 256 MiB; -ENOMEM; -ENOSPC, -EDQUOT, -EIO, -EROFS, -EACCES and other -errno from
 *         open(2), write(2), fsync(2), rename(2) (the message says whether the tree was left
 *         as it was, and if not, which files to undo).
 * See: rename(2) (atomic replacement), fsync(2), and "Ensuring data reaches disk" (LWN 457667).
 */
int heal_writeback(char **ret_id, const heal_patch *p, const heal_writeback_opts *o,
                   heal_error *err);

/**
 * struct heal_undo_opts - Which entry to undo, and how.
 * @tree:      the tree; absolute, required; borrowed.
 * @state_dir: as for heal_writeback(): absolute, or NULL for TREE/.heal; borrowed.
 * @id:        the entry; NULL for the latest one not undone yet; borrowed.
 * @force:     restore files changed since heal wrote them too (their current content is lost).
 * @dry_run:   check everything and report what would be restored; change nothing.
 */
typedef struct heal_undo_opts {
        const char *tree;
        const char *state_dir;
        const char *id;
        bool force;
        bool dry_run;
} heal_undo_opts;

/**
 * struct heal_undo_result - What heal_undo() did; owned, release with heal_undo_result_release().
 * @id:        the entry undone.
 * @files:     paths (relative to the tree) restored, or removed when heal had created them;
 *             with @dry_run, those that would be. Files already back to their original are not
 *             listed.
 * @n_files:   entries in @files.
 * @n_forced:  how many of @files had changed since heal wrote them (restored by @force).
 */
typedef struct heal_undo_result {
        char *id;
        char **files;
        size_t n_files;
        size_t n_forced;
} heal_undo_result;

/**
 * heal_undo() - Restore the files of an undo entry written by heal_writeback().
 * @ret: filled on success; release with heal_undo_result_release(). Untouched on failure.
 * @o:   which entry, and how; borrowed.
 * @err: optional; receives a message on failure.
 *
 * Each file must be what heal wrote (its XXH3-64 and size equal the manifest's "after"), or
 * already its original (then it is left alone); otherwise nothing is restored unless @o->force.
 * Originals are written back as heal_writeback() writes (temporary file, fsync(2), rename(2),
 * directory fsync(2)), with their recorded mode; files that did not exist are removed, then the
 * directories heal made, if empty. A failure half-way puts back what was already restored. The
 * entry is then renamed <id>.undone (kept for heal_undo_list()). Signals are blocked during
 * the writes as in heal_writeback().
 *
 * Context: blocking; changes the calling thread's signal mask during the writes only.
 * Return: 0; -EINVAL bad arguments or an id with '/'; -ENOENT nothing to undo (no entry, the
 *         named entry does not exist, or was undone already); -ESTALE a file changed since heal
 *         wrote it (nothing restored; the message names it and suggests --force); -EBADMSG a
 *         manifest that cannot be read, or a backup whose hash is not the recorded one; -EPERM,
 *         -ENOTDIR a path that now goes through a symlink or a non-directory; -ENOMEM; -ENOSPC,
 *         -EIO and other -errno from open(2), write(2), fsync(2), rename(2), unlink(2).
 * See: rename(2), fsync(2).
 */
int heal_undo(heal_undo_result *ret, const heal_undo_opts *o, heal_error *err);

/** heal_undo_result_release() - Free what @r owns and zero it; accepts a zeroed result. */
void heal_undo_result_release(heal_undo_result *r);

/**
 * struct heal_undo_entry - One write-back, as its manifest records it; owned by the list.
 * @id:      the entry's id.
 * @time:    when it was written, ISO 8601 UTC ("2026-11-29T16:15:30Z").
 * @command: the command line recorded, or NULL.
 * @files:   the paths written, relative to the tree.
 * @n_files: entries in @files.
 * @undone:  heal_undo() restored it.
 */
typedef struct heal_undo_entry {
        char *id;
        char *time;
        char *command;
        char **files;
        size_t n_files;
        bool undone;
} heal_undo_entry;

/** struct heal_undo_entries - Undo entries, oldest first (by id). */
typedef struct heal_undo_entries {
        heal_undo_entry *v;
        size_t n;
} heal_undo_entries;

/**
 * heal_undo_list() - Every undo entry in the state directory, oldest first.
 * @ret: filled on success (possibly with no entry); release with heal_undo_entries_release().
 * @o:   @tree and @state_dir locate the entries; the other fields are ignored; borrowed.
 * @err: optional.
 *
 * Entries without a complete manifest (a write-back interrupted before it wrote anything) are
 * skipped. Only reads.
 * Context: blocking (reads the state directory).
 * Return: 0 (also when the state directory does not exist); -EINVAL bad arguments; -ENOMEM;
 *         -EACCES and other -errno from opendir(3).
 */
int heal_undo_list(heal_undo_entries *ret, const heal_undo_opts *o, heal_error *err);

/** heal_undo_entries_release() - Free what @l owns and zero it; accepts a zeroed list. */
void heal_undo_entries_release(heal_undo_entries *l);

#endif
