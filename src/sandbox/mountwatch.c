/* SPDX-License-Identifier: MIT */
/*
 * The host's kernel-filesystem mounts (proc, sysfs, cgroupfs, ...), which the default view's
 * shared working directory must neither be on nor contain (plan-compile.c).
 *
 * Reading /proc/self/mountinfo costs 50-140 µs here (the kernel formats every mount), more than
 * a third of a run's preparation, so the list is kept per process and read again only when it
 * can have changed: one descriptor of /proc/self/mountinfo stays open, and poll(2) on it reports
 * POLLPRI | POLLERR once the mount namespace it watches changed (proc(5), "/proc/pid/mounts");
 * a process that moved to another mount namespace (setns, unshare) or root (chroot: the root's
 * mount ID too, as a bind of "/" has its device and inode), or a forked child (its descriptor
 * shares the parent's poll state), reads afresh, as it does when the descriptor is no longer the
 * file it opened (a caller closed it, or dup2'd another file onto its number: never ours to
 * close then). The list keeps only
 * kernel filesystems, their mount points unescaped (mountinfo writes space, tab, newline and
 * backslash as \ooo).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#ifndef STATX_MNT_ID
# define STATX_MNT_ID 0x00001000U
#endif

#include "core/util.h"
#include "sandbox-internal.h"

struct kernel_mount {
        char *point;
        char type[32];
};

static pthread_mutex_t watch_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t watch_atfork_once = PTHREAD_ONCE_INIT;
static int watch_fd = -1;
static pid_t watch_pid;                /* the process watch_fd was opened in */
static dev_t ns_dev, root_dev, fd_dev; /* the mount namespace and root it watches, and */
static ino_t ns_ino, root_ino, fd_ino; /* watch_fd's own file */
static uint64_t root_mnt;              /* the root's mount ID */
static struct kernel_mount *kmounts;
static size_t n_kmounts;

static bool is_kernel_fs(const char *type)
{
        static const char *const types[] = {
                "proc",        "sysfs",    "cgroup",   "cgroup2", "tracefs", "debugfs",
                "securityfs",  "bpf",      "configfs", "fusectl", "pstore",  "efivarfs",
                "binfmt_misc", "devtmpfs", "devpts",   "mqueue",
        };

        for (size_t i = 0; i < ELEMENTSOF(types); i++)
                if (strcmp(type, types[i]) == 0)
                        return true;
        return false;
}

static void forget(void)
{
        for (size_t i = 0; i < n_kmounts; i++)
                free(kmounts[i].point);
        free(kmounts);
        kmounts = NULL;
        n_kmounts = 0;
}

/* Whether watch_fd is still the file we opened: the same file, and our open file description
 * (marked O_NONBLOCK, a status flag of the description, not of the number), not a fresh open
 * of /proc/self/mountinfo whose poll state would start after the changes we missed. */
static bool watch_fd_ours(void)
{
        struct stat st;
        int fl;

        return watch_fd >= 0 && fstat(watch_fd, &st) == 0 && st.st_dev == fd_dev &&
               st.st_ino == fd_ino && (fl = fcntl(watch_fd, F_GETFL)) >= 0 && (fl & O_NONBLOCK);
}

static void watch_close(void)
{
        forget();
        if (watch_fd_ours())
                close(watch_fd);
        watch_fd = -1;
        watch_pid = 0;
}

/* The child's descriptor is a copy of the parent's (one poll state for both): its own, afresh. */
static void atfork_prepare(void)
{
        pthread_mutex_lock(&watch_lock);
}

static void atfork_parent(void)
{
        pthread_mutex_unlock(&watch_lock);
}

static void atfork_child(void)
{
        pthread_mutex_init(&watch_lock, NULL);
        watch_close();
}

static void register_atfork(void)
{
        pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
}

/* @n bytes of a mountinfo field, \ooo escapes decoded, as a new string; NULL without memory. */
static char *unescape(const char *s, size_t n)
{
        char *ret = malloc(n + 1), *o = ret;

        if (!ret)
                return NULL;
        for (size_t i = 0; i < n; i++) {
                if (s[i] == '\\' && i + 3 < n && s[i + 1] >= '0' && s[i + 1] <= '3' &&
                    s[i + 2] >= '0' && s[i + 2] <= '7' && s[i + 3] >= '0' && s[i + 3] <= '7') {
                        *o++ = (char)((s[i + 1] - '0') << 6 | (s[i + 2] - '0') << 3 |
                                      (s[i + 3] - '0'));
                        i += 3;
                } else {
                        *o++ = s[i];
                }
        }
        *o = '\0';
        return ret;
}

/* One line: "ID PARENT MAJ:MIN ROOT POINT OPTIONS [OPTIONAL...] - TYPE SOURCE SUPER". */
static int parse_line(const char *line, size_t len)
{
        const char *end = line + len, *p = line, *point, *dash, *type;
        struct kernel_mount *grown;
        size_t point_len, type_len;

        for (int field = 0; field < 4; field++) {
                p = memchr(p, ' ', (size_t)(end - p));
                if (!p)
                        return 0;
                p++;
        }
        point = p;
        p = memchr(p, ' ', (size_t)(end - p));
        if (!p)
                return 0;
        point_len = (size_t)(p - point);
        for (dash = p; dash && dash + 3 <= end;
             dash = memchr(dash + 1, ' ', (size_t)(end - dash - 1)))
                if (dash[1] == '-' && dash[2] == ' ')
                        break;
        if (!dash || dash + 3 > end)
                return 0;
        type = dash + 3;
        p = memchr(type, ' ', (size_t)(end - type));
        type_len = (size_t)((p ? p : end) - type);
        if (type_len == 0 || type_len >= sizeof(kmounts->type))
                return 0;
        {
                char t[sizeof(kmounts->type)];

                memcpy(t, type, type_len);
                t[type_len] = '\0';
                if (!is_kernel_fs(t))
                        return 0;
                grown = realloc(kmounts, (n_kmounts + 1) * sizeof(*kmounts));
                if (!grown)
                        return -ENOMEM;
                kmounts = grown;
                memcpy(kmounts[n_kmounts].type, t, type_len + 1);
        }
        if (!(kmounts[n_kmounts].point = unescape(point, point_len)))
                return -ENOMEM;
        n_kmounts++;
        return 0;
}

/* Read the whole table again through watch_fd (the poll state was consumed before). */
static int reload(void)
{
        size_t cap = 16384, len = 0;
        char *buf = malloc(cap);
        int r = 0;

        forget();
        if (!buf)
                return -ENOMEM;
        if (lseek(watch_fd, 0, SEEK_SET) < 0)
                r = -errno;
        for (ssize_t n; r == 0;) {
                if (len == cap) {
                        char *grown = realloc(buf, cap *= 2);

                        if (!grown) {
                                r = -ENOMEM;
                                break;
                        }
                        buf = grown;
                }
                n = read(watch_fd, buf + len, cap - len);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        r = -errno;
                else if (n == 0)
                        break;
                else
                        len += (size_t)n;
        }
        for (size_t at = 0; r == 0 && at < len;) {
                const char *nl = memchr(buf + at, '\n', len - at);
                size_t line_len = nl ? (size_t)(nl - (buf + at)) : len - at;

                r = parse_line(buf + at, line_len);
                at += line_len + 1;
        }
        free(buf);
        if (r < 0)
                forget();
        return r;
}

/* Whether the list still describes this process's mount table; reopens when it cannot. */
static int refresh(void)
{
        struct statx root = { 0 };
        struct stat ns, self;
        struct pollfd pfd;

        if (stat("/proc/self/ns/mnt", &ns) < 0 ||
            statx(AT_FDCWD, "/", 0, STATX_INO | STATX_MNT_ID, &root) < 0)
                return -errno;
        if (watch_pid == getpid() && ns.st_dev == ns_dev && ns.st_ino == ns_ino &&
            makedev(root.stx_dev_major, root.stx_dev_minor) == root_dev &&
            root.stx_ino == root_ino && root.stx_mnt_id == root_mnt && watch_fd_ours()) {
                pfd = (struct pollfd){ .fd = watch_fd, .events = POLLPRI };
                if (poll(&pfd, 1, 0) == 0)
                        return 0; /* unchanged since the last read */
                return reload();
        }
        watch_close();
        watch_fd = open("/proc/self/mountinfo", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
        if (watch_fd < 0)
                return -errno;
        if (fstat(watch_fd, &self) < 0) {
                int e = errno;

                close(watch_fd);
                watch_fd = -1;
                return -e;
        }
        watch_pid = getpid();
        ns_dev = ns.st_dev, ns_ino = ns.st_ino;
        root_dev = makedev(root.stx_dev_major, root.stx_dev_minor), root_ino = root.stx_ino;
        root_mnt = root.stx_mnt_id;
        fd_dev = self.st_dev, fd_ino = self.st_ino;
        return reload();
}

int mountwatch_kernel_fs(const char *real, char *ret_point, size_t point_len, char *ret_type,
                         size_t type_len, bool *ret_is_on)
{
        int r;

        pthread_once(&watch_atfork_once, register_atfork);
        pthread_mutex_lock(&watch_lock);
        r = refresh();
        if (r < 0)
                watch_close(); /* read afresh next time */
        for (size_t i = 0; r == 0 && i < n_kmounts; i++) {
                const struct kernel_mount *m = &kmounts[i];

                if (path_under(m->point, real) || path_under(real, m->point)) {
                        snprintf(ret_point, point_len, "%s", m->point);
                        snprintf(ret_type, type_len, "%s", m->type);
                        *ret_is_on = path_under(real, m->point);
                        r = 1;
                }
        }
        pthread_mutex_unlock(&watch_lock);
        return r;
}

void mountwatch_release(void)
{
        pthread_once(&watch_atfork_once, register_atfork);
        pthread_mutex_lock(&watch_lock);
        watch_close();
        pthread_mutex_unlock(&watch_lock);
}
