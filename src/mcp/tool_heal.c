/* SPDX-License-Identifier: MIT */
/*
 * The heal tool: the main job, run as "heal fix --json [--dry-run] ... -- COMMAND" in a
 * process group of its own. A child process keeps the repair engine's process-wide state
 * (its cancel flag, its signal handling) out of the server, and its JSON report is the
 * documented one (docs/repair.md). A cancellation sends SIGTERM to the group, which heal
 * answers by stopping the search and writing nothing; SIGKILL follows if it has not ended in
 * KILL_AFTER_MS.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "heal/buf.h"

#include "core/json.h"
#include "core/util.h"
#include "mcp/mcp-internal.h"
#include "runner/tool.h"

#define REPORT_MAX    (32u << 20) /* heal's JSON report, read */
#define REPORT_KEPT   (2u << 20)  /* ... and passed on when no larger (its patch is there too) */
#define LOG_KEEP      (8u << 10)  /* the end of its stderr in the result */
#define LOG_MAX       (4u << 20)
#define KILL_AFTER_MS 5000
#define ARGV_MAX      4096

extern char **environ;

struct heal_args {
        const char *argv[ARGV_MAX + 24];
        char requests[32], cost[32], timeout[32], search[32];
        char dir[PATH_MAX];
        int dirfd; /* the project, opened beneath the root: the child fchdir(2)s into it */
};

static int command_argv(struct heal_args *h, size_t *n, json_t *args, heal_error *err)
{
        _cleanup_free_ const char **cmd = NULL;
        size_t len;
        int r = tool_arg_strings(&cmd, &len, args, "command", 1, ARGV_MAX, err);

        if (r < 0)
                return r;
        memcpy(h->argv + *n, cmd, (len + 1) * sizeof(*cmd));
        *n += len;
        return 0;
}

static int positive(json_t *args, const char *key, double *ret, bool integer, heal_error *err)
{
        json_t *v = json_object_get(args, key);

        *ret = 0;
        if (!v || json_is_null(v))
                return 0;
        if ((integer ? !json_is_integer(v) : !json_is_number(v)) || !(json_number_value(v) > 0))
                return heal_error_set(err, -EINVAL, "'%s' must be a positive %s", key,
                                      integer ? "integer" : "number");
        *ret = json_number_value(v);
        return 0;
}

/* "heal fix --json [--dry-run] [limits] -- COMMAND..." from the call's arguments. */
static int build_args(struct heal_args *h, const heal_mcp_server *s, json_t *args, heal_error *err)
{
        static const char *const keys[] = { "command",        "directory",
                                            "write",          "max_requests",
                                            "max_cost_usd",   "timeout_ms",
                                            "search_time_ms", NULL };
        json_t *write = json_object_get(args, "write");
        double req, cost, timeout, search;
        size_t n = 0;
        int r;

        if ((r = tool_args_known(args, keys, err)) < 0)
                return r;
        if (write && !json_is_boolean(write) && !json_is_null(write))
                return heal_error_set(err, -EINVAL, "'write' must be true or false");
        if ((r = positive(args, "max_requests", &req, true, err)) < 0 ||
            (r = positive(args, "max_cost_usd", &cost, false, err)) < 0 ||
            (r = positive(args, "timeout_ms", &timeout, true, err)) < 0 ||
            (r = positive(args, "search_time_ms", &search, true, err)) < 0 ||
            (r = mcp_open_dir(&h->dirfd, h->dir, sizeof(h->dir), s, args, err)) < 0)
                return r;
        h->argv[n++] = s->heal_path;
        h->argv[n++] = "fix";
        h->argv[n++] = "--json";
        if (!json_is_true(write))
                h->argv[n++] = "--dry-run";
        if (req) {
                snprintf(h->requests, sizeof(h->requests), "%.0f", MIN(req, 100000.0));
                h->argv[n++] = "--max-requests", h->argv[n++] = h->requests;
        }
        if (cost) {
                snprintf(h->cost, sizeof(h->cost), "%.6f", MIN(cost, 1000.0));
                h->argv[n++] = "--max-cost", h->argv[n++] = h->cost;
        }
        if (timeout) {
                snprintf(h->timeout, sizeof(h->timeout), "%.0fms", MIN(timeout, 86400e3));
                h->argv[n++] = "--timeout", h->argv[n++] = h->timeout;
        }
        if (search) {
                snprintf(h->search, sizeof(h->search), "%.0fms", MIN(search, 86400e3));
                h->argv[n++] = "--search-time", h->argv[n++] = h->search;
        }
        h->argv[n++] = "--";
        return command_argv(h, &n, args, err);
}

/* In the child, before execve(2): async-signal-safe calls only (the server has threads). It
 * dies with the server thread that started it (PR_SET_PDEATHSIG: a SIGKILLed server must not
 * leave a repair behind that writes the tree later), in a process group of its own, in the
 * directory opened beneath the root (no path is looked up again), with default signals. */
static _Noreturn void child(const struct heal_args *h, pid_t parent, int out, int errfd)
{
        static const int sigs[] = { SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT };
        struct sigaction dfl = { .sa_handler = SIG_DFL };
        sigset_t none;
        int null = open("/dev/null", O_RDONLY | O_CLOEXEC);

        if (prctl(PR_SET_PDEATHSIG, SIGTERM) < 0 || getppid() != parent)
                _exit(127);
        setpgid(0, 0);
        for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
                sigaction(sigs[i], &dfl, NULL);
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        if (null < 0 || fchdir(h->dirfd) < 0 || dup2(null, 0) < 0 || dup2(out, 1) < 0 ||
            dup2(errfd, 2) < 0)
                _exit(127);
        execve(h->argv[0], (char *const *)(uintptr_t)h->argv, environ);
        _exit(127);
}

static int spawn(pid_t *ret, int *out, int *errfd, const struct heal_args *h, heal_error *err)
{
        pid_t parent = getpid(), pid;
        int o[2], e[2], r;

        if (pipe2(o, O_CLOEXEC) < 0)
                return heal_error_set(err, -errno, "pipe: %s", strerror(errno));
        if (pipe2(e, O_CLOEXEC) < 0) {
                r = -errno;
                close(o[0]), close(o[1]);
                return heal_error_set(err, r, "pipe: %s", strerror(-r));
        }
        pid = fork();
        if (pid == 0)
                child(h, parent, o[1], e[1]);
        r = pid < 0 ? -errno : 0;
        close(o[1]), close(e[1]);
        if (r < 0) {
                close(o[0]), close(e[0]);
                return heal_error_set(err, r, "cannot start '%s': %s", h->argv[0], strerror(-r));
        }
        setpgid(pid, pid); /* also here: a cancellation may come before the child's own call */
        *ret = pid;
        *out = o[0];
        *errfd = e[0];
        return 0;
}

/* Read what @fd has into @b; @tail: keep only the end when @b fills up (a log). */
static void drain(int *fd, heal_buf *b, bool tail)
{
        char chunk[65536];
        ssize_t n = read(*fd, chunk, sizeof(chunk));

        if (n < 0 && errno == EINTR)
                return;
        if (n <= 0) {
                close(*fd);
                *fd = -1;
                return;
        }
        if (tail && b->len + (size_t)n > b->max) {
                size_t keep = MIN(b->len, (size_t)LOG_KEEP);

                memmove(b->data, b->data + b->len - keep, keep);
                b->len = keep;
        }
        heal_buf_append(b, chunk, (size_t)n);
}

/* Read the child's report and log until both pipes close; SIGKILL a canceled child that
 * outlives KILL_AFTER_MS. */
static void collect(struct mcp_call *c, pid_t pid, int out, int errfd, heal_buf *report,
                    heal_buf *log)
{
        uint64_t canceled_at = 0;

        while (out >= 0 || errfd >= 0) {
                struct pollfd p[2] = { { out, POLLIN, 0 }, { errfd, POLLIN, 0 } };

                if (poll(p, 2, 250) < 0 && errno != EINTR)
                        break;
                if (p[0].revents)
                        drain(&out, report, false);
                if (p[1].revents)
                        drain(&errfd, log, true);
                if (!canceled_at && mcp_call_canceled(c))
                        canceled_at = mcp_now_ms();
                if (canceled_at && mcp_now_ms() - canceled_at > KILL_AFTER_MS)
                        kill(-pid, SIGKILL);
        }
        if (out >= 0)
                close(out);
        if (errfd >= 0)
                close(errfd);
}

static const char *verdict_of(json_t *report, int code)
{
        const char *v = json_string_value(json_object_get(report, "verdict"));

        static const struct {
                int code;
                const char *verdict;
        } by_code[] = { { 0, "ok" },          { 3, "not_found" }, { 4, "budget" },
                        { 5, "not_written" }, { 6, "flaky" },     { 130, "canceled" } };

        if (v)
                return v;
        for (size_t i = 0; i < sizeof(by_code) / sizeof(by_code[0]); i++)
                if (by_code[i].code == code)
                        return by_code[i].verdict;
        return "error";
}

/* The document; a report over REPORT_KEPT is left out (report_left_out), so that the answer
 * stays well within a message. Consumes @report. */
static json_t *result(json_t *report, int code, const heal_buf *log, bool report_cut)
{
        size_t keep = MIN(log->len, (size_t)LOG_KEEP);
        json_t *patch = json_object_get(report, "patch"),
               *written = json_object_get(report, "written");
        bool kept = report && json_dumpb(report, NULL, 0, JSON_COMPACT) <= REPORT_KEPT;
        json_t *o = json_pack(
                "{s:i,s:s,s:O,s:O,s:O,s:o}", "exit_code", code, "verdict", verdict_of(report, code),
                "patch", json_is_string(patch) ? patch : json_null(), "written",
                json_is_string(written) ? written : json_null(), "report",
                kept ? report : json_null(), "log",
                json_string_bytes(log->data ? log->data + log->len - keep : "", keep));

        if (o && (report_cut || (report && !kept)))
                json_object_set_new(o, "report_left_out", json_true());
        json_decref(report);
        return o;
}

int mcp_heal(struct mcp_call *c, json_t **ret, bool *ret_is_error, heal_error *err)
{
        struct heal_args *h = calloc(1, sizeof(*h));
        heal_buf report = HEAL_BUF_INIT(REPORT_MAX), log = HEAL_BUF_INIT(LOG_MAX);
        json_t *doc;
        int out = -1, errfd = -1, st = 0, code, r;
        pid_t pid = -1;

        if (!h)
                return heal_error_set(err, -ENOMEM, "out of memory");
        h->dirfd = -1;
        r = build_args(h, c->srv, c->arguments, err);
        if (r >= 0)
                r = spawn(&pid, &out, &errfd, h, err);
        if (h->dirfd >= 0)
                close(h->dirfd);
        free(h);
        if (r < 0)
                return heal_error_prefix(err, r, "heal");
        mcp_call_stage(c, "repairing");
        mcp_call_attach(c, NULL, NULL, pid);
        collect(c, pid, out, errfd, &report, &log);
        while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
                ;
        mcp_call_attach(c, NULL, NULL, -1);
        code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        doc = report.data && !report.truncated ? json_loads(report.data, 0, NULL) : NULL;
        if (doc && !json_is_object(doc))
                json_decref(doc), doc = NULL;
        *ret = result(doc, code, &log, report.truncated);
        *ret_is_error = code != 0;
        heal_buf_release(&report);
        heal_buf_release(&log);
        return *ret ? 0 : heal_error_set(err, -ENOMEM, "out of memory");
}
