/* SPDX-License-Identifier: MIT */
/*
 * The sandbox's init (PID 1 of the new PID namespace) and the command it starts.
 *
 * This runs in a child made by clone3(2) without CLONE_VM from a possibly multi-threaded caller,
 * so only async-signal-safe calls are allowed: no malloc, no stdio, no locale. Every string was
 * built by the parent (plan-compile.c); failures go back as a fixed-size struct report.
 *
 * Order (each step's failure names the step): uid/gid maps, nested-userns limit, private mount
 * propagation, a staging tmpfs pivoted to "/" (the host root stays reachable at /oldroot), the
 * plan's entries under /newroot, pivot into /newroot, hostname, loopback, then the command in
 * a new session with rlimits, no capabilities, no_new_privs and the seccomp filter.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/mount.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sandbox-internal.h"

#ifndef MOUNT_ATTR__ATIME
# define MOUNT_ATTR__ATIME 0x00000070
#endif
#ifndef CLOSE_RANGE_CLOEXEC
# define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

static const struct child_plan *P;

static uint64_t clock_ns(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Concatenate @a and @b into @dst (capacity @cap); false when it does not fit. */
static bool join(char *dst, size_t cap, const char *a, const char *b)
{
        size_t la = strlen(a), lb = strlen(b);

        if (la + lb + 1 > cap)
                return false;
        memcpy(dst, a, la);
        memcpy(dst + la, b, lb + 1);
        return true;
}

static _Noreturn void fail(int step, int err, int entry, const char *path)
{
        struct report r = { .kind = REPORT_ERROR, .step = step, .err = err, .entry = entry };
        ssize_t _unused;

        if (path) {
                size_t n = strlen(path);

                if (n >= sizeof(r.path))
                        n = sizeof(r.path) - 1;
                memcpy(r.path, path, n);
        }
        _unused = write(P->report_fd, &r, sizeof(r));
        (void)_unused;
        _exit(step == STEP_EXEC ? (err == ENOENT ? 127 : 126) : 125);
}

static int write_file(const char *path, const char *data)
{
        size_t len = strlen(data);
        int fd = open(path, O_WRONLY | O_CLOEXEC);
        ssize_t n;

        if (fd < 0)
                return -errno;
        n = write(fd, data, len);
        if (n < 0 || (size_t)n != len) {
                int e = n < 0 ? errno : EIO;

                close(fd);
                return -e;
        }
        return close(fd) < 0 ? -errno : 0;
}

static void setup_userns(void)
{
        int r;

        r = write_file("/proc/self/setgroups", "deny");
        if (r < 0 && r != -ENOENT)
                fail(STEP_SETGROUPS, -r, -1, NULL);
        r = write_file("/proc/self/uid_map", P->uid_map);
        if (r < 0)
                fail(STEP_UID_MAP, -r, -1, NULL);
        r = write_file("/proc/self/gid_map", P->gid_map);
        if (r < 0)
                fail(STEP_GID_MAP, -r, -1, NULL);
        if (!(P->flags & HEAL_SANDBOX_ALLOW_USERNS)) {
                /* Per user namespace: nested user namespaces now fail with ENOSPC. */
                r = write_file("/proc/sys/user/max_user_namespaces", "0");
                if (r < 0)
                        fail(STEP_USERNS_LIMIT, -r, -1, NULL);
        }
}

static int open_nofollow(int dirfd, const char *path, int flags, uint64_t resolve)
{
        struct open_how how = { .flags = (uint64_t)(flags | O_CLOEXEC), .resolve = resolve };

        return (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
}

/*
 * Create what is missing of @op's mountpoint, component by component below the mountpoint of
 * the entry that covers it, without following a symlink and without leaving that mount: a
 * symlink planted by an earlier run (build -> /oldroot/root) must not steer a mkdir onto the
 * host. The last component is made as a directory or an empty file (not for symlinks, which
 * apply_op() creates).
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
        if (op->kind != MOUNT_KIND_SYMLINK) {
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

/* false: an if_present mount whose mountpoint is gone or changed type; skip it. */
static bool prepare_mountpoint(const struct child_op *op)
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

static void set_attrs(const struct child_op *op, const char *path, bool recursive)
{
        struct mount_attr attr = { .attr_set = op->attr_set, .attr_clr = op->attr_clr };

        if (op->defer_ro)
                attr.attr_set &= ~(uint64_t)MOUNT_ATTR_RDONLY;
        if (attr.attr_set & MOUNT_ATTR_NOATIME)
                attr.attr_clr |= MOUNT_ATTR__ATIME;
        else if (attr.attr_clr & MOUNT_ATTR_NOATIME)
                attr.attr_clr = (attr.attr_clr & ~(uint64_t)MOUNT_ATTR_NOATIME) |
                                MOUNT_ATTR__ATIME; /* "atime": back to relatime */
        if (!attr.attr_set && !attr.attr_clr)
                return;
        if (syscall(SYS_mount_setattr, AT_FDCWD, path, recursive ? AT_RECURSIVE : 0, &attr,
                    sizeof(attr)) < 0)
                fail(STEP_SETATTR, errno, op->entry, path);
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
                int fd;

                if (!join(dst, sizeof(dst), op->dst, "/") || !join(dst, sizeof(dst), dst, nodes[i]))
                        fail(STEP_DEV, ENAMETOOLONG, op->entry, op->dst);
                join(src, sizeof(src), "/oldroot/dev/", nodes[i]);
                fd = open(dst, O_WRONLY | O_CREAT | O_CLOEXEC, 0666);
                if (fd < 0)
                        fail(STEP_DEV, errno, op->entry, dst);
                close(fd);
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
        /* overlayfs resolves its layer paths itself: a symlink planted by an earlier run (in a
         * shared directory, pointing into /oldroot) must not become a layer. */
        for (const char *l = op->layers; l && *l; l += strlen(l) + 1) {
                int fd = open_nofollow(AT_FDCWD, l, O_PATH | O_DIRECTORY, RESOLVE_NO_SYMLINKS);

                if (fd < 0)
                        fail(errno == ELOOP ? STEP_MOUNTPOINT_SYMLINK : STEP_OVERLAY_PREP, errno,
                             op->entry, l);
                close(fd);
        }
        if (mount("overlay", op->dst, "overlay", op->ms_flags, op->data) < 0)
                fail(STEP_MOUNT, errno, op->entry, op->dst);
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
 * (the same lists as Docker's readonlyPaths and maskedPaths). Missing entries are skipped.
 */
static void harden_proc(const struct child_op *op)
{
        static const char *const ro[] = { "/sys", "/sysrq-trigger", "/irq", "/bus", "/fs" };
        static const char *const masked[] = { "/kcore", "/keys", "/timer_list", "/sched_debug",
                                              "/kallsyms" };
        struct mount_attr rdonly = { .attr_set = MOUNT_ATTR_RDONLY };
        char path[4096];

        for (size_t i = 0; i < sizeof(ro) / sizeof(ro[0]); i++) {
                if (!join(path, sizeof(path), op->dst, ro[i]) || access(path, F_OK) < 0)
                        continue;
                if (mount(path, path, NULL, MS_BIND | MS_REC, NULL) < 0 ||
                    syscall(SYS_mount_setattr, AT_FDCWD, path, AT_RECURSIVE, &rdonly,
                            sizeof(rdonly)) < 0)
                        fail(STEP_MOUNT, errno, op->entry, path);
        }
        for (size_t i = 0; i < sizeof(masked) / sizeof(masked[0]); i++) {
                if (!join(path, sizeof(path), op->dst, masked[i]) || access(path, F_OK) < 0)
                        continue;
                if (mount("/oldroot/dev/null", path, NULL, MS_BIND, NULL) < 0)
                        fail(STEP_MOUNT, errno, op->entry, path);
        }
}

static void apply_op(const struct child_op *op)
{
        if (op->cover >= 0 && !prepare_mountpoint(op))
                return;
        switch (op->kind) {
        case HEAL_MOUNT_BIND:
                if (mount(op->src, op->dst, NULL, MS_BIND | MS_REC, NULL) < 0)
                        fail(STEP_MOUNT, errno, op->entry, op->src);
                set_attrs(op, op->dst, true);
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
                if (symlink(op->src, op->dst) < 0)
                        fail(STEP_SYMLINK, errno, op->entry, op->dst);
                break;
        }
}

static void setup_mounts(void)
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

static void setup_host(void)
{
        if (sethostname("heal", 4) < 0)
                fail(STEP_HOSTNAME, errno, -1, NULL);
        if (!(P->flags & HEAL_SANDBOX_SHARE_NET)) {
                struct ifreq ifr = { 0 };
                int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

                memcpy(ifr.ifr_name, "lo", 3);
                if (s < 0 || ioctl(s, SIOCGIFFLAGS, &ifr) < 0)
                        fail(STEP_LOOPBACK, errno, -1, NULL);
                ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
                if (ioctl(s, SIOCSIFFLAGS, &ifr) < 0)
                        fail(STEP_LOOPBACK, errno, -1, NULL);
                close(s);
        }
}

/* Close every descriptor but the ones the plan names (the caller's fds must not linger). */
static void close_other_fds(void)
{
        int keep[5] = { P->report_fd, P->ctl_fd, P->stdin_fd, P->stdout_fd, P->stderr_fd };
        int lo = 3;

        for (size_t i = 0; i < 5; i++)
                for (size_t j = i + 1; j < 5; j++)
                        if (keep[j] < keep[i]) {
                                int t = keep[i];

                                keep[i] = keep[j];
                                keep[j] = t;
                        }
        for (size_t i = 0; i < 5; i++) {
                if (keep[i] < lo)
                        continue;
                if (keep[i] > lo)
                        syscall(SYS_close_range, lo, keep[i] - 1, 0);
                lo = keep[i] + 1;
        }
        syscall(SYS_close_range, lo, ~0U, 0);
}

static void drop_capabilities(void)
{
        struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
        struct __user_cap_data_struct data[2] = { { 0 } };

        /* Without namespaces an unprivileged caller has no CAP_SETPCAP and nothing to drop. */
        bool weak = P->flags & HEAL_SANDBOX_ISOLATION_NONE;

        for (int c = 0; c <= P->cap_last_cap; c++)
                if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0 && errno != EINVAL &&
                    !(weak && errno == EPERM))
                        fail(STEP_CAPS, errno, -1, NULL);
        if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
                fail(STEP_CAPS, errno, -1, NULL);
        if (syscall(SYS_capset, &hdr, data) < 0)
                fail(STEP_CAPS, errno, -1, NULL);
}

static pid_t command_pid;

/*
 * Signal every sandboxed process. The command's process group first: killpg is atomic with
 * respect to fork (a fork racing with it fails), so a fork bomb cannot outrun it the way it
 * outruns a walk over the process list. Then the whole PID namespace, or without one our own
 * process group.
 */
static void kill_all(int sig)
{
        if (command_pid > 0)
                kill(-command_pid, sig);
        if (!(P->flags & HEAL_SANDBOX_ISOLATION_NONE))
                kill(-1, sig);
}

static int high_fd(int fd)
{
        return fd < 3 ? fcntl(fd, F_DUPFD_CLOEXEC, 3) : fd;
}

static _Noreturn void exec_command(void)
{
        union {
                const char *const *c;
                char *const *m;
        } argv = { .c = P->argv };
        const char *file = P->argv[0];
        const char *path = P->path_env ? P->path_env : "/usr/local/bin:/usr/bin:/bin";
        char buf[4096];
        int saved = ENOENT;

        if (P->clock)
                P->clock->exec_ns = clock_ns();
        if (strchr(file, '/')) {
                execve(file, argv.m, P->envp);
                fail(STEP_EXEC, errno, -1, file);
        }
        while (*path) {
                const char *end = strchrnul(path, ':');
                size_t dl = (size_t)(end - path);

                if (dl == 0) {
                        buf[0] = '.';
                        dl = 1;
                } else if (dl < sizeof(buf)) {
                        memcpy(buf, path, dl);
                }
                if (dl + strlen(file) + 2 <= sizeof(buf)) {
                        buf[dl] = '/';
                        memcpy(buf + dl + 1, file, strlen(file) + 1);
                        execve(buf, argv.m, P->envp);
                        if (errno != ENOENT && errno != ENOTDIR)
                                saved = errno;
                }
                path = *end ? end + 1 : end;
        }
        fail(STEP_EXEC, saved, -1, file);
}

static _Noreturn void command_main(void)
{
        struct sigaction dfl = { .sa_handler = SIG_DFL }, ign = { .sa_handler = SIG_IGN };
        int in, out, err;
        sigset_t none;

        for (int s = 1; s < NSIG; s++)
                sigaction(s, &dfl, NULL);
        /* A write past the file size limit fails with EFBIG instead of killing the writer. */
        sigaction(SIGXFSZ, &ign, NULL);
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        /* Without namespaces nothing else kills the command when heal dies: its parent, init,
         * dies then (PR_SET_PDEATHSIG), and so must it. */
        if ((P->flags & HEAL_SANDBOX_ISOLATION_NONE) && prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
                fail(STEP_STDIO, errno, -1, NULL);
        /* A new session; without namespaces a process group of its own in init's session, so
         * init can kill the group without killing itself. */
        if ((P->flags & HEAL_SANDBOX_ISOLATION_NONE) ? setpgid(0, 0) < 0 : setsid() < 0)
                fail(STEP_STDIO, errno, -1, NULL);
        in = high_fd(P->stdin_fd);
        out = high_fd(P->stdout_fd);
        err = high_fd(P->stderr_fd);
        if (in < 0 || out < 0 || err < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0)
                fail(STEP_STDIO, errno, -1, NULL);
        for (size_t i = 0; i < P->n_rlimits; i++)
                if (setrlimit(P->rlimits[i].resource, &P->rlimits[i].rl) < 0)
                        fail(STEP_RLIMIT, errno, P->rlimits[i].resource, NULL);
        /* Nothing but 0, 1, 2 survives execve (the report pipe is O_CLOEXEC already). */
        syscall(SYS_close_range, 3, ~0U, CLOSE_RANGE_CLOEXEC);
        drop_capabilities();
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                fail(STEP_NO_NEW_PRIVS, errno, -1, NULL);
        if (P->seccomp && syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, P->seccomp) < 0)
                fail(STEP_SECCOMP, errno, -1, NULL);
        exec_command();
}

static void report(const struct report *r)
{
        ssize_t _unused = write(P->report_fd, r, sizeof(*r));

        (void)_unused;
}

/*
 * The command is gone: kill whatever is left, reap it all, report the usage of everything and
 * leave. The parent can return as soon as this report and end-of-file on the output arrive,
 * without waiting for the kernel to tear the namespaces down after our exit. Without a PID
 * namespace a process that left the command's group (setsid) is not ours to wait for: reaping
 * stops after 100 ms.
 */
static _Noreturn void finish_run(int sfd)
{
        struct report r = { .kind = REPORT_DONE };
        bool weak = P->flags & HEAL_SANDBOX_ISOLATION_NONE;
        struct pollfd pfd = { .fd = sfd, .events = POLLIN };
        struct signalfd_siginfo si;

        kill_all(SIGKILL);
        for (;;) {
                pid_t pid = waitpid(-1, NULL, weak ? WNOHANG : 0);

                if (pid > 0 || (pid < 0 && errno == EINTR))
                        continue;
                if (pid < 0 || poll(&pfd, 1, 100) <= 0)
                        break; /* ECHILD: nothing left; or weak mode and nothing more came */
                while (read(sfd, &si, sizeof(si)) > 0)
                        ;
        }
        getrusage(RUSAGE_CHILDREN, &r.ru);
        report(&r);
        _exit(0);
}

/*
 * Reap everything; when the command goes, report its status and finish. After CTL_QUIT, give
 * the other processes up to LEFTOVER_MS after the command went (and never past CTL_KILL): a shell
 * that dies on SIGQUIT must not cut short its children's stack dumps, and background jobs that
 * ignore SIGQUIT must not hold the run for the whole grace period.
 */
#define LEFTOVER_MS 300

static _Noreturn void init_loop(pid_t cmd, int sfd)
{
        struct pollfd pfd[2] = { { .fd = sfd, .events = POLLIN },
                                 { .fd = P->ctl_fd, .events = POLLIN } };
        bool quitting = false, cmd_done = false;
        uint64_t done_ns = 0;

        for (;;) {
                struct signalfd_siginfo si;
                int st;
                pid_t pid;
                char c;

                int timeout = -1;

                if (quitting && cmd_done) {
                        uint64_t waited = (clock_ns() - done_ns) / 1000000;

                        if (waited >= LEFTOVER_MS)
                                finish_run(sfd);
                        timeout = (int)(LEFTOVER_MS - waited);
                }
                if (poll(pfd, 2, timeout) < 0 && errno != EINTR)
                        _exit(125);
                if (pfd[1].revents) {
                        ssize_t n = read(P->ctl_fd, &c, 1);

                        if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) {
                                kill_all(SIGKILL); /* the parent is gone */
                                _exit(125);
                        }
                        if (n == 1 && c == CTL_QUIT) {
                                quitting = true;
                                /* aimed at each process's running thread (quit.c), where
                                 * the sandbox's own /proc lists only its processes */
                                if ((P->flags & HEAL_SANDBOX_ISOLATION_NONE) ||
                                    quit_processes() <= 0)
                                        kill_all(SIGQUIT);
                        }
                        if (n == 1 && c == CTL_KILL)
                                finish_run(sfd);
                }
                while (read(sfd, &si, sizeof(si)) > 0)
                        ;
                while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
                        if (pid == cmd) {
                                struct report r = { .kind = REPORT_EXIT, .wstatus = st };

                                report(&r);
                                cmd_done = true;
                                done_ns = clock_ns();
                        }
                }
                if (cmd_done && (!quitting || (pid < 0 && errno == ECHILD)))
                        finish_run(sfd);
        }
}

_Noreturn void child_main(const struct child_plan *plan)
{
        struct sigaction dfl = { .sa_handler = SIG_DFL };
        sigset_t all;
        pid_t cmd;
        int sfd;

        P = plan;
        /* Inherited dispositions (a caller ignoring SIGCHLD) must not change how we reap. */
        sigfillset(&all);
        sigprocmask(SIG_SETMASK, &all, NULL);
        for (int s = 1; s < NSIG; s++)
                sigaction(s, &dfl, NULL);
        prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
        prctl(PR_SET_NAME, "heal-init", 0, 0, 0);
        if (!(P->flags & HEAL_SANDBOX_ISOLATION_NONE)) {
                setup_userns();
                if (P->clock)
                        P->clock->maps_ns = clock_ns();
                setup_mounts();
                if (P->cwd && chdir(P->cwd) < 0)
                        fail(STEP_CHDIR, errno, -1, P->cwd);
                setup_host();
                if (P->clock)
                        P->clock->mounts_ns = clock_ns();
        } else {
                /* Orphans of the run come to init, which reaps them: no zombie is left behind. */
                if (setsid() < 0 || prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0)
                        fail(STEP_STDIO, errno, -1, NULL);
                if (P->cwd && chdir(P->cwd) < 0)
                        fail(STEP_CHDIR, errno, -1, P->cwd);
        }
        for (size_t i = 0; i < 2; i++)
                if (P->join_dirs[i] && write(P->join_fds[i], "0", 1) != 1)
                        fail(STEP_CGROUP_JOIN, P->join_fds[i] < 0 ? EBADF : errno, -1,
                             P->join_dirs[i]);
        close_other_fds();
        if (P->wait_go) {
                char c = 0;

                while (read(P->ctl_fd, &c, 1) < 0 && errno == EINTR)
                        ;
                if (c != CTL_GO)
                        _exit(125);
        }
        if (P->new_cgroupns && unshare(CLONE_NEWCGROUP) < 0)
                fail(STEP_CGROUPNS, errno, -1, NULL);
        sigemptyset(&all);
        sigaddset(&all, SIGCHLD);
        sfd = signalfd(-1, &all, SFD_CLOEXEC | SFD_NONBLOCK);
        if (sfd < 0)
                fail(STEP_SIGNALFD, errno, -1, NULL);
        cmd = (pid_t)syscall(SYS_clone, SIGCHLD, 0, NULL, NULL, 0);
        if (cmd < 0)
                fail(STEP_FORK, errno, -1, NULL);
        if (cmd == 0) {
                close(sfd);
                command_main();
        }
        /* Only the command holds the output pipes now: their end-of-file means it is gone. */
        close(P->stdout_fd);
        close(P->stderr_fd);
        command_pid = cmd; /* leader of its own process group in both modes */
        init_loop(cmd, sfd);
}
