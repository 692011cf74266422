/* SPDX-License-Identifier: MIT */
/*
 * libheal in a program of your own: `go test ./...` in DIR (default: the current directory),
 * in a sandbox with the default view and a 60 s wall-time limit. Built with the project
 * (build/heal-embed-example); by hand, from the source tree after `meson setup build && ninja
 * -C build`:
 *
 *     cc -Iinclude examples/embed/main.c build/libheal.a -lseccomp -pthread -o embed
 *
 * (the sandbox needs only libseccomp; the model and repair layers also need -ljansson
 * -lxxhash -linih -lpcre2-8 -ldl -lm).
 */
#include <heal/sandbox.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

extern char **environ;

int main(int argc, char **argv)
{
        const char *const cmd[] = { "go", "test", "./...", NULL };
        heal_sandbox_limits lim = HEAL_SANDBOX_LIMITS_INIT;
        heal_error err = HEAL_ERROR_INIT;
        heal_sandbox_result res = { 0 };
        heal_sandbox *sb = NULL;
        char dir[PATH_MAX];
        int r;

        lim.wall_ms = 60000;
        r = heal_sandbox_new(&sb, &err);
        if (r >= 0)
                r = heal_sandbox_set_limits(sb, &lim, &err);
        /* The environment is an allow-list (PATH, LANG, LC_*, TERM, TZ); HOME is not in it, and
         * go wants one for its build cache. */
        if (r >= 0)
                r = heal_sandbox_inherit_env(sb, (const char *const *)environ, &err);
        if (r >= 0)
                r = heal_sandbox_setenv(sb, "HOME", "/tmp", &err);
        if (r >= 0 && argc > 1 && !realpath(argv[1], dir)) {
                perror(argv[1]);
                heal_sandbox_free(sb);
                return 125;
        }
        if (r >= 0 && argc > 1) /* the sandbox's working directory, shared read-write */
                r = heal_sandbox_set_cwd(sb, dir, &err);
        if (r >= 0)
                r = heal_sandbox_run(sb, cmd, &res, &err);
        if (r < 0) {
                fprintf(stderr, "embed: %s\n", err.msg);
                heal_sandbox_free(sb);
                return 125;
        }
        printf("%s, exit %d, %llu ms\n", heal_sandbox_status_to_string(res.status), res.exit_code,
               (unsigned long long)res.wall_ms);
        fputs(res.out ? res.out : "", stdout);
        fputs(res.err ? res.err : "", stderr);
        r = res.status == HEAL_STATUS_OK ? 0 : 1;
        heal_sandbox_result_release(&res);
        heal_sandbox_free(sb);
        return r;
}
