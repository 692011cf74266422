/* SPDX-License-Identifier: MIT */
/*
 * The pool of pre-made user, network and IPC namespaces (src/sandbox/netpool.c): a run that
 * joins them must be contained exactly like one that creates its own, each set must serve one
 * sandbox only, never across fork(2), and its descriptors must come back.
 */
#include <grp.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

TestSuite(pool, .timeout = 60);

/* What a run sees of its namespaces, one "key=value" per line. */
static const char probe_script[] =
        "echo uid_map=$(awk '{print $1 \",\" $2 \",\" $3}' /proc/self/uid_map)\n"
        "echo max_userns=$(cat /proc/sys/user/max_user_namespaces)\n"
        "echo pid=$$ host=$(cat /proc/sys/kernel/hostname)\n"
        "echo links=$(tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | tr '\\n' ,)\n"
        "echo shm=$(ipcs -m | grep -c '^0x')\n"
        "ipcmk -M 4096 >/dev/null && echo shm_after=$(ipcs -m | grep -c '^0x')\n"
        "unshare -U true 2>/dev/null && echo nested=yes || echo nested=no\n"
        "/usr/bin/python3 -c 'import socket\n"
        "s = socket.socket(); s.bind((\"127.0.0.1\", 0)); s.listen()\n"
        "c = socket.create_connection(s.getsockname()); print(\"loopback=up\")'\n";

/* Runs on @sb until the pool has a set ready for the next one. */
static void warm(heal_sandbox *sb)
{
        heal_sandbox_result r = { 0 };

        test_run(sb, (const char *const[]){ "/bin/true", NULL }, &r);
        heal_sandbox_result_release(&r);
        cr_assert(heal_sandbox_pool_wait(), "no set made after a run");
}

static void value(const heal_sandbox_result *r, const char *key, char *out, size_t len)
{
        char pat[64];
        const char *p, *e;

        snprintf(pat, sizeof(pat), "%s=", key);
        p = strstr(r->out, pat);
        cr_assert_not_null(p, "no %s in output:\n%s\n%s", key, r->out, r->err);
        p += strlen(pat);
        e = p + strcspn(p, " \n");
        cr_assert_lt((size_t)(e - p), len);
        memcpy(out, p, (size_t)(e - p));
        out[e - p] = '\0';
}

static void assert_contained(const heal_sandbox_result *r)
{
        char v[128], map[64];

        cr_assert_eq(r->status, HEAL_STATUS_OK, "%s\n%s\n%s", r->message, r->out, r->err);
        snprintf(map, sizeof(map), "%u,%u,1", getuid(), getuid());
        value(r, "uid_map", v, sizeof(v));
        cr_assert_str_eq(v, map);
        value(r, "max_userns", v, sizeof(v));
        cr_assert_str_eq(v, "0");
        value(r, "pid", v, sizeof(v));
        cr_assert_str_eq(v, "2", "the command is the second process of its PID namespace");
        value(r, "host", v, sizeof(v));
        cr_assert_str_eq(v, "heal");
        value(r, "links", v, sizeof(v));
        cr_assert_str_eq(v, "lo,", "a fresh network namespace has loopback only");
        value(r, "shm", v, sizeof(v));
        cr_assert_str_eq(v, "0", "a previous run's SysV segment is visible");
        value(r, "shm_after", v, sizeof(v));
        cr_assert_str_eq(v, "1");
        value(r, "nested", v, sizeof(v));
        cr_assert_str_eq(v, "no", "nested user namespaces must be refused");
        value(r, "loopback", v, sizeof(v));
        cr_assert_str_eq(v, "up");
}

Test(pool, joined_namespaces_are_contained_as_made_ones_and_never_reused)
{
        const char *argv[] = { "/bin/sh", "-c", probe_script, NULL };
        heal_sandbox *sb = test_sandbox("/");

        test_require("ipcmk");
        cr_assert(!heal_sandbox_pool_wait(), "nothing asked for yet");
        for (int i = 0; i < 6; i++) {
                heal_sandbox_result r = { 0 };

                if (i >= 1)
                        cr_assert(heal_sandbox_pool_wait(), "run %d: no set made", i);
                test_run(sb, argv, &r);
                /* The first run makes its own; a set is made once it is over. */
                cr_assert_eq(r.timing.pooled, i >= 1, "run %d pooled=%d", i, r.timing.pooled);
                /* Each run leaves a SysV segment behind in its IPC namespace: the next one
                 * must not see it (namespace inode numbers are recycled, and say nothing). */
                assert_contained(&r);
                heal_sandbox_result_release(&r);
        }
        heal_sandbox_free(sb);
}

/* The child of a fork(2) taken while the pool's thread waits: three runs (one made the fork
 * child hang in pthread_cond_broadcast on the parent's condition variable), the first cold,
 * the third on a set of its own. */
Test(pool, a_forked_child_never_gets_its_parents_set)
{
        const char *argv[] = { "/bin/sh", "-c", "readlink /proc/self/ns/net", NULL };
        heal_sandbox *sb = test_sandbox("/");
        heal_sandbox_result r = { 0 };
        char child[3][64] = { "" }, parent_net[64] = "";
        int fds[2], st, pooled[3] = { 0 };
        pid_t pid;

        warm(sb); /* from now on every run can join a set */
        cr_assert_eq(pipe(fds), 0);
        pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0) {
                heal_error err = HEAL_ERROR_INIT;
                char line[512];
                int n = 0;

                alarm(20); /* a hang shows as SIGALRM, not as the suite's timeout */
                for (int i = 0; i < 3; i++) {
                        if (i == 2 && !heal_sandbox_pool_wait())
                                _exit(4);
                        if (heal_sandbox_run(sb, argv, &r, &err) < 0 || r.status != HEAL_STATUS_OK)
                                _exit(2);
                        n += snprintf(line + n, sizeof(line) - (size_t)n, "%d %s", r.timing.pooled,
                                      r.out);
                        heal_sandbox_result_release(&r);
                }
                _exit(write(fds[1], line, (size_t)n) == n ? 0 : 3);
        }
        close(fds[1]);
        cr_assert_eq(waitpid(pid, &st, 0), pid);
        cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status %#x", st);
        {
                char line[512] = "";
                ssize_t n = read(fds[0], line, sizeof(line) - 1);

                cr_assert_gt(n, 2);
                cr_assert_eq(sscanf(line, "%d %63s %d %63s %d %63s", &pooled[0], child[0],
                                    &pooled[1], child[1], &pooled[2], child[2]),
                             6, "%s", line);
        }
        close(fds[0]);
        cr_assert(!pooled[0], "the child joined the parent's set");
        cr_assert(pooled[2], "the child's own pool never served it");
        test_run(sb, argv, &r);
        cr_assert(r.timing.pooled, "the parent's set is still its own");
        sscanf(r.out, "%63s", parent_net);
        for (int i = 0; i < 3; i++)
                cr_assert_str_neq(parent_net, child[i]);
        heal_sandbox_result_release(&r);
        heal_sandbox_free(sb);
}

/* The snapshot taken on timeout lists the sandbox's processes, pooled or not (it once listed
 * the host's: the process the parent watches is not in the sandbox's PID namespace). */
Test(pool, a_timeout_snapshot_lists_the_sandbox_only)
{
        const char *argv[] = { "/bin/sh", "-c", "sleep 30", NULL };
        heal_sandbox_limits lim = HEAL_SANDBOX_LIMITS_INIT;
        heal_error err = HEAL_ERROR_INIT;
        heal_sandbox *sb = test_sandbox("/");

        lim.wall_ms = 300;
        lim.grace_ms = 0;
        cr_assert_eq(heal_sandbox_set_limits(sb, &lim, &err), 0, "%s", err.msg);
        for (int i = 0; i < 4; i++) {
                heal_sandbox_result r = { 0 };
                bool sleep_seen = false, init_seen = false;

                if (i >= 1)
                        cr_assert(heal_sandbox_pool_wait());
                test_run(sb, argv, &r);
                cr_assert_eq(r.status, HEAL_STATUS_TIMEOUT);
                cr_assert_eq(r.timing.pooled, i >= 1);
                cr_assert_leq(r.n_procs, 4, "run %d: %zu processes, the first '%s'", i, r.n_procs,
                              r.n_procs ? r.procs[0].comm : "");
                for (size_t k = 0; k < r.n_procs; k++) {
                        sleep_seen |= strcmp(r.procs[k].comm, "sleep") == 0;
                        init_seen |=
                                strcmp(r.procs[k].comm, "heal-init") == 0 && r.procs[k].pid == 1;
                }
                cr_assert(sleep_seen && init_seen, "run %d: no sleep or init in the snapshot", i);
                heal_sandbox_result_release(&r);
        }
        heal_sandbox_free(sb);
}

/* A set maps the ids of the process when it was made; after setresuid(2) it must not serve. */
Test(pool, a_set_made_under_other_ids_is_not_used)
{
        const char *argv[] = { "/bin/sh", "-c", "cat /proc/self/uid_map", NULL };
        heal_sandbox *sb = test_sandbox("/");
        heal_sandbox_result r = { 0 };
        char want[64];

        warm(sb);             /* from now on every run can join a set */
        if (geteuid() == 0) { /* become nobody for good, as a daemon dropping root would */
                cr_assert_eq(setresgid(65534, 65534, 65534), 0);
                cr_assert_eq(setresuid(65534, 65534, 65534), 0);
                cr_assert_eq(prctl(PR_SET_DUMPABLE, 1), 0);
        }
        test_run(sb, argv, &r);
        cr_assert_eq(r.status, HEAL_STATUS_OK, "%s", r.message);
        cr_assert_eq(r.timing.pooled, getuid() != 65534, "pooled=%d", r.timing.pooled);
        snprintf(want, sizeof(want), "%u", getuid());
        cr_assert(strstr(r.out, want), "uid_map '%s' does not map %s", r.out, want);
        heal_sandbox_result_release(&r);
        heal_sandbox_free(sb);
}

struct server {
        char dir[256];
        heal_sandbox_result res;
};

/* Listens on 127.0.0.1:47813 until the client's run is over, then says what it accepted. */
static void *serve(void *arg)
{
        static const char script[] =
                "import os, select, socket\n"
                "s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
                "s.bind(('127.0.0.1', 47813)); s.listen()\n"
                "open('ready', 'w').close()\n"
                "got = 0\n"
                "while not os.path.exists('done'):\n"
                "    if select.select([s], [], [], 0.02)[0]:\n"
                "        s.accept(); got += 1\n"
                "print('accepted', got)\n";
        struct server *srv = arg;
        const char *argv[] = { "/usr/bin/python3", "-c", script, NULL };
        heal_sandbox *sb = test_sandbox(srv->dir);

        test_run(sb, argv, &srv->res);
        heal_sandbox_free(sb);
        return NULL;
}

Test(pool, two_sandboxes_never_share_a_network)
{
        static const char client[] =
                "import socket\n"
                "try:\n"
                "    socket.create_connection(('127.0.0.1', 47813), timeout=2); print('connected')\n"
                "except ConnectionRefusedError:\n"
                "    print('refused')\n"
                "open('done', 'w').close()\n";
        const char *argv[] = { "/usr/bin/python3", "-c", client, NULL };
        struct server srv = { .res = { 0 } };
        char *dir = test_tempdir(), ready[300];
        heal_sandbox *sb = test_sandbox(dir);
        heal_sandbox_result r = { 0 };
        pthread_t t;
        struct stat st;

        test_require("python3");
        snprintf(srv.dir, sizeof(srv.dir), "%s", dir);
        snprintf(ready, sizeof(ready), "%s/ready", dir);
        warm(sb); /* from now on every run can join a set */
        cr_assert_eq(pthread_create(&t, NULL, serve, &srv), 0);
        for (int i = 0; i < 5000 && stat(ready, &st) < 0; i++)
                usleep(2000); /* polls the server's start, at most 10 s */
        cr_assert_eq(stat(ready, &st), 0, "the server never listened");
        heal_sandbox_pool_wait();
        test_run(sb, argv, &r);
        pthread_join(t, NULL);
        cr_assert_eq(r.status, HEAL_STATUS_OK, "%s %s", r.message, r.err);
        cr_assert_str_eq(r.out, "refused\n");
        cr_assert_eq(srv.res.status, HEAL_STATUS_OK, "%s %s", srv.res.message, srv.res.err);
        cr_assert_str_eq(srv.res.out, "accepted 0\n");
        cr_assert(r.timing.pooled || srv.res.timing.pooled, "neither run joined a set");
        heal_sandbox_result_release(&r);
        heal_sandbox_result_release(&srv.res);
        heal_sandbox_free(sb);
        test_rmtree(dir);
        free(dir);
}

Test(pool, sandboxes_that_allow_nested_userns_share_the_network_or_say_no_make_their_own)
{
        const char *argv[] = { "/bin/sh", "-c", "unshare -U true && echo nested", NULL };
        heal_sandbox *sb = test_sandbox("/");
        heal_error err = HEAL_ERROR_INIT;
        heal_sandbox_result r = { 0 };

        warm(sb); /* from now on every run can join a set */
        cr_assert_eq(heal_sandbox_set_flags(sb, HEAL_SANDBOX_ALLOW_USERNS, &err), 0, "%s", err.msg);
        test_run(sb, argv, &r);
        cr_assert_str_eq(r.out, "nested\n", "%s %s", r.message, r.err);
        cr_assert(!r.timing.pooled);
        heal_sandbox_result_release(&r);
        cr_assert_eq(heal_sandbox_set_flags(sb, HEAL_SANDBOX_SHARE_NET, &err), 0, "%s", err.msg);
        test_run(sb, (const char *const[]){ "/bin/true", NULL }, &r);
        cr_assert(!r.timing.pooled);
        heal_sandbox_result_release(&r);
        cr_assert_eq(heal_sandbox_set_flags(sb, HEAL_SANDBOX_NO_POOL, &err), 0, "%s", err.msg);
        test_run(sb, (const char *const[]){ "/bin/true", NULL }, &r);
        cr_assert(!r.timing.pooled);
        heal_sandbox_result_release(&r);
        cr_assert(heal_sandbox_pool_wait(), "the set is still there for the next run");
        heal_sandbox_free(sb);
}

Test(pool, release_gives_the_descriptors_back)
{
        heal_sandbox *sb;
        heal_sandbox_result r = { 0 };
        char *dir = test_tempdir();
        int fds;

        heal_sandbox_pool_release();
        fds = test_fd_count();
        sb = test_sandbox(dir); /* shared: the mount-table watch too */
        for (int i = 0; i < 3; i++) {
                test_run(sb, (const char *const[]){ "/bin/true", NULL }, &r);
                heal_sandbox_result_release(&r);
        }
        cr_assert(heal_sandbox_pool_wait());
        heal_sandbox_free(sb);
        /* user, network and IPC namespace, /proc/self/mountinfo; as root the idmapped /etc */
        cr_assert_eq(test_fd_count(), fds + 4 + (geteuid() == 0), "%d descriptors more",
                     test_fd_count() - fds);
        heal_sandbox_pool_release();
        cr_assert_eq(test_fd_count(), fds);
        cr_assert(!heal_sandbox_pool_wait(), "released: no set until a run asks again");
        test_rmtree(dir);
        free(dir);
}

static void *run_many(void *arg)
{
        unsigned seed = (unsigned)(uintptr_t)arg;
        heal_sandbox *sb = test_sandbox("/");

        for (int i = 0; i < 40; i++) {
                heal_sandbox_result r = { 0 };

                if (rand_r(&seed) % 3 == 0)
                        heal_sandbox_pool_wait();
                test_run(sb, (const char *const[]){ "/bin/true", NULL }, &r);
                cr_assert_eq(r.status, HEAL_STATUS_OK, "%s", r.message);
                heal_sandbox_result_release(&r);
        }
        heal_sandbox_free(sb);
        return NULL;
}

/* Runs, waits and the pool's thread interleaved every way three threads can: no hang (a set
 * asked for while another was being made once left heal_sandbox_pool_wait() waiting forever). */
Test(pool, threads_runs_and_waits_in_any_order_never_hang, .timeout = 120)
{
        pthread_t t[3];

        for (uintptr_t i = 0; i < 3; i++)
                cr_assert_eq(pthread_create(&t[i], NULL, run_many, (void *)(i + 1)), 0);
        for (int i = 0; i < 3; i++)
                pthread_join(t[i], NULL);
        heal_sandbox_pool_wait();
        heal_sandbox_pool_release();
}
