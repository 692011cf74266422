/* SPDX-License-Identifier: MIT */
/*
 * The sandbox's mounts, applied by its init (child.c) from the plan the parent compiled
 * (plan-compile.c): the staging root, every entry under /newroot, the pivot into it.
 *
 * Same rules as child.c: async-signal-safe calls only, failures reported through fail().
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#include "child-internal.h"

#ifndef MOUNT_ATTR__ATIME
# define MOUNT_ATTR__ATIME 0x00000070
#endif

static int open_nofollow(int dirfd, const char *path, int flags, uint64_t resolve)
{
        struct open_how how = { .flags = (uint64_t)(flags | O_CLOEXEC), .resolve = resolve };

        return (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
}

/*
 * Create what is missing of @op's mountpoint, component by component below the mountpoint of
 * the entry that covers it, without following a symlink and without leaving that mount: a
 * symlink planted by an earlier run (build -> /oldroot/root) must not steer a mkdir onto the
 * host. The last component is made as a directory, an empty file, or the symlink entry itself,
 * relative to its parent's descriptor.
 */
static void create_mountpoint(const struct child_op *op, bool want_dir)
{
        const char *cover = P->ops[op->cover].dst;
        size_t cl = strlen(cover);
        char buf[4096], *comp, *next;
        int fd;

        if (strncmp(op->dst, cover, cl) != 0 || op->dst[cl] != '/' ||
            strlen(op->dst) >= sizeof(buf))
                fail(STEP_MOUNTPOINT, EINVAL, op->entry, op->dst);
        memcpy(buf, op->dst + cl + 1, strlen(op->dst + cl + 1) + 1);
        fd = open_nofollow(AT_FDCWD, cover, O_PATH | O_DIRECTORY, RESOLVE_NO_SYMLINKS);
        if (fd < 0)
                fail(STEP_MOUNTPOINT_SYMLINK, errno, op->entry, cover);
        for (comp = buf; (next = strchr(comp, '/')); comp = next + 1) {
                int sub;

                *next = '\0';
                if (mkdirat(fd, comp, 0755) < 0 && errno != EEXIST)
                        fail(STEP_MOUNTPOINT, errno, op->entry, op->dst);
                sub = open_nofollow(fd, comp, O_PATH | O_DIRECTORY,
                                    RESOLVE_NO_SYMLINKS | RESOLVE_NO_XDEV | RESOLVE_BENEATH);
                if (sub < 0)
                        fail(errno == ENOENT ? STEP_MOUNTPOINT : STEP_MOUNTPOINT_SYMLINK, errno,
                             op->entry, op->dst);
                close(fd);
                fd = sub;
        }
        if (op->kind == MOUNT_KIND_SYMLINK) {
                if (symlinkat(op->src, fd, comp) < 0)
                        fail(STEP_SYMLINK, errno, op->entry, op->dst);
        } else {
                int r = want_dir ? mkdirat(fd, comp, 0755)
                                 : openat(fd, comp,
                                          O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                                          0644);

                if (r < 0 && errno != EEXIST)
                        fail(STEP_MOUNTPOINT, errno, op->entry, op->dst);
                if (!want_dir && r >= 0)
                        close(r);
        }
        close(fd);
}

/*
 * Whether @op's mountpoint lies directly below a fresh filesystem of ours (tmpfs or /dev) and
 * the path to that filesystem runs through such filesystems only, up to the staging root: then
 * no other process can put anything on the way. A tmpfs below a host bind does not qualify: a
 * host process can rename its mountpoint away and leave a symlink in its place.
 */
static bool private_below_cover(const struct child_op *op)
{
        const char *cover = P->ops[op->cover].dst;
        size_t cl = strlen(cover);

        if (!op->may_create || op->if_present || strncmp(op->dst, cover, cl) != 0 ||
            op->dst[cl] != '/' || strchr(op->dst + cl + 1, '/'))
                return false;
        for (int c = op->cover; c >= 0; c = P->ops[c].cover)
                if (P->ops[c].kind != HEAL_MOUNT_TMPFS && P->ops[c].kind != HEAL_MOUNT_DEV)
                        return false;
        return true;
}

/*
 * The common case in one call (private_below_cover()): the mountpoint made with mkdir(2) or
 * mknod(2), a symlink entry with symlink(2); whatever exists already (EEXIST) or fails otherwise
 * takes the general path.
 */
static bool made_below_cover(const struct child_op *op, bool want_dir)
{
        if (!private_below_cover(op))
                return false;
        if (op->kind == MOUNT_KIND_SYMLINK)
                return symlink(op->src, op->dst) == 0;
        return want_dir ? mkdir(op->dst, 0755) == 0 : mknod(op->dst, S_IFREG | 0644, 0) == 0;
}

/* false: an if_present mount whose mountpoint is gone or changed type; skip it. */
static bool prepare_mountpoint_slow(const struct child_op *op)
{
        bool want_dir = !(op->kind == HEAL_MOUNT_BIND && op->is_file);
        struct stat st;
        int fd;

        /* Existing: it must be reached without a symlink, and be of the right type. */
        fd = open_nofollow(AT_FDCWD, op->dst, O_PATH, RESOLVE_NO_SYMLINKS);
        if (fd >= 0) {
                if (op->kind == MOUNT_KIND_SYMLINK)
                        fail(STEP_SYMLINK, EEXIST, op->entry, op->dst);
                if (fstat(fd, &st) < 0)
                        fail(STEP_MOUNTPOINT, errno, op->entry, op->dst);
                close(fd);
                if (want_dir != !!S_ISDIR(st.st_mode) && op->if_present)
                        return false;
                if (want_dir != !!S_ISDIR(st.st_mode))
                        fail(STEP_MOUNTPOINT_TYPE, want_dir ? ENOTDIR : EISDIR, op->entry, op->dst);
                return true;
        }
        if (errno == ELOOP)
                fail(STEP_MOUNTPOINT_SYMLINK, errno, op->entry, op->dst);
        if (errno != ENOENT)
                fail(STEP_MOUNTPOINT, errno, op->entry, op->dst);
        if (op->if_present)
                return false;
        if (!op->may_create)
                fail(STEP_MOUNTPOINT_MISSING, ENOENT, op->entry, op->dst);
        create_mountpoint(op, want_dir);
        return true;
}

static bool prepare_mountpoint(const struct child_op *op)
{
        return made_below_cover(op, !(op->kind == HEAL_MOUNT_BIND && op->is_file)) ||
               prepare_mountpoint_slow(op);
}

static void setattr_or_fail(const struct child_op *op, int fd, unsigned flags,
                            struct mount_attr *attr)
{
        if ((attr->attr_set || attr->attr_clr) &&
            syscall(SYS_mount_setattr, fd, "", flags | AT_EMPTY_PATH, attr, sizeof(*attr)) < 0)
                fail(STEP_SETATTR, errno, op->entry, op->dst);
}

/*
 * @op's attributes on the detached tree @fd. What it adds (ro, nosuid, nodev, noexec, an atime
 * mode) holds for every mount in it; what it lifts (rw, suid, dev, exec) only for the top one:
 * a host mount below that is read-only or nosuid stays so (its flags are locked in a user
 * namespace, and lifting them recursively would fail the whole bind).
 */
static void set_attrs(const struct child_op *op, int fd)
{
        struct mount_attr add = { .attr_set = op->attr_set }, lift = { .attr_clr = op->attr_clr };

        if (op->defer_ro)
                add.attr_set &= ~(uint64_t)MOUNT_ATTR_RDONLY;
        if (add.attr_set & MOUNT_ATTR_NOATIME) {
                add.attr_clr |= MOUNT_ATTR__ATIME;
                lift.attr_clr &= ~(uint64_t)MOUNT_ATTR_NOATIME;
        } else if (lift.attr_clr & MOUNT_ATTR_NOATIME) { /* "atime": back to relatime */
                add.attr_clr |= MOUNT_ATTR__ATIME;
                lift.attr_clr &= ~(uint64_t)MOUNT_ATTR_NOATIME;
        }
        setattr_or_fail(op, fd, AT_RECURSIVE, &add);
        setattr_or_fail(op, fd, 0, &lift);
}

/*
 * A bind mount, made from descriptors so that no path is looked up twice: the source is opened
 * without following a symlink (the parent resolved every symlink of it on the host, so one there
 * now means the tree changed) and must still be the file the parent saw when it compiled the
 * plan; its copy gets its flags while detached and is moved onto the mountpoint, itself opened
 * without a symlink. A directory swapped for another or for a symlink meanwhile (by a process
 * outside the sandbox) cannot redirect the mount. A tree the parent made (@op->src_fd: the
 * idmapped /etc as root) comes with its flags set.
 */
static void mount_bind(const struct child_op *op)
{
        int src, tree = op->src_fd, dst;
        struct stat st;

        if (tree < 0) {
                src = open_nofollow(AT_FDCWD, op->src, O_PATH, RESOLVE_NO_SYMLINKS);
                if (src < 0)
                        fail(STEP_BIND_SOURCE, errno, op->entry, op->src);
                if (op->src_ino &&
                    (fstat(src, &st) < 0 || st.st_dev != op->src_dev || st.st_ino != op->src_ino))
                        fail(STEP_BIND_SOURCE, ESTALE, op->entry, op->src);
                tree = (int)syscall(SYS_open_tree, src, "",
                                    OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE |
                                            AT_EMPTY_PATH);
                if (tree < 0)
                        fail(STEP_MOUNT, errno, op->entry, op->src);
                close(src);
                set_attrs(op, tree);
        }
        dst = open_nofollow(AT_FDCWD, op->dst, O_PATH, RESOLVE_NO_SYMLINKS);
        if (dst < 0)
                fail(STEP_MOUNTPOINT_SYMLINK, errno, op->entry, op->dst);
        if (syscall(SYS_move_mount, tree, "", dst, "",
                    MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
                fail(STEP_MOUNT, errno, op->entry, op->src);
        close(dst);
        close(tree);
}

static void mount_dev(const struct child_op *op)
{
        static const char *const nodes[] = { "null", "zero", "full", "random", "urandom", "tty" };
        static const char *const links[][2] = {
                { "fd", "/proc/self/fd" },       { "stdin", "/proc/self/fd/0" },
                { "stdout", "/proc/self/fd/1" }, { "stderr", "/proc/self/fd/2" },
                { "ptmx", "pts/ptmx" },
        };
        char dst[4096], src[64], data[160];

        if (mount("tmpfs", op->dst, "tmpfs", op->ms_flags, op->data) < 0)
                fail(STEP_MOUNT, errno, op->entry, op->dst);
        for (size_t i = 0; i < sizeof(nodes) / sizeof(nodes[0]); i++) {
                if (!join(dst, sizeof(dst), op->dst, "/") || !join(dst, sizeof(dst), dst, nodes[i]))
                        fail(STEP_DEV, ENAMETOOLONG, op->entry, op->dst);
                join(src, sizeof(src), "/oldroot/dev/", nodes[i]);
                if (mknod(dst, S_IFREG | 0666, 0) < 0) /* the fresh tmpfs: nothing is there */
                        fail(STEP_DEV, errno, op->entry, dst);
                if (mount(src, dst, NULL, MS_BIND, NULL) < 0)
                        fail(STEP_DEV, errno, op->entry, src);
        }
        for (size_t i = 0; i < sizeof(links) / sizeof(links[0]); i++) {
                join(dst, sizeof(dst), op->dst, "/");
                join(dst, sizeof(dst), dst, links[i][0]);
                if (symlink(links[i][1], dst) < 0)
                        fail(STEP_DEV, errno, op->entry, dst);
        }
        join(dst, sizeof(dst), op->dst, "/pts");
        if (mkdir(dst, 0755) < 0 || mount("devpts", dst, "devpts", MS_NOSUID | MS_NOEXEC,
                                          "newinstance,ptmxmode=0666,mode=620") < 0)
                fail(STEP_DEV, errno, op->entry, dst);
        join(dst, sizeof(dst), op->dst, "/shm");
        if (!join(data, sizeof(data), "mode=1777,", op->hidden_data ? op->hidden_data : ""))
                fail(STEP_DEV, E2BIG, op->entry, dst);
        if (data[strlen(data) - 1] == ',')
                data[strlen(data) - 1] = '\0';
        if (mkdir(dst, 01777) < 0 || mount("tmpfs", dst, "tmpfs", MS_NOSUID | MS_NODEV, data) < 0)
                fail(STEP_DEV, errno, op->entry, dst);
}

/* The hidden workdir next to a given upperdir, created in a parent reached without symlinks. */
static void make_workdir(const struct child_op *op)
{
        const char *slash = strrchr(op->mkworkdir, '/');
        char parent[4096];
        int fd;

        if (!slash || (size_t)(slash - op->mkworkdir) >= sizeof(parent))
                fail(STEP_OVERLAY_PREP, EINVAL, op->entry, op->mkworkdir);
        memcpy(parent, op->mkworkdir, (size_t)(slash - op->mkworkdir));
        parent[slash - op->mkworkdir] = '\0';
        fd = open_nofollow(AT_FDCWD, parent, O_PATH | O_DIRECTORY, RESOLVE_NO_SYMLINKS);
        if (fd < 0)
                fail(errno == ELOOP ? STEP_MOUNTPOINT_SYMLINK : STEP_OVERLAY_PREP, errno, op->entry,
                     parent);
        if (mkdirat(fd, slash + 1, 0700) < 0 && errno != EEXIST)
                fail(STEP_OVERLAY_PREP, errno, op->entry, op->mkworkdir);
        close(fd);
}

static void overlay_with_fds(const struct child_op *op);

static void mount_overlay(const struct child_op *op)
{
        if (op->hidden) {
                char sub[128];

                if (mkdir(op->hidden, 0700) < 0 ||
                    mount("tmpfs", op->hidden, "tmpfs", MS_NOSUID | MS_NODEV, op->hidden_data) < 0)
                        fail(STEP_OVERLAY_PREP, errno, op->entry, op->hidden);
                join(sub, sizeof(sub), op->hidden, "/u");
                if (mkdir(sub, 0755) < 0)
                        fail(STEP_OVERLAY_PREP, errno, op->entry, sub);
                join(sub, sizeof(sub), op->hidden, "/w");
                if (mkdir(sub, 0700) < 0)
                        fail(STEP_OVERLAY_PREP, errno, op->entry, sub);
        }
        if (op->mkworkdir)
                make_workdir(op);
        overlay_with_fds(op);
}

#define OVERLAY_FDS_MAX 64

/* @dir followed by the decimal @fd into @out (large enough); no stdio in the child. */
static void fd_path(char *out, const char *dir, int fd)
{
        char digits[16];
        int n = 0;

        do
                digits[n++] = (char)('0' + fd % 10);
        while ((fd /= 10) > 0);
        out += strlen(strcpy(out, dir));
        while (n > 0)
                *out++ = digits[--n];
        *out = '\0';
}

/*
 * overlayfs resolves its layer paths itself, after we checked them: give it each layer as the
 * descriptor we opened (a /proc/self/fd magic link of the host's proc, still at /oldroot/proc),
 * so that neither a symlink planted by an earlier run (in a shared directory, pointing into
 * /oldroot) nor a directory swapped by a host process in between becomes a layer. The host
 * source must be the directory the parent saw (its device and inode). Paths in our hidden
 * tmpfs are ours and stay as they are.
 */
static void overlay_with_fds(const struct child_op *op)
{
        static const char fd_dir[] = "/oldroot/proc/self/fd/";
        char data[4096], tok[4096];
        int fds[OVERLAY_FDS_MAX], n_fds = 0;
        size_t o = 0, hl = op->hidden ? strlen(op->hidden) : 0;
        const char *p = op->data;
        bool use_fds = access("/oldroot/proc/self/fd", F_OK) == 0;

        while (*p) {
                size_t n = strcspn(p, "=,:"), add;
                int fd;

                if (n >= sizeof(tok))
                        fail(STEP_OVERLAY_PREP, ENAMETOOLONG, op->entry, op->dst);
                memcpy(tok, p, n);
                tok[n] = '\0';
                if (tok[0] == '/' &&
                    !(hl && strncmp(tok, op->hidden, hl) == 0 && (tok[hl] == '/' || !tok[hl]))) {
                        struct stat st;

                        fd = open_nofollow(AT_FDCWD, tok, O_PATH | O_DIRECTORY,
                                           RESOLVE_NO_SYMLINKS);
                        if (fd < 0)
                                fail(errno == ELOOP ? STEP_MOUNTPOINT_SYMLINK : STEP_OVERLAY_PREP,
                                     errno, op->entry, tok);
                        if (op->src && op->src_ino && strcmp(tok, op->src) == 0 &&
                            (fstat(fd, &st) < 0 || st.st_dev != op->src_dev ||
                             st.st_ino != op->src_ino))
                                fail(STEP_BIND_SOURCE, ESTALE, op->entry, op->src);
                        if (!use_fds) {
                                close(fd);
                        } else if (n_fds == OVERLAY_FDS_MAX) {
                                fail(STEP_OVERLAY_PREP, E2BIG, op->entry, op->dst);
                        } else {
                                fds[n_fds++] = fd;
                                fd_path(tok, fd_dir, fd);
                        }
                }
                add = strlen(tok) + (p[n] ? 1 : 0);
                if (o + add >= sizeof(data))
                        fail(STEP_OVERLAY_PREP, E2BIG, op->entry, op->dst);
                memcpy(data + o, tok, strlen(tok));
                o += strlen(tok);
                if (p[n])
                        data[o++] = p[n];
                p += n + (p[n] ? 1 : 0);
        }
        data[o] = '\0';
        if (mount("overlay", op->dst, "overlay", op->ms_flags, data) < 0)
                fail(STEP_MOUNT, errno, op->entry, op->dst);
        while (n_fds > 0)
                close(fds[--n_fds]);
}

/* A tmpfs some overlay uses as upperdir: mounted hidden with u/ (bound at the target) and w/. */
static void mount_upper_tmpfs(const struct child_op *op)
{
        char u[128], w[128];
        struct stat st;

        if (mkdir(op->hidden, 0700) < 0 ||
            mount("tmpfs", op->hidden, "tmpfs", op->ms_flags, op->data) < 0)
                fail(STEP_MOUNT, errno, op->entry, op->dst);
        join(u, sizeof(u), op->hidden, "/u");
        join(w, sizeof(w), op->hidden, "/w");
        if (stat(op->hidden, &st) < 0 || mkdir(u, 0755) < 0 || chmod(u, st.st_mode & 07777) < 0 ||
            mkdir(w, 0700) < 0)
                fail(STEP_OVERLAY_PREP, errno, op->entry, u);
        if (mount(u, op->dst, NULL, MS_BIND, NULL) < 0)
                fail(STEP_MOUNT, errno, op->entry, op->dst);
}

/*
 * With heal running as root, the command is host uid 0, and much of /proc checks only the uid,
 * not capabilities: /proc/sys/kernel/core_pattern would run a program of its choice as host root,
 * /proc/sysrq-trigger would reboot the machine. Make those read-only and mask what leaks
 * (the same lists as Docker's readonlyPaths and maskedPaths). Missing entries (the bind fails
 * with ENOENT) are skipped.
 */
static void harden_proc(const struct child_op *op)
{
        static const char *const ro[] = { "/sys", "/sysrq-trigger", "/irq", "/bus", "/fs" };
        static const char *const masked[] = { "/kcore", "/keys", "/timer_list", "/sched_debug",
                                              "/kallsyms" };
        struct mount_attr rdonly = { .attr_set = MOUNT_ATTR_RDONLY };
        char path[4096];

        for (size_t i = 0; i < sizeof(ro) / sizeof(ro[0]); i++) {
                if (!join(path, sizeof(path), op->dst, ro[i]))
                        continue;
                if (mount(path, path, NULL, MS_BIND | MS_REC, NULL) < 0) {
                        if (errno == ENOENT)
                                continue;
                        fail(STEP_MOUNT, errno, op->entry, path);
                }
                if (syscall(SYS_mount_setattr, AT_FDCWD, path, AT_RECURSIVE, &rdonly,
                            sizeof(rdonly)) < 0)
                        fail(STEP_MOUNT, errno, op->entry, path);
        }
        for (size_t i = 0; i < sizeof(masked) / sizeof(masked[0]); i++) {
                if (!join(path, sizeof(path), op->dst, masked[i]))
                        continue;
                if (mount("/oldroot/dev/null", path, NULL, MS_BIND, NULL) < 0 && errno != ENOENT)
                        fail(STEP_MOUNT, errno, op->entry, path);
        }
}

static void apply_op(const struct child_op *op)
{
        if (op->cover >= 0 && !prepare_mountpoint(op))
                return;
        switch (op->kind) {
        case HEAL_MOUNT_BIND:
                mount_bind(op);
                break;
        case HEAL_MOUNT_TMPFS:
                if (op->hidden)
                        mount_upper_tmpfs(op);
                else if (mount("tmpfs", op->dst, "tmpfs", op->ms_flags, op->data) < 0)
                        fail(STEP_MOUNT, errno, op->entry, op->dst);
                break;
        case HEAL_MOUNT_PROC:
                if (mount("proc", op->dst, "proc", op->ms_flags, NULL) < 0)
                        fail(STEP_MOUNT, errno, op->entry, op->dst);
                if (P->host_root)
                        harden_proc(op);
                break;
        case HEAL_MOUNT_DEV:
                mount_dev(op);
                break;
        case HEAL_MOUNT_OVERLAY:
                mount_overlay(op);
                break;
        case MOUNT_KIND_SYMLINK:
                /* made by prepare_mountpoint(): a symlink entry always has a cover ("/") */
                if (op->cover < 0)
                        fail(STEP_SYMLINK, EINVAL, op->entry, op->dst);
                break;
        }
}

void setup_mounts(void)
{
        /* Nothing we mount may propagate back to the host. */
        if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
                fail(STEP_MAKE_PRIVATE, errno, -1, NULL);
        /* A staging tmpfs becomes "/", the host root moves to /oldroot, nothing is hidden. */
        if (mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=64k") < 0)
                fail(STEP_STAGING, errno, -1, "/tmp");
        if (chdir("/tmp") < 0 || mkdir("newroot", 0755) < 0 || mkdir("oldroot", 0755) < 0)
                fail(STEP_STAGING, errno, -1, "/tmp");
        if (syscall(SYS_pivot_root, ".", "oldroot") < 0 || chdir("/") < 0)
                fail(STEP_PIVOT_STAGING, errno, -1, NULL);
        for (size_t i = 0; i < P->n_ops; i++)
                apply_op(&P->ops[i]);
        for (size_t i = 0; i < P->n_ops; i++) {
                const struct child_op *op = &P->ops[i];
                struct mount_attr ro = { .attr_set = MOUNT_ATTR_RDONLY };

                if (op->defer_ro && (op->attr_set & MOUNT_ATTR_RDONLY) &&
                    syscall(SYS_mount_setattr, AT_FDCWD, op->dst, 0, &ro, sizeof(ro)) < 0)
                        fail(STEP_ROOT_RO, errno, op->entry, op->dst);
        }
        /* pivot_root(".", ".") stacks the staging root on the new one; detach it and oldroot. */
        if (chdir("/newroot") < 0 || syscall(SYS_pivot_root, ".", ".") < 0 ||
            umount2(".", MNT_DETACH) < 0 || chdir("/") < 0)
                fail(STEP_PIVOT_ROOT, errno, -1, NULL);
}
