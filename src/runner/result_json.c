/* SPDX-License-Identifier: MIT */
/*
 * The JSON documents of a sandbox run (heal run --json, docs/json.md) and of an exec (heal exec
 * --json, the MCP run_code tool, docs/exec.md). Program output is not always UTF-8: invalid
 * bytes become U+FFFD so the document stays valid.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "core/json.h"
#include "runner/result-json.h"

static json_t *limits_hit_json(unsigned bits)
{
        json_t *a = json_array();

        for (unsigned b = 1; b && b <= HEAL_LIMIT_FSIZE; b <<= 1)
                if (bits & b)
                        json_array_append_new(a, json_string(heal_sandbox_limit_name(b)));
        return a;
}

static json_t *procs_json(const heal_sandbox_result *res)
{
        json_t *a = json_array();

        for (size_t i = 0; i < res->n_procs; i++) {
                const heal_sandbox_proc *p = &res->procs[i];
                char state[2] = { p->state ? p->state : '?', 0 };

                /* A process may name itself with any bytes: sanitized like the output. */
                json_array_append_new(
                        a, json_pack("{s:i,s:i,s:s,s:o,s:o,s:o,s:I}", "pid", p->pid, "ppid",
                                     p->ppid, "state", state, "comm",
                                     json_string_bytes(p->comm, strlen(p->comm)), "wchan",
                                     json_string_bytes(p->wchan, strlen(p->wchan)), "syscall",
                                     json_string_bytes(p->syscall, strlen(p->syscall)), "cpu_ms",
                                     (json_int_t)p->cpu_ms));
        }
        return a;
}

json_t *sandbox_result_json(const heal_sandbox_result *res)
{
        static const char *const enforce[] = { "rlimit", "cgroup_v1", "cgroup_v2" };
        const heal_sandbox_timing *t = &res->timing;

        return json_pack(
                "{s:s,s:i,s:i,s:o,s:s,s:I,s:I,s:I,s:o,s:b,s:o,s:b,s:o,s:o,s:{s:I,s:I,s:I,s:I,s:I}}",
                "status", heal_sandbox_status_to_string(res->status), "exit_code", res->exit_code,
                "signal", res->signal, "limits_hit", limits_hit_json(res->limits_hit),
                "enforcement", enforce[res->enforcement], "wall_ms", (json_int_t)res->wall_ms,
                "cpu_ms", (json_int_t)res->cpu_ms, "memory_peak_bytes",
                (json_int_t)res->mem_peak_bytes, "stdout",
                json_string_bytes(res->out, res->out_len), "stdout_truncated", res->out_truncated,
                "stderr", json_string_bytes(res->err, res->err_len), "stderr_truncated",
                res->err_truncated, "message",
                json_string_bytes(res->message, strlen(res->message)), "processes", procs_json(res),
                "timing_us", "clone", (json_int_t)t->clone_us, "maps", (json_int_t)t->maps_us,
                "mounts", (json_int_t)t->mounts_us, "exec", (json_int_t)t->exec_us, "end",
                (json_int_t)t->end_us);
}

/* One stage of heal exec, Piston-shaped: exit_code is null when a signal ended the stage and
 * signal null when it exited. */
static json_t *stage_json(const heal_runner_stage *st)
{
        static const char *const enforce[] = { "rlimit", "cgroup_v1", "cgroup_v2" };
        const heal_sandbox_result *r = &st->res;
        const char *sig = r->signal ? sigabbrev_np(r->signal) : NULL;
        char signame[32] = "";

        if (!st->ran)
                return json_null();
        if (sig)
                snprintf(signame, sizeof(signame), "SIG%s", sig);
        return json_pack("{s:s,s:o,s:o,s:b,s:b,s:o,s:o,s:o,s:I,s:I,s:I,s:o,s:s,s:o,s:o}", "status",
                         heal_sandbox_status_to_string(r->status), "stdout",
                         json_string_bytes(r->out, r->out_len), "stderr",
                         json_string_bytes(r->err, r->err_len), "stdout_truncated",
                         r->out_truncated, "stderr_truncated", r->err_truncated, "exit_code",
                         r->signal ? json_null() : json_integer(r->exit_code), "signal",
                         r->signal ? json_integer(r->signal) : json_null(), "signal_name",
                         *signame ? json_string(signame) : json_null(), "wall_ms",
                         (json_int_t)r->wall_ms, "cpu_ms", (json_int_t)r->cpu_ms, "memory_bytes",
                         (json_int_t)r->mem_peak_bytes, "limits_hit",
                         limits_hit_json(r->limits_hit), "enforcement", enforce[r->enforcement],
                         "message", json_string_bytes(r->message, strlen(r->message)), "processes",
                         procs_json(r));
}

json_t *runner_result_json(const heal_runner_result *res)
{
        return json_pack("{s:s,s:s?,s:o,s:o,s:o}", "status",
                         heal_exec_status_to_string(res->status), "language", res->lang, "message",
                         json_string_bytes(res->message, strlen(res->message)), "compile",
                         stage_json(&res->compile), "run", stage_json(&res->run));
}
