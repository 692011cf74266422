/* SPDX-License-Identifier: MIT */
/*
 * What the default view hides under /etc when heal runs as root: every file and directory that
 * other users may not read (shadow, SSH host keys, /etc/ssl/private, sudoers, VPN and database
 * credentials). A command running as host uid 0 could read them otherwise.
 *
 * First choice, an idmapped mount (mount_setattr(2), MOUNT_ATTR_IDMAP, Linux >= 5.12 and a
 * filesystem that supports it): the sandbox gets a copy of /etc on which host uid and gid 0
 * show as 65534 and other ids as unmapped, so the command, uid 0 without capabilities, is
 * "other" to every file there and the kernel itself refuses what others may not read, however
 * deep and whenever it appeared. The idmap's user namespace is made once per process (and mount
 * namespace); each run makes its copy (open_tree(2) of /etc, then the idmap). Root's files show
 * as owned by 65534 inside.
 *
 * Otherwise (kernel, filesystem or a submount of /etc without idmap support, also one that
 * appears later: the run that meets it and the later ones fall back) a walk of /etc, once per
 * process: files found are covered with /dev/null on a nodev mount (opening them fails with
 * EACCES, as for any other user), directories with an empty read-only tmpfs.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/mount.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/util.h"
#include "sandbox-internal.h"

struct secret {
        char *path;
        bool dir;
};

static struct secret *secrets;
static size_t n_secrets;
static bool walk_failed; /* fail closed: a partial list would expose the rest */
static pthread_once_t secrets_once = PTHREAD_ONCE_INIT;

static bool add(const char *path, bool dir)
{
        struct secret *grown = realloc(secrets, (n_secrets + 1) * sizeof(*grown));

        if (!grown)
                return false;
        secrets = grown;
        if (!(secrets[n_secrets].path = strdup(path)))
                return false;
        secrets[n_secrets++].dir = dir;
        return true;
}

/*
 * Walk the directory open as @dfd (taken over and closed), named @path: each entry is looked at
 * relative to its directory (no path lookup from /), symlinks are skipped by their d_type
 * without a stat (the mask is for what they point to, which is itself in the walk or outside
 * /etc), a directory others may not read is masked whole and not entered. Directories on other
 * filesystems are entered too: a submount of /etc (the one an idmap could not cover, say) holds
 * secrets like any other directory. Fails closed: false on any error, or deeper than 32.
 */
static bool walk_dir(int dfd, const char *path, unsigned depth)
{
        DIR *d = fdopendir(dfd);
        struct dirent *de;
        bool ok = d != NULL;

        if (!d)
                close(dfd);
        while (ok && (errno = 0, de = readdir(d))) {
                char sub[PATH_MAX];
                struct stat st;
                int c;

                if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 ||
                    de->d_type == DT_LNK)
                        continue;
                if (str_printf(sub, sizeof(sub), "%s/%s", path, de->d_name) < 0 ||
                    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
                        ok = errno == ENOENT; /* removed meanwhile */
                        continue;
                }
                if (S_ISLNK(st.st_mode) || (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)))
                        continue;
                if (!(st.st_mode & S_IROTH)) {
                        ok = add(sub, S_ISDIR(st.st_mode));
                        continue;
                }
                if (!S_ISDIR(st.st_mode))
                        continue;
                if (depth >= 32) {
                        ok = false;
                        continue;
                }
                c = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                ok = c >= 0 ? walk_dir(c, sub, depth + 1) : errno == ENOENT;
        }
        if (errno != 0)
                ok = false;
        if (d)
                closedir(d);
        return ok;
}

static void walk(void)
{
        int fd = open("/etc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        if (fd < 0) {
                walk_failed = errno != ENOENT; /* no /etc: nothing to hide */
                return;
        }
        walk_failed = !walk_dir(fd, "/etc", 0);
}

int plan_add_secret_masks(struct mount_entry **v, size_t *n, heal_error *err)
{
        static const char *const dir_opts[] = { "ro", "mode=0700", "size=4k", "nr_inodes=8", NULL };
        int r = 0;

        pthread_once(&secrets_once, walk);
        if (walk_failed)
                return heal_error_set(err, -ENOMEM,
                                      "cannot list what /etc hides from other users; as root heal "
                                      "will not run without hiding it");
        for (size_t i = 0; r >= 0 && i < n_secrets; i++) {
                r = secrets[i].dir ? plan_entry_add(v, n, HEAL_MOUNT_TMPFS, NULL, secrets[i].path,
                                                    dir_opts, true, err)
                                   : plan_entry_add(v, n, HEAL_MOUNT_BIND, "/dev/null",
                                                    secrets[i].path, NULL, true, err);
                /* Deleted or replaced since the walk: nothing left to hide there. */
                if (r >= 0)
                        (*v)[*n - 1].if_present = true;
        }
        return r;
}

/* The user namespace of /etc's idmap: -1 not tried yet, -2 idmapped mounts not available here,
 * else its descriptor; decided in the mount namespace etc_ns names. */
static int etc_userns = -1;
static struct stat etc_ns;
static pthread_mutex_t etc_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t etc_atfork_once = PTHREAD_ONCE_INIT;

/* A fork(2) while another thread makes the copy must not leave the child's lock held forever. */
static void etc_atfork_prepare(void)
{
        pthread_mutex_lock(&etc_lock);
}

static void etc_atfork_release(void)
{
        pthread_mutex_unlock(&etc_lock);
}

static void etc_atfork(void)
{
        pthread_atfork(etc_atfork_prepare, etc_atfork_release, etc_atfork_release);
}

static void lock_etc(void)
{
        pthread_once(&etc_atfork_once, etc_atfork);
        pthread_mutex_lock(&etc_lock);
}

/*
 * Root's uid and gid show as 65534 and no other id is mapped (user_namespaces(7) maps): an owner
 * or group that is not mapped never matches the caller, so only the "other" bits count for the
 * command, whatever groups heal runs with (a root in group shadow must not read /etc/shadow
 * through its group bits).
 */
static const char idmap[] = "0 65534 1\n";

static int write_map(pid_t pid, const char *file)
{
        char path[64];

        snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
        return child_write_file(path, idmap);
}

/* A user namespace with the idmap above, as a descriptor; -errno. Made by a child that waits
 * while we write its maps (only a process privileged over the parent namespace may write such
 * maps). */
static int idmap_userns(void)
{
        int ready[2], go[2], fd = -EIO, st;
        char c = 0;
        pid_t pid;

        if (pipe2(ready, O_CLOEXEC) < 0)
                return -errno;
        if (pipe2(go, O_CLOEXEC) < 0) {
                close(ready[0]), close(ready[1]);
                return -errno;
        }
        /* Not fork(3): that would run pthread_atfork handlers, ours included, with etc_lock held.
         */
        pid = (pid_t)syscall(SYS_clone, SIGCHLD, NULL, NULL, NULL, 0);
        if (pid == 0) {       /* async-signal-safe only: the caller may be multi-threaded */
                close(go[1]); /* our end-of-file on it means: done */
                c = unshare(CLONE_NEWUSER) == 0 ? 'u' : 'x';
                if (write(ready[1], &c, 1) == 1)
                        while (read(go[0], &c, 1) < 0 && errno == EINTR)
                                ;
                _exit(0);
        }
        close(ready[1]);
        close(go[0]);
        if (pid > 0 && read(ready[0], &c, 1) == 1 && c == 'u') {
                char path[64];

                snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)pid);
                if ((fd = write_map(pid, "uid_map")) == 0 &&
                    (fd = write_map(pid, "gid_map")) == 0 &&
                    (fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
                        fd = -errno;
        }
        close(ready[0]);
        close(go[1]); /* the child leaves */
        if (pid > 0)
                while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
                        ;
        return pid < 0 ? -errno : fd;
}

/*
 * A copy of the host's /etc (recursive, detached), idmapped through @userns, read-only, nosuid,
 * nodev: made for each run, as kernels before 6.15 refuse to clone a detached tree (EINVAL), and
 * the copy costs two calls.
 */
static int idmapped_etc(int userns)
{
        struct mount_attr attr = {
                .attr_set =
                        MOUNT_ATTR_IDMAP | MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
                .userns_fd = (uint64_t)userns,
        };
        int tree = (int)syscall(SYS_open_tree, AT_FDCWD, "/etc",
                                OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);

        if (tree < 0)
                return -errno;
        if (syscall(SYS_mount_setattr, tree, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr,
                    sizeof(attr)) < 0) {
                int e = errno;

                close(tree);
                return -e;
        }
        return tree;
}

/* The idmap's user namespace if an idmapped /etc can be made here, else -2. */
static int probe_etc_userns(void)
{
        const char *v = getenv("HEAL_ETC_IDMAP"); /* "0": the walk (docs/sandbox.md) */
        int userns, tree;

        if (v && strcmp(v, "0") == 0)
                return -2;
        if ((userns = idmap_userns()) < 0)
                return -2;
        if ((tree = idmapped_etc(userns)) < 0) {
                close(userns);
                return -2;
        }
        close(tree);
        return userns;
}

bool plan_etc_idmap_available(void)
{
        struct stat ns = { 0 };
        bool ok;

        lock_etc();
        /* A caller that moved to another mount namespace (unshare, setns) decides again there. */
        if (stat("/proc/self/ns/mnt", &ns) == 0 && etc_userns != -1 &&
            (ns.st_dev != etc_ns.st_dev || ns.st_ino != etc_ns.st_ino)) {
                if (etc_userns >= 0)
                        close(etc_userns);
                etc_userns = -1;
        }
        if (etc_userns == -1) {
                etc_ns = ns;
                etc_userns = probe_etc_userns();
        }
        ok = etc_userns >= 0;
        pthread_mutex_unlock(&etc_lock);
        return ok;
}

int plan_etc_tree(void)
{
        int fd = -ENOENT;

        lock_etc();
        if (etc_userns >= 0 && (fd = idmapped_etc(etc_userns)) < 0) {
                /* e.g. a submount that cannot be idmapped: the walk from now on, in this
                 * mount namespace */
                close(etc_userns);
                etc_userns = -2;
        }
        pthread_mutex_unlock(&etc_lock);
        return fd;
}

void plan_etc_release(void)
{
        lock_etc();
        if (etc_userns >= 0)
                close(etc_userns);
        etc_userns = -1;
        pthread_mutex_unlock(&etc_lock);
}
