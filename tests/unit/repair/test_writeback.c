/* SPDX-License-Identifier: MIT */
/* Write-back and undo on real files: what is written, what is refused, what undo restores, and
 * a disk that fills up half-way (a 64 KiB tmpfs in a user and mount namespace). */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "heal/writeback.h"

static char tree[] = "/tmp/heal-test-wb-XXXXXX";
static heal_patch p;
static heal_error err;
static char *id;

static void put_in(const char *root, const char *file, const char *text, mode_t mode)
{
        char path[1024];
        FILE *f;

        snprintf(path, sizeof(path), "%s/%s", root, file);
        f = fopen(path, "we");
        cr_assert_not_null(f, "%s", path);
        fputs(text, f);
        cr_assert_eq(fclose(f), 0);
        cr_assert_eq(chmod(path, mode), 0);
}

static void put(const char *file, const char *text, mode_t mode)
{
        put_in(tree, file, text, mode);
}

/* The content of TREE/@file, or NULL when it does not exist; freed at the next call. */
static const char *get(const char *file)
{
        static char buf[1 << 16];
        char path[1024];
        FILE *f;
        size_t n;

        snprintf(path, sizeof(path), "%s/%s", tree, file);
        f = fopen(path, "re");
        if (!f)
                return NULL;
        n = fread(buf, 1, sizeof(buf) - 1, f);
        buf[n] = '\0';
        fclose(f);
        return buf;
}

static mode_t mode_of(const char *file)
{
        char path[1024];
        struct stat st;

        snprintf(path, sizeof(path), "%s/%s", tree, file);
        cr_assert_eq(lstat(path, &st), 0, "%s", path);
        return st.st_mode & 07777;
}

static bool exists(const char *file)
{
        char path[1024];
        struct stat st;

        snprintf(path, sizeof(path), "%s/%s", tree, file);
        return lstat(path, &st) == 0;
}

static void change(const char *file, const char *before, const char *after)
{
        heal_file_change *v = realloc(p.files, (p.n_files + 1) * sizeof(*v));

        cr_assert_not_null(v);
        p.files = v;
        v[p.n_files++] = (heal_file_change){ .file = strdup(file),
                                             .before = before ? strdup(before) : NULL,
                                             .after = strdup(after) };
}

static int writeback(void)
{
        heal_writeback_opts o = { .tree = tree, .command = "go test ./..." };

        free(id);
        id = NULL;
        err = (heal_error)HEAL_ERROR_INIT;
        return heal_writeback(&id, &p, &o, &err);
}

static int undo(heal_undo_result *res, const char *which, bool force, bool dry_run)
{
        heal_undo_opts o = { .tree = tree, .id = which, .force = force, .dry_run = dry_run };

        err = (heal_error)HEAL_ERROR_INIT;
        return heal_undo(res, &o, &err);
}

static int count_fds(void)
{
        DIR *d = opendir("/proc/self/fd");
        int n = 0;

        cr_assert_not_null(d);
        while (readdir(d))
                n++;
        closedir(d);
        return n;
}

static size_t count_entries(void)
{
        heal_undo_opts o = { .tree = tree };
        heal_undo_entries l = { 0 };
        size_t n;

        cr_assert_eq(heal_undo_list(&l, &o, &err), 0, "%s", err.msg);
        n = l.n;
        heal_undo_entries_release(&l);
        return n;
}

/* No ".NAME.heal-XXXXXX" left anywhere under @dir. */
static void assert_no_temp(const char *dir)
{
        DIR *d = opendir(dir);
        struct dirent *de;

        cr_assert_not_null(d, "%s", dir);
        while ((de = readdir(d))) {
                char sub[1024];

                if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
                        continue;
                cr_assert_null(strstr(de->d_name, ".heal-"), "temporary file %s/%s left", dir,
                               de->d_name);
                snprintf(sub, sizeof(sub), "%s/%s", dir, de->d_name);
                if (de->d_type == DT_DIR)
                        assert_no_temp(sub);
        }
        closedir(d);
}

static void init(void)
{
        cr_assert_not_null(mkdtemp(tree));
        cr_assert_eq(mkdir(strcat(strcpy((char[600]){ 0 }, tree), "/src"), 0755), 0);
        put("a.go", "package a\n", 0750);
        put("src/b.go", "package b\n\nfunc B() {}\n", 0644);
}

static void fini(void)
{
        char cmd[600];

        heal_patch_release(&p);
        free(id);
        id = NULL;
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tree);
        cr_assert_eq(system(cmd), 0);
}

TestSuite(writeback, .init = init, .fini = fini);

/* a.go and src/b.go changed, new.go and deep/er/c.go new. */
static void four_changes(void)
{
        change("a.go", "package a\n", "package a\n\nvar X = 1\n");
        change("src/b.go", "package b\n\nfunc B() {}\n", "package b\n\nfunc B() { return }\n");
        change("new.go", NULL, "package a\n\nvar New = 2\n");
        change("deep/er/c.go", NULL, "package er\n");
}

Test(writeback, writes_modified_new_and_nested_new_files)
{
        char path[600];
        json_t *m;

        umask(027);
        four_changes();
        cr_assert_eq(writeback(), 0, "%s", err.msg);
        cr_assert_not_null(id);
        cr_assert_str_eq(get("a.go"), "package a\n\nvar X = 1\n");
        cr_assert_str_eq(get("src/b.go"), "package b\n\nfunc B() { return }\n");
        cr_assert_str_eq(get("new.go"), "package a\n\nvar New = 2\n");
        cr_assert_str_eq(get("deep/er/c.go"), "package er\n");
        cr_assert_eq(mode_of("a.go"), 0750, "the mode is kept");
        cr_assert_eq(mode_of("new.go"), 0640, "new files: 0644 less the umask");
        cr_assert_str_eq(get(".heal/.gitignore"), "*\n");
        snprintf(path, sizeof(path), ".heal/undo/%s/files/src/b.go", id);
        cr_assert_str_eq(get(path), "package b\n\nfunc B() {}\n", "the original is saved");
        snprintf(path, sizeof(path), "%s/.heal/undo/%s/manifest.json", tree, id);
        m = json_load_file(path, 0, NULL);
        cr_assert_not_null(m);
        cr_assert_str_eq(json_string_value(json_object_get(m, "command")), "go test ./...");
        cr_assert_eq(json_array_size(json_object_get(m, "files")), 4);
        cr_assert_str_eq(json_string_value(json_array_get(json_object_get(m, "dirs"), 1)),
                         "deep/er");
        cr_assert(json_is_false(
                json_object_get(json_array_get(json_object_get(m, "files"), 2), "existed")));
        json_decref(m);
        assert_no_temp(tree);
}

Test(writeback, an_existing_gitignore_is_kept_and_ids_differ)
{
        char *first;

        cr_assert_eq(mkdir(strcat(strcpy((char[600]){ 0 }, tree), "/.heal"), 0755), 0);
        put(".heal/.gitignore", "undo/\n", 0644);
        change("a.go", "package a\n", "package a // 1\n");
        cr_assert_eq(writeback(), 0, "%s", err.msg);
        first = strdup(id);
        heal_patch_release(&p);
        change("a.go", "package a // 1\n", "package a // 2\n");
        cr_assert_eq(writeback(), 0, "%s", err.msg);
        cr_assert_str_neq(first, id);
        cr_assert_lt(strcmp(first, id), 0, "ids sort in time order: %s %s", first, id);
        cr_assert_str_eq(get(".heal/.gitignore"), "undo/\n");
        free(first);
}

Test(writeback, a_tree_changed_since_the_baseline_gets_nothing)
{
        int fds = count_fds();

        four_changes();
        put("src/b.go", "package b // edited meanwhile\n", 0644);
        cr_assert_eq(writeback(), -ESTALE);
        cr_assert(strstr(err.msg, "'src/b.go' differs from what the baseline saw"), "%s", err.msg);
        cr_assert(strstr(err.msg, "nothing was written"), "%s", err.msg);
        cr_assert_str_eq(get("a.go"), "package a\n", "a file before it is untouched");
        cr_assert_not(exists("new.go"));
        cr_assert_not(exists("deep"));
        cr_assert_eq(count_entries(), 0);
        cr_assert_null(id);

        heal_patch_release(&p);
        change("a.go", "package a\n", "package a // x\n");
        change("src/b.go", NULL, "package b // new?\n");
        cr_assert_eq(writeback(), -ESTALE);
        cr_assert(strstr(err.msg, "'src/b.go' exists now"), "%s", err.msg);
        cr_assert_str_eq(get("a.go"), "package a\n");
        cr_assert_eq(count_fds(), fds, "no descriptor leaked");
}

Test(writeback, paths_through_symlinks_or_outside_are_refused)
{
        static const char *const bad[] = { "/etc/x",      "../x",       "a/../a.go", "./a.go",
                                           ".git/config", "src/.git/x", ".heal/x",   "src//b.go",
                                           "link/x.go",   "l.go" };
        char outside[] = "/tmp/heal-test-wb-out-XXXXXX", path[600], cmd[700];
        int fds = count_fds();

        cr_assert_not_null(mkdtemp(outside));
        put_in(outside, "f.go", "outside\n", 0644);
        snprintf(path, sizeof(path), "%s/link", tree);
        cr_assert_eq(symlink(outside, path), 0);
        snprintf(path, sizeof(path), "%s/l.go", tree);
        snprintf(cmd, sizeof(cmd), "%s/f.go", outside);
        cr_assert_eq(symlink(cmd, path), 0);
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                heal_patch_release(&p);
                change("a.go", "package a\n", "package a // x\n");
                change(bad[i], i == 9 ? "outside\n" : NULL, "pwned\n");
                cr_assert_eq(writeback(), -EPERM, "%s: %d %s", bad[i], err.code, err.msg);
                cr_assert_str_eq(get("a.go"), "package a\n");
        }
        cr_assert(strstr(err.msg, "symlink"), "%s", err.msg);
        cr_assert_str_eq(get("link/f.go"), "outside\n");
        heal_patch_release(&p);
        change("a.go/x.go", NULL, "package x\n");
        cr_assert_eq(writeback(), -ENOTDIR, "%s", err.msg);
        heal_patch_release(&p);
        change("src", "", "package x\n");
        cr_assert_eq(writeback(), -EPERM, "a directory is not a file: %s", err.msg);
        cr_assert_eq(count_fds(), fds, "no descriptor leaked");
        snprintf(path, sizeof(path), "%s/x.go", outside);
        cr_assert_neq(access(path, F_OK), 0);
        cr_assert_eq(count_entries(), 0);
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", outside);
        cr_assert_eq(system(cmd), 0);
}

Test(writeback, a_heal_directory_that_is_a_symlink_is_refused)
{
        char outside[] = "/tmp/heal-test-wb-state-XXXXXX", path[600], cmd[700];

        cr_assert_not_null(mkdtemp(outside));
        snprintf(path, sizeof(path), "%s/.heal", tree);
        cr_assert_eq(symlink(outside, path), 0);
        change("a.go", "package a\n", "package a // x\n");
        cr_assert_eq(writeback(), -ELOOP, "%s", err.msg);
        cr_assert_str_eq(get("a.go"), "package a\n", "nothing written");
        snprintf(cmd, sizeof(cmd), "test -z \"$(ls -A '%s')\" && rm -rf '%s'", outside, outside);
        cr_assert_eq(system(cmd), 0, "nothing saved in the place the link points to");
}

Test(writeback, undo_restores_the_originals_and_removes_what_was_new)
{
        heal_undo_result res = { 0 };
        int fds = count_fds();
        char path[600];

        four_changes();
        cr_assert_eq(writeback(), 0, "%s", err.msg);
        cr_assert_eq(undo(&res, NULL, false, false), 0, "%s", err.msg);
        cr_assert_eq(count_fds(), fds, "no descriptor leaked");
        cr_assert_str_eq(res.id, id);
        cr_assert_eq(res.n_files, 4);
        cr_assert_eq(res.n_forced, 0);
        cr_assert_str_eq(get("a.go"), "package a\n");
        cr_assert_str_eq(get("src/b.go"), "package b\n\nfunc B() {}\n");
        cr_assert_eq(mode_of("a.go"), 0750);
        cr_assert_not(exists("new.go"));
        cr_assert_not(exists("deep"), "the directories heal made are removed");
        snprintf(path, sizeof(path), ".heal/undo/%s.undone/manifest.json", id);
        cr_assert(exists(path), "the entry is kept, marked undone");
        assert_no_temp(tree);
        heal_undo_result_release(&res);

        cr_assert_eq(undo(&res, NULL, false, false), -ENOENT);
        cr_assert(strstr(err.msg, "nothing to undo"), "%s", err.msg);
        cr_assert_eq(undo(&res, id, false, false), -ENOENT);
        cr_assert(strstr(err.msg, "undone already"), "%s", err.msg);
}

Test(writeback, undo_leaves_files_already_back_and_goes_back_in_time)
{
        heal_undo_opts o = { .tree = tree };
        heal_undo_result res = { 0 };
        heal_undo_entries l = { 0 };
        char *first;

        change("a.go", "package a\n", "package a // 1\n");
        change("src/b.go", "package b\n\nfunc B() {}\n", "package b // 1\n");
        cr_assert_eq(writeback(), 0, "%s", err.msg);
        first = strdup(id);
        heal_patch_release(&p);
        change("a.go", "package a // 1\n", "package a // 2\n");
        cr_assert_eq(writeback(), 0, "%s", err.msg);

        cr_assert_eq(heal_undo_list(&l, &o, &err), 0, "%s", err.msg);
        cr_assert_eq(l.n, 2);
        cr_assert_str_eq(l.v[0].id, first);
        cr_assert_str_eq(l.v[1].id, id);
        cr_assert_str_eq(l.v[1].command, "go test ./...");
        cr_assert_eq(l.v[0].n_files, 2);
        heal_undo_entries_release(&l);

        cr_assert_eq(undo(&res, NULL, false, false), 0, "%s", err.msg);
        cr_assert_str_eq(res.id, id);
        cr_assert_str_eq(get("a.go"), "package a // 1\n");
        heal_undo_result_release(&res);

        /* as if the first undo had been cut short after src/b.go */
        put("src/b.go", "package b\n\nfunc B() {}\n", 0644);
        cr_assert_eq(undo(&res, NULL, false, false), 0, "%s", err.msg);
        cr_assert_str_eq(res.id, first);
        cr_assert_eq(res.n_files, 1);
        cr_assert_str_eq(res.files[0], "a.go");
        cr_assert_str_eq(get("a.go"), "package a\n");
        heal_undo_result_release(&res);

        cr_assert_eq(heal_undo_list(&l, &o, &err), 0);
        cr_assert(l.v[0].undone && l.v[1].undone);
        heal_undo_entries_release(&l);
        free(first);
}

Test(writeback, undo_refuses_a_file_changed_since_unless_forced)
{
        heal_undo_result res = { 0 };

        four_changes();
        cr_assert_eq(writeback(), 0, "%s", err.msg);
        put("src/b.go", "package b // the user's own edit\n", 0644);
        cr_assert_eq(undo(&res, NULL, false, false), -ESTALE);
        cr_assert(strstr(err.msg, "'src/b.go' changed since heal wrote it; use --force"), "%s",
                  err.msg);
        cr_assert_str_eq(get("a.go"), "package a\n\nvar X = 1\n", "nothing restored");
        cr_assert(exists("new.go"));

        cr_assert_eq(undo(&res, id, true, true), 0, "%s", err.msg);
        cr_assert_eq(res.n_files, 4);
        cr_assert_eq(res.n_forced, 1);
        cr_assert_str_eq(get("a.go"), "package a\n\nvar X = 1\n", "a dry run changes nothing");
        heal_undo_result_release(&res);

        cr_assert_eq(undo(&res, id, true, false), 0, "%s", err.msg);
        cr_assert_eq(res.n_forced, 1);
        cr_assert_str_eq(get("src/b.go"), "package b\n\nfunc B() {}\n");
        cr_assert_str_eq(get("a.go"), "package a\n");
        heal_undo_result_release(&res);
}

Test(writeback, nothing_to_undo)
{
        heal_undo_result res = { 0 };

        cr_assert_eq(undo(&res, NULL, false, false), -ENOENT);
        cr_assert(strstr(err.msg, "no write-back recorded"), "%s", err.msg);
        cr_assert_eq(count_entries(), 0);
        cr_assert_eq(undo(&res, "../x", false, false), -EINVAL);
        change("a.go", "package a\n", "package a // 1\n");
        cr_assert_eq(writeback(), 0, "%s", err.msg);
        cr_assert_eq(undo(&res, "20000101-000000-001", false, false), -ENOENT);
        cr_assert(strstr(err.msg, "no entry '20000101-000000-001'"), "%s", err.msg);
}

Test(writeback, the_signal_mask_is_given_back)
{
        sigset_t before, after;

        pthread_sigmask(SIG_SETMASK, NULL, &before);
        change("a.go", "package a\n", "package a // 1\n");
        cr_assert_eq(writeback(), 0, "%s", err.msg);
        pthread_sigmask(SIG_SETMASK, NULL, &after);
        cr_assert_not(sigismember(&after, SIGINT));
        cr_assert_eq(sigismember(&before, SIGTERM), sigismember(&after, SIGTERM));
}

static int count_dir(const char *rel)
{
        char path[1024];
        struct dirent *de;
        int n = 0;
        DIR *d;

        snprintf(path, sizeof(path), "%s/%s", tree, rel);
        d = opendir(path);
        if (!d)
                return -1;
        while ((de = readdir(d)))
                n += strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
        closedir(d);
        return n;
}

static int write_map(const char *file, const char *text)
{
        int fd = open(file, O_WRONLY | O_CLOEXEC);
        ssize_t n;

        if (fd < 0)
                return -1;
        n = write(fd, text, strlen(text));
        close(fd);
        return n == (ssize_t)strlen(text) ? 0 : -1;
}

/* In a forked child (single-threaded, as unshare(CLONE_NEWUSER) needs): a user and mount
 * namespace of its own, and a tmpfs mounted with @opts over the tree. 0, or a check number. */
static int enter_tmpfs(uid_t uid, gid_t gid, const char *opts)
{
        char map[64];

        if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0)
                return 10;
        snprintf(map, sizeof(map), "0 %u 1", (unsigned)uid);
        if (write_map("/proc/self/uid_map", map) < 0)
                return 11;
        if (write_map("/proc/self/setgroups", "deny") < 0)
                return 12;
        snprintf(map, sizeof(map), "0 %u 1", (unsigned)gid);
        if (write_map("/proc/self/gid_map", map) < 0)
                return 13;
        if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
                return 14;
        if (mount("tmpfs", tree, "tmpfs", 0, opts) < 0)
                return 15;
        return 0;
}

/* A 64 KiB tmpfs as the tree; a patch whose second file does not fit. */
static int full_disk_child(uid_t uid, gid_t gid)
{
        static char big[200 * 1024];
        heal_writeback_opts o = { .tree = tree };
        heal_undo_entries l = { 0 };
        int r, fds = count_fds();
        char *ret = NULL;

        if ((r = enter_tmpfs(uid, gid, "size=64k,mode=0755")) != 0)
                return r;
        put("a.go", "package a\n", 0644);
        memset(big, 'x', sizeof(big) - 1);
        change("a.go", "package a\n", "package a\n\nvar X = 1\n");
        change("big/data.go", NULL, big);
        r = heal_writeback(&ret, &p, &o, &err);
        fprintf(stderr, "heal_writeback on a full disk: %d %s\n", r, err.msg);
        if (r != -ENOSPC)
                return 20;
        if (!strstr(err.msg, "nothing was changed") || ret)
                return 21;
        if (strcmp(get("a.go"), "package a\n") != 0)
                return 22;
        if (exists("big"))
                return 23;
        if (heal_undo_list(&l, &(heal_undo_opts){ .tree = tree }, &err) < 0 || l.n)
                return 24;

        /* no room for the originals: the tree is not touched, no entry is left */
        heal_patch_release(&p);
        memset(big, 'y', 36 * 1024);
        big[36 * 1024] = '\0';
        put("c.go", big, 0644);
        change("c.go", big, "package c\n");
        r = heal_writeback(&ret, &p, &o, &err);
        fprintf(stderr, "heal_writeback with no room for the originals: %d %s\n", r, err.msg);
        if (r != -ENOSPC || !strstr(err.msg, "nothing was written"))
                return 30;
        if (strcmp(get("c.go"), big) != 0)
                return 31;
        if (count_dir(".heal/undo") != 0)
                return 32;
        if (count_fds() != fds)
                return 33;
        return 0;
}

/* A tmpfs short of inodes: the new directory takes the last one the second file needed, and
 * the rollback of the first file (a temporary file: an inode) fails too. The entry is kept,
 * the message names the file, and heal_undo() then restores it. */
static int no_inode_child(uid_t uid, gid_t gid)
{
        heal_writeback_opts o = { .tree = tree };
        heal_undo_result res = { 0 };
        char *ret = NULL;
        int r;

        struct statvfs sv;
        char opts[64];

        if ((r = enter_tmpfs(uid, gid, "nr_inodes=64,mode=0755")) != 0)
                return r;
        put("a.go", "package a\n", 0644);
        /* 8 free: 7 for .heal (itself, .gitignore, undo, the entry, files, files/a.go and the
         * manifest), 1 for a.go's temporary file while the old a.go exists, then 1 for big/ */
        if (statvfs(tree, &sv) < 0)
                return 16;
        snprintf(opts, sizeof(opts), "nr_inodes=%llu",
                 (unsigned long long)(sv.f_files - sv.f_ffree + 8));
        if (mount(NULL, tree, NULL, MS_REMOUNT, opts) < 0)
                return 17;
        change("a.go", "package a\n", "package a // new\n");
        change("big/data.go", NULL, "package big\n");
        r = heal_writeback(&ret, &p, &o, &err);
        fprintf(stderr, "heal_writeback out of inodes: %d %s\n", r, err.msg);
        if (r != -ENOSPC || ret)
                return 40;
        if (!strstr(err.msg, "1 file could not be put back ('a.go'): 'heal undo "))
                return 41;
        if (strcmp(get("a.go"), "package a // new\n") != 0 || exists("big"))
                return 42;
        r = heal_undo(&res, &(heal_undo_opts){ .tree = tree }, &err);
        fprintf(stderr, "heal_undo after it: %d %s\n", r, err.msg);
        if (r != 0 || res.n_files != 1)
                return 43;
        heal_undo_result_release(&res);
        if (strcmp(get("a.go"), "package a\n") != 0)
                return 44;
        return 0;
}

static void in_child(int (*fn)(uid_t, gid_t))
{
        uid_t uid = geteuid();
        gid_t gid = getegid();
        pid_t pid;
        int st;

        fflush(NULL);
        pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0)
                _exit(fn(uid, gid));
        cr_assert_eq(waitpid(pid, &st, 0), pid);
        cr_assert(WIFEXITED(st), "the child died: %d", st);
        cr_assert_eq(WEXITSTATUS(st), 0, "check %d failed in the child", WEXITSTATUS(st));
}

Test(writeback, a_disk_full_half_way_leaves_every_original)
{
        in_child(full_disk_child);
        cr_assert_str_eq(get("a.go"), "package a\n", "the tmpfs was the child's own");
}

Test(writeback, a_failed_rollback_names_the_files_and_undo_restores_them)
{
        in_child(no_inode_child);
}
