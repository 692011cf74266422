/* SPDX-License-Identifier: MIT */
/*
 * The sandbox of each stage, and running one stage in it.
 *
 * Both stages see the default view (host system directories read-only, fresh /proc, /dev and
 * /tmp, no network but loopback) with the program's directory as the working directory. The
 * compile stage shares it read-write, plus heal's own Go build cache read-write (builds stay
 * warm; never the user's cache, which the user's own builds trust) and the user's module cache
 * read-only. The run stage gets neither cache (the program could plant cache entries later
 * builds would trust) and sees its directory as an overlay: writes go to a capped tmpfs and are
 * discarded, so nothing on the host is writable to the program.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/util.h"
#include "runner/runner-internal.h"

extern char **environ;

/* Limits of the sandbox beyond the four a caller sets: processes and threads (go build runs
 * compilers in parallel), the largest file, the tmpfs size of /tmp and the overlay's upper. */
#define COMPILE_PIDS_MAX  2048ULL
#define RUN_PIDS_MAX      512ULL
#define COMPILE_FSIZE_MAX (512ULL << 20)
#define RUN_FSIZE_MAX     (64ULL << 20)
#define RUN_TMPFS_MAX     (256ULL << 20)

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

/* heal's Go build cache (made when missing) and the user's module cache; "" when none. */
static void find_caches(char gocache[PATH_MAX], char gomodcache[PATH_MAX])
{
        const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
        const char *modc = getenv("GOMODCACHE"), *gopath = getenv("GOPATH");
        char path[PATH_MAX] = "";
        struct stat st;

        gocache[0] = gomodcache[0] = '\0';
        if (xdg && xdg[0] == '/')
                str_printf(gocache, PATH_MAX, "%s/heal/go-build", xdg);
        else if (home && home[0] == '/')
                str_printf(gocache, PATH_MAX, "%s/.cache/heal/go-build", home);
        if (gocache[0] && mkdirs(gocache) < 0)
                gocache[0] = '\0';
        if (modc && modc[0] == '/')
                str_printf(path, sizeof(path), "%s", modc);
        else if (gopath && gopath[0] == '/')
                str_printf(path, sizeof(path), "%.*s/pkg/mod", (int)strcspn(gopath, ":"), gopath);
        else if (home && home[0] == '/')
                str_printf(path, sizeof(path), "%s/go/pkg/mod", home);
        if (path[0] && stat(path, &st) == 0 && S_ISDIR(st.st_mode) && !realpath(path, gomodcache))
                gomodcache[0] = '\0';
}

static int add_caches(heal_sandbox *sb, heal_error *err)
{
        static const char *const ro[] = { "ro", NULL };
        char gocache[PATH_MAX], gomodcache[PATH_MAX];
        int r = 0;

        find_caches(gocache, gomodcache);
        if (gocache[0]) {
                r = heal_sandbox_add_mount(sb, "bind", gocache, gocache, NULL, err);
                if (r >= 0)
                        r = heal_sandbox_setenv(sb, "GOCACHE", gocache, err);
        }
        if (r >= 0 && gomodcache[0]) {
                r = heal_sandbox_add_mount(sb, "bind", gomodcache, gomodcache, ro, err);
                if (r >= 0)
                        r = heal_sandbox_setenv(sb, "GOMODCACHE", gomodcache, err);
        }
        return r;
}

int stage_sandbox_new(heal_sandbox **ret, bool compile, heal_error *err)
{
        static const char *const env[][2] = {
                { "HOME", "/tmp" },
                { "GOFLAGS", "-mod=mod -buildvcs=false" },
                { "GOTOOLCHAIN", "local" },
                { "GOPROXY", "off" },
                /* output written before a timeout or a crash is not lost in a buffer */
                { "PYTHONUNBUFFERED", "1" },
                { "PYTHONDONTWRITEBYTECODE", "1" },
        };
        heal_sandbox *sb = NULL;
        int r = heal_sandbox_new(&sb, err);

        if (r >= 0)
                r = heal_sandbox_inherit_env(sb, (const char *const *)environ, err);
        for (size_t i = 0; r >= 0 && i < ELEMENTSOF(env); i++)
                r = heal_sandbox_setenv(sb, env[i][0], env[i][1], err);
        /* mounts on top of the default view: the flag is checked as each one is added */
        if (r >= 0 && compile)
                r = heal_sandbox_set_flags(sb, HEAL_SANDBOX_EXTEND_DEFAULT, err);
        if (r >= 0 && compile)
                r = add_caches(sb, err);
        if (r < 0) {
                heal_sandbox_free(sb);
                return r;
        }
        *ret = sb;
        return 0;
}

int stage_set_net_env(heal_sandbox *sb, bool share_net, heal_error *err)
{
        /* with the network, Go's own default proxy (or the user's, were it allow-listed) */
        return heal_sandbox_setenv(sb, "GOPROXY", share_net ? NULL : "off", err);
}

static heal_sandbox_limits stage_limits(const struct runner_stage_io *io)
{
        heal_sandbox_limits l = HEAL_SANDBOX_LIMITS_INIT;

        l.wall_ms = io->limits->wall_ms;
        l.cpu_ms = io->limits->cpu_ms;
        l.mem_max_bytes = io->limits->mem_max_bytes;
        l.out_max_bytes = io->limits->out_max_bytes;
        l.pids_max = io->overlay ? RUN_PIDS_MAX : COMPILE_PIDS_MAX;
        l.fsize_max_bytes = io->overlay ? RUN_FSIZE_MAX : COMPILE_FSIZE_MAX;
        if (io->overlay)
                l.tmpfs_max_bytes = RUN_TMPFS_MAX;
        return l;
}

int stage_run(heal_sandbox *sb, heal_runner_stage *st, const struct runner_stage_io *io,
              heal_error *err)
{
        heal_sandbox_limits l = stage_limits(io);
        unsigned flags = io->overlay ? HEAL_SANDBOX_CWD_OVERLAY : HEAL_SANDBOX_EXTEND_DEFAULT;
        int r;

        if (io->share_net)
                flags |= HEAL_SANDBOX_SHARE_NET;
        r = heal_sandbox_set_limits(sb, &l, err);
        if (r >= 0)
                r = heal_sandbox_set_flags(sb, flags, err);
        if (r >= 0)
                r = heal_sandbox_set_cwd(sb, io->dir, err);
        if (r >= 0)
                r = stage_set_net_env(sb, io->share_net, err);
        if (r < 0)
                return r;
        heal_sandbox_set_stdin_fd(sb, io->stdin_fd);
        r = heal_sandbox_run(sb, io->argv, &st->res, err);
        if (r < 0)
                return r;
        st->ran = true;
        return 0;
}
