/* SPDX-License-Identifier: MIT */
/*
 * A process-wide pool of one pre-made (user namespace, network namespace) pair.
 *
 * Creating a network namespace is the costliest single step of a sandbox's start: the kernel
 * registers the IPv4 and IPv6 sysctl tables and the loopback device of every new namespace,
 * about 0.35 ms here, more than the mounts of the whole default view. A process that runs
 * sandboxes one after another (the repair search, heal exec's stages, an MCP server, a
 * benchmark) makes the next pair while the current sandbox sets itself up on the other CPU,
 * and the next sandbox joins it with setns(2) instead of creating one.
 *
 * The network namespace has to come with its own user namespace (the IPC namespace comes
 * along, it registers sysctls too): joining a network namespace
 * needs CAP_SYS_ADMIN in the user namespace that owns it, and a sandbox that made a fresh user
 * namespace of its own has capabilities only there. So the pair is made together by a helper
 * that shares our memory and file table (clone(2) with CLONE_VM | CLONE_VFORK | CLONE_FILES,
 * as posix_spawn shares them): it writes its own uid/gid maps (user_namespaces(7): one line
 * mapping the writer's own id), brings loopback up, opens /proc/self/ns/{user,net} straight
 * into our file table and exits. Nothing of the caller is copied and no process lingers; the
 * two descriptors keep the namespaces alive.
 *
 * A pair serves one sandbox only, is never handed to a forked child of the process that made
 * it (two sandboxes must never share a network: the child closes what it inherited, and its
 * lock, condition variable and thread state start afresh, pthread_atfork(3)), nor to a run
 * whose uid or gid is no longer the one the pair maps, and is made once a first run is over
 * (so the second joins it); a process that runs a single sandbox says so with
 * HEAL_SANDBOX_NO_POOL (heal run does) and never pays for a set it would not use.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/util.h"
#include "sandbox-internal.h"

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pool_cond = PTHREAD_COND_INITIALIZER; /* wake the thread; pair made */
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;
static struct netns_pair pool = { -1, -1, -1 };
static uid_t pool_uid; /* the ids the pair's user namespace maps */
static gid_t pool_gid;
static pid_t thread_pid;  /* the process whose pool thread runs (none in a forked child) */
static unsigned requests; /* netpool_take() calls so far: a set is made after the first */
static bool wanted;       /* netpool_refill() asked for a pair */
static bool making;       /* the thread is making one */
static bool pool_broken;  /* making a pair failed once: do not pay for it again */

/* The helper's input and output; it lives on the caller's stack, shared with the helper. */
struct maker {
        char uid_map[64];
        char gid_map[64];
        int user_fd, net_fd, ipc_fd;
        int err; /* positive errno of the step that failed, or 0 */
};

/* Runs in the helper, on maker_stack, with every signal blocked: async-signal-safe calls only. */
static int make_pair(void *arg)
{
        struct maker *m = arg;
        int r;

        if ((r = child_write_file("/proc/self/setgroups", "deny")) < 0 && r != -ENOENT)
                return m->err = -r, 1;
        if ((r = child_write_file("/proc/self/uid_map", m->uid_map)) < 0 ||
            (r = child_write_file("/proc/self/gid_map", m->gid_map)) < 0 || (r = loopback_up()) < 0)
                return m->err = -r, 1;
        /* As child.c does for a sandbox: nested user namespaces fail with ENOSPC. Sandboxes
         * that allow them (HEAL_SANDBOX_ALLOW_USERNS) do not use the pool. */
        if ((r = child_write_file("/proc/sys/user/max_user_namespaces", "0")) < 0)
                return m->err = -r, 1;
        m->user_fd = open("/proc/self/ns/user", O_RDONLY | O_CLOEXEC);
        m->net_fd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
        m->ipc_fd = open("/proc/self/ns/ipc", O_RDONLY | O_CLOEXEC);
        if (m->user_fd < 0 || m->net_fd < 0 || m->ipc_fd < 0)
                return m->err = errno, 1;
        return 0;
}

static char maker_stack[16384] __attribute__((aligned(16))); /* the pool thread's only */

/* Make one pair into @ret; in the pool thread, without the lock. */
static int make(struct netns_pair *ret)
{
        struct maker m = { .user_fd = -1, .net_fd = -1, .ipc_fd = -1 };
        sigset_t all, old;
        int pid, e, st;

        pool_uid = getuid(); /* read by netpool_take() under the lock, after installing */
        pool_gid = getgid();
        snprintf(m.uid_map, sizeof(m.uid_map), "%u %u 1\n", pool_uid, pool_uid);
        snprintf(m.gid_map, sizeof(m.gid_map), "%u %u 1\n", pool_gid, pool_gid);
        /* The helper runs our signal handlers on our memory if a signal reaches it: none may. */
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        pid = clone(make_pair, maker_stack + sizeof(maker_stack),
                    CLONE_VM | CLONE_VFORK | CLONE_FILES | CLONE_NEWUSER | CLONE_NEWNET |
                            CLONE_NEWIPC,
                    &m);
        e = errno;
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (pid < 0)
                return -e;
        /* No exit signal: only __WALL reaps it, so a caller's waitpid(-1) cannot steal it. */
        while (waitpid(pid, &st, __WALL) < 0 && errno == EINTR)
                ;
        if (m.err || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
                safe_close(m.user_fd);
                safe_close(m.net_fd);
                safe_close(m.ipc_fd);
                return -(m.err ? m.err : EIO);
        }
        *ret = (struct netns_pair){ m.user_fd, m.net_fd, m.ipc_fd };
        return 0;
}

static void atfork_prepare(void);
static void atfork_parent(void);
static void atfork_child(void);

static void register_atfork(void)
{
        pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
}

static void close_set(struct netns_pair *p)
{
        safe_close(p->user_fd);
        safe_close(p->net_fd);
        safe_close(p->ipc_fd);
        *p = (struct netns_pair){ -1, -1, -1 };
}

/* fork(2) with the lock held by the forking thread, so that the child gets it in a known state. */
static void atfork_prepare(void)
{
        pthread_mutex_lock(&pool_lock);
}

static void atfork_parent(void)
{
        pthread_mutex_unlock(&pool_lock);
}

/* The child has no pool thread, and its copy of the condition variable may name waiters that
 * do not exist here (glibc cannot reuse it): start afresh, without the parent's set. */
static void atfork_child(void)
{
        pthread_mutex_init(&pool_lock, NULL);
        pthread_cond_init(&pool_cond, NULL);
        close_set(&pool);
        thread_pid = 0;
        wanted = making = false;
}

static void lock_pool(void)
{
        pthread_once(&atfork_once, register_atfork);
        pthread_mutex_lock(&pool_lock);
}

bool netpool_take(struct netns_pair *ret)
{
        bool got = false;

        lock_pool();
        requests++;
        /* A set being made is ready sooner than a cold start would make its own. */
        while (making)
                pthread_cond_wait(&pool_cond, &pool_lock);
        /* Made for other ids (the process changed its uid or gid since): the maps would lie. */
        if (pool.user_fd >= 0 && pool_uid == getuid() && pool_gid == getgid()) {
                *ret = pool;
                pool = (struct netns_pair){ -1, -1, -1 };
                got = true;
        }
        close_set(&pool);
        pthread_mutex_unlock(&pool_lock);
        return got;
}

/* The pool thread: every signal blocked, makes a pair whenever one is wanted and none is there. */
static void *pool_thread(void *arg)
{
        (void)arg;
        pthread_mutex_lock(&pool_lock);
        for (;;) {
                struct netns_pair pair;
                int r;

                while (!wanted || pool.user_fd >= 0 || pool_broken)
                        pthread_cond_wait(&pool_cond, &pool_lock);
                wanted = false;
                making = true;
                pthread_mutex_unlock(&pool_lock);
                r = make(&pair);
                pthread_mutex_lock(&pool_lock);
                making = false;
                wanted = false; /* whoever asked meanwhile is served by this set */
                if (r == 0 && pool.user_fd < 0) {
                        pool = pair;
                } else if (r == 0) {
                        close_set(&pair);
                } else {
                        pool_broken = true; /* the cold path explains why, run after run */
                }
                pthread_cond_broadcast(&pool_cond);
        }
        return NULL;
}

/* Start this process's pool thread; called with pool_lock held. */
static bool start_thread(void)
{
        sigset_t all, old;
        pthread_attr_t attr;
        pthread_t t;
        int r;

        if (thread_pid == getpid())
                return true;
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old); /* inherited: no signal is ever run there */
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        pthread_attr_setstacksize(&attr, 64 * 1024);
        r = pthread_create(&t, &attr, pool_thread, NULL);
        pthread_attr_destroy(&attr);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (r != 0)
                return false;
        thread_pid = getpid();
        return true;
}

void netpool_refill(void)
{
        lock_pool();
        if (pool.user_fd < 0 && !making && requests >= 1 && !pool_broken && start_thread()) {
                wanted = true;
                pthread_cond_broadcast(&pool_cond);
        }
        pthread_mutex_unlock(&pool_lock);
}

bool heal_sandbox_pool_wait(void)
{
        bool ready;

        lock_pool();
        while (thread_pid == getpid() && !pool_broken && (making || (wanted && pool.user_fd < 0)))
                pthread_cond_wait(&pool_cond, &pool_lock);
        ready = pool.user_fd >= 0;
        pthread_mutex_unlock(&pool_lock);
        return ready;
}

void heal_sandbox_pool_release(void)
{
        lock_pool();
        while (making)
                pthread_cond_wait(&pool_cond, &pool_lock);
        wanted = false;
        close_set(&pool);
        pthread_mutex_unlock(&pool_lock);
        plan_etc_release();
        mountwatch_release();
}
