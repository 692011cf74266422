/* SPDX-License-Identifier: MIT */
#include "harness.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

const char *test_data_dir(void)
{
        return HEAL_TEST_DATA;
}

char *test_tempdir(void)
{
        char *dir = strdup("/tmp/heal-test-XXXXXX");

        cr_assert_not_null(dir);
        cr_assert_not_null(mkdtemp(dir), "mkdtemp: %s", strerror(errno));
        chmod(dir, 0755);
        return dir;
}

static int rm_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
        (void)st, (void)type, (void)ftw;
        remove(path);
        return 0;
}

void test_rmtree(const char *dir)
{
        if (dir)
                nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

void test_write_file(const char *dir, const char *file, const char *text)
{
        char path[PATH_MAX];
        FILE *f;

        snprintf(path, sizeof(path), "%s/%s", dir, file);
        f = fopen(path, "we");
        cr_assert_not_null(f, "%s: %s", path, strerror(errno));
        fputs(text, f);
        fclose(f);
}

void test_copy_case(const char *name, const char *dir)
{
        char src[PATH_MAX], path[PATH_MAX * 2], dst[PATH_MAX * 2], buf[65536];
        struct dirent *de;
        DIR *d;

        snprintf(src, sizeof(src), "%s/hostile/%s", test_data_dir(), name);
        d = opendir(src);
        cr_assert_not_null(d, "corpus case '%s' missing: %s", src, strerror(errno));
        while ((de = readdir(d))) {
                int in, out;
                ssize_t n;

                if (de->d_name[0] == '.')
                        continue;
                snprintf(path, sizeof(path), "%s/%s", src, de->d_name);
                snprintf(dst, sizeof(dst), "%s/%s", dir, de->d_name);
                in = open(path, O_RDONLY | O_CLOEXEC);
                out = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
                cr_assert(in >= 0 && out >= 0, "copy %s: %s", path, strerror(errno));
                while ((n = read(in, buf, sizeof(buf))) > 0)
                        cr_assert_eq(write(out, buf, (size_t)n), n);
                close(in);
                close(out);
        }
        closedir(d);
}

int test_count_matching(bool (*match)(const char *pid, const void *arg), const void *arg)
{
        struct dirent *de;
        DIR *d = opendir("/proc");
        int n = 0;

        cr_assert_not_null(d);
        while ((de = readdir(d)))
                if (de->d_name[0] >= '0' && de->d_name[0] <= '9' && match(de->d_name, arg))
                        n++;
        closedir(d);
        return n;
}

ssize_t test_read_proc(const char *pid, const char *file, char *buf, size_t len)
{
        char path[300];
        ssize_t n;
        int fd;

        snprintf(path, sizeof(path), "/proc/%s/%s", pid, file);
        if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
                return -1;
        n = read(fd, buf, len - 1);
        close(fd);
        buf[n > 0 ? n : 0] = '\0';
        return n;
}

static bool comm_is(const char *pid, const void *comm)
{
        char c[64];
        ssize_t n;

        if (!comm)
                return true;
        n = test_read_proc(pid, "comm", c, sizeof(c));
        c[strcspn(c, "\n")] = '\0';
        return n > 0 && strcmp(c, comm) == 0;
}

int test_count_procs(const char *comm)
{
        return test_count_matching(comm_is, comm);
}

static bool zombie_of(const char *pid, const void *ppid)
{
        char line[512], *rp, state;
        int pp;

        if (test_read_proc(pid, "stat", line, sizeof(line)) <= 0 || !(rp = strrchr(line, ')')))
                return false;
        return sscanf(rp + 2, "%c %d", &state, &pp) == 2 && state == 'Z' &&
               (*(const int *)ppid == 0 || pp == *(const int *)ppid);
}

int test_count_zombies(int ppid)
{
        return test_count_matching(zombie_of, &ppid);
}

int test_fd_count(void)
{
        struct dirent *de;
        DIR *d = opendir("/proc/self/fd");
        int n = 0;

        cr_assert_not_null(d);
        while ((de = readdir(d)))
                if (de->d_name[0] != '.')
                        n++;
        closedir(d);
        return n - 1; /* the DIR's own descriptor */
}

long test_rss_kib(void)
{
        FILE *f = fopen("/proc/self/status", "re");
        char line[256];
        long kib = -1;

        cr_assert_not_null(f);
        while (fgets(line, sizeof(line), f))
                if (sscanf(line, "VmRSS: %ld kB", &kib) == 1)
                        break;
        fclose(f);
        return kib;
}

heal_sandbox *test_sandbox(const char *cwd)
{
        heal_error err = HEAL_ERROR_INIT;
        heal_sandbox *sb = NULL;

        cr_assert_eq(heal_sandbox_new(&sb, &err), 0, "%s", err.msg);
        cr_assert_eq(heal_sandbox_inherit_env(sb, (const char *const *)environ, &err), 0);
        cr_assert_eq(heal_sandbox_setenv(sb, "HOME", "/tmp", &err), 0);
        if (cwd)
                cr_assert_eq(heal_sandbox_set_cwd(sb, cwd, &err), 0, "%s", err.msg);
        return sb;
}

void test_run(heal_sandbox *sb, const char *const *argv, heal_sandbox_result *res)
{
        heal_error err = HEAL_ERROR_INIT;
        int r = heal_sandbox_run(sb, argv, res, &err);

        cr_assert_eq(r, 0, "heal_sandbox_run: %d %s", r, err.msg);
}

void test_sh(const char *cwd, const char *script, heal_sandbox_result *res)
{
        const char *argv[] = { "/bin/sh", "-c", script, NULL };
        heal_sandbox *sb = test_sandbox(cwd);

        test_run(sb, argv, res);
        heal_sandbox_free(sb);
}

bool test_output_has(const heal_sandbox_result *res, const char *needle)
{
        return (res->out && strstr(res->out, needle)) || (res->err && strstr(res->err, needle));
}

void test_require(const char *tool)
{
        char cmd[256];

        snprintf(cmd, sizeof(cmd), "command -v %s >/dev/null 2>&1", tool);
        cr_assert_eq(system(cmd), 0,
                     "'%s' is not installed: run scripts/install-deps (this test does not skip)",
                     tool);
}

static bool cmdline_has(const char *pid, const void *needle)
{
        char buf[4096];
        ssize_t len = test_read_proc(pid, "cmdline", buf, sizeof(buf));

        for (ssize_t i = 0; i < len - 1; i++)
                if (buf[i] == '\0')
                        buf[i] = ' ';
        return len > 0 && strstr(buf, needle) != NULL;
}

int test_count_cmdline(const char *needle)
{
        return test_count_matching(cmdline_has, needle);
}

static void proc_drain(int fd, char **buf, size_t *len, size_t *cap, bool *open)
{
        ssize_t n;

        if (*len + 65536 + 1 > *cap && *cap < (64u << 20)) {
                *cap = *cap ? 2 * *cap : 1 << 17;
                *buf = realloc(*buf, *cap);
                cr_assert_not_null(*buf);
        }
        n = *len + 1 < *cap ? read(fd, *buf + *len, *cap - 1 - *len) : 0;
        if (n < 0 && errno == EINTR)
                return;
        if (n <= 0)
                *open = false;
        else
                *len += (size_t)n;
        (*buf)[*len] = '\0';
}

void test_heal(struct test_proc *p, const char *cwd, const char *const *env, const char *input,
               const char *const *argv)
{
        int in[2], out[2], err[2], st;
        bool o_open = true, e_open = true;
        size_t out_cap = 0, err_cap = 0;
        pid_t pid;

        memset(p, 0, sizeof(*p));
        cr_assert(pipe2(in, O_CLOEXEC) == 0 && pipe2(out, O_CLOEXEC) == 0 &&
                  pipe2(err, O_CLOEXEC) == 0);
        pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0) {
                char *v[128] = { (char *)(uintptr_t) "heal" };
                size_t n = 1;

                for (size_t i = 0; argv[i] && n < 127; i++)
                        v[n++] = (char *)(uintptr_t)argv[i];
                dup2(in[0], 0), dup2(out[1], 1), dup2(err[1], 2);
                for (size_t i = 0; env && env[i]; i++)
                        if (strchr(env[i], '='))
                                putenv((char *)(uintptr_t)env[i]);
                        else
                                unsetenv(env[i]);
                if (cwd && chdir(cwd) < 0)
                        _exit(126);
                execv(HEAL_TEST_BIN, v);
                _exit(127);
        }
        close(in[0]), close(out[1]), close(err[1]);
        signal(SIGPIPE, SIG_IGN); /* heal may exit before reading its stdin */
        if (input && write(in[1], input, strlen(input)) != (ssize_t)strlen(input))
                cr_assert_eq(errno, EPIPE, "writing heal's stdin: %s", strerror(errno));
        close(in[1]);
        while (o_open || e_open) {
                struct pollfd pf[2] = { { o_open ? out[0] : -1, POLLIN, 0 },
                                        { e_open ? err[0] : -1, POLLIN, 0 } };

                if (poll(pf, 2, -1) < 0 && errno == EINTR)
                        continue;
                if (pf[0].revents)
                        proc_drain(out[0], &p->out, &p->out_len, &out_cap, &o_open);
                if (pf[1].revents)
                        proc_drain(err[0], &p->err, &p->err_len, &err_cap, &e_open);
        }
        close(out[0]), close(err[0]);
        cr_assert_eq(waitpid(pid, &st, 0), pid);
        p->code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        if (!p->out)
                p->out = calloc(1, 1);
        if (!p->err)
                p->err = calloc(1, 1);
}

void test_proc_release(struct test_proc *p)
{
        free(p->out);
        free(p->err);
        memset(p, 0, sizeof(*p));
}
