/* SPDX-License-Identifier: MIT */
/*
 * A file's outline for the prompt: its types with their fields (whole, up to 30 lines) and the
 * signature line of each function and method, no bodies, from Universal Ctags' JSON output.
 * ctags runs as a plain child with a 5 s limit (it reads the file, runs nothing of it); when it
 * is missing, slow or says nothing useful, there is no outline and the source windows stand
 * alone.
 * See: https://docs.ctags.io/en/latest/man/ctags-json-output.5.html
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "heal/buf.h"

#include "core/util.h"
#include "repair/repair-internal.h"

extern char **environ;

#define CTAGS_TIMEOUT_MS 5000
#define CTAGS_OUT_MAX    (4u << 20)
#define TYPE_LINES_MAX   30

static uint64_t now_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* ctags' JSON for @file (relative, in @tree); false when ctags is missing, fails or is slow. */
static bool run_ctags(const char *tree, const char *file, heal_buf *out)
{
        char a0[] = "ctags", a1[] = "--output-format=json", a2[] = "--fields=+neS", a3[] = "-f",
             a4[] = "-", *a5 = NULL;
        char *argv[] = { a0, a1, a2, a3, a4, NULL, NULL };
        posix_spawn_file_actions_t fa;
        uint64_t deadline = now_ms() + CTAGS_TIMEOUT_MS;
        int p[2], status = 0;
        bool ok = true;
        pid_t pid;

        /* "./": a file named "-x.go" is not an option */
        if (asprintf(&a5, "./%s", file) < 0 || pipe2(p, O_CLOEXEC) < 0) {
                free(a5);
                return false;
        }
        argv[5] = a5;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_adddup2(&fa, p[1], 1);
        posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
        posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
        posix_spawn_file_actions_addchdir_np(&fa, tree);
        if (!a5 || posix_spawnp(&pid, "ctags", &fa, NULL, argv, environ) != 0)
                pid = -1;
        free(a5);
        posix_spawn_file_actions_destroy(&fa);
        close(p[1]);
        while (pid > 0 && ok) {
                struct pollfd pf = { .fd = p[0], .events = POLLIN };
                uint64_t now = now_ms();
                char chunk[16384];
                ssize_t n;

                if (now >= deadline || poll(&pf, 1, (int)(deadline - now)) <= 0) {
                        ok = false;
                        break;
                }
                n = read(p[0], chunk, sizeof(chunk));
                if (n <= 0)
                        break;
                ok = heal_buf_append(out, chunk, (size_t)n) == 0;
        }
        close(p[0]);
        if (pid <= 0)
                return false;
        if (!ok)
                kill(pid, SIGKILL);
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                ;
        return ok && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static int by_line(const void *a, const void *b)
{
        const struct tag *x = a, *y = b;

        return (x->line > y->line) - (x->line < y->line);
}

static bool kind_in(const char *kind, const char *const *set)
{
        for (size_t i = 0; set[i]; i++)
                if (strcmp(kind, set[i]) == 0)
                        return true;
        return false;
}

/* The tags worth an outline line, sorted by line. */
static size_t read_tags(const char *json, struct tag *v, size_t max)
{
        static const char *const types[] = { "struct", "interface", "type",  "typedef", "enum",
                                             "union",  "alias",     "class", NULL };
        static const char *const funcs[] = { "func",      "function",        "method",
                                             "prototype", "member_function", NULL };
        size_t n = 0;

        for (const char *p = json; *p && n < max;) {
                size_t len = strcspn(p, "\n");
                json_t *o = json_loadb(p, len, 0, NULL);
                const char *kind = json_string_value(json_object_get(o, "kind"));
                json_int_t line = json_integer_value(json_object_get(o, "line"));
                json_int_t end = json_integer_value(json_object_get(o, "end"));

                if (kind && line > 0 && (kind_in(kind, types) || kind_in(kind, funcs))) {
                        v[n].line = (unsigned)line;
                        v[n].end = end >= line ? (unsigned)end : (unsigned)line;
                        v[n].type = kind_in(kind, types);
                        n++;
                }
                json_decref(o);
                p += len + (p[len] == '\n');
        }
        if (n > 1)
                qsort(v, n, sizeof(*v), by_line);
        return n;
}

int skeleton_outline(const char *tree, const char *file, char **ret)
{
        heal_buf json = HEAL_BUF_INIT(CTAGS_OUT_MAX);
        struct tag *tags = calloc(4096, sizeof(*tags));
        size_t n = 0;
        int r;

        *ret = NULL;
        if (tags && run_ctags(tree, file, &json) && json.data)
                n = read_tags(json.data, tags, 4096);
        heal_buf_release(&json);
        r = n ? outline_render(tree, file, tags, n, ret) : -ENOENT;
        free(tags);
        return r;
}

int outline_render(const char *tree, const char *file, struct tag *tags, size_t n, char **ret)
{
        heal_buf out = HEAL_BUF_INIT(CTAGS_OUT_MAX);
        char buf[LINE_MAX_PARSED];
        unsigned line = 0, last_shown = 0;
        size_t k = 0;
        FILE *f = tree_open(tree, file, 4u << 20);

        *ret = NULL;
        if (!f)
                return -ENOENT;
        if (n > 1)
                qsort(tags, n, sizeof(*tags), by_line);
        /* A type's lines up to 30, a function's first line: sorted ranges, read in one pass. */
        for (size_t i = 0; i < n; i++)
                tags[i].end = tags[i].type ? MIN(tags[i].end, tags[i].line + TYPE_LINES_MAX - 1)
                                           : tags[i].line;
        while (k < n && fgets(buf, sizeof(buf), f)) {
                line++;
                while (k < n && tags[k].end < line)
                        k++;
                if (k >= n || line < tags[k].line)
                        continue;
                if (last_shown && line > last_shown + 1)
                        heal_buf_puts(&out, "    | ...\n");
                heal_buf_printf(&out, "%4u| %s", line, buf);
                if (!strchr(buf, '\n'))
                        heal_buf_puts(&out, "\n");
                last_shown = line;
        }
        fclose(f);
        *ret = heal_buf_detach(&out, NULL);
        heal_buf_release(&out);
        return *ret ? 0 : -ENOMEM;
}
