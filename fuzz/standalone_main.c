/* SPDX-License-Identifier: MIT */
/*
 * Replay driver for the fuzz targets in builds without libFuzzer: runs LLVMFuzzerTestOneInput()
 * once per file named on the command line, and once per regular file inside a directory named
 * there (not recursive, in name order, dot-files skipped). "-" reads stdin. Arguments that look
 * like libFuzzer flags ("-runs=1") are ignored, so one command line works with both drivers.
 *
 * Each input gets its own heap block of exactly its size, so ASan sees any read past the end.
 * Exit status: 0 when every input ran; 1 when a file or directory could not be read or no input
 * was found at all (an empty corpus is a broken test, not a passing one); 2 for usage. A crash
 * or an invariant violation in the target aborts the process, as under libFuzzer.
 *
 * See: libgit2 fuzzers/standalone_driver.c, systemd src/fuzz/fuzz-main.c.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"

/* Targets may define it; libFuzzer calls it once before the first input. */
__attribute__((weak)) int LLVMFuzzerInitialize(int *argc, char ***argv);

/* Read all of @fd into a fresh buffer of exactly the file's size (1 byte for an empty one). */
static int read_all(int fd, uint8_t **ret_data, size_t *ret_size)
{
        size_t size = 0, cap = 4096;
        uint8_t *data = malloc(cap), *exact;

        if (!data)
                return -ENOMEM;
        for (;;) {
                ssize_t n;

                if (size == cap) {
                        uint8_t *grown = realloc(data, cap * 2);

                        if (!grown) {
                                free(data);
                                return -ENOMEM;
                        }
                        data = grown;
                        cap *= 2;
                }
                n = read(fd, data + size, cap - size);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0) {
                        int r = -errno;

                        free(data);
                        return r;
                }
                if (n == 0)
                        break;
                size += (size_t)n;
        }
        /* Copy into an exact-size block: a redzone right after the last byte. */
        exact = malloc(size ? size : 1);
        if (!exact) {
                free(data);
                return -ENOMEM;
        }
        memcpy(exact, data, size);
        free(data);
        *ret_data = exact;
        *ret_size = size;
        return 0;
}

static int run_fd(int fd, const char *name)
{
        uint8_t *data = NULL;
        size_t size = 0;
        int r;

        r = read_all(fd, &data, &size);
        if (r < 0) {
                fprintf(stderr, "cannot read '%s': %s\n", name, strerror(-r));
                return r;
        }
        fprintf(stderr, "running '%s' (%zu bytes)\n", name, size);
        (void)LLVMFuzzerTestOneInput(data, size);
        free(data);
        return 0;
}

static int run_file(int dirfd, const char *path, const char *shown)
{
        int fd, r;

        fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0) {
                r = -errno;
                fprintf(stderr, "cannot open '%s': %s\n", shown, strerror(-r));
                return r;
        }
        r = run_fd(fd, shown);
        close(fd);
        return r;
}

static int skip_entry(const struct dirent *de)
{
        return de->d_name[0] != '.';
}

/* Run every regular file in @path; return the number run, or -errno. */
static int run_dir(const char *path)
{
        struct dirent **names = NULL;
        int n, dfd, count = 0, r = 0;

        dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0) {
                r = -errno;
                fprintf(stderr, "cannot open directory '%s': %s\n", path, strerror(-r));
                return r;
        }
        n = scandir(path, &names, skip_entry, alphasort);
        if (n < 0) {
                r = -errno;
                fprintf(stderr, "cannot list '%s': %s\n", path, strerror(-r));
                close(dfd);
                return r;
        }
        for (int i = 0; i < n; i++) {
                char shown[4096];
                struct stat st;

                snprintf(shown, sizeof(shown), "%s/%s", path, names[i]->d_name);
                if (r >= 0 && fstatat(dfd, names[i]->d_name, &st, 0) == 0 && S_ISREG(st.st_mode)) {
                        r = run_file(dfd, names[i]->d_name, shown);
                        if (r >= 0)
                                count++;
                }
                free(names[i]);
        }
        free(names);
        close(dfd);
        return r < 0 ? r : count;
}

int main(int argc, char **argv)
{
        unsigned long inputs = 0;
        int r;

        if (argc < 2) {
                fprintf(stderr,
                        "usage: %s FILE|DIR|- ...\n"
                        "runs the fuzz target once per input (replay mode, no fuzzing)\n",
                        argv[0]);
                return 2;
        }
        if (LLVMFuzzerInitialize)
                (void)LLVMFuzzerInitialize(&argc, &argv);
        for (int i = 1; i < argc; i++) {
                const char *arg = argv[i];
                struct stat st;

                if (strcmp(arg, "-") == 0) {
                        if (run_fd(STDIN_FILENO, "<stdin>") < 0)
                                return 1;
                        inputs++;
                        continue;
                }
                if (arg[0] == '-') {
                        fprintf(stderr, "ignoring libFuzzer option '%s'\n", arg);
                        continue;
                }
                if (stat(arg, &st) < 0) {
                        fprintf(stderr, "cannot access '%s': %s\n", arg, strerror(errno));
                        return 1;
                }
                if (S_ISDIR(st.st_mode)) {
                        r = run_dir(arg);
                        if (r < 0)
                                return 1;
                        inputs += (unsigned long)r;
                } else {
                        if (run_file(AT_FDCWD, arg, arg) < 0)
                                return 1;
                        inputs++;
                }
        }
        if (inputs == 0) {
                fprintf(stderr, "no inputs found\n");
                return 1;
        }
        fprintf(stderr, "%lu inputs ran without a finding\n", inputs);
        return 0;
}
