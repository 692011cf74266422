/* SPDX-License-Identifier: MIT */
/*
 * A free candidate for Go: goimports (golang.org/x/tools/cmd/goimports, Debian's
 * golang-golang-x-tools) on the files whose compile errors it can fix: a package used but not
 * imported ("undefined: strings") or imported and not used. It reads the file on stdin and
 * writes the fixed file, choosing imports as if it lived in its own directory (-srcdir); it
 * parses the code and reads the module cache, it runs none of it, so it runs as a plain child
 * like the language servers, killed after 10 s. Not installed: no candidate.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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

#include "repair/search-internal.h"

#define GOIMPORTS_TIMEOUT_MS 10000
#define GOIMPORTS_FILES      8

static bool in_path(const char *name)
{
        const char *path = getenv("PATH");
        char buf[PATH_MAX];

        for (const char *p = path; p && *p;) {
                size_t n = strcspn(p, ":");

                if (n &&
                    snprintf(buf, sizeof(buf), "%.*s/%s", (int)n, p, name) < (int)sizeof(buf) &&
                    access(buf, X_OK) == 0)
                        return true;
                p += n + (p[n] == ':');
        }
        return false;
}

/* Is @d an error goimports fixes? "undefined: fmt" (a lower-case name: a package), "\"os\"
 * imported and not used". */
static bool fixable(const heal_diag *d)
{
        const char *m = d->message;
        size_t n;

        if (d->kind != HEAL_DIAG_COMPILE_ERROR || !d->file || strlen(d->file) < 4 ||
            strcmp(d->file + strlen(d->file) - 3, ".go") != 0)
                return false;
        if (strstr(m, "imported and not used"))
                return true;
        if (strncmp(m, "undefined: ", 11) != 0)
                return false;
        n = strspn(m + 11, "abcdefghijklmnopqrstuvwxyz0123456789");
        return n > 0 && m[11 + n] == '\0' && m[11] >= 'a' && m[11] <= 'z';
}

static int wait_ms(pid_t pid, int fd, heal_buf *out, uint64_t deadline_ms)
{
        struct timespec ts;
        char chunk[65536];
        int st;

        for (;;) {
                struct pollfd p = { .fd = fd, .events = POLLIN };
                uint64_t now;
                ssize_t k;

                clock_gettime(CLOCK_MONOTONIC, &ts);
                now = (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
                if (now >= deadline_ms || poll(&p, 1, (int)(deadline_ms - now)) == 0) {
                        kill(pid, SIGKILL);
                        waitpid(pid, &st, 0);
                        return -ETIMEDOUT;
                }
                k = read(fd, chunk, sizeof(chunk));
                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        break;
                heal_buf_append(out, chunk, (size_t)k);
        }
        if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0 || out->truncated)
                return -EIO;
        return 0;
}

/* goimports -srcdir @dir < @content; the fixed file (malloc'd) or NULL. */
static char *goimports(const char *dir, const char *content)
{
        char prog[] = "goimports", flag[] = "-srcdir", srcdir[PATH_MAX];
        char *argv[] = { prog, flag, srcdir, NULL };
        extern char **environ;
        posix_spawn_file_actions_t fa;
        heal_buf out = HEAL_BUF_INIT(8u << 20);
        int in[2] = { -1, -1 }, outp[2] = { -1, -1 }, r = -1;
        struct timespec ts;
        pid_t pid;

        snprintf(srcdir, sizeof(srcdir), "%s", dir);
        if (pipe2(in, O_CLOEXEC) < 0 || pipe2(outp, O_CLOEXEC) < 0)
                goto out;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_adddup2(&fa, in[0], 0);
        posix_spawn_file_actions_adddup2(&fa, outp[1], 1);
        posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
        r = posix_spawnp(&pid, "goimports", &fa, NULL, argv, environ);
        posix_spawn_file_actions_destroy(&fa);
        close(in[0]), close(outp[1]);
        in[0] = outp[1] = -1;
        if (r != 0)
                goto out;
        /* it reads all its input before it writes: no deadlock; SIGPIPE if it dies early */
        for (size_t off = 0, len = strlen(content); off < len;) {
                ssize_t w = write(in[1], content + off, len - off);

                if (w <= 0 && errno != EINTR)
                        break;
                off += w > 0 ? (size_t)w : 0;
        }
        close(in[1]);
        in[1] = -1;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        r = wait_ms(pid, outp[0], &out,
                    (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000 +
                            GOIMPORTS_TIMEOUT_MS);
out:
        for (int i = 0; i < 2; i++) {
                if (in[i] >= 0)
                        close(in[i]);
                if (outp[i] >= 0)
                        close(outp[i]);
        }
        if (r != 0) {
                heal_buf_release(&out);
                return NULL;
        }
        return heal_buf_detach(&out, NULL);
}

int search_goimports(struct search *s, heal_error *err)
{
        const heal_analysis *a = &s->v[0].an;
        static char empty[1];
        char names[GOIMPORTS_FILES][PATH_MAX];
        heal_edit ev[GOIMPORTS_FILES];
        heal_edits edits = { .v = ev };
        heal_patch patch = { 0 };
        heal_error e = HEAL_ERROR_INIT;
        heal_apply_opts ao = { .tree = s->o->tree, .protected = s->o->protected };
        int r, id;

        for (size_t i = 0; i < a->n_diags && edits.n < GOIMPORTS_FILES; i++) {
                bool seen = false;

                if (!fixable(&a->diags[i]))
                        continue;
                for (size_t k = 0; k < edits.n; k++)
                        seen |= !strcmp(names[k], a->diags[i].file);
                if (seen)
                        continue;
                snprintf(names[edits.n], PATH_MAX, "%s", a->diags[i].file);
                ev[edits.n] = (heal_edit){ .file = names[edits.n],
                                           .search = empty,
                                           .replace = empty,
                                           .whole_file = true };
                edits.n++;
        }
        if (!edits.n || !in_path("goimports"))
                return -1;
        r = heal_edits_apply(&edits, &ao, &patch, &e); /* reads each file, path rules kept */
        for (size_t i = 0; r >= 0 && i < patch.n_files; i++) {
                heal_file_change *fc = &patch.files[i];
                char dir[PATH_MAX];
                const char *slash = strrchr(fc->file, '/');

                snprintf(dir, sizeof(dir), "%s/%.*s", s->o->tree,
                         slash ? (int)(slash - fc->file) : 0, fc->file);
                free(fc->after);
                fc->after = fc->before ? goimports(dir, fc->before) : NULL;
                if (!fc->after)
                        r = -EIO;
        }
        if (r < 0) {
                heal_patch_release(&patch);
                return -1;
        }
        id = search_add_node(s, 0, "goimports", &patch, NULL);
        if (id < 0) {
                heal_patch_release(&patch);
                return heal_error_set(err, id, "out of memory");
        }
        search_preclassify(s, id, 0, &e);
        r = node_check_gaming(s, &s->v[id], err);
        return r < 0 ? r : id;
}
