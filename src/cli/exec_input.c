/* SPDX-License-Identifier: MIT */
/*
 * What heal exec runs: the files named on the command line (the first is the main file, as in
 * Piston), every regular file of a directory (hidden ones and symlinks skipped), or code on
 * stdin. Everything is read into memory, capped, and handed to the runner as files.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/exec.h"
#include "core/util.h"

#define INPUT_DEPTH_MAX 16

void exec_input_release(struct exec_input *in)
{
        for (size_t i = 0; i < in->n; i++) {
                free((void *)(uintptr_t)in->files[i].name);
                free((void *)(uintptr_t)in->files[i].data);
        }
        free(in->files);
        memset(in, 0, sizeof(*in));
}

/* Read all of @fd, at most @max bytes; -E2BIG beyond. */
static int read_fd(int fd, char **ret, size_t *ret_len, size_t max)
{
        size_t len = 0, cap = 4096;
        char *buf = malloc(cap), *grown;

        if (!buf)
                return -ENOMEM;
        for (;;) {
                ssize_t n;

                if (len == cap) {
                        if (cap > max) {
                                free(buf);
                                return -E2BIG;
                        }
                        grown = realloc(buf, cap * 2);
                        if (!grown) {
                                free(buf);
                                return -ENOMEM;
                        }
                        buf = grown;
                        cap *= 2;
                }
                n = read(fd, buf + len, cap - len);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0) {
                        int r = -errno;

                        free(buf);
                        return r;
                }
                if (n == 0)
                        break;
                len += (size_t)n;
        }
        if (len > max) {
                free(buf);
                return -E2BIG;
        }
        *ret = buf;
        *ret_len = len;
        return 0;
}

static int add(struct exec_input *in, const char *name, char *data, size_t len)
{
        heal_runner_file *grown;
        char *copy;

        for (size_t i = 0; i < in->n; i++)
                if (strcmp(in->files[i].name, name) == 0) {
                        free(data);
                        log_error("two files are named '%s': the program's files share one "
                                  "directory, so their names must differ",
                                  name);
                        return -EINVAL;
                }
        if (in->n == EXEC_FILES_MAX || in->total + len > EXEC_BYTES_MAX) {
                free(data);
                log_error("too much code: at most %d files and %d MiB together", EXEC_FILES_MAX,
                          (int)(EXEC_BYTES_MAX >> 20));
                return -E2BIG;
        }
        grown = realloc(in->files, (in->n + 1) * sizeof(*grown));
        copy = strdup(name);
        if (grown)
                in->files = grown;
        if (!grown || !copy) {
                free(copy);
                free(data);
                log_error("out of memory");
                return -ENOMEM;
        }
        in->files[in->n++] = (heal_runner_file){ .name = copy, .data = data, .len = len };
        in->total += len;
        return 0;
}

static int add_path(struct exec_input *in, const char *path, const char *name)
{
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        size_t len = 0;
        char *data = NULL;
        int r;

        if (fd < 0) {
                log_error("cannot read '%s': %s", path, strerror(errno));
                return -errno;
        }
        r = read_fd(fd, &data, &len, EXEC_BYTES_MAX);
        if (r == -EISDIR)
                log_error("'%s' is a directory: give it alone ('heal exec DIR') to run every "
                          "file in it",
                          path);
        else if (r < 0)
                log_error("cannot read '%s': %s", path, strerror(-r));
        return r < 0 ? r : add(in, name, data, len);
}

int exec_input_stdin(struct exec_input *in, const char *lang)
{
        const char *name = heal_runner_lang_main_file(lang);
        size_t len = 0;
        char *data = NULL;
        int r;

        if (!name) {
                log_error("code on stdin needs --lang (one of: %s)", heal_runner_langs());
                return -EINVAL;
        }
        r = read_fd(STDIN_FILENO, &data, &len, EXEC_BYTES_MAX);
        if (r < 0) {
                log_error("cannot read the code from stdin: %s", strerror(-r));
                return r;
        }
        return add(in, name, data, len);
}

int exec_input_files(struct exec_input *in, char **paths, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                const char *base = strrchr(paths[i], '/');
                int r;

                base = base && base[1] ? base + 1 : paths[i];
                r = add_path(in, paths[i], base);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int walk(struct exec_input *in, const char *dir, const char *prefix, int depth)
{
        DIR *d = opendir(dir);
        struct dirent *de;
        int r = 0;

        if (!d) {
                log_error("cannot read directory '%s': %s", dir, strerror(errno));
                return -errno;
        }
        while (r >= 0 && (de = readdir(d))) {
                char path[PATH_MAX], name[PATH_MAX];
                struct stat st;

                if (de->d_name[0] == '.') /* ., .., .git, editor files */
                        continue;
                if (str_printf(path, sizeof(path), "%s/%s", dir, de->d_name) < 0 ||
                    str_printf(name, sizeof(name), "%s%s%s", prefix, *prefix ? "/" : "",
                               de->d_name) < 0 ||
                    lstat(path, &st) < 0)
                        continue;
                if (S_ISDIR(st.st_mode) && depth < INPUT_DEPTH_MAX)
                        r = walk(in, path, name, depth + 1);
                else if (S_ISREG(st.st_mode))
                        r = add_path(in, path, name);
        }
        closedir(d);
        return r;
}

/* The main file of a directory for @lang: main.EXT, else the only file with that extension. */
static int pick_main(struct exec_input *in, const char *lang, const char *dir)
{
        const char *main_name = heal_runner_lang_main_file(lang);
        const char *ext = strrchr(main_name, '.');
        size_t found = SIZE_MAX, count = 0;

        for (size_t i = 0; i < in->n; i++) {
                const char *name = in->files[i].name;
                size_t n = strlen(name);

                if (strcmp(name, main_name) == 0 ||
                    (lang[0] == 'p' && strcmp(name, "__main__.py") == 0)) {
                        found = i;
                        count = 1;
                        break;
                }
                if (!strchr(name, '/') && n > strlen(ext) &&
                    strcmp(name + n - strlen(ext), ext) == 0)
                        found = i, count++;
        }
        if (count == 0) {
                log_error("'%s' holds no *%s file at its top: nothing to run as %s", dir, ext,
                          lang);
                return -EINVAL;
        }
        if (count > 1) {
                log_error("'%s' holds several *%s files and no %s: name the entry file first "
                          "('heal exec %s/ENTRY%s %s/OTHER%s ...') or call it %s",
                          dir, ext, main_name, dir, ext, dir, ext, main_name);
                return -EINVAL;
        }
        heal_runner_file t = in->files[0];
        in->files[0] = in->files[found];
        in->files[found] = t;
        return 0;
}

/* The language of a directory: Go when it has go.mod or *.go, then C, Python, sh, bash. */
static const char *dir_lang(const struct exec_input *in)
{
        static const char *const order[] = { "go", "c", "python3", "sh", "bash" };

        for (size_t k = 0; k < ELEMENTSOF(order); k++)
                for (size_t i = 0; i < in->n; i++) {
                        const char *lang = heal_runner_lang_for_file(in->files[i].name);

                        if ((lang && strcmp(lang, order[k]) == 0) ||
                            (k == 0 && strcmp(in->files[i].name, "go.mod") == 0))
                                return order[k];
                }
        return NULL;
}

int exec_input_dir(struct exec_input *in, const char *dir, const char **lang)
{
        int r = walk(in, dir, "", 0);

        if (r < 0)
                return r;
        if (in->n == 0) {
                log_error("'%s' holds no files to run", dir);
                return -EINVAL;
        }
        if (!*lang && !(*lang = dir_lang(in))) {
                log_error("no file in '%s' has the extension of a language heal runs (%s): "
                          "name one with --lang",
                          dir, heal_runner_langs());
                return -EINVAL;
        }
        /* a build takes every file; only an interpreter needs to know which one to run */
        return heal_runner_lang_is_compiled(*lang) ? 0 : pick_main(in, *lang, dir);
}
