/* SPDX-License-Identifier: MIT */
/*
 * SIGQUIT at the wall-time limit, aimed: each process gets it on its busiest running thread
 * (state R, most CPU time) when that thread does not block it, else process-directed as
 * before. Go prints the stack of the goroutine running on the thread the signal lands on, and
 * "goroutine running on other thread; stack unavailable" for the others: a spinning goroutine
 * is named only when the signal reaches its thread. A runtime that blocks SIGQUIT in its
 * working threads (the JVM's dispatcher thread takes it with sigwait) still gets the
 * process-directed one.
 * Runs in the sandbox's init, a child of a possibly multi-threaded caller: raw syscalls and
 * stack buffers only, no malloc.
 * See: proc(5) (/proc/PID/task/TID/stat fields 3, 14, 15; status SigBlk), tgkill(2).
 */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sandbox-internal.h"

static long read_small(const char *path, char *buf, size_t len)
{
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        ssize_t n;

        if (fd < 0)
                return -1;
        n = read(fd, buf, len - 1);
        close(fd);
        if (n < 0)
                return -1;
        buf[n] = '\0';
        return n;
}

static unsigned long parse_ul(const char *s, const char **end)
{
        unsigned long v = 0;

        while (*s >= '0' && *s <= '9')
                v = v * 10 + (unsigned long)(*s++ - '0');
        if (end)
                *end = s;
        return v;
}

/* "/proc/" + a + "/" + b + "/" + c into @out. */
static void path3(char *out, size_t len, const char *a, const char *b, const char *c)
{
        size_t n = 0;
        const char *parts[] = { "/proc/", a, b ? "/task/" : NULL, b, "/", c };

        out[0] = '\0';
        for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
                size_t k = parts[i] ? strlen(parts[i]) : 0;

                if (!parts[i] || n + k + 1 > len)
                        continue;
                memcpy(out + n, parts[i], k);
                n += k;
                out[n] = '\0';
        }
}

/* Is thread @tid of @pid running, and how much CPU has it used? (stat: "pid (comm) S ...") */
static bool thread_running(const char *pid, const char *tid, unsigned long *cpu)
{
        char path[96], buf[1024];
        const char *p;

        path3(path, sizeof(path), pid, tid, "stat");
        if (read_small(path, buf, sizeof(buf)) <= 0 || !(p = strrchr(buf, ')')))
                return false;
        p += 2; /* the state letter */
        if (*p != 'R')
                return false;
        for (int field = 3; field < 14 && *p; p++) /* to field 14, utime */
                if (*p == ' ')
                        field++;
        *cpu = parse_ul(p, &p);
        *cpu += parse_ul(p + 1, NULL);
        return true;
}

static bool blocks_sigquit(const char *pid, const char *tid)
{
        char path[96], buf[2048];
        const char *p;
        unsigned long mask = 0;

        path3(path, sizeof(path), pid, tid, "status");
        if (read_small(path, buf, sizeof(buf)) <= 0 || !(p = strstr(buf, "SigBlk:")))
                return true; /* unknown: do not aim */
        for (p += 7; *p == '\t' || *p == ' '; p++)
                ;
        for (; (*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f'); p++)
                mask = mask << 4 | (unsigned long)(*p <= '9' ? *p - '0' : *p - 'a' + 10);
        return mask & (1UL << (SIGQUIT - 1));
}

/* The busiest running thread of @pid that takes SIGQUIT, or 0. */
static pid_t busiest_thread(const char *pid)
{
        char path[64], buf[4096];
        unsigned long best_cpu = 0;
        pid_t best = 0;
        int fd;
        long n;

        path3(path, sizeof(path), pid, NULL, "task");
        fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return 0;
        while ((n = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0) {
                for (long off = 0; off < n;) {
                        struct dirent64 *de = (struct dirent64 *)(void *)(buf + off);
                        unsigned long cpu;

                        off += de->d_reclen;
                        if (de->d_name[0] < '0' || de->d_name[0] > '9')
                                continue;
                        if (thread_running(pid, de->d_name, &cpu) && (!best || cpu > best_cpu) &&
                            !blocks_sigquit(pid, de->d_name)) {
                                best = (pid_t)parse_ul(de->d_name, NULL);
                                best_cpu = cpu;
                        }
                }
        }
        close(fd);
        return best;
}

int quit_processes(void)
{
        char buf[4096], self_link[32];
        pid_t self = getpid();
        int fd, sent = 0;
        ssize_t k;
        long n;

        /* Only the sandbox's own /proc: a /proc of another PID namespace (a plan that binds the
         * host's) numbers other processes. */
        k = readlink("/proc/self", self_link, sizeof(self_link) - 1);
        if (k <= 0)
                return -1;
        self_link[k] = '\0';
        if ((pid_t)parse_ul(self_link, NULL) != self)
                return -1;
        fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return -1;
        while ((n = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0) {
                for (long off = 0; off < n;) {
                        struct dirent64 *de = (struct dirent64 *)(void *)(buf + off);
                        pid_t pid, tid;

                        off += de->d_reclen;
                        if (de->d_name[0] < '0' || de->d_name[0] > '9')
                                continue;
                        pid = (pid_t)parse_ul(de->d_name, NULL);
                        if (pid == self || pid == 1)
                                continue;
                        tid = busiest_thread(de->d_name);
                        if (tid > 0 && syscall(SYS_tgkill, pid, tid, SIGQUIT) == 0)
                                sent++;
                        else if (kill(pid, SIGQUIT) == 0)
                                sent++;
                }
        }
        close(fd);
        return sent;
}
