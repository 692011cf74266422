/* SPDX-License-Identifier: MIT */
/*
 * Traps other sandboxes fell into (../shared/research/sandbox-anchors.md section 8), each as a
 * test: syscalls libc probes must keep working, a caller that ignores SIGCHLD or runs threads,
 * mountpoints never created through a bind, clear errors for refused user namespaces.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

static heal_sandbox_result res;

static void fini(void)
{
        heal_sandbox_result_release(&res);
}

TestSuite(traps, .fini = fini, .timeout = 60);

static void run_probe(unsigned flags)
{
        const char *argv[] = { "./probe", NULL };
        heal_sandbox *sb = test_sandbox(HEAL_TEST_HELPERS);

        cr_assert_eq(heal_sandbox_set_flags(sb, flags, NULL), 0);
        test_run(sb, argv, &res);
        cr_assert_eq(res.status, HEAL_STATUS_OK, "%s %s %s", res.message, res.out, res.err);
        heal_sandbox_free(sb);
}

static void expect_line(const char *line)
{
        char needle[128];

        snprintf(needle, sizeof(needle), "%s\n", line);
        cr_expect(strstr(res.out, needle), "expected '%s' in:\n%s", line, res.out);
}

Test(traps, what_libc_needs_keeps_working)
{
        run_probe(0);
        expect_line("pthread_create=ok");
        expect_line("rseq_registered=yes");
        expect_line("faccessat2=ok");
        expect_line("close_range=ok");
        cr_expect_null(strstr(res.out, "clone3_probe=ENOSYS"), "clone3 must reach the kernel");
        cr_expect_null(strstr(res.out, "clone3_probe=EPERM"));
}

Test(traps, default_filter_refusals)
{
        run_probe(0);
        expect_line("ptrace=EPERM");
        expect_line("bpf=EPERM");
        expect_line("io_uring_setup=ENOSYS");
        expect_line("keyctl=EPERM");
        expect_line("perf_event_open=EPERM");
        expect_line("userfaultfd=EPERM");
        expect_line("mount=EPERM");
        expect_line("unshare_user=ENOSPC");
        expect_line("unshare_net=EPERM");
        expect_line("tiocsti=EPERM");
        expect_line("tiocsti_highbits=EPERM");
        expect_line("sethostname=EPERM");
        expect_line("int80=ENOSYS");
        expect_line("sid_is_self=yes");
        cr_expect_null(strstr(res.out, "leaked_fd="), "%s", res.out);
        char ids[64];
        snprintf(ids, sizeof(ids), "uid=%d gid=%d", (int)getuid(), (int)getgid());
        expect_line(ids);
}

Test(traps, opt_ins_lift_refusals)
{
        run_probe(HEAL_SANDBOX_ALLOW_PTRACE | HEAL_SANDBOX_ALLOW_USERNS);
        expect_line("ptrace=ok");
        expect_line("unshare_user=ok");
        expect_line("bpf=EPERM");
}

Test(traps, caller_rules_apply)
{
        const char *py[] = { "python3", "-c",
                             "import socket\ntry:\n socket.socket()\n print('made')\n"
                             "except OSError as e:\n print(e.errno)",
                             NULL };
        heal_sandbox *sb = test_sandbox("/");

        test_require("python3");
        cr_assert_eq(heal_sandbox_add_seccomp_rule(sb, "socket", EACCES, NULL), 0);
        test_run(sb, py, &res);
        cr_assert_str_eq(res.out, "13\n", "%s %s", res.out, res.err);
        heal_sandbox_free(sb);
}

Test(traps, caller_ignoring_sigchld_does_not_hang)
{
        signal(SIGCHLD, SIG_IGN);
        test_sh("/", "exit 5", &res);
        cr_assert_eq(res.status, HEAL_STATUS_EXIT_NONZERO);
        cr_assert_eq(res.exit_code, 5);
}

static void reap_everything(int sig)
{
        (void)sig;
        while (waitpid(-1, NULL, WNOHANG) > 0)
                ;
}

Test(traps, caller_reaping_with_waitpid_minus_one_cannot_steal_the_run)
{
        struct sigaction sa = { .sa_handler = reap_everything, .sa_flags = SA_RESTART };

        sigaction(SIGCHLD, &sa, NULL);
        test_sh("/", "sleep 0.2; exit 9", &res);
        cr_assert_eq(res.status, HEAL_STATUS_EXIT_NONZERO);
        cr_assert_eq(res.exit_code, 9);
}

static void *thread_runs(void *arg)
{
        for (int i = 0; i < 5; i++) {
                heal_sandbox_result r = { 0 };
                char script[64];

                snprintf(script, sizeof(script), "exit %d", (int)(intptr_t)arg + i);
                test_sh("/", script, &r);
                cr_assert_eq(r.exit_code, (int)(intptr_t)arg + i);
                heal_sandbox_result_release(&r);
        }
        return NULL;
}

Test(traps, multi_threaded_caller)
{
        pthread_t t[4];

        for (intptr_t i = 0; i < 4; i++)
                cr_assert_eq(pthread_create(&t[i], NULL, thread_runs, (void *)(i * 10)), 0);
        for (int i = 0; i < 4; i++)
                pthread_join(t[i], NULL);
}

static void custom_run(const char *dir, const char *const *argv,
                       void (*plan)(heal_sandbox *, const char *))
{
        heal_sandbox *sb = test_sandbox("/");

        plan(sb, dir);
        test_run(sb, argv, &res);
        heal_sandbox_free(sb);
}

static void plan_bind_then_missing(heal_sandbox *sb, const char *dir)
{
        heal_error err = HEAL_ERROR_INIT;
        char target[300];

        snprintf(target, sizeof(target), "%s/newdir", dir);
        cr_assert_eq(heal_sandbox_add_mount(sb, "tmpfs", NULL, "/", NULL, &err), 0);
        cr_assert_eq(heal_sandbox_add_mount(sb, "bind", "/usr", "/usr",
                                            (const char *const[]){ "ro", NULL }, &err),
                     0);
        cr_assert_eq(heal_sandbox_add_mount(sb, "bind", dir, dir, NULL, &err), 0);
        cr_assert_eq(heal_sandbox_add_mount(sb, "tmpfs", NULL, target, NULL, &err), 0);
}

Test(traps, never_mkdir_through_a_bind)
{
        const char *argv[] = { "/usr/bin/true", NULL };
        char *dir = test_tempdir(), path[300];

        custom_run(dir, argv, plan_bind_then_missing);
        cr_assert_eq(res.status, HEAL_STATUS_SETUP_ERROR);
        cr_assert(strstr(res.message, "never through a bind"), "%s", res.message);
        cr_assert(strstr(res.message, "mount entry 3 (tmpfs at"), "%s", res.message);
        snprintf(path, sizeof(path), "%s/newdir", dir);
        cr_assert_neq(access(path, F_OK), 0, "nothing was created on the host");
        test_rmtree(dir);
        free(dir);
}

static void plan_ro_root_then_missing(heal_sandbox *sb, const char *dir)
{
        heal_error err = HEAL_ERROR_INIT;

        (void)dir;
        cr_assert_eq(heal_sandbox_add_mount(sb, "tmpfs", NULL, "/",
                                            (const char *const[]){ "ro", NULL }, &err),
                     0);
        cr_assert_eq(heal_sandbox_add_mount(sb, "tmpfs", NULL, "/work", NULL, &err), 0);
}

Test(traps, missing_mountpoint_on_read_only_parent_says_so)
{
        const char *argv[] = { "/bin/true", NULL };

        custom_run(NULL, argv, plan_ro_root_then_missing);
        cr_assert_eq(res.status, HEAL_STATUS_SETUP_ERROR);
        cr_assert(strstr(res.message, "read-only"), "%s", res.message);
        cr_assert(strstr(res.message, "'/work'"), "%s", res.message);
}

static void plan_xgo_overlay(heal_sandbox *sb, const char *dir)
{
        heal_error err = HEAL_ERROR_INIT;
        char lower[300];

        snprintf(lower, sizeof(lower), "%s", dir);
        cr_assert_eq(heal_sandbox_add_mount(sb, "bind", "/", "/",
                                            (const char *const[]){ "ro", NULL }, &err),
                     0);
        cr_assert_eq(heal_sandbox_add_mount(sb, "tmpfs", NULL, "/tmp",
                                            (const char *const[]){ "mode=1777", "size=16m", NULL },
                                            &err),
                     0);
        cr_assert_eq(heal_sandbox_add_mount(sb, "bind", lower, "/tmp/lower",
                                            (const char *const[]){ "ro", NULL }, &err),
                     0);
        cr_assert_eq(heal_sandbox_add_mount(sb, "tmpfs", NULL, "/tmp/upper", NULL, &err), 0);
        cr_assert_eq(heal_sandbox_add_mount(sb, "overlay", NULL, "/tmp/merged",
                                            (const char *const[]){ "lowerdir=/tmp/lower",
                                                                   "upperdir=/tmp/upper", NULL },
                                            &err),
                     0, "%s", err.msg);
        cr_assert_eq(heal_sandbox_add_mount(sb, "proc", NULL, "/proc", NULL, &err), 0);
}

Test(traps, xgo_style_overlay_plan)
{
        const char *argv[] = { "/bin/sh", "-c",
                               "cat /tmp/merged/f; echo changed > /tmp/merged/f; ls /tmp/upper; "
                               "touch /tmp/lower/x 2>&1 | grep -c Read-only",
                               NULL };
        char *dir = test_tempdir();

        test_write_file(dir, "f", "original\n");
        custom_run(dir, argv, plan_xgo_overlay);
        cr_assert_eq(res.status, HEAL_STATUS_OK, "%s %s", res.message, res.err);
        cr_assert_str_eq(res.out, "original\nf\n1\n");
        test_rmtree(dir);
        free(dir);
}

Test(traps, refused_user_namespaces_name_the_cause)
{
        char cmd[512];
        FILE *p;
        char out[1024] = "";

        test_require("bwrap");
        /* bwrap --disable-userns makes nested user namespaces fail with ENOSPC, as a container
         * or max_user_namespaces=0 would. */
        snprintf(cmd, sizeof(cmd),
                 "bwrap --unshare-user --disable-userns --ro-bind / / --proc /proc --dev /dev "
                 "%s run --pids 0 -- /bin/true 2>&1; echo \"exit=$?\"",
                 HEAL_TEST_BIN);
        p = popen(cmd, "r");
        cr_assert_not_null(p);
        cr_assert_geq(fread(out, 1, sizeof(out) - 1, p), 1);
        pclose(p);
        cr_assert(strstr(out, "forbids nested ones") || strstr(out, "max_user_namespaces"), "%s",
                  out);
        cr_assert(strstr(out, "fix:"), "%s", out);
        cr_assert(strstr(out, "exit=125"), "%s", out);
}

static void plan_order_trick(heal_sandbox *sb, const char *dir)
{
        heal_error err = HEAL_ERROR_INIT;

        /* The bind at /a hides the tmpfs at /a/b: /a/b/c would be created on the host. */
        cr_assert_eq(heal_sandbox_add_mount(sb, "tmpfs", NULL, "/", NULL, &err), 0);
        cr_assert_eq(heal_sandbox_add_mount(sb, "tmpfs", NULL, "/a/b", NULL, &err), 0);
        cr_assert_eq(heal_sandbox_add_mount(sb, "bind", dir, "/a", NULL, &err), 0);
        cr_assert_eq(heal_sandbox_add_mount(sb, "tmpfs", NULL, "/a/b/c", NULL, &err), 0);
}

Test(traps, a_later_bind_over_a_parent_is_the_cover)
{
        const char *argv[] = { "/bin/true", NULL };
        char *dir = test_tempdir(), path[300];

        custom_run(dir, argv, plan_order_trick);
        cr_assert_eq(res.status, HEAL_STATUS_SETUP_ERROR);
        cr_assert(strstr(res.message, "never through a bind"), "%s", res.message);
        snprintf(path, sizeof(path), "%s/b", dir);
        cr_assert_neq(access(path, F_OK), 0, "nothing created on the host");
        test_rmtree(dir);
        free(dir);
}

static void plan_through_planted_symlink(heal_sandbox *sb, const char *dir)
{
        heal_error err = HEAL_ERROR_INIT;
        char target[300];

        snprintf(target, sizeof(target), "%s/build/x", dir);
        cr_assert_eq(heal_sandbox_add_mount(sb, "bind", "/", "/",
                                            (const char *const[]){ "ro", NULL }, &err),
                     0);
        cr_assert_eq(heal_sandbox_add_mount(sb, "overlay", dir, dir, NULL, &err), 0);
        cr_assert_eq(heal_sandbox_add_mount(sb, "tmpfs", NULL, target, NULL, &err), 0);
}

Test(traps, a_planted_symlink_cannot_steer_mountpoint_creation)
{
        const char *argv[] = { "/bin/true", NULL };
        char *dir = test_tempdir(), *victim = test_tempdir(), link[600], path[600];

        /* An earlier run could plant this: build -> /oldroot/<victim>. */
        snprintf(link, sizeof(link), "%s/build", dir);
        snprintf(path, sizeof(path), "/oldroot%s", victim);
        cr_assert_eq(symlink(path, link), 0);
        custom_run(dir, argv, plan_through_planted_symlink);
        cr_assert_eq(res.status, HEAL_STATUS_SETUP_ERROR);
        cr_assert(strstr(res.message, "goes through a symlink"), "%s", res.message);
        snprintf(path, sizeof(path), "%s/x", victim);
        cr_assert_neq(access(path, F_OK), 0, "nothing created through the symlink");
        test_rmtree(dir);
        test_rmtree(victim);
        free(dir);
        free(victim);
}

/* A bind source is resolved when the entry is added; a symlink put there later (by anyone who
 * can write its parent) must not carry the mount elsewhere: mount(2) by path would follow it. */
Test(traps, a_bind_source_swapped_for_a_symlink_is_not_followed)
{
        const char *argv[] = { "/bin/sh", "-c", "cat /data/f", NULL };
        char *dir = test_tempdir(), src[600], secret[600], moved[600];
        heal_error err = HEAL_ERROR_INIT;
        heal_sandbox *sb = test_sandbox("/");

        snprintf(src, sizeof(src), "%s/share", dir);
        snprintf(secret, sizeof(secret), "%s/secret", dir);
        snprintf(moved, sizeof(moved), "%s/moved", dir);
        cr_assert_eq(mkdir(src, 0755), 0);
        cr_assert_eq(mkdir(secret, 0755), 0);
        test_write_file(src, "f", "shared\n");
        test_write_file(secret, "f", "SECRET\n");
        cr_assert_eq(heal_sandbox_set_flags(sb, HEAL_SANDBOX_EXTEND_DEFAULT, &err), 0);
        cr_assert_eq(heal_sandbox_add_mount(sb, "bind", src, "/data", NULL, &err), 0, "%s",
                     err.msg);
        test_run(sb, argv, &res);
        cr_assert_str_eq(res.out, "shared\n", "%s %s", res.message, res.err);
        heal_sandbox_result_release(&res);
        cr_assert_eq(rename(src, moved), 0);
        cr_assert_eq(symlink("secret", src), 0); /* relative: it resolves inside too */
        test_run(sb, argv, &res);
        cr_assert_eq(res.status, HEAL_STATUS_SETUP_ERROR, "%s", res.out);
        cr_assert_null(strstr(res.out, "SECRET"));
        cr_assert(strstr(res.message, "now goes through a symlink") && strstr(res.message, src),
                  "%s", res.message);
        heal_sandbox_free(sb);
        test_rmtree(dir);
        free(dir);
}

/* A caller that checked its directory (MCP's run_command: openat2 beneath its root) hands the
 * descriptor over; a directory swapped in at that path afterwards, or a symlink put there, is
 * refused rather than shared. */
Test(traps, a_working_directory_given_as_a_descriptor_cannot_be_swapped)
{
        const char *argv[] = { "/bin/sh", "-c", "cat f", NULL };
        char *dir = test_tempdir(), work[600], old[600], other[600];
        heal_error err = HEAL_ERROR_INIT;
        heal_sandbox *sb = test_sandbox(NULL);
        int fd;

        snprintf(work, sizeof(work), "%s/work", dir);
        snprintf(old, sizeof(old), "%s/work.old", dir);
        snprintf(other, sizeof(other), "%s/other", dir);
        cr_assert_eq(mkdir(work, 0755), 0);
        cr_assert_eq(mkdir(other, 0755), 0);
        test_write_file(work, "f", "checked\n");
        test_write_file(other, "f", "OTHER\n");
        fd = open(work, O_PATH | O_DIRECTORY | O_CLOEXEC);
        cr_assert_geq(fd, 0);
        cr_assert_eq(heal_sandbox_set_cwd_fd(sb, fd, &err), 0, "%s", err.msg);
        test_run(sb, argv, &res);
        cr_assert_str_eq(res.out, "checked\n", "%s %s", res.message, res.err);
        heal_sandbox_result_release(&res);
        /* another directory at the same path */
        cr_assert_eq(rename(work, old), 0);
        cr_assert_eq(mkdir(work, 0755), 0);
        test_write_file(work, "f", "OTHER\n");
        test_run(sb, argv, &res);
        cr_assert_eq(res.status, HEAL_STATUS_SETUP_ERROR, "%s", res.out);
        cr_assert(strstr(res.message, "was replaced"), "%s", res.message);
        heal_sandbox_result_release(&res);
        /* a symlink to another directory at that path */
        test_rmtree(work);
        cr_assert_eq(symlink("other", work), 0);
        test_run(sb, argv, &res);
        cr_assert_eq(res.status, HEAL_STATUS_SETUP_ERROR, "%s", res.out);
        cr_assert_null(strstr(res.out, "OTHER"));
        close(fd);
        heal_sandbox_free(sb);
        test_rmtree(dir);
        free(dir);
}

/* The shared directory is bound "rw"; a read-only host mount inside it stays read-only instead of
 * failing every run (lifting a locked flag recursively is refused). Mounting needs root. */
Test(traps, a_read_only_mount_inside_the_shared_directory_stays_read_only)
{
        char *dir = test_tempdir(), sub[600], cmd[700];

        snprintf(sub, sizeof(sub), "%s/ro", dir);
        cr_assert_eq(mkdir(sub, 0755), 0);
        if (geteuid() == 0) {
                snprintf(cmd, sizeof(cmd), "mount -t tmpfs -o ro tmpfs '%s'", sub);
                cr_assert_eq(system(cmd), 0);
        } else {
                cr_assert_eq(chmod(sub, 0555), 0); /* without root: a read-only directory */
        }
        test_sh(dir, "touch a && echo wrote; touch ro/b 2>/dev/null || echo refused", &res);
        if (geteuid() == 0) {
                snprintf(cmd, sizeof(cmd), "umount '%s'", sub);
                cr_assert_eq(system(cmd), 0);
        }
        cr_assert_eq(res.status, HEAL_STATUS_OK, "%s", res.message);
        cr_assert_str_eq(res.out, "wrote\nrefused\n", "%s", res.err);
        chmod(sub, 0755);
        test_rmtree(dir);
        free(dir);
}

Test(traps, host_root_cannot_reach_host_root_powers)
{
        /* Only meaningful when the suite runs as root: the command is then host uid 0. */
        char out_file[] = "/tmp/heal-test-setuid-XXXXXX";
        int fd = mkstemp(out_file);

        cr_assert(fd >= 0);
        close(fd);
        unlink(out_file);
        test_sh("/tmp",
                "echo 1 > /proc/sys/kernel/printk_ratelimit_burst 2>/dev/null && echo sysctl-written;"
                "head -c1 /etc/shadow 2>/dev/null && echo shadow-read;"
                "cp /bin/true ./heal-setuid-probe && chmod 4755 ./heal-setuid-probe 2>/dev/null"
                " && echo setuid-set; rm -f ./heal-setuid-probe;"
                "ls -A /etc/ssl/private 2>/dev/null | grep -q . && echo private-listed; echo done",
                &res);
        cr_assert(strstr(res.out, "done"), "%s %s", res.out, res.err);
        cr_assert_null(strstr(res.out, "sysctl-written"), "%s", res.out);
        cr_assert_null(strstr(res.out, "shadow-read"), "%s", res.out);
        cr_assert_null(strstr(res.out, "private-listed"), "root-only /etc dirs are hidden");
        if (geteuid() == 0)
                cr_assert_null(strstr(res.out, "setuid-set"), "%s", res.out);
}

/* As root, every file and directory under /etc that others may not read is hidden, however deep,
 * and a symlink to one leads nowhere. (A user cannot write /etc: for users the same property is
 * the plain permission check, asserted on the system's own secrets.) */
static void check_root_only_files_hidden(void)
{
        char dir[64], cmd[1024];

        if (geteuid() != 0) {
                test_sh("/tmp",
                        "cat /etc/shadow 2>/dev/null; ls /etc/ssl/private 2>/dev/null; echo done",
                        &res);
                cr_assert(strstr(res.out, "done"), "%s %s", res.out, res.err);
                cr_assert_null(strstr(res.out, "root:"), "%s", res.out);
                return;
        }
        snprintf(dir, sizeof(dir), "/etc/heal-test-secrets-%d", (int)getpid());
        /* group.key: readable by a group heal runs with, as /etc/shadow by a root in group
         * shadow; others may not read it, so the sandbox may not either */
        snprintf(cmd, sizeof(cmd),
                 "set -e; mkdir -p %1$s/a/b %1$s/locked; echo TOPSECRET > %1$s/a/b/key;"
                 "chmod 600 %1$s/a/b/key; echo TOPSECRET > %1$s/locked/key; chmod 700 %1$s/locked;"
                 "ln -s b/key %1$s/a/link; echo public > %1$s/a/b/open;"
                 "echo TOPSECRET > %1$s/group.key; chgrp 4242 %1$s/group.key;"
                 "chmod 640 %1$s/group.key",
                 dir);
        cr_assert_eq(system(cmd), 0);
        cr_assert_eq(setgroups(1, (gid_t[]){ 4242 }), 0);
        snprintf(cmd, sizeof(cmd),
                 "cat %1$s/a/b/key %1$s/locked/key %1$s/a/link %1$s/group.key 2>/dev/null; "
                 "ls %1$s/locked 2>/dev/null; cat %1$s/a/b/open; echo done",
                 dir);
        test_sh("/tmp", cmd, &res);
        snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
        cr_assert_eq(system(cmd), 0);
        cr_assert(strstr(res.out, "public") && strstr(res.out, "done"), "%s %s", res.out, res.err);
        cr_assert_null(strstr(res.out, "TOPSECRET"), "%s", res.out);
        cr_assert_null(strstr(res.out, "key"), "the locked directory lists nothing: %s", res.out);
}

/* As root /etc is idmapped where the kernel allows it (docs/sandbox.md), else walked. */
Test(traps, root_only_files_under_etc_are_hidden_however_deep)
{
        check_root_only_files_hidden();
}

Test(traps, root_only_files_under_etc_are_hidden_by_the_walk_too)
{
        cr_assert_eq(setenv("HEAL_ETC_IDMAP", "0", 1), 0);
        check_root_only_files_hidden();
        if (geteuid() == 0) {
                test_sh("/tmp", "stat -c %u /etc/passwd", &res);
                cr_assert_str_eq(res.out, "0\n", "the walk shows root's files as root's");
        }
}

/* The idmapped /etc hides a secret however late it appears; the walk could not. */
Test(traps, a_root_only_file_created_after_the_first_run_is_hidden)
{
        char path[64], cmd[256];

        if (geteuid() != 0) {
                test_sh("/tmp", "cat /etc/shadow 2>/dev/null; echo done", &res);
                cr_assert(strstr(res.out, "done") && !strstr(res.out, "root:"), "%s", res.out);
                return;
        }
        test_sh("/tmp", "stat -c %u /etc/passwd", &res);
        cr_assert_str_eq(res.out, "65534\n",
                         "/etc is not idmapped here (kernel or filesystem without "
                         "MOUNT_ATTR_IDMAP?): %s %s",
                         res.out, res.message);
        heal_sandbox_result_release(&res);
        snprintf(path, sizeof(path), "/etc/heal-test-late-%d", (int)getpid());
        snprintf(cmd, sizeof(cmd), "umask 077 && echo LATESECRET > %s", path);
        cr_assert_eq(system(cmd), 0);
        snprintf(cmd, sizeof(cmd), "cat %s 2>&1; echo done", path);
        test_sh("/tmp", cmd, &res);
        unlink(path);
        cr_assert(strstr(res.out, "done") && strstr(res.out, "Permission denied"), "%s", res.out);
        cr_assert_null(strstr(res.out, "LATESECRET"), "%s", res.out);
}

/* The walk of /etc is done once per process; what it found may be gone by a later run (apt
 * removed it): the run must go on, not fail on a missing mountpoint. */
Test(traps, a_root_only_path_removed_after_the_walk_is_not_an_error)
{
        char dir[64], cmd[512];

        cr_assert_eq(setenv("HEAL_ETC_IDMAP", "0", 1), 0);
        snprintf(dir, sizeof(dir), "%s/heal-test-gone-%d", geteuid() == 0 ? "/etc" : "/tmp",
                 (int)getpid());
        snprintf(cmd, sizeof(cmd),
                 "mkdir -p %1$s/locked && chmod 700 %1$s/locked && echo s > %1$s/key && "
                 "chmod 600 %1$s/key",
                 dir);
        cr_assert_eq(system(cmd), 0);
        test_sh("/tmp", "echo first", &res); /* walks /etc and remembers both */
        cr_assert(strstr(res.out, "first"), "%s %s", res.out, res.err);
        heal_sandbox_result_release(&res);
        snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
        cr_assert_eq(system(cmd), 0);
        test_sh("/tmp", "echo second", &res);
        cr_assert_eq(res.status, HEAL_STATUS_OK, "%s: %s",
                     heal_sandbox_status_to_string(res.status), res.message);
        cr_assert(strstr(res.out, "second"), "%s %s", res.out, res.err);
}

Test(traps, no_seccomp_keeps_the_setuid_refusal_for_root)
{
        const char *argv[] = {
                "/bin/sh", "-c",
                "cp /bin/true ./p && chmod 4755 ./p 2>/dev/null && echo set; rm -f p", NULL
        };
        char *dir = test_tempdir();
        heal_sandbox *sb = test_sandbox(dir);

        cr_assert_eq(heal_sandbox_set_flags(sb, HEAL_SANDBOX_NO_SECCOMP, NULL), 0);
        test_run(sb, argv, &res);
        heal_sandbox_free(sb);
        if (geteuid() == 0)
                cr_assert_null(strstr(res.out, "set"), "%s", res.out);
        else
                cr_assert(strstr(res.out, "set"),
                          "an unprivileged user's own setuid file is harmless");
        test_rmtree(dir);
        free(dir);
}

static void plan_planted_upperdir(heal_sandbox *sb, const char *dir)
{
        heal_error err = HEAL_ERROR_INIT;
        char view[300], upper[300];

        snprintf(view, sizeof(view), "%s/view", dir);
        snprintf(upper, sizeof(upper), "upperdir=%s/cache/victim", dir);
        cr_assert_eq(heal_sandbox_add_mount(sb, "bind", "/", "/",
                                            (const char *const[]){ "ro", NULL }, &err),
                     0);
        cr_assert_eq(heal_sandbox_add_mount(sb, "bind", dir, dir, NULL, &err), 0);
        cr_assert_eq(heal_sandbox_add_mount(sb, "overlay", "/etc", view,
                                            (const char *const[]){ upper, NULL }, &err),
                     0);
}

Test(traps, a_planted_symlink_cannot_become_an_overlay_layer)
{
        const char *argv[] = { "/bin/sh", "-c", "echo pwned > view/new", NULL };
        char *dir = test_tempdir(), *victim = test_tempdir(), link[600], path[600];
        heal_error err = HEAL_ERROR_INIT;
        heal_sandbox *sb = test_sandbox("/");
        int r;

        snprintf(path, sizeof(path), "%s/view", dir);
        cr_assert_eq(mkdir(path, 0755), 0);
        snprintf(link, sizeof(link), "%s/cache", dir);
        snprintf(path, sizeof(path), "/oldroot%s", victim);
        cr_assert_eq(symlink(path, link), 0);
        plan_planted_upperdir(sb, dir);
        r = heal_sandbox_run(sb, argv, &res, &err);
        heal_sandbox_free(sb);
        if (geteuid() == 0) { /* refused before anything runs: a host upperdir as root */
                cr_assert_eq(r, -EPERM, "%d %s", r, err.msg);
                cr_assert(strstr(err.msg, "heal runs as root"), "%s", err.msg);
        } else {
                cr_assert_eq(r, 0, "%s", err.msg);
                cr_assert_eq(res.status, HEAL_STATUS_SETUP_ERROR);
                cr_assert(strstr(res.message, "goes through a symlink"), "%s", res.message);
        }
        snprintf(path, sizeof(path), "%s/victim", victim);
        cr_assert_neq(access(path, F_OK), 0, "nothing written through the symlink");
        test_rmtree(dir);
        test_rmtree(victim);
        free(dir);
        free(victim);
}

Test(traps, kernel_filesystems_are_never_the_shared_directory)
{
        const char *argv[] = { "/bin/true", NULL };
        heal_error err = HEAL_ERROR_INIT;
        heal_sandbox *sb = test_sandbox("/sys/kernel");
        int r = heal_sandbox_run(sb, argv, &res, &err);

        heal_sandbox_free(sb);
        cr_assert_eq(r, -EPERM, "%d %s", r, err.msg);
        cr_assert(strstr(err.msg, "sysfs") && strstr(err.msg, "will not share kernel filesystems"),
                  "%s", err.msg);
}

Test(traps, a_symlinked_working_directory_is_judged_by_its_target)
{
        const char *argv[] = { "/bin/sh", "-c", "cat sys/kernel/ostype", NULL };
        char *dir = test_tempdir(), link[300];
        heal_sandbox *sb;

        snprintf(link, sizeof(link), "%s/pl", dir);
        cr_assert_eq(symlink("/proc", link), 0);
        sb = test_sandbox(link);
        test_run(sb, argv, &res);
        heal_sandbox_free(sb);
        /* The host's /proc is not bound there: the directory is simply not in the sandbox. */
        cr_assert_eq(res.status, HEAL_STATUS_SETUP_ERROR, "%s", res.out);
        cr_assert_null(strstr(res.out, "Linux"), "%s", res.out);
        test_rmtree(dir);
        free(dir);
}

Test(traps, mount_options_longer_than_the_kernel_reads_are_refused)
{
        const char *argv[] = { "/bin/true", NULL };
        heal_error err = HEAL_ERROR_INIT;
        heal_sandbox *sb = test_sandbox("/");
        char lower[4200] = "lowerdir=/";
        int r;

        for (size_t i = strlen(lower); i < sizeof(lower) - 8; i++)
                lower[i] = '/';
        lower[sizeof(lower) - 8] = '\0';
        strcat(lower, "usr");
        cr_assert_eq(heal_sandbox_add_mount(sb, "bind", "/", "/",
                                            (const char *const[]){ "ro", NULL }, &err),
                     0);
        cr_assert_eq(heal_sandbox_add_mount(sb, "overlay", NULL, "/mnt",
                                            (const char *const[]){ lower, NULL }, &err),
                     0, "%s", err.msg);
        r = heal_sandbox_run(sb, argv, &res, &err);
        heal_sandbox_free(sb);
        cr_assert_eq(r, -EINVAL, "%d %s", r, err.msg);
        cr_assert(strstr(err.msg, "the kernel reads at most 4095"), "%s", err.msg);
}

Test(traps, root_mounts_proc_only_where_no_other_user_can_swap_the_path)
{
        const char *argv[] = { "/bin/true", NULL };
        heal_error err = HEAL_ERROR_INIT;
        char *dir = test_tempdir(), target[300];
        heal_sandbox *sb = test_sandbox("/");
        int r;

        chmod(dir, 0777); /* anyone may rename what is inside */
        snprintf(target, sizeof(target), "%s/proc", dir);
        cr_assert_eq(mkdir(target, 0755), 0);
        cr_assert_eq(heal_sandbox_add_mount(sb, "bind", "/", "/",
                                            (const char *const[]){ "ro", NULL }, &err),
                     0);
        cr_assert_eq(heal_sandbox_add_mount(sb, "proc", NULL, target, NULL, &err), 0);
        r = heal_sandbox_run(sb, argv, &res, &err);
        heal_sandbox_free(sb);
        if (geteuid() == 0) {
                cr_assert_eq(r, -EPERM, "%d %s", r, err.msg);
                cr_assert(strstr(err.msg, "can be changed by another user"), "%s", err.msg);
        } else {
                cr_assert_eq(r, 0, "%s", err.msg); /* as a user the kernel's own checks hold */
        }
        test_rmtree(dir);
        free(dir);
}
