/* SPDX-License-Identifier: MIT */
/*
 * Turning what the supervisor saw into a verdict. Order of precedence: what heal itself stopped
 * (cancel, output cap, wall time), then a setup failure, then what the kernel did (OOM kill,
 * SIGXCPU), then the command's own exit status or signal. Model: isolate(1) META-FILES.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "core/util.h"
#include "run-internal.h"

/* "64 MiB (67108864 bytes)": a size as given and exactly. */
static const char *human_size(char *buf, size_t len, uint64_t bytes)
{
        static const char *const units[] = { "KiB", "MiB", "GiB", "TiB" };
        size_t u = 0;
        double v = (double)bytes / 1024;

        if (bytes < 1024) {
                snprintf(buf, len, "%llu bytes", (unsigned long long)bytes);
                return buf;
        }
        while (v >= 1024 && u + 1 < sizeof(units) / sizeof(units[0]))
                v /= 1024, u++;
        snprintf(buf, len, "%.*f %s (%llu bytes)", v == (double)(uint64_t)v ? 0 : 1, v, units[u],
                 (unsigned long long)bytes);
        return buf;
}

static void fill_usage(struct run *run)
{
        heal_sandbox_result *res = run->res;
        const struct child_clock *c = run->sb->clock;
        uint64_t peak = 0;
        bool oom = false, pids_hit = false;

        res->wall_ms = (now_ns() - run->start_ns) / 1000000;
        res->timing.end_us = (now_ns() - run->start_ns) / 1000;
        if (c && c->maps_ns > run->start_ns)
                res->timing.maps_us = (c->maps_ns - run->start_ns) / 1000;
        if (c && c->mounts_ns > run->start_ns)
                res->timing.mounts_us = (c->mounts_ns - run->start_ns) / 1000;
        if (c && c->exec_ns > run->start_ns)
                res->timing.exec_us = (c->exec_ns - run->start_ns) / 1000;
        const struct rusage *ru = run->have_done ? &run->done_ru : &run->ru;

        res->cpu_ms = (uint64_t)ru->ru_utime.tv_sec * 1000 + ru->ru_utime.tv_usec / 1000 +
                      (uint64_t)ru->ru_stime.tv_sec * 1000 + ru->ru_stime.tv_usec / 1000;
        res->mem_peak_bytes = (uint64_t)ru->ru_maxrss * 1024;
        res->enforcement = run->cg->mode;
        cgroup_collect(run->cg, &peak, &oom, &pids_hit);
        if (peak)
                res->mem_peak_bytes = peak;
        if (oom)
                res->limits_hit |= HEAL_LIMIT_MEMORY;
        if (pids_hit)
                res->limits_hit |= HEAL_LIMIT_PIDS;
}

static void verdict_from_wstatus(struct run *run)
{
        heal_sandbox_result *res = run->res;
        const heal_sandbox_limits *l = &run->sb->limits;
        bool oom = res->limits_hit & HEAL_LIMIT_MEMORY;
        int st = run->wstatus;

        if (WIFEXITED(st)) {
                res->exit_code = WEXITSTATUS(st);
                res->status = res->exit_code == 0 ? HEAL_STATUS_OK
                              : oom               ? HEAL_STATUS_MEMORY_LIMIT
                                                  : HEAL_STATUS_EXIT_NONZERO;
                return;
        }
        res->signal = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
        res->exit_code = 128 + res->signal;
        if (res->signal == SIGXCPU ||
            (res->signal == SIGKILL && l->cpu_ms && res->cpu_ms >= l->cpu_ms && !oom)) {
                res->limits_hit |= HEAL_LIMIT_CPU;
                res->status = HEAL_STATUS_CPU_LIMIT;
        } else if (res->signal == SIGKILL && oom) {
                res->status = HEAL_STATUS_MEMORY_LIMIT;
        } else {
                res->status = HEAL_STATUS_SIGNALED;
        }
}

static void describe(struct run *run)
{
        heal_sandbox_result *res = run->res;
        const heal_sandbox_limits *l = &run->sb->limits;
        char *m = res->message, size[48];
        size_t n = sizeof(res->message);

        switch (res->status) {
        case HEAL_STATUS_TIMEOUT:
                snprintf(m, n, "wall time limit of %llu ms reached; stopped after %llu ms",
                         (unsigned long long)l->wall_ms, (unsigned long long)res->wall_ms);
                break;
        case HEAL_STATUS_OUTPUT_LIMIT:
                snprintf(m, n, "output limit of %s (stdout + stderr) reached",
                         human_size(size, sizeof(size), l->out_max_bytes));
                break;
        case HEAL_STATUS_MEMORY_LIMIT:
                snprintf(m, n, "memory limit of %s reached (killed by the cgroup's OOM killer)",
                         human_size(size, sizeof(size), l->mem_max_bytes));
                break;
        case HEAL_STATUS_CPU_LIMIT:
                snprintf(m, n, "cpu time limit of %llu ms reached", (unsigned long long)l->cpu_ms);
                break;
        case HEAL_STATUS_CANCELED:
                snprintf(m, n, "canceled");
                break;
        case HEAL_STATUS_SIGNALED:
                snprintf(m, n, "killed by signal %d (%s)", res->signal, strsignal(res->signal));
                break;
        default:
                break;
        }
}

int finish(struct run *run, heal_error *err)
{
        heal_sandbox_result *res = run->res;

        (void)err;
        fill_usage(run);
        res->out_truncated = run->out.truncated;
        res->err_truncated = run->errb.truncated;
        res->out = heal_buf_detach(&run->out, &res->out_len);
        res->err = heal_buf_detach(&run->errb, &res->err_len);
        if (!res->out || !res->err)
                return heal_error_set(err, -ENOMEM, "out of memory");
        if (run->have_exit)
                verdict_from_wstatus(run);
        if (run->stop_reason != HEAL_STATUS_OK) {
                res->status = run->stop_reason;
                if (!run->have_exit) { /* heal killed it before it could exit on its own */
                        res->signal = SIGKILL;
                        res->exit_code = 128 + SIGKILL;
                }
        } else if (run->attach_error < 0) {
                res->status = HEAL_STATUS_SETUP_ERROR;
                res->exit_code = 125;
                snprintf(res->message, sizeof(res->message),
                         "cannot move the sandbox into its cgroup ('%s'): %s; memory and "
                         "process limits would not hold",
                         run->cg->mem_dir ? run->cg->mem_dir : run->cg->pids_dir,
                         strerror(-run->attach_error));
                return 0;
        } else if (run->have_error) {
                res->status = HEAL_STATUS_SETUP_ERROR;
                if (run->error.step != STEP_EXEC)
                        res->exit_code = 125;
                else if (!run->have_exit)
                        res->exit_code = run->error.err == ENOENT ? 127 : 126;
                userns_explain_report(res->message, sizeof(res->message), &run->error,
                                      run->view ? run->view : run->sb->entries,
                                      run->view ? run->n_view : run->sb->n_entries, run->pc.ops);
                return 0;
        } else if (!run->have_exit) {
                res->status = (res->limits_hit & HEAL_LIMIT_MEMORY) ? HEAL_STATUS_MEMORY_LIMIT
                                                                    : HEAL_STATUS_SETUP_ERROR;
                res->exit_code = 125;
                snprintf(res->message, sizeof(res->message),
                         "the sandbox's init process died before the command finished");
        }
        describe(run);
        return 0;
}
