/* SPDX-License-Identifier: MIT */
/*
 * Errors that name the cause, the setting and the fix: why user namespaces were refused
 * (sysctls, AppArmor, a container's seccomp profile), and what went wrong at each setup step
 * reported by the child. Kept apart from the code that fails so the messages stay consistent.
 * See: user_namespaces(7), ../shared/research/sandbox-anchors.md sections 3.5, 6.3 and 8.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "core/util.h"
#include "sandbox-internal.h"

static const char *const step_names[_STEP_MAX] = {
        [STEP_NONE] = "start",
        [STEP_SETGROUPS] = "writing /proc/self/setgroups",
        [STEP_UID_MAP] = "writing /proc/self/uid_map",
        [STEP_GID_MAP] = "writing /proc/self/gid_map",
        [STEP_USERNS_LIMIT] = "forbidding nested user namespaces",
        [STEP_POOL_JOIN] = "joining the pre-made user and network namespaces",
        [STEP_MAKE_PRIVATE] = "making mounts private",
        [STEP_STAGING] = "mounting the staging tmpfs on /tmp",
        [STEP_PIVOT_STAGING] = "pivoting into the staging root",
        [STEP_MOUNTPOINT] = "creating a mountpoint",
        [STEP_MOUNTPOINT_MISSING] = "finding a mountpoint",
        [STEP_MOUNTPOINT_TYPE] = "checking a mountpoint",
        [STEP_MOUNTPOINT_SYMLINK] = "resolving a mountpoint",
        [STEP_MOUNT] = "mounting",
        [STEP_BIND_SOURCE] = "opening a bind source",
        [STEP_SETATTR] = "setting mount flags",
        [STEP_OVERLAY_PREP] = "preparing overlay directories",
        [STEP_DEV] = "populating /dev",
        [STEP_SYMLINK] = "creating a symlink",
        [STEP_PIVOT_ROOT] = "pivoting into the new root",
        [STEP_ROOT_RO] = "making the root read-only",
        [STEP_CHDIR] = "changing to the working directory",
        [STEP_HOSTNAME] = "setting the hostname",
        [STEP_LOOPBACK] = "bringing up loopback",
        [STEP_CGROUP_WAIT] = "waiting for the cgroup",
        [STEP_CGROUP_JOIN] = "joining the sandbox's cgroup",
        [STEP_CGROUPNS] = "entering a cgroup namespace",
        [STEP_SIGNALFD] = "creating a signalfd",
        [STEP_FORK] = "starting the command",
        [STEP_STDIO] = "setting up stdin/stdout/stderr",
        [STEP_RLIMIT] = "setting resource limits",
        [STEP_CAPS] = "dropping capabilities",
        [STEP_NO_NEW_PRIVS] = "setting no_new_privs",
        [STEP_SECCOMP] = "installing the seccomp filter",
        [STEP_EXEC] = "executing the command",
};

const char *step_name(int step)
{
        return step >= 0 && step < _STEP_MAX && step_names[step] ? step_names[step] : "setup";
}

static int sysctl_int(const char *path)
{
        char buf[32] = "";
        int fd = open(path, O_RDONLY | O_CLOEXEC);

        if (fd < 0)
                return -1;
        if (read(fd, buf, sizeof(buf) - 1) < 0)
                buf[0] = '\0';
        close(fd);
        return buf[0] ? atoi(buf) : -1;
}

int userns_explain_clone(heal_error *err, int errnum)
{
        struct utsname u;
        int v;

        switch (errnum) {
        case EPERM:
                if (sysctl_int("/proc/sys/kernel/unprivileged_userns_clone") == 0)
                        return heal_error_set(err, -EPERM,
                                              "user namespaces are disabled for unprivileged users "
                                              "(kernel.unprivileged_userns_clone = 0); fix: sudo "
                                              "sysctl -w kernel.unprivileged_userns_clone=1");
                return heal_error_set(err, -EPERM,
                                      "creating namespaces was refused (EPERM): heal probably runs "
                                      "in a container or chroot whose seccomp profile forbids "
                                      "them (Docker's default does); fix: run the container with "
                                      "--security-opt seccomp=unconfined, or use heal outside it");
        case ENOSPC:
        case EUSERS:
                v = sysctl_int("/proc/sys/user/max_user_namespaces");
                if (v == 0)
                        return heal_error_set(err, -ENOSPC,
                                              "user namespaces are disabled "
                                              "(user.max_user_namespaces = 0); fix: sudo sysctl -w "
                                              "user.max_user_namespaces=15000");
                return heal_error_set(err, -ENOSPC,
                                      "no user namespace may be created here: heal runs inside a "
                                      "sandbox that forbids nested ones (bwrap --disable-userns, "
                                      "heal itself) or the limit is used up "
                                      "(user.max_user_namespaces = %d); fix: run heal outside "
                                      "that sandbox",
                                      v);
        case ENOSYS:
                uname(&u);
                return heal_error_set(err, -ENOSYS,
                                      "clone3(2) is missing: heal needs Linux >= 5.12 (this is %s)",
                                      u.release);
        case EINVAL:
                return heal_error_set(err, -EINVAL,
                                      "the kernel refused the namespace flags: it lacks user, "
                                      "PID or network namespaces (CONFIG_USER_NS, CONFIG_PID_NS, "
                                      "CONFIG_NET_NS)");
        default:
                return heal_error_set(err, -errnum, "clone3: %s", strerror(errnum));
        }
}

static void describe_entry(char *buf, size_t len, const struct mount_entry *entries, size_t n,
                           int idx)
{
        if (idx < 0 || (size_t)idx >= n) {
                snprintf(buf, len, "the mount plan");
                return;
        }
        snprintf(buf, len, "mount entry %d (%s at '%s')", idx, plan_kind_name(entries[idx].kind),
                 entries[idx].target);
}

/* Strip the "/newroot" prefix the child sees, so messages show sandbox paths. */
/* A path as the user knows it: in the sandbox (/newroot/x) or on the host (/oldroot/x). */
static const char *sandbox_path(const char *p)
{
        if (strncmp(p, "/newroot", 8) == 0 || strncmp(p, "/oldroot", 8) == 0)
                return p[8] ? p + 8 : "/";
        return p;
}

static void explain_userns_step(char *msg, size_t len, const struct report *rep)
{
        if ((rep->err == EPERM || rep->err == EACCES) &&
            sysctl_int("/proc/sys/kernel/apparmor_restrict_unprivileged_userns") == 1) {
                snprintf(msg, len,
                         "the user namespace was created but AppArmor gives it no capabilities "
                         "(kernel.apparmor_restrict_unprivileged_userns = 1, Ubuntu 23.10+): %s "
                         "failed; fix: install the AppArmor profile from docs/sandbox.md "
                         "(\"AppArmor\") or sudo sysctl -w "
                         "kernel.apparmor_restrict_unprivileged_userns=0",
                         step_name(rep->step));
                return;
        }
        if (rep->step == STEP_USERNS_LIMIT) {
                snprintf(msg, len,
                         "cannot forbid nested user namespaces in the sandbox (writing "
                         "/proc/sys/user/max_user_namespaces: %s; is /proc/sys read-only here?); "
                         "rerun with --allow-userns",
                         strerror(rep->err));
                return;
        }
        snprintf(msg, len, "%s failed: %s", step_name(rep->step), strerror(rep->err));
}

static void explain_mount(char *msg, size_t len, const char *what, const struct report *rep,
                          const struct mount_entry *e)
{
        struct utsname u;

        if (e && e->kind == HEAL_MOUNT_PROC && (rep->err == EPERM || rep->err == EACCES)) {
                snprintf(msg, len,
                         "%s: the kernel refused a fresh /proc (%s): heal seems to run in a "
                         "container that masks parts of /proc; fix: give the container an "
                         "unmasked /proc (docker --security-opt systempaths=unconfined) or leave "
                         "proc out of the mount plan",
                         what, strerror(rep->err));
        } else if (e && e->kind == HEAL_MOUNT_OVERLAY) {
                uname(&u);
                snprintf(msg, len,
                         "%s: overlayfs refused the mount (%s); overlay in a user namespace needs "
                         "Linux >= 5.11 (this is %s) and an upper layer on a filesystem with "
                         "xattrs (tmpfs, ext4, xfs, btrfs)",
                         what, strerror(rep->err), u.release);
        } else {
                snprintf(msg, len, "%s: mounting '%s' failed: %s", what, sandbox_path(rep->path),
                         strerror(rep->err));
        }
}

void userns_explain_report(char *msg, size_t len, const struct report *rep,
                           const struct mount_entry *entries, size_t n_entries,
                           const struct child_op *ops)
{
        const struct mount_entry *e =
                rep->entry >= 0 && (size_t)rep->entry < n_entries ? &entries[rep->entry] : NULL;
        char what[512], cover[512];
        int c = e && ops ? ops[rep->entry].cover : -1;

        describe_entry(what, sizeof(what), entries, n_entries, e ? rep->entry : -1);
        describe_entry(cover, sizeof(cover), entries, n_entries, c);
        switch (rep->step) {
        case STEP_SETGROUPS:
        case STEP_UID_MAP:
        case STEP_GID_MAP:
        case STEP_USERNS_LIMIT:
                explain_userns_step(msg, len, rep);
                return;
        case STEP_MOUNTPOINT_MISSING:
                snprintf(msg, len,
                         "%s: the mountpoint '%s' does not exist and lies on %s; heal creates "
                         "mountpoints only on a tmpfs it mounted, never through a bind (that "
                         "would create them on the host): create it on the host, or mount a "
                         "tmpfs at a parent first",
                         what, sandbox_path(rep->path), cover);
                return;
        case STEP_MOUNTPOINT:
                if (rep->err == EROFS) {
                        snprintf(msg, len,
                                 "%s: cannot create the mountpoint '%s': its parent (%s) is "
                                 "read-only; create it beforehand or mount a writable tmpfs at a "
                                 "parent first",
                                 what, sandbox_path(rep->path), cover);
                        return;
                }
                break;
        case STEP_MOUNTPOINT_SYMLINK:
                snprintf(msg, len,
                         "%s: the path '%s' (a mountpoint or an overlay layer) goes through a "
                         "symlink or another mount; heal follows no symlink when it mounts, "
                         "creates mountpoints or opens layers (one could lead out of the "
                         "sandbox): use the real path",
                         what, sandbox_path(rep->path));
                return;
        case STEP_MOUNTPOINT_TYPE:
                snprintf(msg, len, "%s: '%s' is %s", what, sandbox_path(rep->path),
                         rep->err == ENOTDIR ? "a file, but a directory is needed"
                                             : "a directory, but the bind source is a file");
                return;
        case STEP_MOUNT:
                explain_mount(msg, len, what, rep, e);
                return;
        case STEP_BIND_SOURCE:
                snprintf(msg, len, "%s: the source '%s' %s", what, sandbox_path(rep->path),
                         rep->err == ELOOP    ? "now goes through a symlink (it had none when it "
                                                "was resolved); heal does not follow it: add "
                                                "the mount again with the path it should share"
                         : rep->err == ESTALE ? "was replaced by another file or directory "
                                                "between the preparation of the run and its "
                                                "mounts; heal mounts only what it checked"
                         : rep->err == ENOENT ? "no longer exists"
                                              : strerror(rep->err));
                return;
        case STEP_SETATTR:
                snprintf(msg, len, "%s: cannot set its flags (%s)%s", what, strerror(rep->err),
                         rep->err == EPERM ? "; the host mount locks them: a host mount that is "
                                             "nosuid, nodev, noexec or ro cannot be made "
                                             "suid, dev, exec or rw in a user namespace"
                                           : "");
                return;
        case STEP_CHDIR:
                snprintf(msg, len,
                         "the working directory '%s' is not available inside the sandbox (%s); "
                         "mount it or choose another with --chdir",
                         rep->path, strerror(rep->err));
                return;
        case STEP_EXEC:
                snprintf(msg, len, "cannot execute '%s': %s", rep->path,
                         rep->err == ENOENT
                                 ? (strchr(rep->path, '/') ? "no such file inside the sandbox"
                                                           : "not found in the sandbox's PATH")
                         : rep->err == EACCES ? "permission denied (not executable, or on a "
                                                "noexec mount)"
                                              : strerror(rep->err));
                return;
        case STEP_FORK:
                if (rep->err == EAGAIN) {
                        snprintf(msg, len, "cannot start the command: process limit reached");
                        return;
                }
                break;
        default:
                break;
        }
        snprintf(msg, len, "%s: %s%s%s%s failed: %s", e ? what : "sandbox setup",
                 step_name(rep->step), rep->path[0] ? " '" : "", sandbox_path(rep->path),
                 rep->path[0] ? "'" : "", strerror(rep->err));
}
