/* SPDX-License-Identifier: MIT */
/*
 * heal_runner_exec(): files into a private directory, the compile stage, the run stage, the
 * verdict. The verdict follows the run stage's sandbox status, with two refinements: a compile
 * stage that fails for any reason is a compile error (Judge0 reports a compile timeout the same
 * way), and under RLIMIT_DATA enforcement a run that fails saying it ran out of memory is a
 * memory limit, since no cgroup saw it (E2B#339: exhaustion must not look like something else).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/util.h"
#include "runner/runner-internal.h"

struct heal_runner {
        heal_sandbox *compile_sb, *run_sb;
        volatile sig_atomic_t canceled;
};

int heal_runner_new(heal_runner **ret, heal_error *err)
{
        heal_runner *rn;
        int r;

        if (!ret)
                return heal_error_set(err, -EINVAL, "invalid argument");
        rn = calloc(1, sizeof(*rn));
        if (!rn)
                return heal_error_set(err, -ENOMEM, "out of memory");
        r = stage_sandbox_new(&rn->compile_sb, true, err);
        if (r >= 0)
                r = stage_sandbox_new(&rn->run_sb, false, err);
        if (r < 0) {
                heal_runner_free(rn);
                return r;
        }
        *ret = rn;
        return 0;
}

heal_runner *heal_runner_free(heal_runner *rn)
{
        if (!rn)
                return NULL;
        heal_sandbox_free(rn->compile_sb);
        heal_sandbox_free(rn->run_sb);
        free(rn);
        return NULL;
}

void heal_runner_cancel(heal_runner *rn)
{
        if (!rn)
                return;
        rn->canceled = 1;
        heal_sandbox_cancel(rn->compile_sb);
        heal_sandbox_cancel(rn->run_sb);
}

const char *heal_exec_status_to_string(heal_exec_status s)
{
        static const char *const names[] = {
                [HEAL_EXEC_OK] = "ok",
                [HEAL_EXEC_COMPILE_ERROR] = "compile_error",
                [HEAL_EXEC_RUNTIME_ERROR] = "runtime_error",
                [HEAL_EXEC_TIMEOUT] = "timeout",
                [HEAL_EXEC_MEMORY_LIMIT] = "memory_limit",
                [HEAL_EXEC_CPU_LIMIT] = "cpu_limit",
                [HEAL_EXEC_OUTPUT_LIMIT] = "output_limit",
                [HEAL_EXEC_INTERNAL_ERROR] = "internal_error",
                [HEAL_EXEC_CANCELED] = "canceled",
        };

        if ((int)s < 0 || (size_t)s >= ELEMENTSOF(names))
                return NULL;
        return names[s];
}

void heal_runner_result_release(heal_runner_result *res)
{
        if (!res)
                return;
        heal_sandbox_result_release(&res->compile.res);
        heal_sandbox_result_release(&res->run.res);
        memset(res, 0, sizeof(*res));
}

static heal_runner_limits merge_limits(const heal_runner_limits *given,
                                       const heal_runner_limits *def)
{
        heal_runner_limits l = *def;

        if (given->wall_ms)
                l.wall_ms = given->wall_ms;
        if (given->cpu_ms)
                l.cpu_ms = given->cpu_ms;
        if (given->mem_max_bytes)
                l.mem_max_bytes = given->mem_max_bytes;
        if (given->out_max_bytes)
                l.out_max_bytes = given->out_max_bytes;
        return l;
}

static bool has_suffix(const char *s, const char *suffix)
{
        size_t n = strlen(s), k = strlen(suffix);

        return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* The stage's argv from the driver's template: "@sources", "@main", then @args. Borrowed
 * strings only; the caller frees the array. */
static int build_argv(const char ***ret, const char *const *tmpl, const heal_runner_opts *o,
                      const struct runner_driver *d, const char *const *args)
{
        size_t n = 0, cap = DRIVER_ARGV_MAX + o->n_files + 1;
        const char **v;

        for (size_t i = 0; args && args[i]; i++)
                cap++;
        v = calloc(cap, sizeof(*v));
        if (!v)
                return -ENOMEM;
        for (size_t i = 0; i < DRIVER_ARGV_MAX && tmpl[i]; i++) {
                if (strcmp(tmpl[i], "@sources") == 0) {
                        for (size_t k = 0; k < o->n_files; k++)
                                if (d->src_ext && has_suffix(o->files[k].name, d->src_ext))
                                        v[n++] = o->files[k].name;
                } else if (strcmp(tmpl[i], "@main") == 0) {
                        v[n++] = o->files[0].name;
                } else {
                        v[n++] = tmpl[i];
                }
        }
        for (size_t i = 0; args && args[i]; i++)
                v[n++] = args[i];
        v[n] = NULL;
        *ret = v;
        return 0;
}

static int check_opts(const struct runner_driver **ret, const heal_runner *rn,
                      const heal_runner_opts *o, heal_error *err)
{
        const struct runner_driver *d;

        if (!rn || !o || !o->files || o->n_files == 0 || !o->files[0].name ||
            (o->stdin_len && !o->stdin_data))
                return heal_error_set(err, -EINVAL, "invalid argument: no files to run");
        if (o->lang) {
                d = driver_find(o->lang);
                if (!d)
                        return heal_error_set(err, -EINVAL, "unknown language '%s' (known: %s)",
                                              o->lang, heal_runner_langs());
        } else {
                d = driver_for_file(o->files[0].name);
                if (!d)
                        return heal_error_set(err, -EINVAL,
                                              "no language for '%s': name the language (known: "
                                              "%s) or use one of their file extensions",
                                              o->files[0].name, heal_runner_langs());
        }
        *ret = d;
        return 0;
}

/* The program's stdin: a memfd holding @stdin_data, the caller's fd, or -1 (/dev/null). */
static int stdin_for(int *ret_fd, int *ret_owned, const heal_runner_opts *o, heal_error *err)
{
        int fd;

        *ret_owned = -1;
        *ret_fd = o->stdin_fd;
        if (!o->stdin_data)
                return 0;
        fd = memfd_with_data("heal-exec-stdin", o->stdin_data, o->stdin_len);
        if (fd < 0)
                return heal_error_set(err, fd, "stdin: %s", strerror(-fd));
        *ret_fd = *ret_owned = fd;
        return 0;
}

static int run_compile(heal_runner *rn, heal_runner_result *res, const struct runner_driver *d,
                       const heal_runner_opts *o, const char *dir, heal_error *err)
{
        heal_runner_limits lim = merge_limits(&o->compile_limits, &d->compile_limits);
        _cleanup_free_ const char **argv = NULL;
        struct runner_stage_io io = {
                .dir = dir,
                .limits = &lim,
                .stdin_fd = -1,
                .share_net = o->share_net,
        };
        int r = build_argv(&argv, d->compile, o, d, NULL);

        if (r < 0)
                return heal_error_set(err, r, "out of memory");
        io.argv = argv;
        if (o->on_stage)
                o->on_stage(o->stage_data, "compile");
        return stage_run(rn->compile_sb, &res->compile, &io, err);
}

static int run_program(heal_runner *rn, heal_runner_result *res, const struct runner_driver *d,
                       const heal_runner_opts *o, const char *dir, heal_error *err)
{
        heal_runner_limits lim = merge_limits(&o->run_limits, &d->run_limits);
        _cleanup_free_ const char **argv = NULL;
        _cleanup_close_ int owned = -1;
        struct runner_stage_io io = {
                .dir = dir,
                .limits = &lim,
                .overlay = true,
                .share_net = o->share_net,
        };
        int r = build_argv(&argv, d->run, o, d, o->args);

        if (r < 0)
                return heal_error_set(err, r, "out of memory");
        r = stdin_for(&io.stdin_fd, &owned, o, err);
        if (r < 0)
                return r;
        io.argv = argv;
        if (o->on_stage)
                o->on_stage(o->stage_data, "run");
        r = stage_run(rn->run_sb, &res->run, &io, err);
        if (r >= 0)
                verdict_run(res, argv[0], lim.mem_max_bytes);
        return r;
}

static int exec_stages(heal_runner_result *res, heal_runner *rn, const struct runner_driver *d,
                       const heal_runner_opts *o, const char *dir, heal_error *err)
{
        int r;

        if (d->compile[0]) {
                r = run_compile(rn, res, d, o, dir, err);
                if (r < 0)
                        return r;
                if (!verdict_compile(res, d->compile[0]))
                        return 0;
        }
        if (rn->canceled) {
                res->status = HEAL_EXEC_CANCELED;
                snprintf(res->message, sizeof(res->message), "canceled");
                return 0;
        }
        return run_program(rn, res, d, o, dir, err);
}

int heal_runner_exec(heal_runner_result *ret_result, heal_runner *rn, const heal_runner_opts *o,
                     heal_error *err)
{
        heal_runner_result res = { 0 };
        const struct runner_driver *d = NULL;
        _cleanup_close_ int dirfd = -1;
        char dir[PATH_MAX];
        int r;

        if (!ret_result)
                return heal_error_set(err, -EINVAL, "invalid argument");
        r = check_opts(&d, rn, o, err);
        if (r < 0 || !d)
                return r < 0 ? r : -EINVAL;
        res.lang = d->name;
        if (rn->canceled) {
                res.status = HEAL_EXEC_CANCELED;
                snprintf(res.message, sizeof(res.message), "canceled");
                *ret_result = res;
                return 0;
        }
        r = files_mkdtemp(dir, &dirfd, err);
        if (r < 0)
                return r;
        r = files_write(dirfd, o->files, o->n_files, err);
        if (r >= 0 && d->prepare)
                r = d->prepare(dirfd, o, err);
        if (r >= 0)
                r = exec_stages(&res, rn, d, o, dir, err);
        (void)files_rmtree(dir); /* best effort: a failure leaves a private 0700 directory */
        if (r < 0) {
                heal_runner_result_release(&res);
                return r;
        }
        *ret_result = res;
        return 0;
}
