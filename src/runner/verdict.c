/* SPDX-License-Identifier: MIT */
/* From the stages' sandbox results to the exec's status and one-line message. */
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/util.h"
#include "runner/runner-internal.h"

/* What runtimes print when an allocation fails: Go, glibc's perror/strerror, Python, C++. */
static const char *const oom_words[] = {
        "fatal error: runtime: out of memory",
        "Cannot allocate memory",
        "MemoryError",
        "std::bad_alloc",
        "out of memory",
};

static bool says_out_of_memory(const heal_sandbox_result *r)
{
        for (size_t i = 0; i < ELEMENTSOF(oom_words); i++)
                if ((r->err && strstr(r->err, oom_words[i])) ||
                    (r->out && strstr(r->out, oom_words[i])))
                        return true;
        return false;
}

static void say(heal_runner_result *res, heal_exec_status st, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

static void say(heal_runner_result *res, heal_exec_status st, const char *fmt, ...)
{
        va_list ap;

        res->status = st;
        va_start(ap, fmt);
        vsnprintf(res->message, sizeof(res->message), fmt, ap);
        va_end(ap);
}

static void setup_error(heal_runner_result *res, const heal_sandbox_result *r, const char *what,
                        const char *tool)
{
        if (r->exit_code == 127)
                say(res, HEAL_EXEC_INTERNAL_ERROR,
                    "%s: '%s' was not found in the sandbox (it sees the host's /usr, /bin, /sbin, "
                    "/lib*, /etc and /opt, and searches PATH there): install it there; 'heal "
                    "doctor' lists the toolchains it finds",
                    what, tool);
        else
                say(res, HEAL_EXEC_INTERNAL_ERROR, "%s: %s", what, r->message);
}

bool verdict_compile(heal_runner_result *res, const char *tool)
{
        const heal_sandbox_result *r = &res->compile.res;

        switch (r->status) {
        case HEAL_STATUS_OK:
                return true;
        case HEAL_STATUS_EXIT_NONZERO:
                say(res, HEAL_EXEC_COMPILE_ERROR, "compile failed with exit status %d",
                    r->exit_code);
                break;
        case HEAL_STATUS_SETUP_ERROR:
                setup_error(res, r, "compile stage", tool);
                break;
        case HEAL_STATUS_CANCELED:
                say(res, HEAL_EXEC_CANCELED, "the build was stopped before it finished");
                break;
        default: /* a limit or a signal: the build did not succeed */
                say(res, HEAL_EXEC_COMPILE_ERROR,
                    "compile stage stopped: %s (see "
                    "--compile-timeout, --compile-memory)",
                    r->message);
                break;
        }
        return false;
}

static void verdict_timeout(heal_runner_result *res, const heal_sandbox_result *r)
{
        /* Whether it spun or waited tells a loop from a deadlock, a sleep or a SIGSTOP; a quarter
         * of the wall time leaves room for a busy machine. */
        say(res, HEAL_EXEC_TIMEOUT, "%s; the program used %llu ms of CPU (%s)", r->message,
            (unsigned long long)r->cpu_ms,
            r->cpu_ms * 4 >= r->wall_ms
                    ? "busy: an endless loop or too much work"
                    : "mostly not running: blocked, sleeping, stopped, or a busy machine");
}

void verdict_run(heal_runner_result *res, const char *tool, uint64_t mem_max_bytes)
{
        const heal_sandbox_result *r = &res->run.res;

        switch (r->status) {
        case HEAL_STATUS_OK:
                res->status = HEAL_EXEC_OK;
                res->message[0] = '\0';
                break;
        case HEAL_STATUS_EXIT_NONZERO:
                if (r->enforcement == HEAL_ENFORCE_RLIMIT && says_out_of_memory(r))
                        say(res, HEAL_EXEC_MEMORY_LIMIT,
                            "the program ran out of memory (limit %llu MiB per process, "
                            "RLIMIT_DATA) and exited with status %d",
                            (unsigned long long)(mem_max_bytes >> 20), r->exit_code);
                else
                        say(res, HEAL_EXEC_RUNTIME_ERROR, "exit status %d", r->exit_code);
                break;
        case HEAL_STATUS_SIGNALED:
                say(res, HEAL_EXEC_RUNTIME_ERROR, "killed by signal %d (SIG%s: %s)", r->signal,
                    sigabbrev_np(r->signal) ? sigabbrev_np(r->signal) : "?", strsignal(r->signal));
                break;
        case HEAL_STATUS_TIMEOUT:
                verdict_timeout(res, r);
                break;
        case HEAL_STATUS_MEMORY_LIMIT:
                say(res, HEAL_EXEC_MEMORY_LIMIT, "%s", r->message);
                break;
        case HEAL_STATUS_CPU_LIMIT:
                say(res, HEAL_EXEC_CPU_LIMIT, "%s", r->message);
                break;
        case HEAL_STATUS_OUTPUT_LIMIT:
                say(res, HEAL_EXEC_OUTPUT_LIMIT, "%s; the output kept is truncated", r->message);
                break;
        case HEAL_STATUS_CANCELED:
                say(res, HEAL_EXEC_CANCELED, "the program was stopped before it finished");
                break;
        case HEAL_STATUS_SETUP_ERROR:
        default:
                setup_error(res, r, "run stage", tool);
                break;
        }
}
