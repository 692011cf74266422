/* SPDX-License-Identifier: MIT */
/*
 * What the default view hides under /etc when heal runs as root: every file and directory that
 * other users may not read (shadow, SSH host keys, /etc/ssl/private, sudoers, VPN and database
 * credentials). A command running as host uid 0 could read them otherwise. The walk is done once
 * per process; files are covered with /dev/null on a nodev mount (opening them fails with
 * EACCES, as for any other user), directories with an empty read-only tmpfs.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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
 * /etc), a directory others may not read is masked whole and not entered, and a directory on
 * another filesystem is not entered (as nftw's FTW_MOUNT). Fails closed: false on any error.
 */
static bool walk_dir(int dfd, const char *path, dev_t dev, unsigned depth)
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
                if (!S_ISDIR(st.st_mode) || st.st_dev != dev)
                        continue;
                if (depth >= 32) {
                        ok = false;
                        continue;
                }
                c = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                ok = c >= 0 ? walk_dir(c, sub, dev, depth + 1) : errno == ENOENT;
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
        struct stat st;

        if (fd < 0 || fstat(fd, &st) < 0) {
                walk_failed = fd >= 0 || errno != ENOENT; /* no /etc: nothing to hide */
                if (fd >= 0)
                        close(fd);
                return;
        }
        walk_failed = !walk_dir(fd, "/etc", st.st_dev, 0);
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
