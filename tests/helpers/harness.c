/* SPDX-License-Identifier: MIT */
#include "harness.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

static bool read_line(const char *path, char *buf, size_t len)
{
        FILE *f = fopen(path, "re");
        bool ok;

        if (!f)
                return false;
        ok = fgets(buf, (int)len, f) != NULL;
        fclose(f);
        buf[strcspn(buf, "\n")] = '\0';
        return ok;
}

int test_count_procs(const char *comm)
{
        struct dirent *de;
        DIR *d = opendir("/proc");
        int n = 0;

        cr_assert_not_null(d);
        while ((de = readdir(d))) {
                char path[300], c[64];

                if (de->d_name[0] < '0' || de->d_name[0] > '9')
                        continue;
                snprintf(path, sizeof(path), "/proc/%s/comm", de->d_name);
                if (!comm || (read_line(path, c, sizeof(c)) && strcmp(c, comm) == 0))
                        n++;
        }
        closedir(d);
        return n;
}

int test_count_zombies(int ppid)
{
        struct dirent *de;
        DIR *d = opendir("/proc");
        int n = 0;

        cr_assert_not_null(d);
        while ((de = readdir(d))) {
                char path[300], line[512], *rp, state;
                int pp;

                if (de->d_name[0] < '0' || de->d_name[0] > '9')
                        continue;
                snprintf(path, sizeof(path), "/proc/%s/stat", de->d_name);
                if (!read_line(path, line, sizeof(line)) || !(rp = strrchr(line, ')')))
                        continue;
                if (sscanf(rp + 2, "%c %d", &state, &pp) == 2 && state == 'Z' &&
                    (ppid == 0 || pp == ppid))
                        n++;
        }
        closedir(d);
        return n;
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

int test_count_cmdline(const char *needle)
{
        struct dirent *de;
        DIR *d = opendir("/proc");
        int n = 0;

        cr_assert_not_null(d);
        while ((de = readdir(d))) {
                char path[300], buf[4096];
                ssize_t len;
                int fd;

                if (de->d_name[0] < '0' || de->d_name[0] > '9')
                        continue;
                snprintf(path, sizeof(path), "/proc/%s/cmdline", de->d_name);
                fd = open(path, O_RDONLY | O_CLOEXEC);
                if (fd < 0)
                        continue;
                len = read(fd, buf, sizeof(buf) - 1);
                close(fd);
                if (len <= 0)
                        continue;
                for (ssize_t i = 0; i < len - 1; i++)
                        if (buf[i] == '\0')
                                buf[i] = ' ';
                buf[len] = '\0';
                n += strstr(buf, needle) != NULL;
        }
        closedir(d);
        return n;
}
