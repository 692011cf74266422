/* SPDX-License-Identifier: MIT */
/*
 * The program's directory on the host: made private (0700) under $TMPDIR, filled with write(2)
 * relative to its fd (O_NOFOLLOW, O_EXCL: a name can neither escape nor overwrite), and
 * removed with *at() calls that never follow a symlink the compile stage may have left.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/util.h"
#include "runner/runner-internal.h"

#define RMTREE_DEPTH_MAX 128
/* Directories in a file name at most: well below what files_rmtree() removes. */
#define NAME_DEPTH_MAX 32
#define SWEEP_AGE_S    600

int files_mkdtemp(char *dir, int *ret_fd, heal_error *err)
{
        const char *tmp = getenv("TMPDIR");
        int fd;

        if (!tmp || tmp[0] != '/')
                tmp = "/tmp";
        files_sweep(tmp);
        if (str_printf(dir, PATH_MAX, "%s/heal-exec-%d-XXXXXX", tmp, (int)getpid()) < 0)
                return heal_error_set(err, -ENAMETOOLONG, "TMPDIR '%s' is too long", tmp);
        if (!mkdtemp(dir))
                return heal_error_set(err, -errno,
                                      "cannot make a directory in '%s': %s (set "
                                      "TMPDIR to a writable directory)",
                                      tmp, strerror(errno));
        fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0) {
                int r = -errno;

                rmdir(dir);
                return heal_error_set(err, r, "'%s': %s", dir, strerror(-r));
        }
        *ret_fd = fd;
        return 0;
}

/* "main.go", "pkg/x.go": relative, no empty, "." or ".." component, not absurdly long or
 * deep. */
static bool name_ok(const char *name)
{
        const char *p = name;
        unsigned depth = 0;

        if (!name || !*name || name[0] == '/' || strlen(name) >= 1024)
                return false;
        while (*p) {
                if (++depth > NAME_DEPTH_MAX)
                        return false;
                size_t n = strcspn(p, "/");

                if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
                        return false;
                p += n;
                if (*p == '/')
                        p++;
                else
                        break;
                if (!*p) /* trailing '/' */
                        return false;
        }
        return true;
}

/* Make the directories of @name below @dirfd (mode 0755). */
static int make_parents(int dirfd, const char *name)
{
        char path[1024];

        snprintf(path, sizeof(path), "%s", name);
        for (char *s = strchr(path, '/'); s; s = strchr(s + 1, '/')) {
                struct stat st;

                *s = '\0';
                if (mkdirat(dirfd, path, 0755) < 0 && errno != EEXIST)
                        return -errno;
                if (fstatat(dirfd, path, &st, AT_SYMLINK_NOFOLLOW) < 0)
                        return -errno;
                if (!S_ISDIR(st.st_mode))
                        return -ENOTDIR;
                *s = '/';
        }
        return 0;
}

static int write_all(int fd, const char *data, size_t len)
{
        while (len > 0) {
                ssize_t n = write(fd, data, len);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -errno;
                data += n;
                len -= (size_t)n;
        }
        return 0;
}

int files_write_one(int dirfd, const char *name, const char *data, size_t len, heal_error *err)
{
        _cleanup_close_ int fd = -1;
        int r;

        if (!name_ok(name))
                return heal_error_set(err, -EINVAL,
                                      "file name '%.200s': must be a relative path "
                                      "without '.', '..' or empty parts, at most 32 deep",
                                      name ? name : "");
        r = make_parents(dirfd, name);
        if (r < 0)
                return heal_error_set(err, r, "file '%s': %s", name, strerror(-r));
        fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd < 0 && errno == EEXIST)
                return heal_error_set(err, -EEXIST, "file '%s' is given twice", name);
        if (fd < 0)
                return heal_error_set(err, -errno, "file '%s': %s", name, strerror(errno));
        r = write_all(fd, data, len);
        if (r < 0)
                return heal_error_set(err, r, "writing '%s': %s", name, strerror(-r));
        return 0;
}

int files_write(int dirfd, const heal_runner_file *files, size_t n, heal_error *err)
{
        for (size_t i = 0; i < n; i++) {
                int r;

                if (!files[i].data && files[i].len)
                        return heal_error_set(err, -EINVAL, "file '%s' has a length but no data",
                                              files[i].name ? files[i].name : "");
                r = files_write_one(dirfd, files[i].name, files[i].data ? files[i].data : "",
                                    files[i].len, err);
                if (r < 0)
                        return r == -EEXIST ? -EINVAL : r;
        }
        return 0;
}

bool files_exists(int dirfd, const char *name)
{
        struct stat st;

        return fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode);
}

static int rm_at(int at, const char *name, int depth);

/* Empty the directory @name below @dirfd; a mode of 0 is fixed first (we own it). */
static int rm_children(int at, const char *name, int depth)
{
        int fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        struct dirent *de;
        DIR *d;
        int r = 0;

        if (fd < 0 && errno == EACCES && fchmodat(at, name, 0700, 0) == 0)
                fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        fchmod(fd, 0700); /* entries of a read-only directory cannot be unlinked */
        d = fdopendir(fd);
        if (!d) {
                close(fd);
                return -ENOMEM;
        }
        while ((de = readdir(d))) {
                if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                        continue;
                int q = rm_at(dirfd(d), de->d_name, depth + 1);

                if (q < 0 && r == 0)
                        r = q;
        }
        closedir(d);
        return r;
}

static int rm_at(int at, const char *name, int depth)
{
        int r;

        if (depth > RMTREE_DEPTH_MAX)
                return -ELOOP;
        if (unlinkat(at, name, 0) == 0 || errno == ENOENT)
                return 0;
        if (errno != EISDIR && errno != EPERM)
                return -errno;
        r = rm_children(at, name, depth);
        if (unlinkat(at, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
                return r < 0 ? r : -errno;
        return r;
}

int files_rmtree(const char *dir)
{
        return rm_at(AT_FDCWD, dir, 0);
}

/* heal-exec-PID-XXXXXX directories of ours whose process is gone (it was SIGKILLed before it
 * could remove them) and that are older than SWEEP_AGE_S: a heal in another PID namespace
 * sharing this directory has PIDs we cannot see, but its directory is new while it runs. */
static void sweep(const char *tmp)
{
        DIR *d = opendir(tmp);
        struct dirent *de;
        uid_t me = getuid();

        if (!d)
                return;
        while ((de = readdir(d))) {
                char path[PATH_MAX], *end;
                struct stat st;
                long pid;

                if (strncmp(de->d_name, "heal-exec-", 10) != 0)
                        continue;
                pid = strtol(de->d_name + 10, &end, 10);
                if (end == de->d_name + 10 || *end != '-' || pid <= 0 || pid == getpid() ||
                    kill((pid_t)pid, 0) == 0 || errno != ESRCH)
                        continue;
                if (str_printf(path, sizeof(path), "%s/%s", tmp, de->d_name) < 0 ||
                    lstat(path, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != me ||
                    time(NULL) - st.st_mtime < SWEEP_AGE_S)
                        continue;
                (void)files_rmtree(path);
        }
        closedir(d);
}

void files_sweep(const char *tmp)
{
        static int swept;

        if (!__atomic_exchange_n(&swept, 1, __ATOMIC_SEQ_CST))
                sweep(tmp);
}
