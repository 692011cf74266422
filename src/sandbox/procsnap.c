/* SPDX-License-Identifier: MIT */
/*
 * The process snapshot taken when the wall-time limit hits: every process of the sandbox's PID
 * namespace with its state, wait channel and current syscall, read from the host's /proc
 * (this kernel may lack CONFIG_PROC_CHILDREN, so processes are found by their ns/pid inode).
 * See: proc(5) /proc/PID/stat, /proc/PID/wchan, /proc/PID/syscall, /proc/PID/status NSpid.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/util.h"
#include "sandbox-internal.h"

static int read_text(int dirfd, const char *name, char *buf, size_t len)
{
        int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);
        ssize_t n;

        buf[0] = '\0';
        if (fd < 0)
                return -errno;
        n = read(fd, buf, len - 1);
        close(fd);
        if (n < 0)
                return -errno;
        buf[n] = '\0';
        while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\0'))
                buf[--n] = '\0';
        return 0;
}

/* The innermost pid of NSpid: the pid inside the sandbox. */
static int ns_pid(int dirfd)
{
        char buf[4096], *line, *last;

        if (read_text(dirfd, "status", buf, sizeof(buf)) < 0 || !(line = strstr(buf, "NSpid:")))
                return -1;
        line[strcspn(line, "\n")] = '\0';
        last = strrchr(line, '\t');
        if (!last)
                last = strrchr(line, ' ');
        return last ? atoi(last + 1) : -1;
}

static void fill_proc(heal_sandbox_proc *p, int dirfd, long *host_ppid)
{
        char stat[1024], *rp;
        unsigned long ut = 0, st = 0;
        long tck = sysconf(_SC_CLK_TCK);

        if (read_text(dirfd, "stat", stat, sizeof(stat)) == 0 && (rp = strrchr(stat, ')'))) {
                char *lp = strchr(stat, '(');

                if (lp && rp > lp)
                        snprintf(p->comm, sizeof(p->comm), "%.*s", (int)(rp - lp - 1), lp + 1);
                /* after ")": state ppid pgrp session tty tpgid flags minflt cminflt majflt
                 * cmajflt utime stime */
                sscanf(rp + 2, "%c %ld %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &p->state,
                       host_ppid, &ut, &st);
        }
        p->cpu_ms = tck > 0 ? (ut + st) * 1000 / (unsigned long)tck : 0;
        read_text(dirfd, "wchan", p->wchan, sizeof(p->wchan));
        if (read_text(dirfd, "syscall", p->syscall, sizeof(p->syscall)) < 0)
                snprintf(p->syscall, sizeof(p->syscall), "unavailable");
}

int procsnap_take(heal_sandbox_proc **ret, size_t *ret_n, pid_t init_pid)
{
        heal_sandbox_proc *v = calloc(HEAL_SNAPSHOT_PROCS_MAX, sizeof(*v));
        long host_pid[HEAL_SNAPSHOT_PROCS_MAX], host_ppid[HEAL_SNAPSHOT_PROCS_MAX];
        char path[300];
        struct stat ns, st;
        struct dirent *de;
        size_t n = 0;
        DIR *d;

        /* pid_for_children, not pid: a run that joined the pool's namespaces is watched through
         * the process that started init, which is itself still in the caller's namespace. */
        snprintf(path, sizeof(path), "/proc/%d/ns/pid_for_children", (int)init_pid);
        if (!v || stat(path, &ns) < 0 || !(d = opendir("/proc"))) {
                free(v);
                return -errno;
        }
        while ((de = readdir(d)) && n < HEAL_SNAPSHOT_PROCS_MAX) {
                int dirfd;

                if (de->d_name[0] < '0' || de->d_name[0] > '9')
                        continue;
                snprintf(path, sizeof(path), "/proc/%s/ns/pid", de->d_name);
                if (stat(path, &st) < 0 || st.st_ino != ns.st_ino || st.st_dev != ns.st_dev)
                        continue;
                snprintf(path, sizeof(path), "/proc/%s", de->d_name);
                dirfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (dirfd < 0)
                        continue;
                host_pid[n] = atol(de->d_name);
                host_ppid[n] = 0;
                v[n].pid = ns_pid(dirfd);
                fill_proc(&v[n], dirfd, &host_ppid[n]);
                close(dirfd);
                n++;
        }
        closedir(d);
        for (size_t i = 0; i < n; i++)
                for (size_t j = 0; j < n; j++)
                        if (host_ppid[i] == host_pid[j])
                                v[i].ppid = v[j].pid;
        *ret = v;
        *ret_n = n;
        return 0;
}
