/* SPDX-License-Identifier: MIT */
/*
 * The default view, and compiling a plan into child_ops: every path and mount(2) data string the
 * child will use is built here, in the parent, because the child may not allocate (the caller
 * may be multi-threaded, and the child is a fork of it).
 */
#include <errno.h>
#include <limits.h>
#include <linux/mount.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/util.h"
#include "sandbox-internal.h"

void plan_entries_free(struct mount_entry *entries, size_t n)
{
        for (size_t i = 0; i < n; i++)
                plan_entry_release(&entries[i]);
        free(entries);
}

void plan_compiled_release(struct plan_compiled *pc)
{
        for (size_t i = 0; i < pc->n_strings; i++)
                free(pc->strings[i]);
        for (size_t i = 0; i < pc->n_ops; i++)
                if (pc->ops[i].src_fd >= 0)
                        close(pc->ops[i].src_fd);
        free(pc->strings);
        free(pc->ops);
        memset(pc, 0, sizeof(*pc));
}

/* Keep @s in the pool; returns it, or NULL on allocation failure (and frees @s). */
static char *pool_keep(struct plan_compiled *pc, char *s)
{
        char **grown;

        if (!s)
                return NULL;
        grown = realloc(pc->strings, (pc->n_strings + 1) * sizeof(*grown));
        if (!grown) {
                free(s);
                return NULL;
        }
        pc->strings = grown;
        pc->strings[pc->n_strings++] = s;
        return s;
}

static char *pool_printf(struct plan_compiled *pc, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));

static char *pool_printf(struct plan_compiled *pc, const char *fmt, ...)
{
        va_list ap;
        char *s;
        int n;

        va_start(ap, fmt);
        n = vasprintf(&s, fmt, ap);
        va_end(ap);
        return n < 0 ? NULL : pool_keep(pc, s);
}

/* "/newroot" + sandbox path ("/" maps to "/newroot"). */
static char *newroot_path(struct plan_compiled *pc, const char *path)
{
        return pool_printf(pc, "/newroot%s", strcmp(path, "/") == 0 ? "" : path);
}

static char *oldroot_path(struct plan_compiled *pc, const char *path)
{
        return pool_printf(pc, "/oldroot%s", strcmp(path, "/") == 0 ? "" : path);
}

static unsigned long attr_to_ms(uint64_t attr, bool skip_ro)
{
        unsigned long f = 0;

        if ((attr & MOUNT_ATTR_RDONLY) && !skip_ro)
                f |= MS_RDONLY;
        if (attr & MOUNT_ATTR_NOSUID)
                f |= MS_NOSUID;
        if (attr & MOUNT_ATTR_NODEV)
                f |= MS_NODEV;
        if (attr & MOUNT_ATTR_NOEXEC)
                f |= MS_NOEXEC;
        if (attr & MOUNT_ATTR_NOATIME)
                f |= MS_NOATIME;
        return f;
}

/* "size=..,nr_inodes=.." from the entry's own values or the limits; "" when neither applies. */
static char *tmpfs_sizing(struct plan_compiled *pc, const char *size, const char *inodes,
                          const heal_sandbox_limits *lim)
{
        char sz[32], in[32];

        /* Entry values were normalised to at most 20 digits (or "N%") when added. */
        snprintf(sz, sizeof(sz), "%llu", (unsigned long long)lim->tmpfs_max_bytes);
        snprintf(in, sizeof(in), "%llu", (unsigned long long)lim->tmpfs_max_inodes);
        if (!size && !lim->tmpfs_max_bytes)
                size = NULL;
        else if (!size)
                size = sz;
        if (!inodes && lim->tmpfs_max_inodes)
                inodes = in;
        return pool_printf(pc, "%s%s%s%s%s", size ? "size=" : "", size ? size : "",
                           size && inodes ? "," : "", inodes ? "nr_inodes=" : "",
                           inodes ? inodes : "");
}

/* "a\0b\0...\0\0": the ':'-separated @lower layers, then @upper and @work when given. */
static const char *layer_list(struct plan_compiled *pc, const char *lower, const char *upper,
                              const char *work)
{
        size_t ll = strlen(lower), ul = upper ? strlen(upper) + 1 : 0,
               wl = work ? strlen(work) + 1 : 0;
        char *s = malloc(ll + ul + wl + 2);

        if (!s)
                return NULL;
        memcpy(s, lower, ll + 1);
        for (char *c = s; (c = strchr(c, ':')); c++)
                *c = '\0';
        if (upper)
                memcpy(s + ll + 1, upper, ul);
        if (work)
                memcpy(s + ll + 1 + ul, work, wl);
        s[ll + 1 + ul + wl] = '\0';
        return pool_keep(pc, s);
}

/* The entry whose filesystem holds @path: the last one before @before mounted over a parent. */
static int find_cover(const struct mount_entry *entries, size_t before, const char *path)
{
        int c = -1;

        for (size_t j = 0; j < before; j++)
                if (path_under(path, entries[j].target))
                        c = (int)j;
        return c;
}

/* The index of the entry mounting exactly @target before @before, or -1. */
static int find_target(const struct mount_entry *entries, size_t before, const char *target)
{
        for (size_t j = 0; j < before; j++)
                if (strcmp(entries[j].target, target) == 0)
                        return (int)j;
        return -1;
}

/* Does a later overlay use this tmpfs's root as its upperdir? */
static bool is_upper_root(const struct mount_entry *entries, size_t n, size_t idx)
{
        for (size_t j = idx + 1; j < n; j++)
                if (entries[j].kind == HEAL_MOUNT_OVERLAY && entries[j].upperdir &&
                    strcmp(entries[j].upperdir, entries[idx].target) == 0)
                        return true;
        return false;
}

/*
 * upper/work when upperdir is a plain directory: overlayfs wants the workdir on the same mount,
 * outside the upper tree, so it goes next to it. When upperdir is the root of a tmpfs of the
 * plan, that tmpfs was mounted at a hidden place holding u/ and w/, with u/ bound at upperdir.
 */
static int overlay_upper(struct plan_compiled *pc, struct child_op *op,
                         const struct mount_entry *entries, size_t idx, const char **upper,
                         const char **work, heal_error *err)
{
        const struct mount_entry *e = &entries[idx];
        int j = find_target(entries, idx, e->upperdir);
        char *dir, *slash;

        if (j >= 0 && entries[j].kind == HEAL_MOUNT_TMPFS && !e->workdir) {
                *upper = pool_printf(pc, "/.heal-up-%d/u", j);
                *work = pool_printf(pc, "/.heal-up-%d/w", j);
                return 0;
        }
        /* As root, copy-up would put setuid-root copies of the lower layer's files on the host. */
        if (geteuid() == 0 && find_cover(entries, idx, e->upperdir) >= 0 &&
            entries[find_cover(entries, idx, e->upperdir)].kind == HEAL_MOUNT_BIND)
                return heal_error_set(
                        err, -EPERM,
                        "mount entry %zu (overlay at '%s'): heal runs as root, and an "
                        "upperdir on a host directory ('%s') would let overlayfs "
                        "copy setuid-root files of the lower layer onto the host; "
                        "use a tmpfs upperdir (or none), or run heal unprivileged",
                        idx, e->target, e->upperdir);
        if (j >= 0 && !e->workdir)
                return heal_error_set(err, -EINVAL,
                                      "mount entry %zu (overlay at '%s'): upperdir '%s' is the "
                                      "root of entry %d (%s); overlayfs needs a workdir on the "
                                      "same mount: give workdir= or use a tmpfs as upperdir",
                                      idx, e->target, e->upperdir, j,
                                      plan_kind_name(entries[j].kind));
        *upper = newroot_path(pc, e->upperdir);
        if (e->workdir) {
                *work = newroot_path(pc, e->workdir);
                return 0;
        }
        dir = strdup(e->upperdir);
        if (!dir)
                return heal_error_set(err, -ENOMEM, "out of memory");
        slash = strrchr(dir, '/');
        *slash = '\0';
        *work = pool_printf(pc, "/newroot%s/.heal-work-%s", dir, slash + 1);
        op->mkworkdir = *work;
        free(dir);
        return 0;
}

static int compile_overlay(struct plan_compiled *pc, struct child_op *op,
                           const struct mount_entry *entries, size_t idx,
                           const heal_sandbox_limits *lim, heal_error *err)
{
        const struct mount_entry *e = &entries[idx];
        struct stat st;
        int r;

        char lower[8192] = "";
        size_t len = 0;
        const char *upper = NULL, *work = NULL;

        if (e->lowerdir) {
                char *copy = strdup(e->lowerdir), *save = NULL;

                if (!copy)
                        return heal_error_set(err, -ENOMEM, "out of memory");
                for (char *t = strtok_r(copy, ":", &save); t; t = strtok_r(NULL, ":", &save)) {
                        int n = snprintf(lower + len, sizeof(lower) - len, "%s/newroot%s",
                                         len ? ":" : "", t);
                        if (t[0] != '/' || n < 0 || (size_t)n >= sizeof(lower) - len) {
                                free(copy);
                                return heal_error_set(err, -EINVAL,
                                                      "mount entry %zu (overlay at '%s'): bad "
                                                      "lowerdir '%s'",
                                                      idx, e->target, e->lowerdir);
                        }
                        len += (size_t)n;
                }
                free(copy);
        }
        if (e->source) {
                if (strpbrk(e->source, ":,\\"))
                        return heal_error_set(err, -EINVAL,
                                              "mount entry %zu (overlay at '%s'): source '%s' "
                                              "holds ':', ',' or '\\', which overlayfs cannot take",
                                              idx, e->target, e->source);
                snprintf(lower + len, sizeof(lower) - len, "%s/oldroot%s", len ? ":" : "",
                         e->source);
                /* What the child must find there (child-mount.c: overlay_with_fds). */
                op->src = oldroot_path(pc, e->source);
                if (stat(e->source, &st) == 0) {
                        op->src_dev = st.st_dev;
                        op->src_ino = st.st_ino;
                }
        }
        if (e->upperdir) {
                r = overlay_upper(pc, op, entries, idx, &upper, &work, err);
                if (r < 0)
                        return r;
        } else {
                op->hidden = pool_printf(pc, "/.heal-ovl-%zu", idx);
                op->hidden_data = tmpfs_sizing(pc, NULL, NULL, lim);
                upper = pool_printf(pc, "/.heal-ovl-%zu/u", idx);
                work = pool_printf(pc, "/.heal-ovl-%zu/w", idx);
        }
        if (!upper || !work)
                return heal_error_set(err, -ENOMEM, "out of memory");
        op->data = pool_printf(pc, "lowerdir=%s,upperdir=%s,workdir=%s", lower, upper, work);
        op->layers = layer_list(pc, lower, e->upperdir ? upper : NULL, e->upperdir ? work : NULL);
        op->ms_flags = attr_to_ms(e->attr_set, false);
        return op->data ? 0 : heal_error_set(err, -ENOMEM, "out of memory");
}

/*
 * Could another host user rename or swap a directory on @path while heal works on it? Every
 * directory from "/" down must be owned by root or us and not writable by group or others,
 * unless sticky (then others cannot rename our entries). Like sshd's StrictModes. Returns the
 * first unsafe directory in @bad, or false when all are safe.
 */
static bool host_path_unsafe(const char *path, char *bad, size_t len)
{
        char buf[PATH_MAX];
        size_t n = strlen(path);
        struct stat st;

        if (n >= sizeof(buf))
                return true;
        memcpy(buf, path, n + 1);
        for (size_t i = 1; i <= n; i++) {
                if (buf[i] != '/' && buf[i] != '\0')
                        continue;
                buf[i] = '\0';
                if (lstat(buf, &st) < 0 || S_ISLNK(st.st_mode) ||
                    (st.st_uid != 0 && st.st_uid != geteuid()) ||
                    ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX))) {
                        snprintf(bad, len, "%s", buf);
                        return true;
                }
                buf[i] = i < n ? '/' : '\0';
        }
        return false;
}

/*
 * As root, heal keeps working inside a proc or dev mount after mounting it (read-only /proc/sys,
 * device nodes): on a bind of a directory another user can change, a well-timed rename would
 * redirect that work. Such a mountpoint is refused.
 */
static int check_root_mountpoint(const struct mount_entry *entries, size_t idx, int cover,
                                 heal_error *err)
{
        const struct mount_entry *e = &entries[idx], *c;
        char host[PATH_MAX * 2], bad[PATH_MAX];

        if (geteuid() != 0 || (e->kind != HEAL_MOUNT_PROC && e->kind != HEAL_MOUNT_DEV) ||
            cover < 0 || entries[cover].kind != HEAL_MOUNT_BIND)
                return 0;
        c = &entries[cover];
        snprintf(host, sizeof(host), "%s%s", strcmp(c->source, "/") == 0 ? "" : c->source,
                 e->target + (strcmp(c->target, "/") == 0 ? 0 : strlen(c->target)));
        if (!host_path_unsafe(host, bad, sizeof(bad)))
                return 0;
        return heal_error_set(err, -EPERM,
                              "mount entry %zu (%s at '%s'): heal runs as root and the host "
                              "directory behind it ('%s') can be changed by another user; put it "
                              "on a tmpfs of the plan, or on a path only root owns",
                              idx, plan_kind_name(e->kind), e->target, bad);
}

static int compile_entry(struct plan_compiled *pc, struct child_op *op,
                         const struct mount_entry *entries, size_t n, size_t idx,
                         const heal_sandbox_limits *lim, heal_error *err)
{
        const struct mount_entry *e = &entries[idx];

        op->kind = e->kind;
        op->entry = (int)idx;
        /* The filesystem holding the mountpoint is the one mounted last over a parent path:
         * a later mount at /a hides an earlier one at /a/b. */
        op->cover = -1;
        for (size_t j = 0; j < idx; j++)
                if (path_under(e->target, entries[j].target))
                        op->cover = (int)j;
        if (op->cover >= 0) {
                const struct mount_entry *c = &entries[op->cover];

                op->may_create = c->kind == HEAL_MOUNT_TMPFS || c->kind == HEAL_MOUNT_DEV ||
                                 (c->kind == HEAL_MOUNT_OVERLAY && !c->upperdir);
        }
        if (check_root_mountpoint(entries, idx, op->cover, err) < 0)
                return err ? err->code : -EPERM;
        op->dst = newroot_path(pc, e->target);
        op->attr_set = e->attr_set;
        op->attr_clr = e->attr_clr;
        op->defer_ro = e->defer_ro;
        op->if_present = e->if_present;
        switch (e->kind) {
        case HEAL_MOUNT_BIND: {
                struct stat st;

                op->src = oldroot_path(pc, e->source);
                op->is_file = !e->source_is_dir;
                /* What the child must find there (child-mount.c: mount_bind). */
                if (stat(e->source, &st) == 0) {
                        op->src_dev = st.st_dev;
                        op->src_ino = st.st_ino;
                }
                break;
        }
        case HEAL_MOUNT_TMPFS: {
                char *sizing = tmpfs_sizing(pc, e->size, e->nr_inodes, lim);

                if (!sizing)
                        return heal_error_set(err, -ENOMEM, "out of memory");
                op->data = pool_printf(pc, "%s%s%s", e->tmpfs_opts ? e->tmpfs_opts : "",
                                       e->tmpfs_opts && *sizing ? "," : "", sizing);
                op->ms_flags = attr_to_ms(e->attr_set, e->defer_ro);
                if (is_upper_root(entries, n, idx))
                        op->hidden = pool_printf(pc, "/.heal-up-%zu", idx);
                break;
        }
        case HEAL_MOUNT_PROC:
                op->ms_flags = attr_to_ms(e->attr_set, false);
                break;
        case HEAL_MOUNT_DEV:
                op->data = "mode=0755,size=64k,nr_inodes=64";
                op->hidden_data = tmpfs_sizing(pc, NULL, NULL, lim);
                op->ms_flags = attr_to_ms(e->attr_set, false) & ~(unsigned long)MS_RDONLY;
                break;
        case HEAL_MOUNT_OVERLAY:
                return compile_overlay(pc, op, entries, idx, lim, err);
        case MOUNT_KIND_SYMLINK:
                op->src = e->source;
                break;
        default:
                return heal_error_set(err, -EINVAL, "mount entry %zu: unknown type", idx);
        }
        if (!op->dst || (e->kind == HEAL_MOUNT_BIND && !op->src))
                return heal_error_set(err, -ENOMEM, "out of memory");
        return 0;
}

/* mount(2) copies one page of option data: a longer string would be cut, silently changing a
 * layer path. */
#define MOUNT_DATA_MAX 4095

int plan_compile(struct plan_compiled *ret, const struct mount_entry *entries, size_t n,
                 const heal_sandbox_limits *limits, heal_error *err)
{
        struct plan_compiled pc = { 0 };
        int r;

        pc.ops = calloc(n ? n : 1, sizeof(*pc.ops));
        if (!pc.ops)
                return heal_error_set(err, -ENOMEM, "out of memory");
        pc.n_ops = n;
        for (size_t i = 0; i < n; i++)
                pc.ops[i].src_fd = -1;
        for (size_t i = 0; i < n; i++) {
                r = compile_entry(&pc, &pc.ops[i], entries, n, i, limits, err);
                if (r >= 0 && pc.ops[i].data && strlen(pc.ops[i].data) >= MOUNT_DATA_MAX)
                        r = heal_error_set(err, -EINVAL,
                                           "mount entry %zu (%s at '%s'): its mount options are "
                                           "%zu bytes; the kernel reads at most %d",
                                           i, plan_kind_name(entries[i].kind), entries[i].target,
                                           strlen(pc.ops[i].data), MOUNT_DATA_MAX);
                if (r < 0) {
                        plan_compiled_release(&pc);
                        return r;
                }
        }
        *ret = pc;
        return 0;
}

static const char *const system_dirs[] = {
        "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt",
};

static int add_system_dir(struct mount_entry **v, size_t *n, const char *dir, heal_error *err)
{
        static const char *const ro[] = { "ro", NULL };
        char link[PATH_MAX];
        struct stat st;
        ssize_t len;

        if (lstat(dir, &st) < 0)
                return 0; /* not on this host */
        if (S_ISLNK(st.st_mode)) {
                /* /bin -> usr/bin on merged-/usr systems: the same symlink, no mount needed. */
                len = readlink(dir, link, sizeof(link) - 1);
                if (len < 0)
                        return 0;
                link[len] = '\0';
                return plan_entry_add(v, n, MOUNT_KIND_SYMLINK, link, dir, NULL, true, err);
        }
        if (!S_ISDIR(st.st_mode))
                return 0;
        return plan_entry_add(v, n, HEAL_MOUNT_BIND, dir, dir, ro, true, err);
}

/* The working directory is shared unless the view shows it already (a system dir) or it is "/". */
static bool cwd_needs_mount(const char *cwd)
{
        static const char *const shown[] = { "/usr", "/etc", "/opt", "/proc", "/dev" };

        if (strcmp(cwd, "/") == 0)
                return false;
        for (size_t i = 0; i < ELEMENTSOF(shown); i++)
                if (path_under(cwd, shown[i]))
                        return false;
        return true;
}

/*
 * The working directory the default view shares (its real path: a symlink must not lead the
 * bind into /proc or /etc) must neither be nor contain a kernel filesystem: a recursive bind
 * would hand the command host settings (sysfs, /proc/sys, cgroupfs) or devices.
 */
static int check_shared_dir(const char *real, heal_error *err)
{
        char point[PATH_MAX], type[32];
        bool is_on = false;
        int r = mountwatch_kernel_fs(real, point, sizeof(point), type, sizeof(type), &is_on);

        if (r < 0)
                return heal_error_set(err, r,
                                      "cannot read the mount table (/proc/self/mountinfo): %s",
                                      strerror(-r));
        if (r > 0)
                return heal_error_set(err, -EPERM,
                                      "the working directory '%s' %s a %s mount ('%s'); heal "
                                      "shares the working directory read-write and will not "
                                      "share kernel filesystems: work elsewhere or use --chdir",
                                      real, is_on ? "is on" : "contains", type, point);
        return 0;
}

int plan_default_view(struct mount_entry **ret, size_t *ret_n, const char *cwd, unsigned flags,
                      heal_error *err)
{
        char real[PATH_MAX];
        static const char *const root_opts[] = { "mode=0755", "size=1m", "nr_inodes=4096", NULL };
        static const char *const tmp_opts[] = { "mode=1777", NULL };
        static const char *const rw[] = { "rw", NULL };
        struct mount_entry *v = NULL;
        size_t n = 0;
        int r;

        r = plan_entry_add(&v, &n, HEAL_MOUNT_TMPFS, NULL, "/", root_opts, true, err);
        if (r < 0)
                goto fail;
        v[0].attr_set |= MOUNT_ATTR_RDONLY;
        v[0].defer_ro = true;
        for (size_t i = 0; i < ELEMENTSOF(system_dirs); i++) {
                r = add_system_dir(&v, &n, system_dirs[i], err);
                if (r < 0)
                        goto fail;
        }
        /* As root the command could read what only root may read: hide it (secrets.c). */
        if (r >= 0 && geteuid() == 0 && !(flags & PLAN_NO_ETC_IDMAP) &&
            plan_etc_idmap_available()) {
                for (size_t i = 0; i < n; i++)
                        if (v[i].kind == HEAL_MOUNT_BIND && strcmp(v[i].target, "/etc") == 0)
                                v[i].etc_idmap = true;
        } else if (r >= 0 && geteuid() == 0) {
                r = plan_add_secret_masks(&v, &n, err);
        }
        if (r >= 0)
                r = plan_entry_add(&v, &n, HEAL_MOUNT_PROC, NULL, "/proc", NULL, true, err);
        if (r >= 0)
                r = plan_entry_add(&v, &n, HEAL_MOUNT_DEV, NULL, "/dev", NULL, true, err);
        /* A working directory of /tmp itself is shared in place of the private /tmp. */
        if (r >= 0 && strcmp(cwd, "/tmp") != 0)
                r = plan_entry_add(&v, &n, HEAL_MOUNT_TMPFS, NULL, "/tmp", tmp_opts, true, err);
        /* Decide on what the bind would really share, not on a name that may be a symlink. */
        if (r >= 0 && !realpath(cwd, real))
                r = heal_error_set(err, -errno, "working directory '%s': %s", cwd, strerror(errno));
        if (r >= 0 && cwd_needs_mount(real))
                r = check_shared_dir(real, err);
        if (r >= 0 && cwd_needs_mount(real)) {
                if (flags & HEAL_SANDBOX_CWD_OVERLAY)
                        r = plan_entry_add(&v, &n, HEAL_MOUNT_OVERLAY, cwd, cwd, NULL, true, err);
                else
                        r = plan_entry_add(&v, &n, HEAL_MOUNT_BIND, cwd, cwd, rw, true, err);
                if (r >= 0)
                        v[n - 1].is_cwd = true;
        }
        if (r < 0)
                goto fail;
        *ret = v;
        *ret_n = n;
        return 0;
fail:
        plan_entries_free(v, n);
        return heal_error_prefix(err, r, "default view");
}

int plan_extend_default(struct mount_entry **ret, size_t *ret_n, const char *cwd, unsigned flags,
                        const struct mount_entry *extra, size_t n_extra, heal_error *err)
{
        struct mount_entry *v = NULL, *grown;
        size_t n = 0;
        int r = plan_default_view(&v, &n, cwd, flags, err);

        for (size_t i = 0; r >= 0 && i < n_extra; i++) {
                size_t j = 0;

                while (j < n && strcmp(v[j].target, extra[i].target) != 0)
                        j++;
                if (strcmp(extra[i].target, "/") == 0 || (j < n && strcmp(v[j].target, cwd) != 0)) {
                        r = heal_error_set(err, -EINVAL,
                                           "mount entry %zu (%s at '%s'): the default view "
                                           "mounts it already",
                                           i, plan_kind_name(extra[i].kind), extra[i].target);
                        break;
                }
                if (j < n) { /* the working directory: this entry replaces the default's */
                        plan_entry_release(&v[j]);
                        memmove(v + j, v + j + 1, (n - j - 1) * sizeof(*v));
                        n--;
                }
                grown = realloc(v, (n + 1) * sizeof(*v));
                if (!grown || plan_entry_dup(&grown[n], &extra[i]) < 0) {
                        v = grown ? grown : v;
                        r = heal_error_set(err, -ENOMEM, "out of memory");
                        break;
                }
                v = grown;
                n++;
        }
        if (r < 0) {
                plan_entries_free(v, n);
                return r;
        }
        *ret = v;
        *ret_n = n;
        return 0;
}
