/* SPDX-License-Identifier: MIT */
/*
 * The exec provider: a local command answers. heal runs it with "/bin/sh -c COMMAND", writes
 * the request as JSON (the canonical Chat Completions form that cassettes use) to its stdin,
 * and reads the answer from its stdout: either a Chat Completions response or heal's own
 * response form (docs/llm.md). A nonzero exit, a signal, a timeout, an oversized or malformed
 * answer is an error that says which, with the tail of the command's stderr. The command is
 * the user's own tool, run with their environment, not in the sandbox.
 * See: clone3(2), pidfd_open(2), waitid(2) (P_PIDFD), poll(2).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/util.h"
#include "llm/llm-internal.h"

extern char **environ;

#define STDERR_TAIL 2048

struct child {
        pid_t pid;
        int pidfd;
        int in, out, errfd; /* our ends; -1 once closed */
        const char *request;
        size_t request_len, written;
        heal_buf answer;
        char tail[STDERR_TAIL + 1]; /* the last bytes of stderr */
        size_t tail_len;
        bool exited;
};

/*
 * The direct child never execs: an exec resets the exit signal to SIGCHLD, and a caller that
 * ignores SIGCHLD would have the shell reaped by the kernel, its status lost. So the child runs
 * the shell as its own child (with SIGCHLD at its default), waits, and ends the same way: the
 * same exit status, or the same signal (core dumps off: the child is a copy of the caller).
 */
/* heal died (SIGKILL, an unhandled SIGTERM): the command's whole group goes with it. */
static void on_caller_death(int sig)
{
        (void)sig;
        kill(0, SIGKILL);
}

static _Noreturn void supervise(char **argv, pid_t caller)
{
        struct sigaction dfl = { .sa_handler = SIG_DFL }, die = { .sa_handler = on_caller_death };
        struct rlimit no_core = { 0, 0 };
        int status = 0;
        pid_t sh;

        /* The group is this process's own (setpgid before): the shell and what it starts. */
        sigaction(SIGTERM, &die, NULL);
        if (prctl(PR_SET_PDEATHSIG, SIGTERM, 0, 0, 0) < 0 || getppid() != caller)
                kill(0, SIGKILL);
        sigaction(SIGCHLD, &dfl, NULL);
        setrlimit(RLIMIT_CORE, &no_core);
        sh = fork();
        if (sh == 0) {
                sigaction(SIGTERM, &dfl, NULL);
                execve("/bin/sh", argv, environ);
                _exit(127);
        }
        while (sh > 0 && waitpid(sh, &status, 0) < 0 && errno == EINTR)
                ;
        if (sh < 0 || !WIFSIGNALED(status))
                _exit(sh < 0 ? 127 : WEXITSTATUS(status));
        sigaction(WTERMSIG(status), &dfl, NULL);
        kill(getpid(), WTERMSIG(status));
        _exit(128 + WTERMSIG(status));
}

/*
 * clone3 with exit_signal 0 and a pidfd, not posix_spawn: the shell's status stays ours even in
 * a caller that ignores SIGCHLD or reaps with waitpid(-1), and the pidfd says when it exited.
 * The child only calls async-signal-safe functions before execve (the caller may have threads).
 */
static int spawn(struct child *ch, char *command)
{
        char sh[] = "sh", dash_c[] = "-c";
        char *argv[] = { sh, dash_c, command, NULL };
        int in[2], out[2] = { -1, -1 }, errp[2] = { -1, -1 }, r = 0;
        struct clone_args ca = { .flags = CLONE_PIDFD, .pidfd = (uint64_t)(uintptr_t)&ch->pidfd };
        pid_t caller = getpid();
        long pid;

        /* stdin is a socket so that writing to a command that stopped reading is EPIPE from
         * send(MSG_NOSIGNAL), not a SIGPIPE that kills the caller. */
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, in) < 0)
                return -errno;
        if (pipe2(out, O_CLOEXEC) < 0 || pipe2(errp, O_CLOEXEC) < 0) {
                r = -errno;
                close(in[0]), close(in[1]), safe_close(out[0]), safe_close(out[1]);
                return r;
        }
        pid = syscall(SYS_clone3, &ca, sizeof(ca));
        if (pid == 0) {
                if (dup2(in[0], 0) < 0 || dup2(out[1], 1) < 0 || dup2(errp[1], 2) < 0)
                        _exit(127);
                syscall(SYS_close_range, 3, ~0U, 0);
                setpgid(0, 0); /* its own group: the group is killed when heal is done */
                supervise(argv, caller);
        }
        if (pid < 0)
                r = -errno;
        close(in[0]), close(out[1]), close(errp[1]);
        ch->pid = (pid_t)pid;
        ch->in = in[1], ch->out = out[0], ch->errfd = errp[0];
        shutdown(ch->in, SHUT_RD);
        /* Only heal's read ends are non-blocking (each end is its own open file description):
         * the command writes to ordinary blocking pipes. */
        fcntl(ch->out, F_SETFL, O_NONBLOCK);
        fcntl(ch->errfd, F_SETFL, O_NONBLOCK);
        if (r < 0) {
                close(ch->in), close(ch->out), close(ch->errfd);
                ch->in = ch->out = ch->errfd = -1;
        }
        return r;
}

static void keep_tail(struct child *ch, const char *data, size_t n)
{
        if (n >= STDERR_TAIL) {
                memcpy(ch->tail, data + n - STDERR_TAIL, STDERR_TAIL);
                ch->tail_len = STDERR_TAIL;
        } else {
                size_t keep = MIN(ch->tail_len, STDERR_TAIL - n);

                memmove(ch->tail, ch->tail + ch->tail_len - keep, keep);
                memcpy(ch->tail + keep, data, n);
                ch->tail_len = keep + n;
        }
        ch->tail[ch->tail_len] = '\0';
}

/* Move bytes for one ready fd; return -E2BIG when the answer is over the cap. */
static int pump(struct child *ch, struct pollfd *p)
{
        char buf[16384];
        ssize_t n;

        if (p->fd == ch->in) {
                n = send(ch->in, ch->request + ch->written, ch->request_len - ch->written,
                         MSG_NOSIGNAL | MSG_DONTWAIT);
                if (n > 0)
                        ch->written += (size_t)n;
                if ((n < 0 && errno != EAGAIN && errno != EINTR) || ch->written == ch->request_len)
                        ch->in = safe_close(ch->in); /* done, or the command stopped reading */
                return 0;
        }
        n = read(p->fd, buf, sizeof(buf));
        if (n <= 0) {
                if (n < 0 && (errno == EINTR || errno == EAGAIN))
                        return 0;
                if (p->fd == ch->out)
                        ch->out = safe_close(ch->out);
                else
                        ch->errfd = safe_close(ch->errfd);
                return 0;
        }
        if (p->fd == ch->errfd) {
                keep_tail(ch, buf, (size_t)n);
                return 0;
        }
        return heal_buf_append(&ch->answer, buf, (size_t)n) == 0 ? 0 : -E2BIG;
}

/* Read what is left in a pipe without waiting (the command has exited). */
static int drain(struct child *ch, int *fd)
{
        while (*fd >= 0) {
                struct pollfd p = { .fd = *fd, .events = POLLIN };
                size_t before = ch->answer.len + ch->tail_len;
                int r = pump(ch, &p);

                if (r < 0)
                        return r;
                if (*fd >= 0 && ch->answer.len + ch->tail_len == before)
                        break; /* EAGAIN: empty, though a background process holds it open */
        }
        return 0;
}

/* Feed the request and read until the command exits (or closes its output), or the deadline.
 * A background process that keeps the pipes open does not hold heal: once the shell has
 * exited, what is in the pipes is the answer. */
static int talk(struct child *ch, uint64_t deadline_ms)
{
        while (ch->out >= 0 || ch->errfd >= 0) {
                struct pollfd p[4];
                uint64_t now = llm_mono_ms();
                int n = 0, r;

                if (now >= deadline_ms)
                        return -ETIMEDOUT;
                if (ch->in >= 0)
                        p[n++] = (struct pollfd){ .fd = ch->in, .events = POLLOUT };
                if (ch->out >= 0)
                        p[n++] = (struct pollfd){ .fd = ch->out, .events = POLLIN };
                if (ch->errfd >= 0)
                        p[n++] = (struct pollfd){ .fd = ch->errfd, .events = POLLIN };
                p[n++] = (struct pollfd){ .fd = ch->pidfd, .events = POLLIN };
                r = poll(p, (nfds_t)n, (int)MIN(deadline_ms - now, 1000));
                if (r < 0 && errno != EINTR)
                        return -errno;
                for (int i = 0; r > 0 && i < n - 1; i++)
                        if (p[i].revents && (r = pump(ch, &p[i])) < 0)
                                return r;
                if (r >= 0 && p[n - 1].revents) {
                        ch->exited = true;
                        if ((r = drain(ch, &ch->out)) < 0 || (r = drain(ch, &ch->errfd)) < 0)
                                return r;
                        return 0;
                }
        }
        return 0;
}

/* How much of @s to quote: at most @max bytes, without the trailing newlines. */
static size_t quoted_len(const char *s, size_t max)
{
        size_t n = strnlen(s, max);

        while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' '))
                n--;
        return n;
}

/* The answer as a Chat Completions response or as heal's own form. */
static int decode(heal_llm_response *resp, const struct child *ch, const char *command,
                  heal_error *err)
{
        const char *body = ch->answer.data ? ch->answer.data : "";
        json_error_t jerr;
        json_t *root = json_loadb(body, ch->answer.len, 0, &jerr), *first;
        int r;

        first = json_array_get(json_object_get(root, "choices"), 0);
        if (json_is_object(json_object_get(first, "message")))
                r = openai_decode(resp, body, ch->answer.len, err);
        else if (json_is_string(json_object_get(first, "text")))
                r = cassette_response(resp, root, err);
        else
                r = heal_error_set(err, -EPROTO,
                                   "the model command '%s' printed no answer: expected JSON with "
                                   "\"choices\": [{\"message\": ...}] or [{\"text\": ...}], got "
                                   "'%.*s'%s%s",
                                   command, (int)quoted_len(body, 80), body,
                                   root ? "" : ", not JSON: ", root ? "" : jerr.text);
        if (r == 0)
                snprintf(resp->request_id, sizeof(resp->request_id), "exec");
        json_decref(root);
        return r;
}

/* Wait for the shell to exit by @deadline_ms (it may close its output and linger). */
static int wait_exit(const struct child *ch, uint64_t deadline_ms)
{
        uint64_t now;
        int r = 1;

        while (!ch->exited && (now = llm_mono_ms()) < deadline_ms) {
                struct pollfd p = { .fd = ch->pidfd, .events = POLLIN };

                r = poll(&p, 1, (int)MIN(deadline_ms - now, 1000));
                if (r > 0)
                        return 0;
        }
        return ch->exited ? 0 : -ETIMEDOUT;
}

/* The shell's wait status; whatever it started in its group is killed first. */
static int reap(struct child *ch)
{
        siginfo_t si = { 0 };

        kill(-ch->pid, SIGKILL);
        while (waitid((idtype_t)P_PIDFD, (id_t)ch->pidfd, &si, WEXITED | __WALL) < 0)
                if (errno != EINTR)
                        return -1;
        return si.si_code == CLD_EXITED ? (si.si_status & 0xff) << 8 : si.si_status & 0x7f;
}

/* The end of stderr that fits in an error message, from a line start when one is near. */
static const char *stderr_tail(struct child *ch)
{
        const char *t = ch->tail_len > 300 ? ch->tail + ch->tail_len - 300 : ch->tail;
        const char *nl = strchr(t, '\n');

        while (ch->tail_len &&
               (ch->tail[ch->tail_len - 1] == '\n' || ch->tail[ch->tail_len - 1] == ' '))
                ch->tail[--ch->tail_len] = '\0';
        if (!ch->tail_len)
                return "(no stderr)";
        return t != ch->tail && nl && nl[1] ? nl + 1 : t;
}

static int finish(struct child *ch, int r, const char *command, uint64_t timeout_ms,
                  heal_llm_response *ret, heal_error *err)
{
        int status = reap(ch);

        if (r == -ETIMEDOUT)
                return heal_error_set(err, r,
                                      "the model command '%.80s' did not answer within %llu ms",
                                      command, (unsigned long long)timeout_ms);
        if (r == -E2BIG)
                return heal_error_set(err, r, "the model command '%s' printed more than %zu bytes",
                                      command, ch->answer.max);
        if (r < 0)
                return heal_error_set(err, r, "talking to the model command '%s': %s", command,
                                      strerror(-r));
        if (status > 0 && WIFEXITED(status))
                return heal_error_set(err, -EIO,
                                      "the model command '%.80s' exited with status %d: %s",
                                      command, WEXITSTATUS(status), stderr_tail(ch));
        if (status > 0 && WIFSIGNALED(status))
                return heal_error_set(err, -EIO,
                                      "the model command '%.80s' was killed by signal %d: %s",
                                      command, WTERMSIG(status), stderr_tail(ch));
        return decode(ret, ch, command, err);
}

int exec_complete(heal_llm_client *c, const heal_llm_request *req, heal_llm_response *ret,
                  heal_error *err)
{
        _cleanup_free_ char *request = NULL;
        struct child ch = { .in = -1, .out = -1, .errfd = -1, .pidfd = -1 };
        uint64_t deadline;
        char key[33];
        int r;

        if ((r = budget_check(&c->budget, err)) < 0 ||
            (r = cassette_key(&request, key, req, err)) < 0)
                return r;
        ch.request = request;
        ch.request_len = strlen(request);
        heal_buf_init(&ch.answer, c->cfg.max_response_bytes);
        if ((r = spawn(&ch, c->command)) < 0)
                return heal_error_set(err, r, "cannot start the model command '%s': %s", c->command,
                                      strerror(-r));
        c->budget.tally.requests++;
        /* 0: no limit, as for HTTP; a huge value must not wrap around */
        deadline = c->cfg.timeout_ms && c->cfg.timeout_ms < (1ULL << 40)
                           ? llm_mono_ms() + c->cfg.timeout_ms
                           : UINT64_MAX;
        r = talk(&ch, deadline);
        safe_close(ch.in), safe_close(ch.out), safe_close(ch.errfd);
        if (r == 0)
                r = wait_exit(&ch, deadline);
        r = finish(&ch, r, c->command, c->cfg.timeout_ms, ret, err);
        safe_close(ch.pidfd);
        ret->attempts = 1;
        heal_buf_release(&ch.answer);
        return r;
}
