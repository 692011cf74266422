/* SPDX-License-Identifier: MIT */
/*
 * What the default view hides under /etc when heal runs as root: every file and directory that
 * other users may not read (shadow, SSH host keys, /etc/ssl/private, sudoers, VPN and database
 * credentials). A command running as host uid 0 could read them otherwise. The walk is done once
 * per process; files are covered with /dev/null on a nodev mount (opening them fails with
 * EACCES, as for any other user), directories with an empty read-only tmpfs.
 */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <ftw.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/util.h"
#include "sandbox-internal.h"

struct secret {
        char *path;
        bool dir;
};

static struct secret *secrets;
static size_t n_secrets;
static bool walk_failed; /* fail closed: a partial list would expose the rest */
static pthread_once_t secrets_once = PTHREAD_ONCE_INIT;

static int visit(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
        bool dir = type == FTW_D || type == FTW_DNR;
        struct secret *grown;

        if (ftw->level == 0 || (type != FTW_F && !dir) || (st->st_mode & S_IROTH))
                return FTW_CONTINUE;
        grown = realloc(secrets, (n_secrets + 1) * sizeof(*grown));
        if (!grown || !(grown[n_secrets].path = strdup(path))) {
                secrets = grown ? grown : secrets;
                walk_failed = true;
                return FTW_STOP;
        }
        secrets = grown;
        secrets[n_secrets++].dir = dir;
        return dir ? FTW_SKIP_SUBTREE : FTW_CONTINUE;
}

static void walk(void)
{
        if (nftw("/etc", visit, 16, FTW_PHYS | FTW_MOUNT | FTW_ACTIONRETVAL) < 0)
                walk_failed = true;
}

int plan_add_secret_masks(struct mount_entry **v, size_t *n, heal_error *err)
{
        static const char *const dir_opts[] = { "ro", "mode=0700", "size=4k", "nr_inodes=8", NULL };
        int r = 0;

        pthread_once(&secrets_once, walk);
        if (walk_failed)
                return heal_error_set(err, -ENOMEM,
                                      "cannot list what /etc hides from other users; as root heal "
                                      "will not run without hiding it");
        for (size_t i = 0; r >= 0 && i < n_secrets; i++)
                r = secrets[i].dir ? plan_entry_add(v, n, HEAL_MOUNT_TMPFS, NULL, secrets[i].path,
                                                    dir_opts, true, err)
                                   : plan_entry_add(v, n, HEAL_MOUNT_BIND, "/dev/null",
                                                    secrets[i].path, NULL, true, err);
        return r;
}
