/* SPDX-License-Identifier: MIT */
/*
 * Workspaces: a candidate's view of the tree. The sandbox's default view, with the tree mounted
 * at its own path as an overlay: the tree read-only at the bottom, a host directory holding only
 * the candidate's changed files (the "layer") above it, writes to a hidden tmpfs. The layer is
 * written before the run and removed after it; nothing of the tree is copied or written.
 * .git is hidden (a tmpfs over the directory, an empty file over a worktree's .git file), Go's
 * build cache is heal's own, written by the baseline and read by the candidates through an
 * overlay whose writes vanish, the module cache is bound read-only, and GOFLAGS turns off the
 * test cache and VCS stamping.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "heal/repair.h"

#include "core/util.h"
#include "repair/search-internal.h"

#define RUNNING_MAX 64

static heal_sandbox *_Atomic running[RUNNING_MAX];
static volatile sig_atomic_t cancel_requested;

void heal_repair_cancel(void)
{
        cancel_requested = 1;
        for (size_t i = 0; i < RUNNING_MAX; i++) {
                heal_sandbox *sb = atomic_load(&running[i]);

                if (sb)
                        heal_sandbox_cancel(sb);
        }
}

static volatile sig_atomic_t in_model_call;

bool heal_repair_waiting_for_model(void)
{
        return in_model_call;
}

void repair_model_call(bool on)
{
        in_model_call = on;
}

bool repair_canceled(void)
{
        return cancel_requested;
}

void repair_cancel_reset(void)
{
        cancel_requested = 0;
}

/* Publish @sb to heal_repair_cancel() before its run; a cancel that comes between the check
 * and the run is kept by the sandbox for its next run. */
static int running_add(heal_sandbox *sb)
{
        for (size_t i = 0; i < RUNNING_MAX; i++) {
                heal_sandbox *none = NULL;

                if (atomic_compare_exchange_strong(&running[i], &none, sb))
                        return (int)i;
        }
        return -1;
}

static void running_remove(int slot)
{
        if (slot >= 0)
                atomic_store(&running[slot], NULL);
}

static int rm_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
        (void)st, (void)type, (void)ftw;
        remove(path);
        return 0;
}

static void layer_remove(char *dir)
{
        if (dir[0])
                nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
        dir[0] = '\0';
}

/* mkdir -p of @rel's parent directories beneath @dir (not following symlinks: it is ours). */
static int make_parents(const char *dir, const char *rel)
{
        char path[PATH_MAX];
        int n = snprintf(path, sizeof(path), "%s/%s", dir, rel);

        if (n < 0 || (size_t)n >= sizeof(path))
                return -ENAMETOOLONG;
        for (char *p = path + strlen(dir) + 1; (p = strchr(p, '/')); p++) {
                *p = '\0';
                if (mkdir(path, 0755) < 0 && errno != EEXIST)
                        return -errno;
                *p = '/';
        }
        return 0;
}

static int write_file(const char *path, const char *data, mode_t mode)
{
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode);
        size_t len = strlen(data), off = 0;

        if (fd < 0)
                return -errno;
        while (off < len) {
                ssize_t w = write(fd, data + off, len - off);

                if (w < 0 && errno == EINTR)
                        continue;
                if (w < 0) {
                        int r = -errno;

                        close(fd);
                        return r;
                }
                off += (size_t)w;
        }
        fchmod(fd, mode); /* exact, whatever the umask */
        return close(fd) < 0 ? -errno : 0;
}

static const char *layer_base(void)
{
        const char *base = getenv("XDG_RUNTIME_DIR");

        return base && access(base, W_OK) == 0 ? base : "/tmp";
}

void workspace_sweep(void)
{
        const char *base = layer_base();
        DIR *d = opendir(base);
        struct dirent *e;

        while (d && (e = readdir(d))) {
                char path[PATH_MAX];
                struct stat st;
                int pid;

                /* heal-ws-PID-XXXXXX of a heal that was killed (SIGKILL leaves its layers) */
                if (sscanf(e->d_name, "heal-ws-%d-", &pid) != 1 || pid <= 0 ||
                    (kill(pid, 0) == 0 || errno != ESRCH) ||
                    str_printf(path, sizeof(path), "%s/%s", base, e->d_name) < 0 ||
                    lstat(path, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid())
                        continue;
                layer_remove(path);
        }
        if (d)
                closedir(d);
}

/* The layer: @p's files as the candidate has them, modes as in the tree. */
static int layer_write(char dir[PATH_MAX], const struct ws_config *c, const heal_patch *p,
                       heal_error *err)
{
        const char *base = layer_base();
        int r = 0;

        if (str_printf(dir, PATH_MAX, "%s/heal-ws-%d-XXXXXX", base, (int)getpid()) < 0 ||
            !mkdtemp(dir)) {
                dir[0] = '\0';
                return heal_error_set(err, -errno, "cannot create a workspace layer in %s: %s",
                                      base, strerror(errno));
        }
        chmod(dir, 0755);
        for (size_t i = 0; r == 0 && p && i < p->n_files; i++) {
                const heal_file_change *f = &p->files[i];
                char path[PATH_MAX], orig[PATH_MAX];
                struct stat st;
                mode_t mode = 0644;

                if (!f->after)
                        continue;
                if (str_printf(orig, sizeof(orig), "%s/%s", c->tree, f->file) == 0 &&
                    lstat(orig, &st) == 0 && S_ISREG(st.st_mode))
                        mode = st.st_mode & 07777 & ~(mode_t)(S_ISUID | S_ISGID);
                r = make_parents(dir, f->file);
                if (r == 0)
                        r = str_printf(path, sizeof(path), "%s/%s", dir, f->file);
                if (r == 0)
                        r = write_file(path, f->after, mode);
                if (r < 0)
                        r = heal_error_set(err, r, "workspace layer: '%s': %s", f->file,
                                           strerror(-r));
        }
        if (r == 0 && c->git_is_file) { /* a worktree's .git file, hidden by an empty one */
                char path[PATH_MAX];

                if (str_printf(path, sizeof(path), "%s/.git", dir) == 0)
                        r = write_file(path, "", 0644);
        }
        if (r < 0)
                layer_remove(dir);
        return r;
}

static int add_env(heal_sandbox *sb, const struct ws_config *c, heal_error *err)
{
        int r = heal_sandbox_setenv(sb, "HOME", "/tmp", err);

        for (size_t i = 0; r >= 0 && c->env[i]; i++) {
                const char *eq = strchr(c->env[i], '=');
                char name[256];

                if (!eq || (size_t)(eq - c->env[i]) >= sizeof(name))
                        continue;
                memcpy(name, c->env[i], (size_t)(eq - c->env[i]));
                name[eq - c->env[i]] = '\0';
                r = heal_sandbox_setenv(sb, name, eq + 1, err);
        }
        return r;
}

static int add_mounts(heal_sandbox *sb, const struct ws_config *c, const char *layer,
                      heal_error *err)
{
        static const char *const ro[] = { "ro", NULL };
        static const char *const git_opts[] = { "ro", "size=4k", "nr_inodes=16", NULL };
        char lower[PATH_MAX + 16];
        const char *ov[] = { lower, NULL };
        int r;

        r = heal_sandbox_add_mount(sb, "bind", layer, "/.heal-layer", ro, err);
        if (r >= 0) {
                snprintf(lower, sizeof(lower), "lowerdir=/.heal-layer");
                r = heal_sandbox_add_mount(sb, "overlay", c->tree, c->tree, ov, err);
        }
        if (r >= 0 && c->git_is_dir) {
                char git[PATH_MAX];

                snprintf(git, sizeof(git), "%s/.git", c->tree);
                r = heal_sandbox_add_mount(sb, "tmpfs", NULL, git, git_opts, err);
        }
        /* Candidates read the warm cache but cannot write it: a candidate's code could plant
         * a build result that a later candidate, the verification or the user would trust. */
        if (r >= 0 && c->gocache[0] && c->cache_rw)
                r = heal_sandbox_add_mount(sb, "bind", c->gocache, c->gocache, NULL, err);
        else if (r >= 0 && c->gocache[0])
                r = heal_sandbox_add_mount(sb, "overlay", c->gocache, c->gocache, NULL, err);
        if (r >= 0 && c->gomodcache[0])
                r = heal_sandbox_add_mount(sb, "bind", c->gomodcache, c->gomodcache, ro, err);
        return r;
}

static int sandbox_for(heal_sandbox **ret, const struct ws_config *c, const char *layer,
                       heal_sandbox_output_fn stream, void *userdata, heal_error *err)
{
        heal_sandbox *sb = NULL;
        extern char **environ;
        int r = heal_sandbox_new(&sb, err);

        if (r >= 0)
                r = heal_sandbox_set_flags(sb, c->sandbox_flags | HEAL_SANDBOX_EXTEND_DEFAULT, err);
        if (r >= 0)
                r = heal_sandbox_set_limits(sb, &c->limits, err);
        if (r >= 0)
                r = heal_sandbox_set_cwd(sb, c->cwd, err);
        if (r >= 0)
                r = heal_sandbox_inherit_env(sb, (const char *const *)environ, err);
        if (r >= 0)
                r = add_env(sb, c, err);
        if (r >= 0)
                r = add_mounts(sb, c, layer, err);
        if (r >= 0)
                heal_sandbox_set_output_fn(sb, stream, userdata, true);
        if (r < 0) {
                heal_sandbox_free(sb);
                return r;
        }
        *ret = sb;
        return 0;
}

int workspace_run(heal_sandbox_result *ret, const struct ws_config *c, const char *const *argv,
                  const heal_patch *p, heal_sandbox_output_fn stream, void *userdata,
                  heal_error *err)
{
        char layer[PATH_MAX] = "";
        heal_sandbox *sb = NULL;
        int slot, r;

        if (repair_canceled())
                return heal_error_set(err, -ECANCELED, "canceled");
        r = layer_write(layer, c, p, err);
        if (r < 0)
                return r;
        r = sandbox_for(&sb, c, layer, stream, userdata, err);
        if (r >= 0) {
                slot = running_add(sb);
                if (repair_canceled())
                        r = heal_error_set(err, -ECANCELED, "canceled");
                else
                        r = heal_sandbox_run(sb, argv, ret, err);
                running_remove(slot);
        }
        heal_sandbox_free(sb);
        layer_remove(layer);
        if (r >= 0 && ret->status == HEAL_STATUS_CANCELED) {
                heal_sandbox_result_release(ret);
                r = heal_error_set(err, -ECANCELED, "canceled");
        }
        return r;
}
