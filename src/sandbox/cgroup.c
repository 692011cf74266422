/* SPDX-License-Identifier: MIT */
/*
 * Memory and process limits through a cgroup, where heal can write one: cgroup v2 (a delegated
 * subtree, the root as root, or $HEAL_CGROUP), else the v1 memory and pids hierarchies (hybrid
 * layouts like this project's CI machine), else nothing and the limits fall back to rlimits.
 * Each run gets its own child cgroup, removed when the run is reaped.
 * See: Documentation/admin-guide/cgroup-v2.rst, cgroup-v1/memory.rst, cgroup-v1/pids.rst.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/util.h"
#include "sandbox-internal.h"

struct cg_base {
        bool v2; /* v2 usable for both controllers */
        char v2_dir[PATH_MAX];
        char v1_mem[PATH_MAX]; /* "" when unusable */
        char v1_pids[PATH_MAX];
};

static struct cg_base base;
static pthread_once_t base_once = PTHREAD_ONCE_INIT;
static atomic_uint run_seq;

static int read_small(const char *path, char *buf, size_t len)
{
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        ssize_t n;

        if (fd < 0)
                return -errno;
        n = read(fd, buf, len - 1);
        close(fd);
        if (n < 0)
                return -errno;
        buf[n] = '\0';
        return (int)n;
}

static int write_str(const char *dir, const char *file, const char *value)
{
        char path[PATH_MAX];
        int fd, r = 0;

        if (str_printf(path, sizeof(path), "%s/%s", dir, file) < 0)
                return -ENAMETOOLONG;
        fd = open(path, O_WRONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        if (write(fd, value, strlen(value)) < 0)
                r = -errno;
        close(fd);
        return r;
}

/* Where this process sits in each hierarchy, read once from /proc/self/{mountinfo,cgroup}. */
struct cg_layout {
        char v2_mnt[PATH_MAX], mem_mnt[PATH_MAX], pids_mnt[PATH_MAX];
        char v2_own[PATH_MAX], mem_own[PATH_MAX], pids_own[PATH_MAX];
};

static bool has_word(const char *list, const char *word)
{
        size_t n = strlen(word);

        for (const char *p = list; (p = strstr(p, word)); p += n)
                if ((p == list || p[-1] == ',') && (p[n] == '\0' || p[n] == ','))
                        return true;
        return false;
}

static void read_mounts(struct cg_layout *l)
{
        FILE *f = fopen("/proc/self/mountinfo", "re");
        char line[4096];

        while (f && fgets(line, sizeof(line), f)) {
                char mnt[PATH_MAX], fstype[64], super[1024];
                char *dash = strstr(line, " - ");

                if (!dash || sscanf(line, "%*s %*s %*s %*s %4095s", mnt) != 1 ||
                    sscanf(dash, " - %63s %*s %1023s", fstype, super) != 2)
                        continue;
                if (strcmp(fstype, "cgroup2") == 0 && !l->v2_mnt[0])
                        (void)str_printf(l->v2_mnt, sizeof(l->v2_mnt), "%s", mnt);
                else if (strcmp(fstype, "cgroup") == 0 && has_word(super, "memory"))
                        (void)str_printf(l->mem_mnt, sizeof(l->mem_mnt), "%s", mnt);
                else if (strcmp(fstype, "cgroup") == 0 && has_word(super, "pids"))
                        (void)str_printf(l->pids_mnt, sizeof(l->pids_mnt), "%s", mnt);
        }
        if (f)
                fclose(f);
}

static void read_own(struct cg_layout *l)
{
        FILE *f = fopen("/proc/self/cgroup", "re");
        char line[4096];

        while (f && fgets(line, sizeof(line), f)) {
                char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
                const char *path;

                if (!c2)
                        continue;
                *c2 = '\0';
                path = c2 + 1;
                c2[1 + strcspn(c2 + 1, "\n")] = '\0';
                if (strcmp(path, "/") == 0)
                        path = "";
                if (c1[1] == '\0')
                        (void)str_printf(l->v2_own, sizeof(l->v2_own), "%s", path);
                else if (has_word(c1 + 1, "memory"))
                        (void)str_printf(l->mem_own, sizeof(l->mem_own), "%s", path);
                else if (has_word(c1 + 1, "pids"))
                        (void)str_printf(l->pids_own, sizeof(l->pids_own), "%s", path);
        }
        if (f)
                fclose(f);
}

/* A v1 hierarchy is usable when our cgroup there is writable (cgroup.procs, not the limit
 * files: a hierarchy's root cgroup has no pids.max). */
static void detect_v1(char *ret, size_t len, const char *mnt, const char *own)
{
        char dir[PATH_MAX * 2], probe[PATH_MAX * 2 + 16];

        ret[0] = '\0';
        if (!mnt[0] || str_printf(dir, sizeof(dir), "%s%s", mnt, own) < 0 ||
            str_printf(probe, sizeof(probe), "%s/cgroup.procs", dir) < 0)
                return;
        if (access(dir, W_OK) == 0 && access(probe, W_OK) == 0)
                (void)str_printf(ret, len, "%s", dir);
}

static void detect_v2(const struct cg_layout *l)
{
        const char *env = getenv("HEAL_CGROUP");
        char path[PATH_MAX + 32], ctl[256] = "";

        if (env && *env) {
                if (str_printf(base.v2_dir, sizeof(base.v2_dir), "%s", env) < 0)
                        return;
        } else if (!l->v2_mnt[0] ||
                   str_printf(base.v2_dir, sizeof(base.v2_dir), "%s%s", l->v2_mnt, l->v2_own) < 0) {
                return;
        }
        if (str_printf(path, sizeof(path), "%s/cgroup.controllers", base.v2_dir) < 0 ||
            access(base.v2_dir, W_OK) < 0 || read_small(path, ctl, sizeof(ctl)) < 0 ||
            !strstr(ctl, "memory") || !strstr(ctl, "pids"))
                return;
        /* Children may only get controllers the parent hands down; this fails (EBUSY) when the
         * cgroup holds processes itself and is not the root: then v2 is not ours to use. */
        if (write_str(base.v2_dir, "cgroup.subtree_control", "+memory +pids") < 0)
                return;
        base.v2 = true;
}

/* Remove heal-PID-N cgroups of heal processes that died without cleaning up (SIGKILL). A cgroup
 * that still holds processes refuses rmdir and stays. */
static void prune_stale(const char *parent)
{
        DIR *d = parent[0] ? opendir(parent) : NULL;
        struct dirent *de;

        while (d && (de = readdir(d))) {
                char path[PATH_MAX * 2];
                int pid;

                if (sscanf(de->d_name, "heal-%d-", &pid) != 1 || pid <= 0 ||
                    (kill(pid, 0) < 0 && errno == EPERM) || (kill(pid, 0) == 0))
                        continue;
                if (str_printf(path, sizeof(path), "%s/%s", parent, de->d_name) == 0)
                        (void)rmdir(path);
        }
        if (d)
                closedir(d);
}

static void detect(void)
{
        static struct cg_layout l; /* PATH_MAX x 6: not on the stack */

        read_mounts(&l);
        read_own(&l);
        detect_v2(&l);
        if (!base.v2) {
                detect_v1(base.v1_mem, sizeof(base.v1_mem), l.mem_mnt, l.mem_own);
                detect_v1(base.v1_pids, sizeof(base.v1_pids), l.pids_mnt, l.pids_own);
        }
        prune_stale(base.v2 ? base.v2_dir : "");
        prune_stale(base.v1_mem);
        prune_stale(base.v1_pids);
}

heal_sandbox_enforcement cgroup_probe(bool *ret_mem, bool *ret_pids, char *where, size_t len)
{
        pthread_once(&base_once, detect);
        *ret_mem = base.v2 || base.v1_mem[0];
        *ret_pids = base.v2 || base.v1_pids[0];
        if (base.v2) {
                (void)str_printf(where, len, "%s", base.v2_dir);
                return HEAL_ENFORCE_CGROUP_V2;
        }
        (void)str_printf(where, len, "%s%s%s", base.v1_mem,
                         base.v1_mem[0] && base.v1_pids[0] ? ", " : "", base.v1_pids);
        return *ret_mem || *ret_pids ? HEAL_ENFORCE_CGROUP_V1 : HEAL_ENFORCE_RLIMIT;
}

static char *make_child(const char *parent)
{
        char *dir;

        if (asprintf(&dir, "%s/heal-%d-%u", parent, (int)getpid(), atomic_fetch_add(&run_seq, 1)) <
            0)
                return NULL;
        if (mkdir(dir, 0755) < 0) {
                free(dir);
                return NULL;
        }
        return dir;
}

/* Write @limit (0: none) to @file of @dir; true when the cgroup now enforces it. */
static bool write_limit(const char *dir, const char *file, uint64_t limit, bool v2)
{
        char v[32];

        if (limit)
                snprintf(v, sizeof(v), "%llu", (unsigned long long)limit);
        else
                snprintf(v, sizeof(v), "%s", v2 ? "max" : "-1");
        return write_str(dir, file, v) == 0 && limit;
}

static void make_dirs(struct cgroup_run *cg, const heal_sandbox_limits *limits)
{
        if (base.v2) {
                if (!cg->mem_dir && (cg->mem_dir = make_child(base.v2_dir)))
                        cg->pids_dir = cg->mem_dir;
                cg->mode = HEAL_ENFORCE_CGROUP_V2;
                return;
        }
        if (base.v1_mem[0] && limits->mem_max_bytes && !cg->mem_dir)
                cg->mem_dir = make_child(base.v1_mem);
        if (base.v1_pids[0] && limits->pids_max && !cg->pids_dir)
                cg->pids_dir = make_child(base.v1_pids);
        if (cg->mem_dir || cg->pids_dir)
                cg->mode = HEAL_ENFORCE_CGROUP_V1;
}

int cgroup_prepare(struct cgroup_run *cg, const heal_sandbox_limits *limits)
{
        bool v2;

        pthread_once(&base_once, detect);
        make_dirs(cg, limits);
        v2 = cg->mode == HEAL_ENFORCE_CGROUP_V2;
        if (cg->mem_dir && (cg->mem_limit != limits->mem_max_bytes || !cg->mem)) {
                cg->mem = write_limit(cg->mem_dir, v2 ? "memory.max" : "memory.limit_in_bytes",
                                      limits->mem_max_bytes, v2);
                /* no swapping around the limit, where swap is accounted */
                if (v2)
                        (void)write_str(cg->mem_dir, "memory.swap.max", "0");
                else if (cg->mem)
                        (void)write_limit(cg->mem_dir, "memory.memsw.limit_in_bytes",
                                          limits->mem_max_bytes, false);
                cg->mem_limit = limits->mem_max_bytes;
        }
        if (cg->pids_dir && (cg->pids_limit != limits->pids_max || !cg->pids)) {
                cg->pids = write_limit(cg->pids_dir, "pids.max", limits->pids_max, v2);
                cg->pids_limit = limits->pids_max;
        }
        return 0;
}

static uint64_t read_key(const char *dir, const char *file, const char *key);

/* Before each run: take the event counters as the baseline and reset the peak. */
void cgroup_begin(struct cgroup_run *cg)
{
        bool v2 = cg->mode == HEAL_ENFORCE_CGROUP_V2;
        char path[PATH_MAX];

        if (cg->mem) {
                cg->oom_base = read_key(cg->mem_dir, v2 ? "memory.events" : "memory.oom_control",
                                        "oom_kill");
                if (!v2) {
                        (void)write_str(cg->mem_dir, "memory.max_usage_in_bytes", "0");
                } else {
                        /* Linux >= 6.12: a write resets the peak seen through this fd. */
                        if (cg->peak_fd < 0 &&
                            str_printf(path, sizeof(path), "%s/memory.peak", cg->mem_dir) == 0)
                                cg->peak_fd = open(path, O_RDWR | O_CLOEXEC);
                        if (cg->peak_fd >= 0 && write(cg->peak_fd, "reset\n", 6) < 0)
                                cg->peak_fd = safe_close(cg->peak_fd);
                }
        }
        if (cg->pids)
                cg->pids_base = read_key(cg->pids_dir, "pids.events", "max");
}

int cgroup_attach(const struct cgroup_run *cg, pid_t pid)
{
        char v[32];
        int r = 0;

        snprintf(v, sizeof(v), "%d", (int)pid);
        if (cg->mem_dir && (cg->mem || cg->mode == HEAL_ENFORCE_CGROUP_V2))
                r = write_str(cg->mem_dir, "cgroup.procs", v);
        if (r >= 0 && cg->pids_dir && cg->pids_dir != cg->mem_dir && cg->pids)
                r = write_str(cg->pids_dir, "cgroup.procs", v);
        return r;
}

/*
 * Writing a pid to cgroup.procs takes the global cgroup_threadgroup_rwsem for writing, which
 * waits for an RCU grace period once it has been idle: about 10 ms per run here. A thread that
 * moves only itself ("0" to a v1 "tasks" file) skips that lock (cgroup_procs_write_start() in
 * kernel/cgroup/cgroup.c): init, single-threaded right after clone, joins that way, in 0.2 ms.
 * The files are opened here, by the parent, so the permission check is the caller's.
 */
int cgroup_join_fds(struct cgroup_run *cg, int fds[2], const char *dirs[2], heal_error *err)
{
        const char *want[2] = { cg->mem ? cg->mem_dir : NULL,
                                cg->pids && cg->pids_dir != cg->mem_dir ? cg->pids_dir : NULL };
        char path[PATH_MAX];
        size_t n = 0;

        if (cg->mode != HEAL_ENFORCE_CGROUP_V1)
                return 0;
        for (size_t i = 0; i < 2; i++) {
                if (!want[i])
                        continue;
                if (cg->tasks_fd[i] < 0 &&
                    (str_printf(path, sizeof(path), "%s/tasks", want[i]) < 0 ||
                     (cg->tasks_fd[i] = open(path, O_WRONLY | O_CLOEXEC)) < 0))
                        return heal_error_set(err, -errno,
                                              "cannot join the cgroup '%s' (its tasks file): %s; "
                                              "memory and process limits would not hold",
                                              want[i], strerror(errno));
                fds[n] = cg->tasks_fd[i];
                dirs[n++] = want[i];
        }
        return 0;
}

/* The number after @key in a "key value" list such as memory.events, or 0. */
static uint64_t read_key(const char *dir, const char *file, const char *key)
{
        char path[PATH_MAX], buf[4096];
        const char *p;
        size_t kl = strlen(key);

        if (str_printf(path, sizeof(path), "%s/%s", dir, file) < 0 ||
            read_small(path, buf, sizeof(buf)) < 0)
                return 0;
        for (p = buf; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
                if (strncmp(p, key, kl) == 0 && p[kl] == ' ')
                        return strtoull(p + kl + 1, NULL, 10);
        return 0;
}

static uint64_t read_u64(const char *dir, const char *file)
{
        char path[PATH_MAX], buf[64];

        if (str_printf(path, sizeof(path), "%s/%s", dir, file) < 0)
                return 0;
        return read_small(path, buf, sizeof(buf)) > 0 ? strtoull(buf, NULL, 10) : 0;
}

void cgroup_collect(const struct cgroup_run *cg, uint64_t *ret_peak, bool *ret_oom,
                    bool *ret_pids_hit)
{
        bool v2 = cg->mode == HEAL_ENFORCE_CGROUP_V2;
        char buf[64];
        ssize_t n;

        if (cg->mem) {
                if (!v2) {
                        *ret_peak = read_u64(cg->mem_dir, "memory.max_usage_in_bytes");
                } else if (cg->peak_fd >= 0 &&
                           (n = pread(cg->peak_fd, buf, sizeof(buf) - 1, 0)) > 0) {
                        buf[n] = '\0';
                        *ret_peak = strtoull(buf, NULL, 10);
                }
                *ret_oom = read_key(cg->mem_dir, v2 ? "memory.events" : "memory.oom_control",
                                    "oom_kill") > cg->oom_base;
        }
        if (cg->pids)
                *ret_pids_hit = read_key(cg->pids_dir, "pids.events", "max") > cg->pids_base;
}

static void remove_dir(const char *dir)
{
        /* Right after the reap the kernel may still be tearing the last task down. */
        for (int i = 0; i < 200 && rmdir(dir) < 0 && errno == EBUSY; i++)
                nanosleep(&(struct timespec){ .tv_nsec = 1000000 }, NULL);
}

void cgroup_release(struct cgroup_run *cg)
{
        safe_close(cg->peak_fd);
        safe_close(cg->tasks_fd[0]);
        safe_close(cg->tasks_fd[1]);
        if (cg->pids_dir && cg->pids_dir != cg->mem_dir) {
                remove_dir(cg->pids_dir);
                free(cg->pids_dir);
        }
        if (cg->mem_dir) {
                remove_dir(cg->mem_dir);
                free(cg->mem_dir);
        }
        memset(cg, 0, sizeof(*cg));
        cg->peak_fd = cg->tasks_fd[0] = cg->tasks_fd[1] = -1;
}
