/* SPDX-License-Identifier: MIT */
/*
 * The sandbox's init (PID 1 of the new PID namespace) and the command it starts.
 *
 * This runs in a child made by clone3(2) without CLONE_VM from a possibly multi-threaded caller,
 * so only async-signal-safe calls are allowed: no malloc, no stdio, no locale. Every string was
 * built by the parent (plan-compile.c); failures go back as a fixed-size struct report.
 *
 * Order (each step's failure names the step): the user namespace — either clone3() made every
 * namespace and we write our uid/gid maps and forbid nested user namespaces, or we join the
 * pool's pre-made user, network and IPC namespaces (netpool.c), unshare the others and start
 * init as the first process of the new PID namespace (start_init) —; then in init: private
 * mount propagation, a staging tmpfs pivoted to "/" (the host root stays reachable at
 * /oldroot), the plan's entries under /newroot (child-mount.c), pivot into /newroot, hostname,
 * loopback, then the command in a new session with rlimits, no capabilities, no_new_privs and
 * the seccomp filter.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/mount.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "child-internal.h"

#ifndef CLOSE_RANGE_CLOEXEC
# define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

const struct child_plan *P;

static uint64_t clock_ns(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Concatenate @a and @b into @dst (capacity @cap); false when it does not fit. */
bool join(char *dst, size_t cap, const char *a, const char *b)
{
        size_t la = strlen(a), lb = strlen(b);

        if (la + lb + 1 > cap)
                return false;
        memcpy(dst, a, la);
        memcpy(dst + la, b, lb + 1);
        return true;
}

_Noreturn void fail(int step, int err, int entry, const char *path)
{
        struct report r = { .kind = REPORT_ERROR, .step = step, .err = err, .entry = entry };
        ssize_t _unused;

        if (path) {
                size_t n = strlen(path);

                if (n >= sizeof(r.path))
                        n = sizeof(r.path) - 1;
                memcpy(r.path, path, n);
        }
        _unused = write(P->report_fd, &r, sizeof(r));
        (void)_unused;
        _exit(step == STEP_EXEC ? (err == ENOENT ? 127 : 126) : 125);
}

int child_write_file(const char *path, const char *data)
{
        size_t len = strlen(data);
        int fd = open(path, O_WRONLY | O_CLOEXEC);
        ssize_t n;

        if (fd < 0)
                return -errno;
        n = write(fd, data, len);
        if (n < 0 || (size_t)n != len) {
                int e = n < 0 ? errno : EIO;

                close(fd);
                return -e;
        }
        return close(fd) < 0 ? -errno : 0;
}

static void forbid_nested_userns(void)
{
        /* Per user namespace: nested user namespaces now fail with ENOSPC. */
        int r = child_write_file("/proc/sys/user/max_user_namespaces", "0");

        if (r < 0)
                fail(STEP_USERNS_LIMIT, -r, -1, NULL);
}

static void setup_userns(void)
{
        int r;

        r = child_write_file("/proc/self/setgroups", "deny");
        if (r < 0 && r != -ENOENT)
                fail(STEP_SETGROUPS, -r, -1, NULL);
        r = child_write_file("/proc/self/uid_map", P->uid_map);
        if (r < 0)
                fail(STEP_UID_MAP, -r, -1, NULL);
        r = child_write_file("/proc/self/gid_map", P->gid_map);
        if (r < 0)
                fail(STEP_GID_MAP, -r, -1, NULL);
        if (!(P->flags & HEAL_SANDBOX_ALLOW_USERNS))
                forbid_nested_userns();
}

/*
 * Enter the pool's user, network and IPC namespaces (netpool.c; the maps are written and
 * loopback is up) and unshare the others. The PID namespace holds only our children from now on, so
 * the caller starts init as the first of them.
 */
static void join_pool(void)
{
        int more = CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWPID;

        if (!P->new_cgroupns)
                more |= CLONE_NEWCGROUP;
        if (setns(P->pool_user_fd, CLONE_NEWUSER) < 0 || setns(P->pool_net_fd, CLONE_NEWNET) < 0 ||
            setns(P->pool_ipc_fd, CLONE_NEWIPC) < 0)
                fail(STEP_POOL_JOIN, errno, -1, NULL);
        close(P->pool_user_fd);
        close(P->pool_net_fd);
        close(P->pool_ipc_fd);
        /* The pool's user namespace forbids nested ones already (netpool.c). */
        if (unshare(more) < 0)
                fail(STEP_POOL_JOIN, errno, -1, NULL);
}

int loopback_up(void)
{
        struct ifreq ifr = { 0 };
        int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), r = 0;

        memcpy(ifr.ifr_name, "lo", 3);
        if (s < 0 || ioctl(s, SIOCGIFFLAGS, &ifr) < 0)
                r = -errno;
        ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
        if (r == 0 && ioctl(s, SIOCSIFFLAGS, &ifr) < 0)
                r = -errno;
        if (s >= 0)
                close(s);
        return r;
}

static void setup_host(void)
{
        int r;

        if (sethostname("heal", 4) < 0)
                fail(STEP_HOSTNAME, errno, -1, NULL);
        /* A pooled network namespace came with loopback up. */
        if (!(P->flags & HEAL_SANDBOX_SHARE_NET) && P->pool_net_fd < 0 && (r = loopback_up()) < 0)
                fail(STEP_LOOPBACK, -r, -1, NULL);
}

/* Close every descriptor but the ones the plan names (the caller's fds must not linger). */
static void close_other_fds(void)
{
        int keep[5] = { P->report_fd, P->ctl_fd, P->stdin_fd, P->stdout_fd, P->stderr_fd };
        int lo = 3;

        for (size_t i = 0; i < 5; i++)
                for (size_t j = i + 1; j < 5; j++)
                        if (keep[j] < keep[i]) {
                                int t = keep[i];

                                keep[i] = keep[j];
                                keep[j] = t;
                        }
        for (size_t i = 0; i < 5; i++) {
                if (keep[i] < lo)
                        continue;
                if (keep[i] > lo)
                        syscall(SYS_close_range, lo, keep[i] - 1, 0);
                lo = keep[i] + 1;
        }
        syscall(SYS_close_range, lo, ~0U, 0);
}

static void drop_capabilities(void)
{
        struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
        struct __user_cap_data_struct data[2] = { { 0 } };

        /* Without namespaces an unprivileged caller has no CAP_SETPCAP and nothing to drop. */
        bool weak = P->flags & HEAL_SANDBOX_ISOLATION_NONE;

        for (int c = 0; c <= P->cap_last_cap; c++)
                if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0 && errno != EINVAL &&
                    !(weak && errno == EPERM))
                        fail(STEP_CAPS, errno, -1, NULL);
        if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
                fail(STEP_CAPS, errno, -1, NULL);
        if (syscall(SYS_capset, &hdr, data) < 0)
                fail(STEP_CAPS, errno, -1, NULL);
}

static pid_t command_pid;

/*
 * Signal every sandboxed process. The command's process group first: killpg is atomic with
 * respect to fork (a fork racing with it fails), so a fork bomb cannot outrun it the way it
 * outruns a walk over the process list. Then the whole PID namespace, or without one our own
 * process group.
 */
static void kill_all(int sig)
{
        if (command_pid > 0)
                kill(-command_pid, sig);
        if (!(P->flags & HEAL_SANDBOX_ISOLATION_NONE))
                kill(-1, sig);
}

static int high_fd(int fd)
{
        return fd < 3 ? fcntl(fd, F_DUPFD_CLOEXEC, 3) : fd;
}

static _Noreturn void exec_command(void)
{
        union {
                const char *const *c;
                char *const *m;
        } argv = { .c = P->argv };
        const char *file = P->argv[0];
        const char *path = P->path_env ? P->path_env : "/usr/local/bin:/usr/bin:/bin";
        char buf[4096];
        int saved = ENOENT;

        if (P->clock)
                P->clock->exec_ns = clock_ns();
        if (strchr(file, '/')) {
                execve(file, argv.m, P->envp);
                fail(STEP_EXEC, errno, -1, file);
        }
        while (*path) {
                const char *end = strchrnul(path, ':');
                size_t dl = (size_t)(end - path);

                if (dl == 0) {
                        buf[0] = '.';
                        dl = 1;
                } else if (dl < sizeof(buf)) {
                        memcpy(buf, path, dl);
                }
                if (dl + strlen(file) + 2 <= sizeof(buf)) {
                        buf[dl] = '/';
                        memcpy(buf + dl + 1, file, strlen(file) + 1);
                        execve(buf, argv.m, P->envp);
                        if (errno != ENOENT && errno != ENOTDIR)
                                saved = errno;
                }
                path = *end ? end + 1 : end;
        }
        fail(STEP_EXEC, saved, -1, file);
}

static _Noreturn void command_main(void)
{
        struct sigaction ign = { .sa_handler = SIG_IGN };
        int in, out, err;
        sigset_t none;

        /* Every disposition is SIG_DFL already: child_main() reset them and init sets none. */
        /* A write past the file size limit fails with EFBIG instead of killing the writer. */
        sigaction(SIGXFSZ, &ign, NULL);
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        /* Without namespaces nothing else kills the command when heal dies: its parent, init,
         * dies then (PR_SET_PDEATHSIG), and so must it. */
        if ((P->flags & HEAL_SANDBOX_ISOLATION_NONE) && prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
                fail(STEP_STDIO, errno, -1, NULL);
        /* A new session; without namespaces a process group of its own in init's session, so
         * init can kill the group without killing itself. */
        if ((P->flags & HEAL_SANDBOX_ISOLATION_NONE) ? setpgid(0, 0) < 0 : setsid() < 0)
                fail(STEP_STDIO, errno, -1, NULL);
        in = high_fd(P->stdin_fd);
        out = high_fd(P->stdout_fd);
        err = high_fd(P->stderr_fd);
        if (in < 0 || out < 0 || err < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0)
                fail(STEP_STDIO, errno, -1, NULL);
        for (size_t i = 0; i < P->n_rlimits; i++)
                if (setrlimit(P->rlimits[i].resource, &P->rlimits[i].rl) < 0)
                        fail(STEP_RLIMIT, errno, P->rlimits[i].resource, NULL);
        /* Nothing but 0, 1, 2 survives execve (the report pipe is O_CLOEXEC already). */
        syscall(SYS_close_range, 3, ~0U, CLOSE_RANGE_CLOEXEC);
        drop_capabilities();
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                fail(STEP_NO_NEW_PRIVS, errno, -1, NULL);
        if (P->seccomp && syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, P->seccomp) < 0)
                fail(STEP_SECCOMP, errno, -1, NULL);
        exec_command();
}

static void report(const struct report *r)
{
        ssize_t _unused = write(P->report_fd, r, sizeof(*r));

        (void)_unused;
}

/*
 * The last report is written: exit once the parent has it, when it says so (CTL_BYE), closes its
 * end of the control socket or dies, and at the latest after LEAVE_MS. Exiting at once would run
 * our exit, and the teardown of the namespaces it starts, on the CPU the scheduler has just woken
 * the parent on (the waker's), ahead of the parent, which is all the caller waits for.
 */
#define LEAVE_MS 100

static _Noreturn void leave(void)
{
        struct pollfd pfd = { .fd = P->ctl_fd, .events = POLLIN };

        while (poll(&pfd, 1, LEAVE_MS) < 0 && errno == EINTR)
                ;
        _exit(0);
}

/*
 * The command is gone: kill whatever is left, reap it all, report the usage of everything and
 * leave. The parent can return as soon as this report and end-of-file on the output arrive,
 * without waiting for the kernel to tear the namespaces down after our exit. Without a PID
 * namespace a process that left the command's group (setsid) is not ours to wait for: reaping
 * stops after 100 ms. @pending, when not NULL, is the command's exit report not sent yet: with
 * nothing else left it goes in the same write as the last one (the parent wakes up once), else
 * now, before any wait.
 */
static _Noreturn void finish_run(int sfd, const struct report *pending)
{
        struct report r[2] = { { .kind = REPORT_DONE } };
        bool weak = P->flags & HEAL_SANDBOX_ISOLATION_NONE;
        struct pollfd pfd = { .fd = sfd, .events = POLLIN };
        struct signalfd_siginfo si;
        ssize_t _unused;

        kill_all(SIGKILL);
        if (pending) {
                pid_t pid;

                while ((pid = waitpid(-1, NULL, WNOHANG)) > 0 || (pid < 0 && errno == EINTR))
                        ;
                if (pid < 0 && errno == ECHILD) {
                        r[0] = *pending;
                        r[1] = (struct report){ .kind = REPORT_DONE };
                        getrusage(RUSAGE_CHILDREN, &r[1].ru);
                        _unused = write(P->report_fd, r, sizeof(r));
                        (void)_unused;
                        leave();
                }
                report(pending);
        }
        for (;;) {
                pid_t pid = waitpid(-1, NULL, weak ? WNOHANG : 0);

                if (pid > 0 || (pid < 0 && errno == EINTR))
                        continue;
                if (pid < 0 || poll(&pfd, 1, 100) <= 0)
                        break; /* ECHILD: nothing left; or weak mode and nothing more came */
                while (read(sfd, &si, sizeof(si)) > 0)
                        ;
        }
        getrusage(RUSAGE_CHILDREN, &r[0].ru);
        report(&r[0]);
        leave();
}

/*
 * Reap everything; when the command goes, report its status and finish. After CTL_QUIT, give
 * the other processes up to LEFTOVER_MS after the command went (and never past CTL_KILL): a shell
 * that dies on SIGQUIT must not cut short its children's stack dumps, and background jobs that
 * ignore SIGQUIT must not hold the run for the whole grace period.
 */
#define LEFTOVER_MS 300

static _Noreturn void init_loop(pid_t cmd, int sfd)
{
        struct pollfd pfd[2] = { { .fd = sfd, .events = POLLIN },
                                 { .fd = P->ctl_fd, .events = POLLIN } };
        bool quitting = false, cmd_done = false, exit_pending = false;
        struct report exit_rep = { .kind = REPORT_EXIT };
        uint64_t done_ns = 0;

        for (;;) {
                struct signalfd_siginfo si;
                int st;
                pid_t pid;
                char c;

                int timeout = -1;

                if (quitting && cmd_done) {
                        uint64_t waited = (clock_ns() - done_ns) / 1000000;

                        if (waited >= LEFTOVER_MS)
                                finish_run(sfd, NULL);
                        timeout = (int)(LEFTOVER_MS - waited);
                }
                if (poll(pfd, 2, timeout) < 0 && errno != EINTR)
                        _exit(125);
                if (pfd[1].revents) {
                        ssize_t n = read(P->ctl_fd, &c, 1);

                        if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) {
                                kill_all(SIGKILL); /* the parent is gone */
                                _exit(125);
                        }
                        if (n == 1 && c == CTL_QUIT) {
                                quitting = true;
                                /* aimed at each process's running thread (quit.c), where
                                 * the sandbox's own /proc lists only its processes */
                                if ((P->flags & HEAL_SANDBOX_ISOLATION_NONE) ||
                                    quit_processes() <= 0)
                                        kill_all(SIGQUIT);
                        }
                        if (n == 1 && c == CTL_KILL)
                                finish_run(sfd, exit_pending ? &exit_rep : NULL);
                }
                while (read(sfd, &si, sizeof(si)) > 0)
                        ;
                while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
                        if (pid == cmd) {
                                /* Finishing now: sent with the last report (finish_run). */
                                exit_rep.wstatus = st;
                                exit_pending = !quitting;
                                if (quitting)
                                        report(&exit_rep);
                                cmd_done = true;
                                done_ns = clock_ns();
                        }
                }
                if (cmd_done && (!quitting || (pid < 0 && errno == ECHILD)))
                        finish_run(sfd, exit_pending ? &exit_rep : NULL);
        }
}

static void wait_go(void)
{
        char c = 0;

        while (read(P->ctl_fd, &c, 1) < 0 && errno == EINTR)
                ;
        if (c != CTL_GO)
                _exit(125);
}

static bool go_received; /* the pooled path waited for CTL_GO before init started */

static int command_entry(void *arg)
{
        close(*(const int *)arg); /* init's signalfd */
        command_main();
}

#define COMMAND_STACK_SIZE (64 * 1024)

/*
 * Start @fn(@arg) in a child that shares our memory as posix_spawn(3)'s does (CLONE_VM |
 * CLONE_VFORK, plus @flags): we wait until it has called execve(2) or exited, so our address
 * space (the caller's) is not copied and nothing runs beside it. AddressSanitizer does not know
 * a stack of ours and warns on every run: its builds copy instead. Returns the pid or -1.
 */
static pid_t spawn_vfork(int (*fn)(void *), void *arg, size_t stack_size, unsigned long flags)
{
        pid_t pid;
#if defined(__SANITIZE_ADDRESS__)
        (void)stack_size;
        pid = (pid_t)syscall(SYS_clone, CLONE_VFORK | flags, NULL, NULL, NULL, 0);
        if (pid == 0)
                _exit(fn(arg));
#else
        char *stack = mmap(NULL, stack_size, PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);

        if (stack == MAP_FAILED)
                return -1;
        pid = clone(fn, stack + stack_size, CLONE_VM | CLONE_VFORK | flags, arg);
        munmap(stack, stack_size); /* the child has exec'd or exited */
#endif
        return pid;
}

/* The command, with its own file table, reaped by init (SIGCHLD). */
static pid_t start_command(int sfd)
{
        pid_t cmd = spawn_vfork(command_entry, &sfd, COMMAND_STACK_SIZE, SIGCHLD);

        if (cmd < 0)
                fail(STEP_FORK, errno, -1, NULL);
        return cmd;
}

/* Everything from the mounts on, in the process that is PID 1 of the sandbox. */
static _Noreturn void init_main(void)
{
        sigset_t chld;
        pid_t cmd;
        int sfd;

        if (!(P->flags & HEAL_SANDBOX_ISOLATION_NONE)) {
                setup_mounts();
                if (P->cwd && chdir(P->cwd) < 0)
                        fail(STEP_CHDIR, errno, -1, P->cwd);
                setup_host();
                if (P->clock)
                        P->clock->mounts_ns = clock_ns();
        } else {
                /* Orphans of the run come to init, which reaps them: no zombie is left behind. */
                if (setsid() < 0 || prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0)
                        fail(STEP_STDIO, errno, -1, NULL);
                if (P->cwd && chdir(P->cwd) < 0)
                        fail(STEP_CHDIR, errno, -1, P->cwd);
        }
        for (size_t i = 0; i < 2; i++)
                if (P->join_dirs[i] && write(P->join_fds[i], "0", 1) != 1)
                        fail(STEP_CGROUP_JOIN, P->join_fds[i] < 0 ? EBADF : errno, -1,
                             P->join_dirs[i]);
        close_other_fds();
        if (P->wait_go && !go_received)
                wait_go();
        if (P->new_cgroupns && unshare(CLONE_NEWCGROUP) < 0)
                fail(STEP_CGROUPNS, errno, -1, NULL);
        sigemptyset(&chld);
        sigaddset(&chld, SIGCHLD);
        sfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
        if (sfd < 0)
                fail(STEP_SIGNALFD, errno, -1, NULL);
        cmd = start_command(sfd);
        /* Only the command holds the output pipes now: their end-of-file means it is gone. */
        close(P->stdout_fd);
        close(P->stderr_fd);
        command_pid = cmd; /* leader of its own process group in both modes */
        init_loop(cmd, sfd);
}

static int init_entry(void *arg)
{
        (void)arg;
        prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0); /* our parent is the process below */
        init_main();
}

#define INIT_STACK_SIZE (256 * 1024)

/*
 * After join_pool(): start init, the first process of the new PID namespace, and wait for it.
 * It shares our memory and file table (CLONE_VM | CLONE_VFORK | CLONE_FILES, as posix_spawn
 * does) and we stay blocked until it exits, so nothing is copied and nothing runs beside it:
 * the parent's pidfd (ours), the output pipes and the report pipe behave as if init were us.
 * When we die (heal died: PR_SET_PDEATHSIG), init dies, and the kernel kills the namespace.
 */
static _Noreturn void start_init(void)
{
        int pid, st = 0;

        /* cgroup v2: the parent moves us; init must be made after that to be inside too. */
        if (P->wait_go) {
                wait_go();
                go_received = true;
        }
        pid = spawn_vfork(init_entry, NULL, INIT_STACK_SIZE, CLONE_FILES);
        if (pid < 0)
                fail(STEP_FORK, errno, -1, NULL);
        while (waitpid(pid, &st, __WALL) < 0 && errno == EINTR)
                ;
        _exit(WIFEXITED(st) ? WEXITSTATUS(st) : 125);
}

_Noreturn void child_main(const struct child_plan *plan)
{
        struct sigaction dfl = { .sa_handler = SIG_DFL };
        sigset_t all;

        P = plan;
        /* Inherited dispositions (a caller ignoring SIGCHLD) must not change how we reap. */
        sigfillset(&all);
        sigprocmask(SIG_SETMASK, &all, NULL);
        for (int s = 1; s < NSIG; s++)
                sigaction(s, &dfl, NULL);
        prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
        prctl(PR_SET_NAME, "heal-init", 0, 0, 0);
        if (P->flags & HEAL_SANDBOX_ISOLATION_NONE)
                init_main();
        if (P->pool_user_fd >= 0)
                join_pool();
        else
                setup_userns();
        if (P->clock)
                P->clock->maps_ns = clock_ns();
        if (P->pool_user_fd >= 0)
                start_init();
        init_main();
}
