/* SPDX-License-Identifier: MIT */
/*
 * heal_sandbox_run(): prepare everything the child needs (plan, environment, rlimits, seccomp
 * filter, cgroup, pipes), start it with clone3(2), supervise it (supervise.c), and turn what
 * happened into a heal_sandbox_result.
 *
 * The child gets no exit signal (exit_signal = 0) and is waited for through its pidfd with
 * __WALL, so a caller that ignores SIGCHLD, or reaps with waitpid(-1) in a handler, can neither
 * hang nor steal the run (bubblewrap#705).
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/util.h"
#include "run-internal.h"

uint64_t now_ns(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int cap_last_cap(void)
{
        static int cached = -1;
        char buf[16] = "";
        int fd, v;

        if (cached >= 0)
                return cached;
        fd = open("/proc/sys/kernel/cap_last_cap", O_RDONLY | O_CLOEXEC);
        if (fd >= 0) {
                if (read(fd, buf, sizeof(buf) - 1) < 0)
                        buf[0] = '\0';
                close(fd);
        }
        v = atoi(buf);
        cached = v > 0 ? v : 63;
        return cached;
}

static void add_rlimit(struct child_plan *p, int resource, uint64_t soft, uint64_t hard)
{
        struct rlimit cur;

        /* Never ask for more than our own hard limit: without CAP_SYS_RESOURCE that fails. */
        if (getrlimit(resource, &cur) == 0 && cur.rlim_max != RLIM_INFINITY) {
                soft = MIN(soft, (uint64_t)cur.rlim_max);
                hard = MIN(hard, (uint64_t)cur.rlim_max);
        }
        p->rlimits[p->n_rlimits++] = (struct child_rlimit){ resource, { soft, hard } };
}

static void plan_rlimits(struct run *run)
{
        const heal_sandbox_limits *l = &run->sb->limits;
        struct child_plan *p = &run->plan;

        add_rlimit(p, RLIMIT_CORE, 0, 0);
        if (l->cpu_ms) {
                uint64_t s = (l->cpu_ms + 999) / 1000;

                add_rlimit(p, RLIMIT_CPU, s, s + 1);
        }
        if (l->mem_max_bytes && !run->cg->mem)
                add_rlimit(p, RLIMIT_DATA, l->mem_max_bytes, l->mem_max_bytes);
        if (l->pids_max && !run->cg->pids)
                add_rlimit(p, RLIMIT_NPROC, l->pids_max, l->pids_max);
        if (l->fsize_max_bytes)
                add_rlimit(p, RLIMIT_FSIZE, l->fsize_max_bytes, l->fsize_max_bytes);
        if (l->nofile_max)
                add_rlimit(p, RLIMIT_NOFILE, l->nofile_max, l->nofile_max);
}

static int make_pipe(int fds[2], bool nonblock_read, heal_error *err)
{
        if (pipe2(fds, O_CLOEXEC) < 0)
                return heal_error_set(err, -errno, "pipe: %s", strerror(errno));
        if (nonblock_read)
                fcntl(fds[0], F_SETFL, O_NONBLOCK);
        return 0;
}

static int prepare_fds(struct run *run, heal_error *err)
{
        int fds[2], r;

        if ((r = make_pipe(fds, true, err)) < 0)
                return r;
        run->out_r = fds[0], run->out_w = fds[1];
        if ((r = make_pipe(fds, true, err)) < 0)
                return r;
        run->err_r = fds[0], run->err_w = fds[1];
        if ((r = make_pipe(fds, true, err)) < 0)
                return r;
        run->rep_r = fds[0], run->rep_w = fds[1];
        /* A socket, not a pipe: send(MSG_NOSIGNAL) to a dead init must not SIGPIPE the caller. */
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) < 0)
                return heal_error_set(err, -errno, "socketpair: %s", strerror(errno));
        run->ctl_r = fds[0], run->ctl_w = fds[1];
        if (run->sb->stdin_fd < 0) {
                run->null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
                if (run->null_fd < 0)
                        return heal_error_set(err, -errno, "/dev/null: %s", strerror(errno));
        }
        return 0;
}

static int compile_view(struct run *run, const struct stat *cwd_st, unsigned flags,
                        heal_error *err);

static int prepare_plan(struct run *run, heal_error *err)
{
        heal_sandbox *sb = run->sb;
        struct stat here = { 0 };
        int r;

        if (!sb->cwd) {
                /* The directory we are in, however its path changes before the mounts. */
                run->cwd = getcwd(NULL, 0);
                if (!run->cwd || stat(".", &here) < 0)
                        return heal_error_set(err, -errno, "cannot read the working directory: %s",
                                              strerror(errno));
        } else if (!(run->cwd = strdup(sb->cwd))) {
                return heal_error_set(err, -ENOMEM, "out of memory");
        }
        if (sb->flags & HEAL_SANDBOX_ISOLATION_NONE)
                return 0;
        r = compile_view(run, &here, sb->flags, err);
        if (r == -EAGAIN) {
                /* No idmapped /etc this time (an /etc submount that cannot be idmapped, or the
                 * user namespace released meanwhile): the walk and its masks instead. */
                plan_compiled_release(&run->pc);
                plan_entries_free(run->view, run->n_view);
                run->view = NULL;
                run->n_view = 0;
                r = compile_view(run, &here, sb->flags | PLAN_NO_ETC_IDMAP, err);
        }
        return r;
}

/* The view (the plan's entries, or the default view) compiled for the child; -EAGAIN when the
 * idmapped /etc cannot be made for it. */
static int compile_view(struct run *run, const struct stat *cwd_st, unsigned flags, heal_error *err)
{
        heal_sandbox *sb = run->sb;
        const struct mount_entry *entries = sb->entries;
        size_t n = sb->n_entries;
        struct stat here = *cwd_st;
        int r;

        if (n > 0 && (sb->flags & HEAL_SANDBOX_EXTEND_DEFAULT)) {
                r = plan_extend_default(&run->view, &run->n_view, run->cwd, flags, entries, n, err);
                if (r < 0)
                        return r;
                entries = run->view;
                n = run->n_view;
        } else if (n == 0) {
                r = plan_default_view(&run->view, &run->n_view, run->cwd, flags, err);
                if (r < 0)
                        return r;
                entries = run->view;
                n = run->n_view;
        }
        r = plan_compile(&run->pc, entries, n, &sb->limits, err);
        /* The directory the caller opened (set_cwd_fd) or we are in, not whatever is at its
         * path by the time the child mounts it. */
        if (sb->cwd_ino)
                here = (struct stat){ .st_dev = sb->cwd_dev, .st_ino = sb->cwd_ino };
        for (size_t i = 0; r >= 0 && here.st_ino && i < n; i++)
                if (entries[i].is_cwd) {
                        run->pc.ops[i].src_dev = here.st_dev;
                        run->pc.ops[i].src_ino = here.st_ino;
                }
        for (size_t i = 0; r >= 0 && i < n; i++)
                if (entries[i].etc_idmap && (run->pc.ops[i].src_fd = plan_etc_tree()) < 0)
                        r = -EAGAIN;
        return r;
}

static const char *env_get(char *const *env, const char *name)
{
        size_t len = strlen(name);

        for (size_t i = 0; env[i]; i++)
                if (strncmp(env[i], name, len) == 0 && env[i][len] == '=')
                        return env[i] + len + 1;
        return NULL;
}

/* Weak mode: a private temporary directory, announced through TMPDIR. */
static int prepare_none_env(struct run *run, heal_error *err)
{
        size_t n = run->sb->n_env;

        if (!mkdtemp(strcpy(run->tmpdir, "/tmp/heal-XXXXXX")))
                return heal_error_set(err, -errno, "cannot create a temporary directory: %s",
                                      strerror(errno));
        run->envp = calloc(n + 2, sizeof(char *));
        if (!run->envp || asprintf(&run->tmpdir_env, "TMPDIR=%s", run->tmpdir) < 0)
                return heal_error_set(err, -ENOMEM, "out of memory");
        memcpy(run->envp, run->sb->env, n * sizeof(char *));
        run->envp[n] = run->tmpdir_env;
        return 0;
}

static int prepare(struct run *run, heal_error *err)
{
        heal_sandbox *sb = run->sb;
        struct child_plan *p = &run->plan;
        int r;

        if ((r = prepare_plan(run, err)) < 0 || (r = prepare_fds(run, err)) < 0)
                return r;
        /* As root the setuid/setgid refusals stay even with HEAL_SANDBOX_NO_SECCOMP. */
        if (!(sb->flags & HEAL_SANDBOX_NO_SECCOMP) || sb->n_rules || geteuid() == 0) {
                if (!sb->filter || sb->filter_flags != sb->flags) {
                        seccomp_free(sb->filter);
                        sb->filter = NULL;
                        r = seccomp_compile(&sb->filter, sb->flags, geteuid() == 0, sb->rules,
                                            sb->n_rules, err);
                        if (r < 0)
                                return r;
                        sb->filter_flags = sb->flags;
                }
        }
        if ((sb->flags & HEAL_SANDBOX_ISOLATION_NONE) && (r = prepare_none_env(run, err)) < 0)
                return r;
        if (sb->limits.mem_max_bytes || sb->limits.pids_max || sb->cg.mem_dir || sb->cg.pids_dir)
                cgroup_prepare(run->cg, &sb->limits);
        /* RLIMIT_NPROC does not bind host root; without a cgroup the limit would be a lie. */
        if (sb->limits.pids_max && !run->cg->pids && geteuid() == 0)
                return heal_error_set(err, -EPERM,
                                      "cannot enforce the process limit (%llu): heal runs as root "
                                      "and no cgroup is writable, and RLIMIT_NPROC does not bind "
                                      "root; give heal a writable cgroup (HEAL_CGROUP) or set no "
                                      "process limit (--pids 0)",
                                      (unsigned long long)sb->limits.pids_max);
        *p = (struct child_plan){
                .flags = sb->flags,
                .host_root = geteuid() == 0,
                .ops = run->pc.ops,
                .n_ops = run->pc.n_ops,
                .cwd = run->cwd,
                .argv = run->argv,
                .envp = run->envp ? run->envp : sb->env,
                .path_env = env_get(sb->env, "PATH"),
                .report_fd = run->rep_w,
                .ctl_fd = run->ctl_r,
                .stdin_fd = sb->stdin_fd >= 0 ? sb->stdin_fd : run->null_fd,
                .stdout_fd = run->out_w,
                .stderr_fd = run->err_w,
                /* v1: init joins by itself (join_fds); v2: the parent moves it, then says go */
                .wait_go =
                        (run->cg->mem || run->cg->pids) && run->cg->mode != HEAL_ENFORCE_CGROUP_V1,
                .new_cgroupns = (run->cg->mem || run->cg->pids) &&
                                !(sb->flags & HEAL_SANDBOX_ISOLATION_NONE),
                .cap_last_cap = cap_last_cap(),
                .seccomp = (sb->flags & HEAL_SANDBOX_ISOLATION_NONE) ? NULL : sb->filter,
                .clock = sb->clock,
                .pool_user_fd = -1,
                .pool_net_fd = -1,
                .pool_ipc_fd = -1,
        };
        if ((run->cg->mem || run->cg->pids) &&
            (r = cgroup_join_fds(run->cg, p->join_fds, p->join_dirs, err)) < 0)
                return r;
        if (run->cg->mem || run->cg->pids)
                cgroup_begin(run->cg); /* baselines before anything can run inside */
        snprintf(p->uid_map, sizeof(p->uid_map), "%u %u 1\n", getuid(), getuid());
        snprintf(p->gid_map, sizeof(p->gid_map), "%u %u 1\n", getgid(), getgid());
        plan_rlimits(run);
        return 0;
}

static int start(struct run *run, heal_error *err)
{
        unsigned flags = run->sb->flags;
        struct clone_args ca = {
                .flags = CLONE_PIDFD,
                .pidfd = (uint64_t)(uintptr_t)&run->pidfd,
                .exit_signal = 0,
        };
        bool own_net = !(flags & (HEAL_SANDBOX_ISOLATION_NONE | HEAL_SANDBOX_SHARE_NET));
        bool pool = own_net && !(flags & (HEAL_SANDBOX_ALLOW_USERNS | HEAL_SANDBOX_NO_POOL));
        struct netns_pair pair = { -1, -1, -1 };
        long pid;

        /* With a pre-made user + network namespace the child joins them and unshares the rest
         * (child.c: join_pool); else clone3() makes them all. */
        if (pool && netpool_take(&pair)) {
                run->plan.pool_user_fd = pair.user_fd;
                run->plan.pool_net_fd = pair.net_fd;
                run->plan.pool_ipc_fd = pair.ipc_fd;
                run->res->timing.pooled = true;
        } else if (!(flags & HEAL_SANDBOX_ISOLATION_NONE)) {
                ca.flags |=
                        CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS;
                if (own_net)
                        ca.flags |= CLONE_NEWNET;
                if (!run->plan.new_cgroupns)
                        ca.flags |= CLONE_NEWCGROUP;
        }
        if (run->sb->clock)
                memset(run->sb->clock, 0, sizeof(*run->sb->clock));
        pid = syscall(SYS_clone3, &ca, sizeof(ca));
        if (pid < 0) {
                safe_close(pair.user_fd);
                safe_close(pair.net_fd);
                safe_close(pair.ipc_fd);
                return userns_explain_clone(err, errno);
        }
        if (pid == 0)
                child_main(&run->plan);
        run->pid = (pid_t)pid;
        run->res->timing.clone_us = (now_ns() - run->start_ns) / 1000;
        run->plan.pool_user_fd = safe_close(pair.user_fd);
        run->plan.pool_net_fd = safe_close(pair.net_fd);
        run->plan.pool_ipc_fd = safe_close(pair.ipc_fd);
        for (size_t i = 0; i < run->pc.n_ops; i++) /* the child has its copies */
                if (run->pc.ops[i].src_fd >= 0)
                        run->pc.ops[i].src_fd = safe_close(run->pc.ops[i].src_fd);
        run->out_w = safe_close(run->out_w);
        run->err_w = safe_close(run->err_w);
        run->rep_w = safe_close(run->rep_w);
        run->ctl_r = safe_close(run->ctl_r);
        run->null_fd = safe_close(run->null_fd);
        if (run->plan.wait_go) {
                char go = CTL_GO;

                if ((run->attach_error = cgroup_attach(run->cg, run->pid)) < 0) {
                        /* Without the cgroup the limits would silently not hold: stop here. */
                        syscall(SYS_pidfd_send_signal, run->pidfd, SIGKILL, NULL, 0);
                } else if (send(run->ctl_w, &go, 1, MSG_NOSIGNAL) != 1) {
                        syscall(SYS_pidfd_send_signal, run->pidfd, SIGKILL, NULL, 0);
                }
        }
        return 0;
}

static int rm_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
        (void)st, (void)type, (void)ftw;
        remove(path);
        return 0;
}

static void run_release(struct run *run)
{
        safe_close(run->out_r), safe_close(run->out_w);
        safe_close(run->err_r), safe_close(run->err_w);
        safe_close(run->rep_r), safe_close(run->rep_w);
        safe_close(run->ctl_r), safe_close(run->ctl_w);
        safe_close(run->null_fd), safe_close(run->pidfd);
        plan_compiled_release(&run->pc);
        plan_entries_free(run->view, run->n_view);
        heal_buf_release(&run->out);
        heal_buf_release(&run->errb);
        free(run->cwd);
        free(run->envp);
        free(run->tmpdir_env);
        if (run->tmpdir[0])
                nftw(run->tmpdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

int heal_sandbox_run(heal_sandbox *sb, const char *const *argv, heal_sandbox_result *ret_result,
                     heal_error *err)
{
        heal_sandbox_result res = { 0 };
        struct run run = {
                .sb = sb,
                .argv = argv,
                .res = &res,
                .cg = sb ? &sb->cg : NULL,
                .out_r = -1,
                .out_w = -1,
                .err_r = -1,
                .err_w = -1,
                .rep_r = -1,
                .rep_w = -1,
                .ctl_r = -1,
                .ctl_w = -1,
                .null_fd = -1,
                .pidfd = -1,
        };
        int r;

        if (!sb || !argv || !argv[0] || !*argv[0] || !ret_result)
                return heal_error_set(err, -EINVAL, "invalid argument: empty command");
        run.start_ns = now_ns();
        reap_pending(sb, false);
        heal_buf_init(&run.out, sb->capture ? sb->limits.out_max_bytes : 0);
        heal_buf_init(&run.errb, sb->capture ? sb->limits.out_max_bytes : 0);
        if (!sb->limits.out_max_bytes) {
                run.out.max = sb->capture ? SIZE_MAX / 2 : 0;
                run.errb.max = run.out.max;
        }
        r = prepare(&run, err);
        if (r >= 0)
                r = start(&run, err);
        if (r >= 0)
                r = supervise(&run, err);
        if (r >= 0)
                r = finish(&run, err);
        if (r >= 0)
                *ret_result = res;
        else
                heal_sandbox_result_release(&res);
        run_release(&run);
        /* The next run's namespaces, made by the pool's thread while the caller goes on. */
        if (!(sb->flags &
              (HEAL_SANDBOX_ISOLATION_NONE | HEAL_SANDBOX_SHARE_NET | HEAL_SANDBOX_ALLOW_USERNS)))
                netpool_refill();
        return r;
}
