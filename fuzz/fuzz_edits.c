/* SPDX-License-Identifier: MIT */
/*
 * Edits parsed from arbitrary answers and applied (in memory) to a small tree: no crash, no
 * leak, only the documented errors; every parsed edit has its strings; a patch's files are
 * named inside the tree.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "heal/edit.h"

#include "fuzz.h"

static char tree[] = "/tmp/heal-fuzz-edits-XXXXXX";

static void make_tree(void)
{
        char path[128];
        FILE *f;

        if (!mkdtemp(tree))
                abort();
        snprintf(path, sizeof(path), "%s/a.go", tree);
        f = fopen(path, "w");
        if (!f)
                abort();
        fputs("package a\n\nfunc F() int {\n\treturn 1\n}\n", f);
        fclose(f);
}

/* Does @path have a ".." component? ("a..b.go" is a name like any other.) */
static bool dotdot(const char *path)
{
        for (const char *p = path; *p;) {
                size_t k = strcspn(p, "/");

                if (k == 2 && p[0] == '.' && p[1] == '.')
                        return true;
                p += k + (p[k] == '/');
        }
        return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        heal_apply_opts o = { .tree = tree };
        heal_error err = HEAL_ERROR_INIT;
        heal_edits e;
        heal_patch p;
        char *answer;
        int r;

        static bool made;

        if (!made)
                make_tree(), made = true;
        answer = malloc(size + 1);
        if (!answer)
                return 0;
        memcpy(answer, data, size);
        answer[size] = '\0';
        r = heal_edits_parse(&e, answer, &err);
        FUZZ_ASSERT(r == 0 || r == -EBADMSG || r == -ENOMEM);
        if (r == 0) {
                for (size_t i = 0; i < e.n; i++)
                        FUZZ_ASSERT(e.v[i].file && e.v[i].search && e.v[i].replace);
                r = heal_edits_apply(&e, &o, &p, &err);
                FUZZ_ASSERT(r == 0 || r == -EPERM || r == -ENOENT || r == -EEXIST || r == -EFBIG ||
                            r == -ENAMETOOLONG || r == -ENOMEM);
                for (size_t i = 0; r == 0 && i < p.n_files; i++)
                        FUZZ_ASSERT(p.files[i].file[0] != '/' && !dotdot(p.files[i].file) &&
                                    p.files[i].after);
                if (r == 0)
                        heal_patch_release(&p);
                else
                        FUZZ_ASSERT(err.msg[0]);
                heal_edits_release(&e);
        }
        free(answer);
        return 0;
}
