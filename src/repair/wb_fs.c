/* SPDX-License-Identifier: MIT */
/*
 * The file system side of write-back and undo. Every path is walked one component at a time
 * with openat(O_NOFOLLOW|O_DIRECTORY) from the tree's fd, so that a symlink planted anywhere on
 * the way is refused rather than followed (openat2's RESOLVE_NO_SYMLINKS does the same in one
 * call, but is not on every kernel heal supports). A file is replaced by writing a temporary
 * file next to it and rename(2)ing it over: readers see the old or the new content, never a
 * mix, and fsync(2) of the file then of its directory makes the result survive a crash.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include "core/util.h"
#include "repair/writeback-internal.h"

void wb_state_release(struct wb_state *s)
{
        free(s->data);
        *s = (struct wb_state){ 0 };
}

int wb_check_path(const char *rel, heal_error *err)
{
        size_t len = strlen(rel);

        if (!len || rel[0] == '/')
                return heal_error_set(err, -EPERM, "'%s': not a path relative to the tree", rel);
        if (len >= PATH_MAX)
                return heal_error_set(err, -ENAMETOOLONG, "'%.64s...': path too long", rel);
        for (const char *p = rel, *first = rel; *p;) {
                size_t k = strcspn(p, "/");

                if (k == 0 || (k == 1 && p[0] == '.') || (k == 2 && !strncmp(p, "..", 2)))
                        return heal_error_set(err, -EPERM,
                                              "'%s': '.', '..' and empty components are refused",
                                              rel);
                if (k > NAME_MAX)
                        return heal_error_set(err, -ENAMETOOLONG, "'%s': name too long", rel);
                if (k == 4 && !strncasecmp(p, ".git", 4))
                        return heal_error_set(err, -EPERM, "'%s': heal writes nothing in .git",
                                              rel);
                if (p == first && k == 5 && !strncmp(p, WB_STATE_DIR, 5))
                        return heal_error_set(err, -EPERM, "'%s': .heal is heal's own state", rel);
                p += k;
                if (*p == '/' && !p[1])
                        return heal_error_set(err, -EPERM, "'%s': names a directory", rel);
                p += *p == '/';
        }
        return 0;
}

/* Why openat(@name, O_NOFOLLOW|O_DIRECTORY) failed with @e, as heal's error. */
static int refuse_component(int dfd, const char *name, const char *rel, size_t upto, int e,
                            heal_error *err)
{
        struct stat st;

        if ((e == ELOOP || e == ENOTDIR) && fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
                if (S_ISLNK(st.st_mode))
                        return heal_error_set(err, -EPERM,
                                              "'%s': '%.*s' is a symlink; heal writes no file "
                                              "through one",
                                              rel, (int)upto, rel);
                return heal_error_set(err, -ENOTDIR, "'%s': '%.*s' is not a directory", rel,
                                      (int)upto, rel);
        }
        return heal_error_set(err, -e, "'%s': opening '%.*s': %s", rel, (int)upto, rel,
                              strerror(e));
}

int wb_open_parent(int *ret_fd, const char **ret_name, size_t *ret_missing, int rootfd,
                   const char *rel, bool create, heal_error *err)
{
        _cleanup_close_ int fd = -1;
        const char *p = rel;
        int cur = rootfd;

        for (;;) {
                size_t k = strcspn(p, "/");
                char name[NAME_MAX + 1];
                int nfd;

                if (!p[k])
                        break;
                if (k > NAME_MAX)
                        return heal_error_set(err, -ENAMETOOLONG, "'%s': name too long", rel);
                memcpy(name, p, k);
                name[k] = '\0';
                nfd = openat(cur, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (nfd < 0 && errno == ENOENT && create) {
                        if (mkdirat(cur, name, 0755) < 0 && errno != EEXIST)
                                return heal_error_set(err, -errno, "'%s': making '%.*s': %m", rel,
                                                      (int)(p - rel + k), rel);
                        if (fsync(cur) < 0)
                                return heal_error_set(err, -errno, "'%s': fsync: %m", rel);
                        nfd = openat(cur, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                }
                if (nfd < 0) {
                        if (errno == ENOENT) {
                                if (ret_missing)
                                        *ret_missing = (size_t)(p - rel) + k;
                                return heal_error_set(err, -ENOENT, "'%s': '%.*s' is missing", rel,
                                                      (int)(p - rel + k), rel);
                        }
                        return refuse_component(cur, name, rel, (size_t)(p - rel) + k, errno, err);
                }
                safe_close(fd);
                cur = fd = nfd;
                p += k + 1;
        }
        if (fd < 0) {
                fd = fcntl(rootfd, F_DUPFD_CLOEXEC, 3);
                if (fd < 0)
                        return heal_error_set(err, -errno, "dup: %m");
        }
        *ret_fd = TAKE_FD(fd);
        *ret_name = p;
        return 0;
}

static int read_all(int fd, char *buf, size_t want, size_t *ret_len)
{
        size_t n = 0;

        while (n < want) {
                ssize_t k = read(fd, buf + n, want - n);

                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return -errno;
                if (k == 0)
                        break;
                n += (size_t)k;
        }
        *ret_len = n;
        return 0;
}

int wb_read(struct wb_state *ret, int dfd, const char *name, const char *rel, heal_error *err)
{
        _cleanup_close_ int fd = -1;
        _cleanup_free_ char *data = NULL;
        struct stat st;
        size_t len = 0;
        int r;

        *ret = (struct wb_state){ 0 };
        fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
        if (fd < 0 && errno == ENOENT)
                return 0;
        if (fd < 0 && errno == ELOOP)
                return heal_error_set(err, -EPERM,
                                      "'%s' is a symlink; heal writes no file "
                                      "through one",
                                      rel);
        if (fd < 0)
                return heal_error_set(err, -errno, "'%s': %m", rel);
        if (fstat(fd, &st) < 0)
                return heal_error_set(err, -errno, "'%s': %m", rel);
        if (!S_ISREG(st.st_mode))
                return heal_error_set(err, -EPERM, "'%s' is not a regular file", rel);
        if ((unsigned long long)st.st_size > WB_FILE_MAX)
                return heal_error_set(err, -EFBIG, "'%s' is over 256 MiB", rel);
        data = malloc((size_t)st.st_size + 2);
        if (!data)
                return heal_error_set(err, -ENOMEM, "out of memory");
        /* one byte more than the size: a file that grew meanwhile is seen to differ */
        r = read_all(fd, data, (size_t)st.st_size + 1, &len);
        if (r < 0)
                return heal_error_set(err, r, "'%s': reading: %s", rel, strerror(-r));
        data[len] = '\0';
        ret->exists = true;
        ret->data = TAKE_PTR(data);
        ret->len = len;
        ret->mode = st.st_mode & 07777;
        ret->uid = st.st_uid;
        ret->gid = st.st_gid;
        return 0;
}

static int write_all(int fd, const void *data, size_t len)
{
        const char *p = data;

        while (len) {
                ssize_t k = write(fd, p, len);

                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return -errno;
                p += k;
                len -= (size_t)k;
        }
        return 0;
}

/* Write, fsync and close @fd (closed in every case): close(2) reports late NFS errors. */
static int fill_and_close(int fd, const void *data, size_t len)
{
        int r = write_all(fd, data, len);

        if (r == 0 && fsync(fd) < 0)
                r = -errno;
        if (close(fd) < 0 && r == 0 && errno != EINTR)
                r = -errno;
        return r;
}

int wb_write_new(int dfd, const char *name, const void *data, size_t len, mode_t mode)
{
        int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);

        if (fd < 0)
                return -errno;
        return fill_and_close(fd, data, len);
}

/* A fresh ".NAME.heal-XXXXXX" in @dfd, opened for writing; 0 or -errno. */
static int open_temp(int *ret_fd, char *tmp, size_t tmp_len, int dfd, const char *name,
                     mode_t create_mode)
{
        static const char alnum[] = "abcdefghijklmnopqrstuvwxyz0123456789";

        for (int tries = 0; tries < 100; tries++) {
                unsigned char rnd[6];
                char suffix[7];
                int fd;

                if (getrandom(rnd, sizeof(rnd), GRND_NONBLOCK) != (ssize_t)sizeof(rnd)) {
                        unsigned long x = (unsigned long)getpid() * 2654435761u + (unsigned)tries;

                        for (size_t i = 0; i < sizeof(rnd); i++)
                                rnd[i] = (unsigned char)(x >> (i * 5));
                }
                for (size_t i = 0; i < sizeof(rnd); i++)
                        suffix[i] = alnum[rnd[i] % (sizeof(alnum) - 1)];
                suffix[6] = '\0';
                /* the name cut so that the temporary name fits NAME_MAX */
                if (str_printf(tmp, tmp_len, ".%.200s.heal-%s", name, suffix) < 0)
                        return -ENAMETOOLONG;
                fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                            create_mode);
                if (fd >= 0) {
                        *ret_fd = fd;
                        return 0;
                }
                if (errno != EEXIST)
                        return -errno;
        }
        return -EEXIST;
}

int wb_write_atomic(bool *ret_replaced, int dfd, const char *name, const void *data, size_t len,
                    mode_t mode, uid_t uid, gid_t gid)
{
        char tmp[NAME_MAX + 1];
        int fd = -1, r;

        *ret_replaced = false;
        r = open_temp(&fd, tmp, sizeof(tmp), dfd, name, mode == WB_MODE_NEW ? 0644 : 0600);
        if (r < 0)
                return r;
        r = write_all(fd, data, len);
        /* the owner first: fchown(2) clears the set-user-ID and set-group-ID bits */
        if (r == 0 && (uid != (uid_t)-1 || gid != (gid_t)-1) &&
            (uid != geteuid() || gid != getegid()))
                (void)!fchown(fd, uid, gid);
        if (r == 0 && mode != WB_MODE_NEW && fchmod(fd, mode) < 0)
                r = -errno;
        if (r == 0 && fsync(fd) < 0)
                r = -errno;
        if (close(fd) < 0 && r == 0 && errno != EINTR)
                r = -errno;
        if (r == 0 && renameat(dfd, tmp, dfd, name) < 0)
                r = -errno;
        if (r < 0) {
                (void)unlinkat(dfd, tmp, 0);
                return r;
        }
        *ret_replaced = true;
        return fsync(dfd) < 0 ? -errno : 0;
}

int wb_unlink(bool *ret_replaced, int dfd, const char *name)
{
        *ret_replaced = false;
        if (unlinkat(dfd, name, 0) < 0 && errno != ENOENT)
                return -errno;
        *ret_replaced = true;
        return fsync(dfd) < 0 ? -errno : 0;
}

void wb_hash(char out[17], const void *data, size_t len)
{
        snprintf(out, 17, "%016llx", (unsigned long long)XXH3_64bits(data, len));
}

static void fatal_signals(sigset_t *set)
{
        sigemptyset(set);
        sigaddset(set, SIGINT);
        sigaddset(set, SIGTERM);
        sigaddset(set, SIGHUP);
        sigaddset(set, SIGQUIT);
}

void wb_signals_block(sigset_t *ret_old)
{
        sigset_t set;

        fatal_signals(&set);
        pthread_sigmask(SIG_BLOCK, &set, ret_old);
}

void wb_signals_restore(const sigset_t *old)
{
        pthread_sigmask(SIG_SETMASK, old, NULL);
}

int wb_rm_rf(int parent, const char *name)
{
        int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        struct dirent *de;
        DIR *d;

        if (fd < 0)
                return unlinkat(parent, name, 0) < 0 && errno != ENOENT ? -errno : 0;
        d = fdopendir(fd);
        if (!d) {
                close(fd);
                return -errno;
        }
        while ((de = readdir(d)))
                if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
                        (void)wb_rm_rf(dirfd(d), de->d_name);
        closedir(d);
        return unlinkat(parent, name, AT_REMOVEDIR) < 0 ? -errno : 0;
}

void wb_rmdirs(int treefd, const char *const *dirs, size_t n)
{
        for (size_t i = n; i-- > 0;) {
                const char *name;
                int fd;

                if (wb_open_parent(&fd, &name, NULL, treefd, dirs[i], false, NULL) < 0)
                        continue;
                if (unlinkat(fd, name, AT_REMOVEDIR) == 0)
                        (void)fsync(fd);
                close(fd);
        }
}

/* mkdir -p for an absolute @path. */
static int mkdir_p(const char *path)
{
        char buf[PATH_MAX];

        if (str_printf(buf, sizeof(buf), "%s", path) < 0)
                return -ENAMETOOLONG;
        for (char *p = buf + 1;; p++) {
                if (*p != '/' && *p)
                        continue;
                char c = *p;

                *p = '\0';
                if (mkdir(buf, 0755) < 0 && errno != EEXIST)
                        return -errno;
                *p = c;
                if (!c)
                        return 0;
        }
}

/* STATE_DIR/.gitignore holding "*", unless one exists: .heal/ never shows in git status. */
static int ensure_gitignore(int sfd)
{
        int r = wb_write_new(sfd, ".gitignore", "*\n", 2, 0644);

        if (r == -EEXIST)
                return 0;
        if (r < 0)
                return r;
        return fsync(sfd) < 0 ? -errno : 0;
}

static int open_state(int treefd, const char *state_dir, bool create)
{
        int fd;

        /* .heal in the tree is never a symlink: a repository could point it anywhere the
         * user can write, and heal would fill that place with copies of files */
        if (!state_dir) {
                const int flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;

                fd = openat(treefd, WB_STATE_DIR, flags);
                if (fd < 0 && errno == ENOENT && create) {
                        if (mkdirat(treefd, WB_STATE_DIR, 0755) < 0 && errno != EEXIST)
                                return -errno;
                        if (fsync(treefd) < 0)
                                return -errno;
                        fd = openat(treefd, WB_STATE_DIR, flags);
                }
                return fd < 0 ? -errno : fd;
        }
        if (create) {
                int r = mkdir_p(state_dir);

                if (r < 0)
                        return r;
        }
        fd = open(state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        return fd < 0 ? -errno : fd;
}

int wb_open_undo_dir(int *ret_fd, char *ret_where, int treefd, const char *tree,
                     const char *state_dir, bool create, heal_error *err)
{
        struct stat st;
        _cleanup_close_ int sfd = -1;
        char state[PATH_MAX];
        int fd, r;

        if (state_dir)
                r = str_printf(state, sizeof(state), "%s", state_dir);
        else
                r = str_printf(state, sizeof(state), "%s/%s", tree, WB_STATE_DIR);
        if (r < 0 || strlen(state) + sizeof("/undo") > PATH_MAX)
                return heal_error_set(err, -ENAMETOOLONG, "state directory: path too long");
        if (ret_where)
                (void)str_printf(ret_where, PATH_MAX, "%s/undo", state);
        sfd = open_state(treefd, state_dir, create);
        if (sfd < 0 && !state_dir && fstatat(treefd, WB_STATE_DIR, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
            S_ISLNK(st.st_mode))
                return heal_error_set(err, -ELOOP,
                                      "'%s' is a symlink: heal keeps its undo records only in a "
                                      "real directory of the tree (remove the link)",
                                      state);
        if (sfd < 0)
                return heal_error_set(err, sfd, "state directory '%s': %s", state, strerror(-sfd));
        if (create) {
                r = ensure_gitignore(sfd);
                if (r < 0)
                        return heal_error_set(err, r, "'%s/.gitignore': %s", state, strerror(-r));
                if (mkdirat(sfd, "undo", 0700) == 0) {
                        if (fsync(sfd) < 0)
                                return heal_error_set(err, -errno, "'%s': fsync: %m", state);
                } else if (errno != EEXIST) {
                        return heal_error_set(err, -errno, "'%s/undo': %m", state);
                }
        }
        fd = openat(sfd, "undo", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return heal_error_set(err, -errno, "'%s/undo': %m", state);
        *ret_fd = fd;
        return 0;
}
