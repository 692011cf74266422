/* SPDX-License-Identifier: MIT */
/*
 * Reading the tree's sources for the analysis: the text of a diagnostic's line (whose
 * identifiers the cause fingerprint abstracts) and the function around it, found by the nearest
 * definition above the line: "func Name(" or "func (r *T) Name(" in Go, a line that starts a C
 * function definition ("type name(" at column 0 with no ';'), "def name(" in Python. A file
 * over 4 MiB is not read, nor one outside the tree: paths are resolved beneath it (openat2
 * RESOLVE_BENEATH), so a symlink in the tree pointing at /etc/shadow shows nothing.
 */
#include <ctype.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/util.h"
#include "repair/repair-internal.h"

#define SOURCE_MAX (4u << 20)

static bool ends_with(const char *s, const char *suffix)
{
        size_t n = strlen(s), m = strlen(suffix);

        return n >= m && strcmp(s + n - m, suffix) == 0;
}

void source_definition(const char *s, const char *file, char *fn, size_t len)
{
        const char *p, *open;

        fn[0] = '\0';
        if (ends_with(file, ".go") && starts_with(s, "func ")) {
                p = s + 5;
                if (*p == '(') { /* method: func (r *T) Name( */
                        const char *close = strchr(p, ')');

                        if (!close)
                                return;
                        p = close + 1;
                        while (*p == ' ')
                                p++;
                }
                snprintf(fn, len, "%.*s", (int)strcspn(p, "([ "), p);
        } else if (ends_with(file, ".py") && (starts_with(s, "def ") || strstr(s, "    def "))) {
                p = strstr(s, "def ") + 4;
                snprintf(fn, len, "%.*s", (int)strcspn(p, "( "), p);
        } else if (!ends_with(file, ".go") && !ends_with(file, ".py") &&
                   (isalpha((unsigned char)s[0]) || s[0] == '_') && !strchr(s, ';') &&
                   (open = strchr(s, '(')) && !starts_with(s, "typedef") &&
                   !starts_with(s, "struct") && !starts_with(s, "static const")) {
                const char *e = open;

                while (e > s && e[-1] == ' ')
                        e--;
                p = e;
                while (p > s && (isalnum((unsigned char)p[-1]) || p[-1] == '_'))
                        p--;
                snprintf(fn, len, "%.*s", (int)(e - p), p);
        }
}

static __thread const heal_patch *overlay;

void repair_overlay_set(const heal_patch *p)
{
        overlay = p;
}

/* @rel as the overlay patch has it, if it changes it. */
static FILE *overlay_open(const char *rel, size_t max_bytes, bool *found)
{
        for (size_t i = 0; overlay && i < overlay->n_files; i++) {
                const heal_file_change *f = &overlay->files[i];
                size_t len;

                if (strcmp(f->file, rel) != 0)
                        continue;
                *found = true;
                len = f->after ? strlen(f->after) : 0;
                if (!f->after || len > max_bytes)
                        return NULL;
                return len ? fmemopen((void *)(uintptr_t)f->after, len, "r")
                           : fopen("/dev/null", "re");
        }
        return NULL;
}

FILE *tree_open(const char *tree, const char *rel, size_t max_bytes)
{
        struct open_how how = { .flags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK,
                                .resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS };
        int dir, fd;
        struct stat st;
        FILE *f;

        bool found = false;

        if (!tree || !rel || !rel[0] || rel[0] == '/')
                return NULL;
        f = overlay_open(rel, max_bytes, &found);
        if (found)
                return f;
        dir = open(tree, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (dir < 0)
                return NULL;
        fd = (int)syscall(SYS_openat2, dir, rel, &how, sizeof(how));
        close(dir);
        if (fd < 0)
                return NULL;
        if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (size_t)st.st_size > max_bytes ||
            !(f = fdopen(fd, "r"))) {
                close(fd);
                return NULL;
        }
        return f;
}

bool source_function(const heal_analyze_opts *o, const char *file, unsigned line, char *fn,
                     size_t fn_len, char *text, size_t text_len)
{
        char buf[LINE_MAX_PARSED], name[256];
        unsigned n = 0;
        FILE *f;

        fn[0] = text[0] = '\0';
        if (!o || line == 0 || !(f = tree_open(o->tree, file, SOURCE_MAX)))
                return false;
        while (n < line && fgets(buf, sizeof(buf), f)) {
                n++;
                source_definition(buf, file, name, sizeof(name));
                if (name[0])
                        snprintf(fn, fn_len, "%s", name);
                else if (buf[0] == '}' && n < line && !ends_with(file, ".py"))
                        fn[0] = '\0'; /* Go and C bodies close at column 0: outside again */
                if (n == line)
                        snprintf(text, text_len, "%.*s", (int)strcspn(buf, "\n"), buf);
        }
        fclose(f);
        return fn[0] != '\0';
}
