/* SPDX-License-Identifier: MIT */
#ifndef HEAL_TEST_HARNESS_H
#define HEAL_TEST_HARNESS_H

/* Shared helpers of the integration tests: temp dirs, corpus copies, host-side process checks. */

#include <criterion/criterion.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "heal/sandbox.h"

/* Absolute path of tests/data (compiled in by meson as HEAL_TEST_DATA). */
const char *test_data_dir(void);

/* A fresh directory under /tmp, mode 0755, owned by the current user; caller frees the string. */
char *test_tempdir(void);

/* rm -rf @dir (best effort). */
void test_rmtree(const char *dir);

/* Copy every file of tests/data/hostile/@name into @dir. */
void test_copy_case(const char *name, const char *dir);

/* Write @text to @dir/@file. */
void test_write_file(const char *dir, const char *file, const char *text);

/* Number of host processes for which @match(PID as in /proc, @arg) is true. */
int test_count_matching(bool (*match)(const char *pid, const void *arg), const void *arg);

/* /proc/@pid/@file's first @len - 1 bytes into @buf, NUL-terminated; bytes read, -1 when it
 * cannot be opened (the process is gone) or read. */
ssize_t test_read_proc(const char *pid, const char *file, char *buf, size_t len);

/* Number of host processes whose /proc/PID/comm equals @comm (NULL: all processes). */
int test_count_procs(const char *comm);

/* Number of host processes whose command line (arguments joined by spaces) contains @needle. */
int test_count_cmdline(const char *needle);

/* Number of host zombie processes whose parent is @ppid (0: any parent). */
int test_count_zombies(int ppid);

/* Number of open file descriptors of this process. */
int test_fd_count(void);

/* VmRSS of this process in KiB. */
long test_rss_kib(void);

/* New sandbox with the default view, the allow-listed environment, HOME=/tmp and @cwd. */
heal_sandbox *test_sandbox(const char *cwd);

/* Run @argv in @sb; asserts the call itself succeeded. */
void test_run(heal_sandbox *sb, const char *const *argv, heal_sandbox_result *res);

/* Run "sh -c @script" in a default sandbox with @cwd; asserts the call succeeded. */
void test_sh(const char *cwd, const char *script, heal_sandbox_result *res);

/* true when the captured stdout or stderr of @res contains @needle. */
bool test_output_has(const heal_sandbox_result *res, const char *needle);

/* Is a usable toolchain present on the host? Fails the test loudly when not. */
void test_require(const char *tool);

/* What test_heal() saw; out and err are NUL-terminated, owned (test_proc_release()). */
struct test_proc {
        int code; /* exit status, 128+N when signal N killed it */
        char *out, *err;
        size_t out_len, err_len;
};

/* Run the heal binary with @argv (NULL-terminated, without "heal") in @cwd (NULL: ours), with
 * @env ("NAME=value" set, "NAME" unset; or NULL) and @input on its stdin (NULL: none); waits. */
void test_heal(struct test_proc *p, const char *cwd, const char *const *env, const char *input,
               const char *const *argv);
void test_proc_release(struct test_proc *p);

#endif
