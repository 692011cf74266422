/* SPDX-License-Identifier: MIT */
/*
 * The environment of a search's runs. Go's build cache is heal's own ($XDG_CACHE_HOME/heal/
 * go-build, else ~/.cache/heal/go-build), never the user's: the baseline writes it, candidates
 * read it through an overlay (workspace.c), so builds stay warm and no candidate's code can
 * plant an entry that another run would trust. The module cache is the user's, read-only
 * (GOPROXY=off: nothing is downloaded). GOFLAGS=-count=1 bypasses the test cache (a cached "ok"
 * proves nothing about the candidate) and -buildvcs=false stops VCS stamping, since the sandbox has
 * no .git.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/util.h"
#include "repair/search-internal.h"

static const char *base_of(const char *path)
{
        const char *slash = strrchr(path, '/');

        return slash ? slash + 1 : path;
}

/* "go test" as words of a shell command line: at its start or after a separator. */
static bool script_runs_go_test(const char *s)
{
        for (const char *p = s; (p = strstr(p, "go test")); p++) {
                char before = p == s ? ' ' : p[-1], after = p[7];

                if (strchr(" \t\n;&|(`", before) && (after == '\0' || strchr(" \t\n;&|)`", after)))
                        return true;
        }
        return false;
}

bool argv_is_go_test(const char *const *argv)
{
        const char *base;

        if (!argv || !argv[0] || !argv[1])
                return false;
        base = base_of(argv[0]);
        if (!strcmp(base, "go"))
                return !strcmp(argv[1], "test");
        /* sh -c 'go test ./...', bash -c, make's own shells are not looked into */
        if ((!strcmp(base, "sh") || !strcmp(base, "bash") || !strcmp(base, "dash")) &&
            !strcmp(argv[1], "-c") && argv[2])
                return script_runs_go_test(argv[2]);
        return false;
}

static bool is_dir(const char *path)
{
        struct stat st;

        return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int mkdirs(char *path)
{
        for (char *p = path + 1; (p = strchr(p, '/')); p++) {
                *p = '\0';
                if (mkdir(path, 0700) < 0 && errno != EEXIST) {
                        *p = '/';
                        return -errno;
                }
                *p = '/';
        }
        return mkdir(path, 0700) < 0 && errno != EEXIST ? -errno : 0;
}

static void find_caches(struct ws_config *c)
{
        const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
        const char *modc = getenv("GOMODCACHE"), *gopath = getenv("GOPATH");
        char path[PATH_MAX];

        c->gocache[0] = c->gomodcache[0] = '\0';
        if (xdg && xdg[0] == '/')
                str_printf(c->gocache, PATH_MAX, "%s/heal/go-build", xdg);
        else if (home && home[0] == '/')
                str_printf(c->gocache, PATH_MAX, "%s/.cache/heal/go-build", home);
        if (c->gocache[0] && mkdirs(c->gocache) < 0)
                c->gocache[0] = '\0';
        path[0] = '\0';
        if (modc && modc[0] == '/')
                str_printf(path, sizeof(path), "%s", modc);
        else if (gopath && gopath[0] == '/')
                str_printf(path, sizeof(path), "%.*s/pkg/mod", (int)strcspn(gopath, ":"), gopath);
        else if (home && home[0] == '/')
                str_printf(path, sizeof(path), "%s/go/pkg/mod", home);
        if (path[0] && is_dir(path) && !realpath(path, c->gomodcache))
                c->gomodcache[0] = '\0';
}

int ws_config_init(struct ws_config *c, const heal_repair_opts *o, bool listing, heal_error *err)
{
        static const heal_sandbox_limits defaults = HEAL_SANDBOX_LIMITS_INIT;
        char git[PATH_MAX];
        struct stat st;
        size_t n = 0;

        memset(c, 0, sizeof(*c));
        if (!o->tree || o->tree[0] != '/' || !o->argv || !o->argv[0])
                return heal_error_set(err, -EINVAL, "a tree (absolute) and a command are needed");
        c->tree = c->cwd = o->tree;
        c->limits = o->limits ? *o->limits : defaults;
        if (!o->limits)
                c->limits.wall_ms = 120000;
        c->sandbox_flags = o->sandbox_flags & ~(unsigned)HEAL_SANDBOX_CWD_OVERLAY;
        if (str_printf(git, sizeof(git), "%s/.git", o->tree) == 0 && lstat(git, &st) == 0) {
                c->git_is_dir = S_ISDIR(st.st_mode);
                c->git_is_file = !c->git_is_dir;
        }
        c->go_test = argv_is_go_test(o->argv);
        find_caches(c);
        str_printf(c->env_store[0], sizeof(c->env_store[0]), "GOFLAGS=-count=1 -buildvcs=false%s",
                   listing && c->go_test ? " -v" : "");
        c->env[n++] = c->env_store[0];
        if (c->gocache[0]) {
                str_printf(c->env_store[1], sizeof(c->env_store[1]), "GOCACHE=%s", c->gocache);
                c->env[n++] = c->env_store[1];
        }
        if (c->gomodcache[0]) {
                str_printf(c->env_store[2], sizeof(c->env_store[2]), "GOMODCACHE=%s",
                           c->gomodcache);
                c->env[n++] = c->env_store[2];
        }
        c->env[n++] = "GOPROXY=off";
        c->env[n++] = "GOTOOLCHAIN=local";
        for (size_t i = 0; o->env && o->env[i] && n < WS_ENV_MAX; i++)
                c->env[n++] = o->env[i];
        c->env[n] = NULL;
        return 0;
}
