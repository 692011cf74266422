/* SPDX-License-Identifier: MIT */
/*
 * run_code (one program through the runner, as heal exec runs it) and run_command (an
 * argument vector in the sandbox's default view, the server's directory as an overlay whose
 * writes vanish, as 'heal run --overlay-cwd' runs it). Bad arguments are tool errors whose
 * message names the field (2025-11-25 server/tools.mdx: input validation errors are tool
 * execution errors, which models can correct).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/util.h"
#include "mcp/mcp-internal.h"
#include "runner/result-json.h"
#include "runner/tool.h"

#define COMMAND_WALL_MS  60000
#define COMMAND_MEM      (512ULL << 20)
#define COMMAND_ARGV_MAX 4096

extern char **environ;

static void on_stage(void *data, const char *stage)
{
        mcp_call_stage(data, !strcmp(stage, "compile") ? "compiling" : "running");
}

int mcp_run_code(struct mcp_call *c, json_t **ret, bool *ret_is_error, heal_error *err)
{
        heal_mcp_server *s = c->srv;
        struct run_code_caps caps = { .max_wall_ms = s->o.max_wall_ms,
                                      .max_mem_bytes = s->o.max_mem_bytes,
                                      .max_out_bytes = s->o.max_out_bytes,
                                      .share_net = s->o.share_net };
        struct run_code_call rc;
        heal_runner_result res = { 0 };
        heal_runner *rn = NULL;
        int r = run_code_parse(&rc, c->arguments, &s->o.run_limits, &s->o.compile_limits, &caps,
                               err);

        if (r < 0)
                return heal_error_prefix(err, r, "run_code");
        rc.ro.on_stage = on_stage;
        rc.ro.stage_data = c;
        r = heal_runner_new(&rn, err);
        if (r >= 0) {
                mcp_call_attach(c, rn, NULL, -1);
                r = heal_runner_exec(&res, rn, &rc.ro, err);
                mcp_call_attach(c, NULL, NULL, -1);
        }
        heal_runner_free(rn);
        run_code_release(&rc);
        if (r < 0)
                return r;
        *ret = runner_result_json(&res);
        *ret_is_error = res.status != HEAL_EXEC_OK;
        heal_runner_result_release(&res);
        return *ret ? 0 : heal_error_set(err, -ENOMEM, "out of memory");
}

int mcp_open_dir(int *ret_fd, char *out, size_t len, const heal_mcp_server *s, json_t *args,
                 heal_error *err)
{
        struct open_how how = { .flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
                                .resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS };
        json_t *d = json_object_get(args, "directory");
        const char *rel = json_string_value(d);
        _cleanup_close_ int root = -1;
        char link[64];
        ssize_t n;
        int fd;

        if (d && !json_is_null(d) && !rel)
                return heal_error_set(err, -EINVAL, "'directory' must be a string");
        if (rel && rel[0] == '/')
                return heal_error_set(err, -EINVAL,
                                      "'directory' is relative to the server's directory '%s'",
                                      s->root);
        root = open(s->root, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (root < 0)
                return heal_error_set(err, -errno, "the server's directory '%s': %s", s->root,
                                      strerror(errno));
        if (!rel || !*rel)
                fd = TAKE_FD(root);
        else
                fd = (int)syscall(SYS_openat2, root, rel, &how, sizeof(how));
        if (fd < 0 && errno == EXDEV)
                return heal_error_set(err, -EPERM,
                                      "'directory' '%.200s' leads out of the server's directory",
                                      rel);
        if (fd < 0)
                return heal_error_set(err, -errno, "'directory' '%.200s': %s", rel,
                                      strerror(errno));
        snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
        n = readlink(link, out, len - 1);
        if (n < 0 || (size_t)n >= len - 1) {
                int r = n < 0 ? -errno : -ENAMETOOLONG;

                close(fd);
                return heal_error_set(err, r, "'directory': %s", strerror(-r));
        }
        out[n] = '\0';
        *ret_fd = fd;
        return 0;
}

static int limits_for(heal_sandbox_limits *l, const heal_mcp_server *s, json_t *args,
                      heal_error *err)
{
        uint64_t ms, mb;
        int r = tool_arg_uint(&ms, args, "timeout_ms", UINT64_MAX, err);

        if (r >= 0)
                r = tool_arg_uint(&mb, args, "memory_mb", UINT64_MAX, err);
        if (r < 0)
                return r;
        *l = (heal_sandbox_limits)HEAL_SANDBOX_LIMITS_INIT;
        l->wall_ms = ms ? MIN(ms, s->o.max_wall_ms)
                        : (s->o.run_limits.wall_ms ? s->o.run_limits.wall_ms : COMMAND_WALL_MS);
        l->mem_max_bytes =
                mb ? MIN(mb, s->o.max_mem_bytes >> 20) << 20
                   : (s->o.run_limits.mem_max_bytes ? s->o.run_limits.mem_max_bytes : COMMAND_MEM);
        l->cpu_ms = s->o.run_limits.cpu_ms;
        l->out_max_bytes = s->o.max_out_bytes;
        return 0;
}

/* The command's stdin from "stdin" into *@ret: a memfd, or -1. */
static int stdin_fd(int *ret, json_t *args, heal_error *err)
{
        json_t *v = json_object_get(args, "stdin");
        int fd;

        *ret = -1;
        if (!v || json_is_null(v))
                return 0;
        if (!json_is_string(v))
                return heal_error_set(err, -EINVAL, "'stdin' must be a string");
        fd = memfd_with_data("heal-mcp-stdin", json_string_value(v), json_string_length(v));
        if (fd < 0)
                return heal_error_set(err, fd, "stdin: %s", strerror(-fd));
        *ret = fd;
        return 0;
}

static int sandbox_for(heal_sandbox **ret, const heal_mcp_server *s, json_t *args, int dirfd,
                       heal_error *err)
{
        heal_sandbox_limits lim;
        heal_sandbox *sb = NULL;
        unsigned flags = HEAL_SANDBOX_CWD_OVERLAY | (s->o.share_net ? HEAL_SANDBOX_SHARE_NET : 0);
        int r = limits_for(&lim, s, args, err);

        if (r >= 0)
                r = heal_sandbox_new(&sb, err);
        if (r >= 0 && (r = heal_sandbox_set_limits(sb, &lim, err)) >= 0 &&
            (r = heal_sandbox_set_flags(sb, flags, err)) >= 0 &&
            (r = heal_sandbox_inherit_env(sb, (const char *const *)environ, err)) >= 0 &&
            (r = heal_sandbox_setenv(sb, "HOME", "/tmp", err)) >= 0)
                r = heal_sandbox_set_cwd_fd(sb, dirfd, err); /* the one checked beneath root */
        if (r < 0) {
                heal_sandbox_free(sb);
                return r;
        }
        *ret = sb;
        return 0;
}

int mcp_run_command(struct mcp_call *c, json_t **ret, bool *ret_is_error, heal_error *err)
{
        static const char *const keys[] = { "argv",       "directory", "stdin",
                                            "timeout_ms", "memory_mb", NULL };
        heal_sandbox *sb = NULL;
        heal_sandbox_result res = { 0 };
        _cleanup_free_ const char **argv = NULL;
        _cleanup_close_ int in = -1, dirfd = -1;
        char dir[PATH_MAX];
        int r = tool_args_known(c->arguments, keys, err);

        if (r >= 0)
                r = tool_arg_strings(&argv, NULL, c->arguments, "argv", 1, COMMAND_ARGV_MAX, err);
        if (r >= 0)
                r = mcp_open_dir(&dirfd, dir, sizeof(dir), c->srv, c->arguments, err);
        if (r >= 0)
                r = stdin_fd(&in, c->arguments, err);
        if (r >= 0)
                r = sandbox_for(&sb, c->srv, c->arguments, dirfd, err);
        if (r < 0)
                return heal_error_prefix(err, r, "run_command");
        if (in >= 0)
                heal_sandbox_set_stdin_fd(sb, in);
        mcp_call_stage(c, "running");
        mcp_call_attach(c, NULL, sb, -1);
        r = heal_sandbox_run(sb, argv, &res, err);
        mcp_call_attach(c, NULL, NULL, -1);
        heal_sandbox_free(sb);
        if (r < 0)
                return r;
        *ret = sandbox_result_json(&res);
        *ret_is_error = res.status != HEAL_STATUS_OK;
        heal_sandbox_result_release(&res);
        return *ret ? 0 : heal_error_set(err, -ENOMEM, "out of memory");
}
