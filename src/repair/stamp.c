/* SPDX-License-Identifier: MIT */
/*
 * The tree as the baseline saw it: each regular file's size, inode and modification and change
 * times (ns), taken right before the baseline ran. Write-back checks the files it is about to
 * write against it, so that an edit the user made during the search (even before a candidate
 * read the file) stops the write instead of being overwritten. .git and .heal are not walked;
 * the walk does not follow symlinks and stops at 1,000,000 files (files beyond it are then
 * compared by content only, as write-back always does).
 */
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "heal/repair.h"

#include "repair/search-internal.h"

#define STAMP_MAX 1000000

struct stamp_entry {
        char *path; /* relative */
        struct stat st;
};

struct heal_tree_stamp {
        struct stamp_entry *v;
        size_t n, cap;
        size_t root_len;
        bool truncated;
        int error;
};

static __thread struct heal_tree_stamp *walking;

static int visit(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
        struct heal_tree_stamp *s = walking;
        const char *rel = path + s->root_len + (path[s->root_len] == '/');
        const char *base = path + ftw->base;

        if (type == FTW_D && ftw->level == 1 && (!strcmp(base, ".git") || !strcmp(base, ".heal")))
                return FTW_SKIP_SUBTREE;
        if (type != FTW_F || !S_ISREG(st->st_mode))
                return FTW_CONTINUE;
        if (s->n == STAMP_MAX) {
                s->truncated = true;
                return FTW_STOP;
        }
        if (s->n == s->cap) {
                size_t cap = s->cap ? s->cap * 2 : 1024;
                struct stamp_entry *v = realloc(s->v, cap * sizeof(*v));

                if (!v) {
                        s->error = -ENOMEM;
                        return FTW_STOP;
                }
                s->v = v;
                s->cap = cap;
        }
        s->v[s->n].path = strdup(rel);
        if (!s->v[s->n].path) {
                s->error = -ENOMEM;
                return FTW_STOP;
        }
        s->v[s->n++].st = *st;
        return FTW_CONTINUE;
}

static int by_path(const void *a, const void *b)
{
        return strcmp(((const struct stamp_entry *)a)->path, ((const struct stamp_entry *)b)->path);
}

int tree_stamp_take(heal_tree_stamp **ret, const char *tree, heal_error *err)
{
        struct heal_tree_stamp *s = calloc(1, sizeof(*s));

        if (!s)
                return heal_error_set(err, -ENOMEM, "out of memory");
        s->root_len = strlen(tree);
        walking = s;
        if (nftw(tree, visit, 64, FTW_PHYS | FTW_ACTIONRETVAL) < 0 && !s->error)
                s->error = -errno;
        walking = NULL;
        if (s->error) {
                int r = s->error;

                tree_stamp_free(s);
                return heal_error_set(err, r, "reading the tree '%s': %s", tree, strerror(-r));
        }
        if (s->n)
                qsort(s->v, s->n, sizeof(*s->v), by_path);
        *ret = s;
        return 0;
}

void tree_stamp_free(heal_tree_stamp *s)
{
        if (!s)
                return;
        for (size_t i = 0; i < s->n; i++)
                free(s->v[i].path);
        free(s->v);
        free(s);
}

int heal_baseline_check(const heal_baseline *b, const heal_patch *p, const char *tree,
                        heal_error *err)
{
        for (size_t i = 0; b && b->stamp && p && i < p->n_files; i++) {
                struct stamp_entry key = { .path = p->files[i].file }, *e;
                char path[PATH_MAX];
                struct stat st;
                bool exists;

                snprintf(path, sizeof(path), "%s/%s", tree, p->files[i].file);
                exists = lstat(path, &st) == 0;
                e = b->stamp->n ? bsearch(&key, b->stamp->v, b->stamp->n, sizeof(key), by_path)
                                : NULL;
                if (!e && (!exists || b->stamp->truncated))
                        continue; /* new then and now, or beyond the walk */
                if (!e || !exists || st.st_size != e->st.st_size || st.st_ino != e->st.st_ino ||
                    st.st_mtim.tv_sec != e->st.st_mtim.tv_sec ||
                    st.st_mtim.tv_nsec != e->st.st_mtim.tv_nsec ||
                    st.st_ctim.tv_sec != e->st.st_ctim.tv_sec ||
                    st.st_ctim.tv_nsec != e->st.st_ctim.tv_nsec)
                        return heal_error_set(err, -ESTALE,
                                              "the tree changed during the search: %s is not "
                                              "what the baseline ran with; nothing was written "
                                              "(run heal again)",
                                              p->files[i].file);
        }
        return 0;
}
