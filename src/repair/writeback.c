/* SPDX-License-Identifier: MIT */
/*
 * Write-back of a verified patch (include/heal/writeback.h, docs/writeback.md). The order is
 * what keeps the user's files safe: first everything is checked and nothing written; then the
 * originals and the manifest are made durable in the undo entry; only then is the tree
 * touched, one atomic rename per file, with the fatal signals blocked. A write that fails puts
 * the files already replaced back the same way (wb_apply()).
 */
#include "heal/writeback.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/util.h"
#include "repair/writeback-internal.h"

/* @op's file is still what it was when it was read: nothing unsaved is overwritten. */
static int still_same(int fd, const char *name, const struct wb_op *op, heal_error *err)
{
        struct wb_state now;
        bool same;
        int r;

        r = wb_read(&now, fd, name, op->path, err);
        if (r < 0)
                return r;
        same = now.exists == op->from.exists && now.len == op->from.len &&
               (!now.exists || memcmp(now.data, op->from.data, now.len) == 0);
        wb_state_release(&now);
        if (!same)
                return heal_error_set(err, -ESTALE, "'%s' changed while heal was writing",
                                      op->path);
        return 0;
}

/* Bring @op to its target (@forward) or back to its state before. */
static int op_step(int treefd, struct wb_op *op, bool forward, bool *ret_replaced, heal_error *err)
{
        bool exists = forward ? op->to_exists : op->from.exists;
        uid_t uid = op->from.exists ? op->from.uid : (uid_t)-1;
        gid_t gid = op->from.exists ? op->from.gid : (gid_t)-1;
        _cleanup_close_ int fd = -1;
        const char *name;
        int r;

        *ret_replaced = false;
        r = wb_open_parent(&fd, &name, NULL, treefd, op->path, exists, err);
        if (r == -ENOENT && !exists)
                return 0; /* its directory is gone, so is the file */
        if (r < 0)
                return r;
        if (forward && (r = still_same(fd, name, op, err)) < 0)
                return r;
        if (!exists)
                r = wb_unlink(ret_replaced, fd, name);
        else if (forward)
                r = wb_write_atomic(ret_replaced, fd, name, op->to, op->to_len, op->to_mode, uid,
                                    gid);
        else
                r = wb_write_atomic(ret_replaced, fd, name, op->from.data, op->from.len,
                                    op->from.mode, uid, gid);
        if (r < 0)
                return heal_error_set(err, r, "%s '%s': %s", exists ? "writing" : "removing",
                                      op->path, strerror(-r));
        return 0;
}

/* Put back the ops done; the number that could not be, their paths listed in @left. */
static size_t roll_back(int treefd, struct wb_op *ops, size_t n, char *left, size_t left_len)
{
        size_t n_left = 0, used = 0;

        for (size_t i = n; i-- > 0;) {
                bool replaced;

                if (!ops[i].done)
                        continue;
                if (op_step(treefd, &ops[i], false, &replaced, NULL) == 0) {
                        ops[i].done = false;
                        continue;
                }
                n_left++;
                if (used < left_len) {
                        int k = snprintf(left + used, left_len - used, "%s'%s'", used ? ", " : "",
                                         ops[i].path);

                        used += k > 0 ? (size_t)k : 0;
                }
        }
        return n_left;
}

int wb_apply(bool *ret_clean, int treefd, struct wb_op *ops, size_t n, const char *const *rm_dirs,
             size_t n_rm_dirs, const char *hint, heal_error *err)
{
        char why[HEAL_ERROR_MSG_MAX], left[HEAL_ERROR_MSG_MAX] = "";
        heal_error step = HEAL_ERROR_INIT;
        size_t n_left;
        int r = 0;

        for (size_t i = 0; i < n && r == 0; i++) {
                bool replaced;

                r = op_step(treefd, &ops[i], true, &replaced, &step);
                ops[i].done = r == 0 || replaced;
        }
        *ret_clean = true;
        if (r == 0)
                return 0;
        memcpy(why, step.msg, sizeof(why));
        n_left = roll_back(treefd, ops, n, left, sizeof(left));
        if (rm_dirs)
                wb_rmdirs(treefd, rm_dirs, n_rm_dirs);
        *ret_clean = n_left == 0;
        if (!n_left)
                return heal_error_set(err, r, "%s; nothing was changed", why);
        return heal_error_set(err, r, "%s; %zu file%s could not be put back (%s): %s", why, n_left,
                              n_left > 1 ? "s" : "", left, hint);
}

struct plan {
        struct wb_op *ops;
        size_t n;
        char **dirs; /* to make, parents first */
        size_t n_dirs;
};

static void plan_release(struct plan *pl)
{
        for (size_t i = 0; i < pl->n; i++)
                wb_state_release(&pl->ops[i].from);
        free(pl->ops);
        for (size_t i = 0; i < pl->n_dirs; i++)
                free(pl->dirs[i]);
        free(pl->dirs);
}

/* The directories of @rel from its first missing one (@missing bytes in) down to its parent. */
static int plan_dirs(struct plan *pl, const char *rel, size_t missing)
{
        for (size_t at = missing;;) {
                const char *next;
                bool seen = false;

                for (size_t i = 0; i < pl->n_dirs && !seen; i++)
                        seen = strlen(pl->dirs[i]) == at && !strncmp(pl->dirs[i], rel, at);
                if (!seen) {
                        char **v = realloc(pl->dirs, (pl->n_dirs + 1) * sizeof(*v));

                        if (!v)
                                return -ENOMEM;
                        pl->dirs = v;
                        if (!(v[pl->n_dirs] = strndup(rel, at)))
                                return -ENOMEM;
                        pl->n_dirs++;
                }
                next = strchr(rel + at + 1, '/');
                if (!next)
                        return 0;
                at = (size_t)(next - rel);
        }
}

static int plan_file(struct plan *pl, int treefd, const heal_file_change *c, heal_error *err)
{
        struct wb_op *op = &pl->ops[pl->n];
        _cleanup_close_ int fd = -1;
        const char *name;
        size_t missing = 0;
        int r;

        if (!c->file || !c->after)
                return heal_error_set(err, -EINVAL, "a file of the patch has no path or content");
        r = wb_check_path(c->file, err);
        if (r < 0)
                return r;
        for (size_t j = 0; j < pl->n; j++)
                if (strcmp(pl->ops[j].path, c->file) == 0)
                        return heal_error_set(err, -EINVAL, "'%s' is twice in the patch", c->file);
        *op = (struct wb_op){
                .path = c->file, .to = c->after, .to_len = strlen(c->after), .to_exists = true
        };
        pl->n++;
        r = wb_open_parent(&fd, &name, &missing, treefd, c->file, false, err);
        if (r == -ENOENT) {
                heal_error_clear(err);
                if (plan_dirs(pl, c->file, missing) < 0)
                        return heal_error_set(err, -ENOMEM, "out of memory");
        } else if (r < 0) {
                return r;
        } else if ((r = wb_read(&op->from, fd, name, c->file, err)) < 0) {
                return r;
        }
        op->to_mode = op->from.exists ? op->from.mode : WB_MODE_NEW;
        if (!c->before && op->from.exists)
                return heal_error_set(err, -ESTALE,
                                      "the tree changed during the search: '%s' exists now; "
                                      "nothing was written",
                                      c->file);
        if (c->before && (!op->from.exists || op->from.len != strlen(c->before) ||
                          memcmp(op->from.data, c->before, op->from.len) != 0))
                return heal_error_set(err, -ESTALE,
                                      "the tree changed during the search: '%s' differs from "
                                      "what the baseline saw; nothing was written",
                                      c->file);
        return 0;
}

/* A manifest string: jansson takes only UTF-8; other bytes become '?'. */
static json_t *json_text(const char *s)
{
        json_t *j = json_string(s);
        char *copy;

        if (j || !s)
                return j ? j : json_null();
        copy = strdup(s);
        if (!copy)
                return NULL;
        for (char *p = copy; *p; p++)
                if ((unsigned char)*p >= 0x80)
                        *p = '?';
        j = json_string(copy);
        free(copy);
        return j;
}

static json_t *manifest_file(const struct wb_op *op)
{
        char before[17], after[17];

        wb_hash(after, op->to, op->to_len);
        if (op->from.exists)
                wb_hash(before, op->from.data, op->from.len);
        return json_pack("{s:s, s:b, s:o, s:o, s:o, s:I, s:s}", "path", op->path, "existed",
                         op->from.exists, "mode",
                         op->from.exists ? json_integer(op->from.mode) : json_null(), "before_size",
                         op->from.exists ? json_integer((json_int_t)op->from.len) : json_null(),
                         "before_xxh3", op->from.exists ? json_string(before) : json_null(),
                         "after_size", (json_int_t)op->to_len, "after_xxh3", after);
}

static int manifest_build(char **ret, const char *id, const char *tree, const char *command,
                          const struct plan *pl, heal_error *err)
{
        json_t *files = json_array(), *dirs = json_array(), *m;
        char when[32];
        time_t now = time(NULL);
        struct tm tm;

        gmtime_r(&now, &tm);
        strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
        for (size_t i = 0; files && i < pl->n; i++)
                if (json_array_append_new(files, manifest_file(&pl->ops[i])) < 0) {
                        json_decref(files);
                        json_decref(dirs);
                        return heal_error_set(err, -EINVAL, "'%s': the path is not UTF-8",
                                              pl->ops[i].path);
                }
        for (size_t i = 0; dirs && i < pl->n_dirs; i++)
                if (json_array_append_new(dirs, json_string(pl->dirs[i])) < 0) {
                        json_decref(files);
                        json_decref(dirs);
                        return heal_error_set(err, -EINVAL, "'%s': the path is not UTF-8",
                                              pl->dirs[i]);
                }
        m = json_pack("{s:i, s:s, s:s, s:o, s:o, s:o, s:o}", "version", 1, "id", id, "time", when,
                      "tree", json_text(tree), "command", json_text(command), "files", files,
                      "dirs", dirs);
        *ret = m ? json_dumps(m, JSON_INDENT(2)) : NULL;
        json_decref(m);
        return *ret ? 0 : heal_error_set(err, -ENOMEM, "out of memory");
}

/* A new entry directory in @undofd, named for the time (UTC) and a counter; its fd. */
static int entry_create(char *id, size_t id_len, int undofd, const char *where, heal_error *err)
{
        time_t now = time(NULL);
        char stamp[32];
        struct tm tm;

        gmtime_r(&now, &tm);
        strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
        for (unsigned n = 1; n < 100000; n++) {
                char undone[NAME_MAX + 1];

                (void)str_printf(id, id_len, "%s-%03u", stamp, n);
                (void)str_printf(undone, sizeof(undone), "%s%s", id, WB_UNDONE);
                if (faccessat(undofd, undone, F_OK, AT_SYMLINK_NOFOLLOW) == 0)
                        continue;
                if (mkdirat(undofd, id, 0700) == 0) {
                        int fd =
                                openat(undofd, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

                        if (fd < 0)
                                return heal_error_set(err, -errno, "'%s/%s': %m", where, id);
                        return fd;
                }
                if (errno != EEXIST)
                        return heal_error_set(err, -errno, "'%s/%s': %m", where, id);
        }
        return heal_error_set(err, -EEXIST, "'%s': no free entry name", where);
}

/* The originals under ENTRY/files/, then ENTRY/manifest.json, all fsync'd. */
static int entry_fill(int entryfd, const struct plan *pl, const char *manifest, heal_error *err)
{
        _cleanup_close_ int filesfd = -1;
        int r;

        if (mkdirat(entryfd, "files", 0700) < 0)
                return heal_error_set(err, -errno, "files: %m");
        filesfd = openat(entryfd, "files", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (filesfd < 0)
                return heal_error_set(err, -errno, "files: %m");
        for (size_t i = 0; i < pl->n; i++) {
                const struct wb_op *op = &pl->ops[i];
                _cleanup_close_ int fd = -1;
                const char *name;

                if (!op->from.exists)
                        continue;
                r = wb_open_parent(&fd, &name, NULL, filesfd, op->path, true, err);
                if (r < 0)
                        return r;
                r = wb_write_new(fd, name, op->from.data, op->from.len, 0600);
                if (r == 0 && fsync(fd) < 0)
                        r = -errno;
                if (r < 0)
                        return heal_error_set(err, r, "'%s': %s", op->path, strerror(-r));
        }
        if (fsync(filesfd) < 0)
                return heal_error_set(err, -errno, "files: %m");
        r = wb_write_new(entryfd, WB_MANIFEST ".tmp", manifest, strlen(manifest), 0600);
        if (r == 0 && renameat(entryfd, WB_MANIFEST ".tmp", entryfd, WB_MANIFEST) < 0)
                r = -errno;
        if (r == 0 && fsync(entryfd) < 0)
                r = -errno;
        if (r < 0)
                return heal_error_set(err, r, WB_MANIFEST ": %s", strerror(-r));
        return 0;
}

/* Steps 1 and 2: every file checked; the entry written. The entry's fd, its id in @id. */
static int prepare(struct plan *pl, char *id, size_t id_len, int *ret_undofd, int treefd,
                   const heal_patch *p, const heal_writeback_opts *o, heal_error *err)
{
        _cleanup_close_ int undofd = -1, entryfd = -1;
        _cleanup_free_ char *manifest = NULL;
        char where[PATH_MAX];
        int r;

        pl->ops = calloc(p->n_files, sizeof(*pl->ops));
        if (!pl->ops)
                return heal_error_set(err, -ENOMEM, "out of memory");
        for (size_t i = 0; i < p->n_files; i++)
                if ((r = plan_file(pl, treefd, &p->files[i], err)) < 0)
                        return r;
        r = wb_open_undo_dir(&undofd, where, treefd, o->tree, o->state_dir, true, err);
        if (r < 0)
                return heal_error_prefix(err, r, "nothing was written");
        entryfd = entry_create(id, id_len, undofd, where, err);
        if (entryfd < 0)
                return heal_error_prefix(err, entryfd, "nothing was written");
        r = manifest_build(&manifest, id, o->tree, o->command, pl, err);
        if (r >= 0)
                r = entry_fill(entryfd, pl, manifest, err);
        if (r >= 0 && fsync(undofd) < 0)
                r = heal_error_set(err, -errno, "fsync: %m");
        if (r < 0) {
                (void)wb_rm_rf(undofd, id);
                return heal_error_prefix(err, r,
                                         "saving the originals in '%s/%s' (nothing was "
                                         "written)",
                                         where, id);
        }
        *ret_undofd = TAKE_FD(undofd);
        return 0;
}

int heal_writeback(char **ret_id, const heal_patch *p, const heal_writeback_opts *o,
                   heal_error *err)
{
        _cleanup_close_ int treefd = -1, undofd = -1;
        _cleanup_free_ char *ret = NULL;
        struct plan pl = { 0 };
        char id[64], hint[128];
        bool clean;
        sigset_t old;
        int r;

        if (!ret_id || !p || !o || !o->tree || o->tree[0] != '/' ||
            (o->state_dir && o->state_dir[0] != '/') || (p->n_files && !p->files))
                return heal_error_set(err, -EINVAL, "invalid argument");
        if (!p->n_files)
                return heal_error_set(err, -EINVAL, "the patch changes no file");
        treefd = open(o->tree, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (treefd < 0)
                return heal_error_set(err, -errno, "'%s': %m", o->tree);
        r = prepare(&pl, id, sizeof(id), &undofd, treefd, p, o, err);
        if (r < 0)
                goto out;
        ret = strdup(id);
        if (!ret) {
                r = heal_error_set(err, -ENOMEM, "out of memory");
                (void)wb_rm_rf(undofd, id);
                goto out;
        }
        (void)str_printf(hint, sizeof(hint), "'heal undo %s' restores them", id);
        wb_signals_block(&old);
        r = wb_apply(&clean, treefd, pl.ops, pl.n, (const char *const *)pl.dirs, pl.n_dirs, hint,
                     err);
        if (r < 0 && clean) {
                /* the tree is as it was: the entry would undo nothing */
                (void)wb_rm_rf(undofd, id);
                (void)fsync(undofd);
        }
        wb_signals_restore(&old);
        if (r >= 0)
                *ret_id = TAKE_PTR(ret);
out:
        plan_release(&pl);
        return r;
}
