/* SPDX-License-Identifier: MIT */
/*
 * The parent's side of a run: one poll(2) loop over the init's pidfd, the output pipes, the
 * report pipe and the cancel eventfd, with the wall-time deadline and the SIGQUIT grace period
 * as its timeouts. The run ends when init is reaped, never at EOF on the output (a program that
 * closes its stdout and hangs is still running), and never waits for EOF past the reap.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/util.h"
#include "run-internal.h"

#ifndef P_PIDFD
# define P_PIDFD 3
#endif

/* How long init gets to carry out CTL_KILL before it is killed itself. */
#define KILL_GRACE_NS (50ULL * 1000000ULL)

static void kill_init(struct run *run)
{
        if (run->killed || run->reaped)
                return;
        syscall(SYS_pidfd_send_signal, run->pidfd, SIGKILL, NULL, 0);
        run->killed = true;
}

/*
 * Stop everything: init kills the command's process group (atomic against fork) and the rest of
 * the namespace (without namespaces: the command's group, and init, a child subreaper, reaps
 * until none is left). SIGKILL to init follows if init has not finished in time.
 */
static void kill_now(struct run *run)
{
        char k = CTL_KILL;

        if (run->kill_sent_ns || run->reaped)
                return;
        run->kill_sent_ns = now_ns();
        if (send(run->ctl_w, &k, 1, MSG_NOSIGNAL) != 1)
                kill_init(run);
}

static void stop(struct run *run, heal_sandbox_status why)
{
        if (run->stop_reason == HEAL_STATUS_OK)
                run->stop_reason = why;
        kill_now(run);
}

/* Read what one pipe holds (bounded, so a flood cannot starve the timers). */
static void drain(struct run *run, int *fd, heal_buf *buf, int stream, bool final)
{
        uint64_t max = run->sb->limits.out_max_bytes;
        char chunk[65536];

        for (int i = 0; (final || i < 16) && *fd >= 0; i++) {
                ssize_t n = read(*fd, chunk, sizeof(chunk));
                size_t keep;

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0 && errno == EAGAIN && !final)
                        return;
                if (n <= 0) {
                        *fd = safe_close(*fd);
                        return;
                }
                keep = (size_t)n;
                if (max && run->out_total + keep > max)
                        keep = run->out_total >= max ? 0 : (size_t)(max - run->out_total);
                if (keep) {
                        (void)heal_buf_append(buf, chunk, keep);
                        if (run->sb->output_fn)
                                run->sb->output_fn(stream, chunk, keep, run->sb->output_userdata);
                        run->out_total += keep;
                }
                if (keep < (size_t)n) {
                        buf->truncated = true;
                        run->res->limits_hit |= HEAL_LIMIT_OUTPUT;
                        stop(run, HEAL_STATUS_OUTPUT_LIMIT);
                }
        }
}

static void read_reports(struct run *run)
{
        struct report rep;

        for (;;) {
                ssize_t n = read(run->rep_r, &rep, sizeof(rep));

                if (n < 0 && errno == EINTR)
                        continue;
                if (n != (ssize_t)sizeof(rep)) {
                        if (n == 0 || (n < 0 && errno != EAGAIN))
                                run->rep_r = safe_close(run->rep_r);
                        return;
                }
                if (rep.kind == REPORT_ERROR && !run->have_error) {
                        run->error = rep;
                        run->have_error = true;
                } else if (rep.kind == REPORT_EXIT) {
                        run->wstatus = rep.wstatus;
                        run->have_exit = true;
                } else if (rep.kind == REPORT_DONE) {
                        char bye = CTL_BYE;

                        run->done_ru = rep.ru;
                        run->have_done = true;
                        /* init waits for it (or the socket's end) before it exits; a process the
                         * caller forked may hold the output pipes open for a while yet */
                        (void)send(run->ctl_w, &bye, 1, MSG_NOSIGNAL | MSG_DONTWAIT);
                }
        }
}

/* Reap init through @pidfd: 1 when reaped (or gone), 0 when still running (@block false). */
static int reap_pidfd(int pidfd, bool block, struct rusage *ru)
{
        siginfo_t si = { 0 };

        if (syscall(SYS_waitid, P_PIDFD, pidfd, &si, WEXITED | __WALL | (block ? 0 : WNOHANG),
                    ru) == 0)
                return si.si_pid != 0;
        return errno == ECHILD ? 1 : 0; /* ECHILD cannot happen with exit_signal 0: never spin */
}

static void reap(struct run *run)
{
        if (reap_pidfd(run->pidfd, true, &run->ru))
                run->reaped = true;
}

/*
 * Inits whose runs are over but whose namespaces the kernel is still tearing down: reaped
 * without blocking at the next run, or when the list is full, or by heal_sandbox_free().
 */
void reap_pending(heal_sandbox *sb, bool block)
{
        size_t kept = 0;

        for (size_t i = 0; i < sb->n_pending; i++) {
                struct rusage ru;

                if (reap_pidfd(sb->pending[i], block, &ru))
                        safe_close(sb->pending[i]);
                else
                        sb->pending[kept++] = sb->pending[i];
        }
        sb->n_pending = kept;
}

/* The run is over (everything reported, output closed): leave init's teardown to later. */
static void park_init(struct run *run)
{
        heal_sandbox *sb = run->sb;

        if (reap_pidfd(run->pidfd, false, &run->ru)) {
                run->reaped = true;
                return;
        }
        if (sb->n_pending == ELEMENTSOF(sb->pending))
                reap_pending(sb, true);
        sb->pending[sb->n_pending++] = run->pidfd;
        run->pidfd = -1;
}

/* Done when init is reaped, or when it reported that every process is gone and reaped and the
 * output pipes are closed (without a PID namespace an escaped process may hold them: stop). */
static bool run_over(const struct run *run)
{
        if (run->reaped)
                return true;
        return run->have_done && ((run->sb->flags & HEAL_SANDBOX_ISOLATION_NONE) ||
                                  (run->out_r < 0 && run->err_r < 0));
}

/* @start_ns + @ms, saturating: an absurdly long limit means "never", not a wrapped-around soon. */
static uint64_t deadline_after(uint64_t start_ns, uint64_t ms)
{
        if (ms > (UINT64_MAX - start_ns) / 1000000ULL)
                return UINT64_MAX;
        return start_ns + ms * 1000000ULL;
}

static void on_timeout(struct run *run, uint64_t now)
{
        uint64_t grace = run->sb->limits.grace_ms;

        run->res->limits_hit |= HEAL_LIMIT_WALL;
        if (run->stop_reason == HEAL_STATUS_OK)
                run->stop_reason = HEAL_STATUS_TIMEOUT;
        /* The state at the moment the limit hit, before any signal changes it. */
        if (!(run->sb->flags & HEAL_SANDBOX_ISOLATION_NONE))
                (void)procsnap_take(&run->res->procs, &run->res->n_procs, run->pid);
        if (grace && !run->have_exit) {
                char q = CTL_QUIT;

                if (send(run->ctl_w, &q, 1, MSG_NOSIGNAL) == 1) {
                        run->quit_sent = true;
                        run->grace_deadline_ns = deadline_after(now, grace);
                        return;
                }
        }
        kill_now(run);
}

static int poll_timeout_ms(const struct run *run, uint64_t wall_deadline, uint64_t now)
{
        uint64_t next = 0;

        if (wall_deadline && run->stop_reason == HEAL_STATUS_OK)
                next = wall_deadline;
        if (run->quit_sent && !run->kill_sent_ns && (!next || run->grace_deadline_ns < next))
                next = run->grace_deadline_ns;
        if (run->kill_sent_ns && !run->killed &&
            (!next || run->kill_sent_ns + KILL_GRACE_NS < next))
                next = run->kill_sent_ns + KILL_GRACE_NS;
        if (!next)
                return -1;
        if (next <= now)
                return 0;
        return (int)MIN((next - now + 999999) / 1000000, (uint64_t)INT32_MAX);
}

static void check_cancel(struct run *run)
{
        uint64_t v;

        if (!run->sb->canceled)
                return;
        if (read(run->sb->cancel_fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
                return;
        run->sb->canceled = 0;
        stop(run, HEAL_STATUS_CANCELED);
}

int supervise(struct run *run, heal_error *err)
{
        uint64_t wall = run->sb->limits.wall_ms;
        uint64_t wall_deadline = wall ? deadline_after(run->start_ns, wall) : 0;

        (void)err;
        while (!run_over(run)) {
                struct pollfd pfd[5];
                int n = 0, timeout;
                uint64_t now = now_ns();

                check_cancel(run);
                if (wall_deadline && now >= wall_deadline &&
                    !(run->res->limits_hit & HEAL_LIMIT_WALL))
                        on_timeout(run, now);
                if (run->quit_sent && now >= run->grace_deadline_ns)
                        kill_now(run);
                if (run->kill_sent_ns && now >= run->kill_sent_ns + KILL_GRACE_NS)
                        kill_init(run);
                timeout = poll_timeout_ms(run, wall_deadline, now);
                pfd[n++] = (struct pollfd){ .fd = run->pidfd, .events = POLLIN };
                pfd[n++] = (struct pollfd){ .fd = run->sb->cancel_fd, .events = POLLIN };
                pfd[n++] = (struct pollfd){ .fd = run->out_r, .events = POLLIN };
                pfd[n++] = (struct pollfd){ .fd = run->err_r, .events = POLLIN };
                pfd[n++] = (struct pollfd){ .fd = run->rep_r, .events = POLLIN };
                if (poll(pfd, (nfds_t)n, timeout) < 0 && errno != EINTR)
                        return heal_error_set(err, -errno, "poll: %s", strerror(errno));
                if (pfd[2].revents)
                        drain(run, &run->out_r, &run->out, 1, false);
                if (pfd[3].revents)
                        drain(run, &run->err_r, &run->errb, 2, false);
                if (pfd[4].revents)
                        read_reports(run);
                if (pfd[0].revents)
                        reap(run);
        }
        if (!run->reaped)
                park_init(run);
        /* Every writer is gone (init reaped them all, or the kernel killed the namespace): what
         * is left in the pipes is complete. */
        drain(run, &run->out_r, &run->out, 1, true);
        drain(run, &run->err_r, &run->errb, 2, true);
        if (run->rep_r >= 0)
                read_reports(run);
        return 0;
}
