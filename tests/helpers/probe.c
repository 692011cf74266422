/* SPDX-License-Identifier: MIT */
/*
 * Runs inside the sandbox and prints one "name=result" line per probe, where result is "ok" or
 * the errno name. The tests assert on these lines: what libc needs must work (clone3 threads,
 * rseq, faccessat2, close_range), what the filter refuses must fail with the documented errno.
 */

#include <errno.h>
#include <fcntl.h>
#include <linux/keyctl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

extern __attribute__((weak)) const unsigned int __rseq_size;

static void report(const char *name, long r)
{
        printf("%s=%s\n", name, r >= 0 ? "ok" : strerrorname_np(errno));
}

static void *thread_fn(void *arg)
{
        return arg;
}

int main(void)
{
        pthread_t t;
        int fds[2];
        char c = 'x';

        setvbuf(stdout, NULL, _IOLBF, 0);
        errno = pthread_create(&t, NULL, thread_fn, NULL);
        report("pthread_create", errno ? -1 : 0);
        if (!errno)
                pthread_join(t, NULL);
        printf("rseq_registered=%s\n", &__rseq_size && __rseq_size > 0 ? "yes" : "no");
        report("faccessat2", syscall(SYS_faccessat2, AT_FDCWD, "/bin/sh", X_OK, AT_EACCESS));
        report("close_range", pipe(fds) < 0 ? -1 : syscall(SYS_close_range, fds[0], fds[1], 0));
        report("clone3_probe", syscall(SYS_clone3, NULL, 0)); /* EFAULT/EINVAL: reachable */
        report("ptrace", ptrace(PTRACE_TRACEME, 0, NULL, NULL));
        report("bpf", syscall(SYS_bpf, 0, NULL, 0));
        report("io_uring_setup", syscall(SYS_io_uring_setup, 1, NULL));
        report("keyctl", syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, 0, 0));
        report("perf_event_open", syscall(SYS_perf_event_open, NULL, 0, -1, -1, 0));
        report("userfaultfd", syscall(SYS_userfaultfd, 0));
        report("mount", mount("none", "/tmp", "tmpfs", 0, NULL));
        report("unshare_user", unshare(CLONE_NEWUSER));
        report("unshare_net", unshare(CLONE_NEWNET));
        report("tiocsti", ioctl(0, TIOCSTI, &c));
        report("tiocsti_highbits", syscall(SYS_ioctl, 0, 0xffffffff00000000UL | TIOCSTI, &c));
        report("sethostname", sethostname("x", 1));
        report("setuid0", setuid(0));
        /* A 32-bit int 0x80 call (getpid = 20 on i386) must be refused, not executed. */
        {
                long r;

                __asm__ volatile("int $0x80"
                                 : "=a"(r)
                                 : "a"(20L)
                                 : "memory", "r8", "r9", "r10", "r11");
                printf("int80=%s\n", r == -ENOSYS ? "ENOSYS" : r < 0 ? "error" : "ok");
        }
        /* Descriptors above 2 must not have leaked in. */
        for (int fd = 3; fd < 1024; fd++)
                if (fcntl(fd, F_GETFD) >= 0)
                        printf("leaked_fd=%d\n", fd);
        printf("sid_is_self=%s\n", getsid(0) == getpid() ? "yes" : "no");
        printf("uid=%d gid=%d\n", (int)getuid(), (int)getgid());
        return 0;
}
