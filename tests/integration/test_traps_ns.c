/* SPDX-License-Identifier: MIT */
/*
 * Traps of the library's per-process state: what it keeps across runs (the mount table's kernel
 * filesystems, the idmap of /etc) must follow the caller into new namespaces and survive what a
 * caller does to its descriptors; and a mountpoint the plan creates must not be steered onto the
 * host by a process outside the sandbox. The namespaces here are the test's own (a child that
 * unshares them), so that it may mount.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

/* unshare(2) @flags with CLONE_NEWUSER, our uid and gid mapped to 0 in it; 0 or -1. */
static int unshare_as_ns_root(int flags)
{
        uid_t uid = getuid();
        gid_t gid = getgid();
        char map[64];
        FILE *f;

        if (unshare(CLONE_NEWUSER | flags) < 0)
                return -1;
        if ((f = fopen("/proc/self/setgroups", "w")))
                fputs("deny", f), fclose(f);
        snprintf(map, sizeof(map), "0 %u 1", (unsigned)uid);
        if (!(f = fopen("/proc/self/uid_map", "w")) || fputs(map, f) < 0 || fclose(f) != 0)
                return -1;
        snprintf(map, sizeof(map), "0 %u 1", (unsigned)gid);
        if (!(f = fopen("/proc/self/gid_map", "w")) || fputs(map, f) < 0 || fclose(f) != 0)
                return -1;
        return 0;
}

/* The descriptor the library keeps on /proc/self/mountinfo, or -1. */
static int mountinfo_fd(void)
{
        char path[64], link[PATH_MAX];

        for (int fd = 3; fd < 1024; fd++) {
                ssize_t n;

                snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
                n = readlink(path, link, sizeof(link) - 1);
                if (n > 0 && (link[n] = '\0', strstr(link, "/mountinfo")))
                        return fd;
        }
        return -1;
}

/* In a child with a user, mount and network namespace of its own (so that it may mount sysfs),
 * four runs in @dir: before the namespaces, after sysfs appeared in "dir/sys fs", after it went,
 * after it came back with the library's descriptor closed and reopened by us. Exits nonzero
 * when a step fails or that file was closed. Writes each run's return value and the error of the
 * second (of the third if that one failed). */
static void kernel_fs_runs(const char *dir, int out)
{
        char sub[PATH_MAX], msg[HEAL_ERROR_MSG_MAX] = "";
        const char *argv[] = { "/bin/true", NULL };
        heal_sandbox_limits lim = HEAL_SANDBOX_LIMITS_INIT;
        heal_error err = HEAL_ERROR_INIT;
        heal_sandbox_result r = { 0 };
        heal_sandbox *sb = NULL;
        int rv[4] = { 1, 1, 1, 1 }, watch, mine;

        snprintf(sub, sizeof(sub), "%s/sys fs", dir); /* mountinfo writes the space as \040 */
        lim.pids_max = 0; /* "root" of a user namespace has no cgroup to enforce it with */
        if (heal_sandbox_new(&sb, &err) < 0 || heal_sandbox_set_cwd(sb, dir, &err) < 0 ||
            heal_sandbox_set_limits(sb, &lim, &err) < 0 ||
            /* no library thread: unshare(CLONE_NEWUSER) needs a single-threaded process */
            heal_sandbox_set_flags(sb, HEAL_SANDBOX_NO_POOL, &err) < 0)
                _exit(90);
        rv[0] = heal_sandbox_run(sb, argv, &r, &err);
        heal_sandbox_result_release(&r);
        if (unshare_as_ns_root(CLONE_NEWNS | CLONE_NEWNET) < 0)
                _exit(91);
        if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
            mount("sysfs", sub, "sysfs", 0, NULL) < 0)
                _exit(94);
        rv[1] = heal_sandbox_run(sb, argv, &r, &err);
        snprintf(msg, sizeof(msg), "%s", err.msg);
        heal_sandbox_result_release(&r);
        if (umount2(sub, 0) < 0)
                _exit(95);
        err = (heal_error)HEAL_ERROR_INIT;
        rv[2] = heal_sandbox_run(sb, argv, &r, &err);
        if (rv[2] != 0)
                snprintf(msg, sizeof(msg), "%s", err.msg);
        heal_sandbox_result_release(&r);
        /* The caller closes the library's descriptor and, after the mount, opens the same file
         * on its number: its poll(2) state starts after the change, and it is not the
         * library's to close. */
        if ((watch = mountinfo_fd()) < 0 || close(watch) < 0)
                _exit(97);
        if (mount("sysfs", sub, "sysfs", 0, NULL) < 0)
                _exit(96);
        if ((mine = open("/proc/self/mountinfo", O_RDONLY)) < 0 ||
            (mine != watch && (dup2(mine, watch) < 0 || close(mine) < 0)))
                _exit(97);
        rv[3] = heal_sandbox_run(sb, argv, &r, &err);
        heal_sandbox_result_release(&r);
        heal_sandbox_pool_release();
        if (fcntl(watch, F_GETFD) < 0)
                _exit(98);
        dprintf(out, "%d %d %d %d %s\n", rv[0], rv[1], rv[2], rv[3], msg);
        _exit(0);
}

/* The mount table is read again when it changed (mountwatch.c): a kernel filesystem mounted in
 * the shared directory after a first run is refused, and allowed again once it is gone; a
 * descriptor the caller reused is neither trusted nor closed. */
Test(traps, a_kernel_filesystem_mounted_in_the_shared_directory_later_is_refused)
{
        char *dir = test_tempdir(), sub[PATH_MAX], buf[HEAL_ERROR_MSG_MAX + 64] = "";
        int fds[2], st = 0, rv[4] = { 9, 9, 9, 9 }, at = 0;
        ssize_t n;
        pid_t pid;

        snprintf(sub, sizeof(sub), "%s/sys fs", dir);
        cr_assert_eq(mkdir(sub, 0755), 0);
        cr_assert_eq(pipe(fds), 0);
        pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0) {
                close(fds[0]);
                kernel_fs_runs(dir, fds[1]);
        }
        close(fds[1]);
        while ((n = read(fds[0], buf + at, sizeof(buf) - 1 - (size_t)at)) > 0)
                at += (int)n;
        close(fds[0]);
        cr_assert_eq(waitpid(pid, &st, 0), pid);
        cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child setup failed: status %d", st);
        cr_assert_eq(sscanf(buf, "%d %d %d %d", &rv[0], &rv[1], &rv[2], &rv[3]), 4, "%s", buf);
        cr_assert_eq(rv[0], 0, "the first run: %s", buf);
        cr_assert_eq(rv[1], -EPERM, "with sysfs in the directory: %s", buf);
        cr_assert(strstr(buf, "contains a sysfs mount"), "%s", buf);
        cr_assert_eq(rv[2], 0, "sysfs gone again: %s", buf);
        cr_assert_eq(rv[3], -EPERM, "sysfs back, the descriptor replaced: %s", buf);
        test_rmtree(dir);
        free(dir);
}

/* As root: a run, then (in a private mount namespace) a filesystem that cannot be idmapped
 * appears under /etc with a secret on it: the runs go on, /etc walked instead (secrets.c),
 * the secret hidden. Unprivileged the same
 * steps run in a user namespace of their own, where /etc is walked from the start. */
Test(traps, an_etc_submount_without_idmap_support_falls_back_to_the_walk)
{
        const char *argv[] = { "/bin/sh", "-c",
                               geteuid() == 0 ? "test -r /etc/passwd && ! cat /etc/shadow && "
                                                "! cat /etc/ssl/heal-secret"
                                              : "test -r /etc/passwd",
                               NULL };
        int fds[2], st = 0, rv[3] = { 9, 9, 9 };
        char buf[HEAL_ERROR_MSG_MAX + 64] = "";
        ssize_t n;
        pid_t pid;

        cr_assert_eq(pipe(fds), 0);
        pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0) {
                heal_sandbox_limits lim = HEAL_SANDBOX_LIMITS_INIT;
                heal_error err = HEAL_ERROR_INIT;
                heal_sandbox_result r = { 0 };
                heal_sandbox *sb = NULL;
                char msg[HEAL_ERROR_MSG_MAX] = "";
                int fd;

                close(fds[0]);
                if ((geteuid() == 0 ? unshare(CLONE_NEWNS) : unshare_as_ns_root(CLONE_NEWNS)) < 0 ||
                    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
                        _exit(90);
                lim.pids_max = 0;
                if (heal_sandbox_new(&sb, &err) < 0 || heal_sandbox_set_cwd(sb, "/", &err) < 0 ||
                    heal_sandbox_set_limits(sb, &lim, &err) < 0 ||
                    heal_sandbox_set_flags(sb, HEAL_SANDBOX_NO_POOL, &err) < 0)
                        _exit(91);
                rv[0] = heal_sandbox_run(sb, argv, &r, &err);
                rv[0] = rv[0] < 0 ? rv[0] : r.exit_code;
                heal_sandbox_result_release(&r);
                /* as root: a secret on it, to be hidden by the walk (it enters submounts) */
                if (mount("none", "/etc/ssl", "ramfs", 0, NULL) < 0 ||
                    (geteuid() == 0 &&
                     ((fd = open("/etc/ssl/heal-secret", O_WRONLY | O_CREAT | O_EXCL, 0600)) < 0 ||
                      write(fd, "SECRET\n", 7) != 7 || close(fd) < 0)))
                        _exit(92);
                for (int i = 1; i < 3; i++) {
                        err = (heal_error)HEAL_ERROR_INIT;
                        rv[i] = heal_sandbox_run(sb, argv, &r, &err);
                        if (rv[i] < 0)
                                snprintf(msg, sizeof(msg), "%s", err.msg);
                        rv[i] = rv[i] < 0 ? rv[i] : r.exit_code;
                        heal_sandbox_result_release(&r);
                }
                dprintf(fds[1], "%d %d %d %s\n", rv[0], rv[1], rv[2], msg);
                _exit(0);
        }
        close(fds[1]);
        n = read(fds[0], buf, sizeof(buf) - 1);
        close(fds[0]);
        cr_assert_eq(waitpid(pid, &st, 0), pid);
        cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child setup failed: status %d", st);
        cr_assert_gt(n, 0);
        cr_assert_eq(sscanf(buf, "%d %d %d", &rv[0], &rv[1], &rv[2]), 3, "%s", buf);
        cr_assert_eq(rv[0], 0, "before: %s", buf);
        cr_assert_eq(rv[1], 0, "the run that meets the ramfs: %s", buf);
        cr_assert_eq(rv[2], 0, "the run after: %s", buf);
}

struct racer {
        const char *proj; /* the shared directory; proj/x is the tmpfs's mountpoint */
        char link[PATH_MAX];
        volatile int stop;
};

/* A heal-init that has mounted its tmpfs at /newroot/proj/x (its mountinfo says so). */
static bool mounted_x(const char *pid, const void *arg)
{
        static char buf[65536]; /* the racer thread's only */

        (void)arg;
        return test_read_proc(pid, "comm", buf, 16) >= 9 && strncmp(buf, "heal-init", 9) == 0 &&
               test_read_proc(pid, "mountinfo", buf, sizeof(buf)) > 0 &&
               strstr(buf, "/newroot/proj/x ");
}

static bool init_mounted_x(void)
{
        return test_count_matching(mounted_x, NULL) > 0;
}

/* A host process with write access to the shared directory: once the sandbox's tmpfs is on
 * proj/x, it renames the directory away and leaves a symlink into the host in its place. */
static void *race_mountpoint(void *arg)
{
        struct racer *r = arg;
        char x[PATH_MAX], moved[PATH_MAX];

        snprintf(x, sizeof(x), "%s/x", r->proj);
        snprintf(moved, sizeof(moved), "%s/.x", r->proj);
        while (!r->stop) {
                if (!init_mounted_x())
                        continue;
                if (rename(x, moved) == 0) {
                        if (symlink(r->link, x) == 0) {
                                usleep(20000);
                                unlink(x);
                        }
                        rename(moved, x);
                }
        }
        return NULL;
}

/* The plan: a tmpfs at /proj/x inside the shared /proj, 52 more tmpfs (a window for the racer),
 * then a directory to make in /proj/x. */
static heal_sandbox *racy_plan(const char *proj)
{
        static const char *const ro[] = { "ro", NULL };
        heal_error err = HEAL_ERROR_INIT;
        heal_sandbox *sb = test_sandbox("/");
        char pad[32];

        cr_assert_eq(heal_sandbox_add_mount(sb, "tmpfs", NULL, "/", NULL, &err), 0, "%s", err.msg);
        cr_assert_eq(heal_sandbox_add_mount(sb, "bind", "/usr", "/usr", ro, &err), 0, "%s",
                     err.msg);
        cr_assert_eq(heal_sandbox_add_mount(sb, "symlink", "usr/bin", "/bin", NULL, &err), 0);
        cr_assert_eq(heal_sandbox_add_mount(sb, "symlink", "usr/lib", "/lib", NULL, &err), 0);
        cr_assert_eq(heal_sandbox_add_mount(sb, "symlink", "usr/lib64", "/lib64", NULL, &err), 0);
        cr_assert_eq(heal_sandbox_add_mount(sb, "bind", proj, "/proj", NULL, &err), 0, "%s",
                     err.msg);
        cr_assert_eq(heal_sandbox_add_mount(sb, "tmpfs", NULL, "/proj/x", NULL, &err), 0);
        for (int i = 0; i < 52; i++) {
                snprintf(pad, sizeof(pad), "/pad%d", i);
                cr_assert_eq(heal_sandbox_add_mount(sb, "tmpfs", NULL, pad, NULL, &err), 0);
        }
        cr_assert_eq(heal_sandbox_add_mount(sb, "tmpfs", NULL, "/proj/x/newdir", NULL, &err), 0);
        return sb;
}

Test(traps, a_mountpoint_below_a_tmpfs_in_a_shared_directory_is_not_made_through_a_symlink,
     .timeout = 60)
{
        const char *argv[] = { "/bin/true", NULL };
        char *dir = test_tempdir(), proj[512], x[600], target[600], made[700];
        struct racer r = { .proj = proj };
        heal_sandbox *sb;
        pthread_t t;

        snprintf(proj, sizeof(proj), "%s/proj", dir);
        snprintf(x, sizeof(x), "%s/x", proj);
        snprintf(target, sizeof(target), "%s/target", dir);
        snprintf(made, sizeof(made), "%s/newdir", target);
        snprintf(r.link, sizeof(r.link), "/oldroot%s", target);
        cr_assert_eq(mkdir(proj, 0755), 0);
        cr_assert_eq(mkdir(x, 0755), 0);
        cr_assert_eq(mkdir(target, 0755), 0);
        sb = racy_plan(proj);
        cr_assert_eq(pthread_create(&t, NULL, race_mountpoint, &r), 0);
        for (int i = 0; i < 8; i++) {
                heal_error err = HEAL_ERROR_INIT;
                heal_sandbox_result res = { 0 };
                struct stat st;

                /* a setup error is fine (the mountpoint moved away); a directory made on the
                 * host is not */
                (void)heal_sandbox_run(sb, argv, &res, &err);
                heal_sandbox_result_release(&res);
                cr_assert_neq(access(made, F_OK), 0, "run %d made %s on the host", i, made);
                for (int w = 0; w < 100 && !(lstat(x, &st) == 0 && S_ISDIR(st.st_mode)); w++)
                        usleep(10000); /* the racer puts proj/x back */
        }
        r.stop = 1;
        pthread_join(t, NULL);
        heal_sandbox_free(sb);
        test_rmtree(dir);
        free(dir);
}
