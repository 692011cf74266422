/* SPDX-License-Identifier: MIT */
#ifndef HEAL_REPAIR_WRITEBACK_INTERNAL_H
#define HEAL_REPAIR_WRITEBACK_INTERNAL_H

/* What heal_writeback() and heal_undo() share: paths opened beneath the tree without following
 * symlinks, files read and replaced atomically, and the engine that replaces a set of files all
 * or none (wb_apply()). */

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "heal/error.h"

#define WB_FILE_MAX  (256u << 20)
#define WB_MODE_NEW  ((mode_t)-1) /* a new file: 0644 less the umask */
#define WB_MANIFEST  "manifest.json"
#define WB_UNDONE    ".undone"
#define WB_STATE_DIR ".heal"

/* A file as read beneath the tree. */
struct wb_state {
        bool exists;
        char *data; /* owned; NULL when !exists */
        size_t len;
        mode_t mode; /* permission bits (07777) */
        uid_t uid;
        gid_t gid;
};

void wb_state_release(struct wb_state *s);

/* One file to bring from @from (its state now, also the rollback target) to @to. */
struct wb_op {
        const char *path; /* relative, checked by wb_check_path(); borrowed */
        const char *to;   /* borrowed */
        size_t to_len;
        bool to_exists; /* false: remove the file */
        mode_t to_mode; /* WB_MODE_NEW for a new file */
        struct wb_state from;
        bool done;
};

/* @rel is relative, clean ("a/b.c": no "", ".", ".." component), not in .git or .heal. -EPERM
 * (or -ENAMETOOLONG) with a message naming @rel. */
int wb_check_path(const char *rel, heal_error *err);

/* Open the directory that holds @rel beneath @rootfd, never following a symlink; the last
 * component is returned in *@ret_name (points into @rel). With @create, missing directories are
 * made (0755, their parent fsync'd); without, -ENOENT and *@ret_missing (optional) is the
 * length of @rel's prefix up to and including the first missing component. -EPERM for a
 * symlink, -ENOTDIR for a component that is another kind of file. */
int wb_open_parent(int *ret_fd, const char **ret_name, size_t *ret_missing, int rootfd,
                   const char *rel, bool create, heal_error *err);

/* @name in @dfd (@rel for messages): a regular file, not a symlink, of at most WB_FILE_MAX
 * bytes; a missing file gives 0 and ret->exists false. -EPERM, -EFBIG, -ENOMEM, -errno. */
int wb_read(struct wb_state *ret, int dfd, const char *name, const char *rel, heal_error *err);

/* Replace @name in @dfd by @data atomically: temporary file ".NAME.heal-XXXXXX", write,
 * owner (when not -1, errors ignored), mode (WB_MODE_NEW: 0644 less the umask), fsync, rename,
 * fsync of @dfd. The temporary file is removed on failure. *@ret_replaced says whether the
 * rename happened (it may have, and the directory's fsync failed). 0 or -errno. */
int wb_write_atomic(bool *ret_replaced, int dfd, const char *name, const void *data, size_t len,
                    mode_t mode, uid_t uid, gid_t gid);

/* Remove @name in @dfd and fsync @dfd; a missing file is fine. *@ret_replaced as above. */
int wb_unlink(bool *ret_replaced, int dfd, const char *name);

/* Create @name (O_EXCL) in @dfd holding @data, fsync'd. 0 or -errno. */
int wb_write_new(int dfd, const char *name, const void *data, size_t len, mode_t mode);

/* Lowercase hex XXH3-64 of @data. */
void wb_hash(char out[17], const void *data, size_t len);

/* Block SIGINT, SIGTERM, SIGHUP, SIGQUIT in the calling thread; restore the mask saved. */
void wb_signals_block(sigset_t *ret_old);
void wb_signals_restore(const sigset_t *old);

/* Remove @name in @dfd and everything under it (heal's own undo entries only). */
int wb_rm_rf(int dfd, const char *name);

/* Remove the directories @dirs (relative to @treefd, parents before children) that are empty,
 * children first; errors ignored. */
void wb_rmdirs(int treefd, const char *const *dirs, size_t n);

/* STATE_DIR/undo opened (created with STATE_DIR/.gitignore when @create); -ENOENT when it does
 * not exist and !@create. @ret_where (optional, PATH_MAX) receives the path for messages. */
int wb_open_undo_dir(int *ret_fd, char *ret_where, int treefd, const char *tree,
                     const char *state_dir, bool create, heal_error *err);

/* Bring every op of @ops from its state to its target, in order, each atomically. On failure
 * the ops done are put back to their @from state and @rm_dirs (optional) removed when empty;
 * the message says "nothing was changed", or names the files left changed followed by @hint.
 * *@ret_clean is false when some op could not be put back. Signals must be blocked by the
 * caller. 0 or the first failure's -errno. */
int wb_apply(bool *ret_clean, int treefd, struct wb_op *ops, size_t n, const char *const *rm_dirs,
             size_t n_rm_dirs, const char *hint, heal_error *err);

#endif
