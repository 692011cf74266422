/* SPDX-License-Identifier: MIT */
/*
 * Undo of a write-back (include/heal/writeback.h, docs/writeback.md). The manifest says what
 * heal wrote (size and XXH3-64 of each file after) and what was there before; a file that is
 * neither has been changed by someone else since, and is only overwritten when forced. A file
 * already back to its original is left alone, so that an undo cut short (or a write-back whose
 * rollback failed) can simply be run again.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "heal/writeback.h"

#include "core/util.h"
#include "repair/writeback-internal.h"

struct mfile {
        const char *path; /* borrowed from the manifest's JSON */
        bool existed;
        mode_t mode;
        size_t before_size, after_size;
        const char *before, *after; /* hex XXH3-64 */
};

struct manifest {
        json_t *root;
        const char *time, *command;
        struct mfile *files;
        size_t n_files;
        const char **dirs;
        size_t n_dirs;
};

static void manifest_release(struct manifest *m)
{
        json_decref(m->root);
        free(m->files);
        free(m->dirs);
        *m = (struct manifest){ 0 };
}

static bool is_hash(const char *s)
{
        return s && strlen(s) == 16 && strspn(s, "0123456789abcdef") == 16;
}

static int manifest_file(struct mfile *f, json_t *j)
{
        json_t *mode = NULL, *bsize = NULL, *bhash = NULL;
        json_int_t asize = 0;
        int existed = 0;

        if (json_unpack(j, "{s:s, s:b, s?o, s?o, s?o, s:I, s:s}", "path", &f->path, "existed",
                        &existed, "mode", &mode, "before_size", &bsize, "before_xxh3", &bhash,
                        "after_size", &asize, "after_xxh3", &f->after) < 0)
                return -EBADMSG;
        f->existed = existed;
        f->before = json_string_value(bhash);
        if (wb_check_path(f->path, NULL) < 0 || !is_hash(f->after) || asize < 0)
                return -EBADMSG;
        f->after_size = (size_t)asize;
        if (!existed)
                return 0;
        if (!json_is_integer(mode) || !json_is_integer(bsize) || json_integer_value(bsize) < 0 ||
            !is_hash(f->before))
                return -EBADMSG;
        f->mode = (mode_t)json_integer_value(mode) & 07777;
        f->before_size = (size_t)json_integer_value(bsize);
        return 0;
}

/* ENTRY/manifest.json read and checked (every path as heal_writeback() checks them). */
static int manifest_read(struct manifest *m, int entryfd, heal_error *err)
{
        _cleanup_close_ int fd = -1;
        json_t *files, *dirs, *cmd = NULL;
        json_error_t jerr;

        *m = (struct manifest){ 0 };
        fd = openat(entryfd, WB_MANIFEST, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return heal_error_set(err, -EBADMSG, WB_MANIFEST ": %m");
        m->root = json_loadfd(fd, 0, &jerr);
        if (!m->root)
                return heal_error_set(err, -EBADMSG, WB_MANIFEST ": %s", jerr.text);
        if (json_unpack(m->root, "{s:s, s?o, s:o, s:o}", "time", &m->time, "command", &cmd, "files",
                        &files, "dirs", &dirs) < 0 ||
            !json_is_array(files) || !json_is_array(dirs))
                goto bad;
        m->command = json_string_value(cmd);
        m->files = calloc(json_array_size(files) + 1, sizeof(*m->files));
        m->dirs = calloc(json_array_size(dirs) + 1, sizeof(*m->dirs));
        if (!m->files || !m->dirs)
                return heal_error_set(err, -ENOMEM, "out of memory");
        for (size_t i = 0; i < json_array_size(files); i++, m->n_files++)
                if (manifest_file(&m->files[i], json_array_get(files, i)) < 0)
                        goto bad;
        for (size_t i = 0; i < json_array_size(dirs); i++, m->n_dirs++) {
                m->dirs[i] = json_string_value(json_array_get(dirs, i));
                if (!m->dirs[i] || wb_check_path(m->dirs[i], NULL) < 0)
                        goto bad;
        }
        return 0;
bad:
        return heal_error_set(err, -EBADMSG, WB_MANIFEST ": not what heal writes");
}

static bool valid_id(const char *id)
{
        return id[0] && id[0] != '.' && !strchr(id, '/') && strlen(id) < NAME_MAX - 8;
}

static void entry_release(heal_undo_entry *e)
{
        free(e->id);
        free(e->time);
        free(e->command);
        for (size_t i = 0; i < e->n_files; i++)
                free(e->files[i]);
        free(e->files);
}

void heal_undo_entries_release(heal_undo_entries *l)
{
        if (!l)
                return;
        for (size_t i = 0; i < l->n; i++)
                entry_release(&l->v[i]);
        free(l->v);
        *l = (heal_undo_entries){ 0 };
}

/* The entry @name of @undofd, if it has a readable manifest: 0 and @e filled, 1 to skip it. */
static int entry_load(heal_undo_entry *e, int undofd, const char *name)
{
        size_t len = strlen(name), sl = strlen(WB_UNDONE);
        _cleanup_close_ int fd = -1;
        struct manifest m = { 0 };

        *e = (heal_undo_entry){ 0 };
        if (name[0] == '.')
                return 1;
        fd = openat(undofd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0 || manifest_read(&m, fd, NULL) < 0) {
                manifest_release(&m);
                return 1;
        }
        e->undone = len > sl && strcmp(name + len - sl, WB_UNDONE) == 0;
        e->id = strndup(name, e->undone ? len - sl : len);
        e->time = strdup(m.time);
        e->command = m.command ? strdup(m.command) : NULL;
        e->files = calloc(m.n_files + 1, sizeof(*e->files));
        for (size_t i = 0; e->files && i < m.n_files; i++, e->n_files++)
                if (!(e->files[i] = strdup(m.files[i].path)))
                        break;
        if (!e->id || !e->time || (m.command && !e->command) || !e->files ||
            e->n_files != m.n_files) {
                manifest_release(&m);
                entry_release(e);
                return -ENOMEM;
        }
        manifest_release(&m);
        return 0;
}

static int by_id(const void *a, const void *b)
{
        const heal_undo_entry *x = a, *y = b;

        return strcmp(x->id, y->id);
}

static int scan(heal_undo_entries *ret, int undofd, heal_error *err)
{
        heal_undo_entries l = { 0 };
        struct dirent *de;
        int fd, r = 0;
        DIR *d;

        fd = fcntl(undofd, F_DUPFD_CLOEXEC, 3);
        if (fd < 0 || !(d = fdopendir(fd))) {
                r = -errno;
                safe_close(fd);
                return heal_error_set(err, r, "undo entries: %s", strerror(-r));
        }
        while (r >= 0 && (de = readdir(d))) {
                heal_undo_entry e, *v;

                r = entry_load(&e, undofd, de->d_name);
                if (r != 0)
                        continue;
                v = realloc(l.v, (l.n + 1) * sizeof(*v));
                if (!v) {
                        entry_release(&e);
                        r = -ENOMEM;
                        break;
                }
                l.v = v;
                l.v[l.n++] = e;
        }
        closedir(d);
        if (r < 0) {
                heal_undo_entries_release(&l);
                return heal_error_set(err, r, "out of memory");
        }
        if (l.n)
                qsort(l.v, l.n, sizeof(*l.v), by_id);
        *ret = l;
        return 0;
}

int heal_undo_list(heal_undo_entries *ret, const heal_undo_opts *o, heal_error *err)
{
        _cleanup_close_ int treefd = -1, undofd = -1;
        int r;

        if (!ret || !o || !o->tree || o->tree[0] != '/' || (o->state_dir && o->state_dir[0] != '/'))
                return heal_error_set(err, -EINVAL, "invalid argument");
        treefd = open(o->tree, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (treefd < 0)
                return heal_error_set(err, -errno, "'%s': %m", o->tree);
        r = wb_open_undo_dir(&undofd, NULL, treefd, o->tree, o->state_dir, false, err);
        if (r == -ENOENT) {
                heal_error_clear(err);
                *ret = (heal_undo_entries){ 0 };
                return 0;
        }
        if (r < 0)
                return r;
        return scan(ret, undofd, err);
}

/* The entry to undo: @o->id, or the latest not undone; its fd, its id in @id. */
static int entry_pick(char *id, size_t id_len, int undofd, const char *where,
                      const heal_undo_opts *o, heal_error *err)
{
        heal_undo_entries l = { 0 };
        char undone[NAME_MAX + 1];
        int fd, r;

        if (!o->id) {
                r = scan(&l, undofd, err);
                if (r < 0)
                        return r;
                for (size_t i = l.n; i-- > 0 && !id[0];)
                        if (!l.v[i].undone)
                                (void)str_printf(id, id_len, "%s", l.v[i].id);
                r = l.n;
                heal_undo_entries_release(&l);
                if (!id[0])
                        return heal_error_set(err, -ENOENT,
                                              r ? "nothing to undo: every write-back in '%s' was "
                                                  "undone already"
                                                : "nothing to undo: no write-back recorded in '%s'",
                                              where);
        } else if (str_printf(id, id_len, "%s", o->id) < 0) {
                return heal_error_set(err, -EINVAL, "'%s': not an undo entry id", o->id);
        }
        fd = openat(undofd, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd >= 0)
                return fd;
        if (errno != ENOENT)
                return heal_error_set(err, -errno, "'%s/%s': %m", where, id);
        (void)str_printf(undone, sizeof(undone), "%s%s", id, WB_UNDONE);
        if (faccessat(undofd, undone, F_OK, AT_SYMLINK_NOFOLLOW) == 0)
                return heal_error_set(err, -ENOENT, "nothing to undo: '%s' was undone already", id);
        return heal_error_set(err, -ENOENT,
                              "nothing to undo: no entry '%s' in '%s' (see 'heal "
                              "undo --list')",
                              id, where);
}

/* The state of @rel beneath @rootfd (absent when a directory on the way is missing). */
static int read_beneath(struct wb_state *ret, int rootfd, const char *rel, heal_error *err)
{
        _cleanup_close_ int fd = -1;
        const char *name;
        int r;

        *ret = (struct wb_state){ 0 };
        r = wb_open_parent(&fd, &name, NULL, rootfd, rel, false, err);
        if (r == -ENOENT) {
                heal_error_clear(err);
                return 0;
        }
        if (r < 0)
                return r;
        return wb_read(ret, fd, name, rel, err);
}

static bool state_is(const struct wb_state *s, size_t size, const char *hash)
{
        char h[17];

        if (!s->exists || s->len != size)
                return false;
        wb_hash(h, s->data, s->len);
        return strcmp(h, hash) == 0;
}

/* One file's op: 1 when it is already its original (no op), 0 with @op filled. */
static int undo_file(struct wb_op *op, struct wb_state *backup, bool *ret_forced, int treefd,
                     int filesfd, const struct mfile *f, bool force, heal_error *err)
{
        bool after, before;
        int r;

        r = read_beneath(&op->from, treefd, f->path, err);
        if (r < 0)
                return r;
        after = state_is(&op->from, f->after_size, f->after);
        before = f->existed ? state_is(&op->from, f->before_size, f->before) : !op->from.exists;
        if (before && !after)
                return 1;
        if (!after && !force)
                return heal_error_set(err, -ESTALE,
                                      "'%s' changed since heal wrote it; use --force to restore "
                                      "anyway",
                                      f->path);
        *ret_forced = !after;
        op->path = f->path;
        op->to_exists = f->existed;
        if (!f->existed)
                return 0;
        r = read_beneath(backup, filesfd, f->path, err);
        if (r < 0 || !state_is(backup, f->before_size, f->before))
                return heal_error_set(err, -EBADMSG, "the saved original of '%s' is %s", f->path,
                                      backup->exists ? "damaged" : "missing");
        op->to = backup->data;
        op->to_len = backup->len;
        op->to_mode = f->mode;
        return 0;
}

struct undo_plan {
        struct wb_op *ops;
        struct wb_state *backups;
        size_t n;
        size_t n_forced;
};

static void undo_plan_release(struct undo_plan *u)
{
        for (size_t i = 0; i < u->n; i++) {
                wb_state_release(&u->ops[i].from);
                wb_state_release(&u->backups[i]);
        }
        free(u->ops);
        free(u->backups);
}

static int undo_plan(struct undo_plan *u, int treefd, int entryfd, const struct manifest *m,
                     bool force, heal_error *err)
{
        _cleanup_close_ int filesfd = -1;

        u->ops = calloc(m->n_files + 1, sizeof(*u->ops));
        u->backups = calloc(m->n_files + 1, sizeof(*u->backups));
        if (!u->ops || !u->backups)
                return heal_error_set(err, -ENOMEM, "out of memory");
        filesfd = openat(entryfd, "files", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (filesfd < 0)
                return heal_error_set(err, -EBADMSG, "the saved originals: %m");
        for (size_t i = 0; i < m->n_files; i++) {
                bool forced = false;
                int r;

                /* counted first, so that the release frees what a failure half-read */
                u->n++;
                r = undo_file(&u->ops[u->n - 1], &u->backups[u->n - 1], &forced, treefd, filesfd,
                              &m->files[i], force, err);
                if (r < 0)
                        return r;
                if (r > 0) {
                        u->n--;
                        wb_state_release(&u->ops[u->n].from);
                        wb_state_release(&u->backups[u->n]);
                        continue;
                }
                u->n_forced += forced;
        }
        return 0;
}

static int result_fill(heal_undo_result *ret, const char *id, const struct undo_plan *u)
{
        heal_undo_result res = { .n_forced = u->n_forced };

        res.id = strdup(id);
        res.files = calloc(u->n + 1, sizeof(*res.files));
        for (size_t i = 0; res.id && res.files && i < u->n; i++, res.n_files++)
                if (!(res.files[i] = strdup(u->ops[i].path)))
                        break;
        if (!res.id || !res.files || res.n_files != u->n) {
                heal_undo_result_release(&res);
                return -ENOMEM;
        }
        *ret = res;
        return 0;
}

/* Restore, remove the directories heal made, mark the entry undone. */
static int undo_apply(int treefd, int undofd, const char *id, struct undo_plan *u,
                      const struct manifest *m, heal_error *err)
{
        char hint[128], undone[NAME_MAX + 1];
        bool clean;
        sigset_t old;
        int r;

        (void)str_printf(hint, sizeof(hint), "run 'heal undo %s' again to finish", id);
        (void)str_printf(undone, sizeof(undone), "%s%s", id, WB_UNDONE);
        wb_signals_block(&old);
        r = wb_apply(&clean, treefd, u->ops, u->n, NULL, 0, hint, err);
        if (r >= 0) {
                wb_rmdirs(treefd, m->dirs, m->n_dirs);
                if (renameat(undofd, id, undofd, undone) < 0 || fsync(undofd) < 0)
                        r = heal_error_set(err, -errno,
                                           "the files were restored, but '%s' could not be "
                                           "marked undone: %m",
                                           id);
        }
        wb_signals_restore(&old);
        return r;
}

int heal_undo(heal_undo_result *ret, const heal_undo_opts *o, heal_error *err)
{
        _cleanup_close_ int treefd = -1, undofd = -1, entryfd = -1;
        struct manifest m = { 0 };
        struct undo_plan u = { 0 };
        heal_undo_result res = { 0 };
        char where[PATH_MAX], id[NAME_MAX + 1] = "";
        int r;

        if (!ret || !o || !o->tree || o->tree[0] != '/' || (o->state_dir && o->state_dir[0] != '/'))
                return heal_error_set(err, -EINVAL, "invalid argument");
        if (o->id && !valid_id(o->id))
                return heal_error_set(err, -EINVAL, "'%s': not an undo entry id", o->id);
        if (o->id && strlen(o->id) > strlen(WB_UNDONE) &&
            strcmp(o->id + strlen(o->id) - strlen(WB_UNDONE), WB_UNDONE) == 0)
                return heal_error_set(err, -ENOENT, "nothing to undo: '%s' was undone already",
                                      o->id);
        treefd = open(o->tree, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (treefd < 0)
                return heal_error_set(err, -errno, "'%s': %m", o->tree);
        r = wb_open_undo_dir(&undofd, where, treefd, o->tree, o->state_dir, false, err);
        if (r == -ENOENT)
                return heal_error_set(err, -ENOENT,
                                      "nothing to undo: no write-back recorded in '%s'", where);
        if (r < 0)
                return r;
        entryfd = entry_pick(id, sizeof(id), undofd, where, o, err);
        if (entryfd < 0)
                return entryfd;
        r = manifest_read(&m, entryfd, err);
        if (r >= 0)
                r = undo_plan(&u, treefd, entryfd, &m, o->force, err);
        if (r >= 0 && result_fill(&res, id, &u) < 0)
                r = heal_error_set(err, -ENOMEM, "out of memory");
        if (r >= 0 && !o->dry_run)
                r = undo_apply(treefd, undofd, id, &u, &m, err);
        if (r >= 0)
                *ret = res;
        else
                heal_undo_result_release(&res);
        if (r < 0 && r != -ENOMEM)
                heal_error_prefix(err, r, "undo '%s'", id);
        undo_plan_release(&u);
        manifest_release(&m);
        return r;
}

void heal_undo_result_release(heal_undo_result *r)
{
        if (!r)
                return;
        free(r->id);
        for (size_t i = 0; i < r->n_files; i++)
                free(r->files[i]);
        free(r->files);
        *r = (heal_undo_result){ 0 };
}
