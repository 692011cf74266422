/* SPDX-License-Identifier: MIT */
#ifndef HEAL_SANDBOX_INTERNAL_H
#define HEAL_SANDBOX_INTERNAL_H

#include <linux/filter.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "heal/sandbox.h"

/* The default view makes symlinks too (/bin -> usr/bin). */
#define MOUNT_KIND_SYMLINK ((int)HEAL_MOUNT_SYMLINK)

/* One entry of the mount plan, validated and normalised when it was added. */
struct mount_entry {
        int kind;           /* heal_mount_type or MOUNT_KIND_SYMLINK */
        char *source;       /* bind/overlay: resolved host path; symlink: link text; else NULL */
        char *target;       /* normalised absolute sandbox path */
        uint64_t attr_set;  /* MOUNT_ATTR_* to set */
        uint64_t attr_clr;  /* MOUNT_ATTR_* to clear */
        bool source_is_dir; /* bind: the source is a directory */
        bool defer_ro;      /* apply MOUNT_ATTR_RDONLY only after the whole plan (default root) */
        char *tmpfs_opts;   /* tmpfs: "mode=..,uid=.." as given, without size/nr_inodes */
        char *size;         /* tmpfs: size= value as given, or NULL for the default */
        char *nr_inodes;    /* tmpfs: nr_inodes= value as given, or NULL */
        char *lowerdir;     /* overlay: ':'-separated sandbox paths, or NULL */
        char *upperdir;     /* overlay: sandbox path, or NULL for a hidden tmpfs */
        char *workdir;      /* overlay: sandbox path, or NULL (made next to upperdir) */
        bool if_present;    /* skipped when its mountpoint is gone or changed type (the masks
                             * of root-only /etc files: /etc may change after the walk) */
        bool etc_idmap;     /* the default view's /etc as root: mounted from secrets.c's
                             * idmapped copy (plan_etc_tree()) */
        bool is_cwd;        /* the default view's share of the working directory */
};

/* What the sandbox's init does for one entry; strings were built by the parent before clone. */
struct child_op {
        int kind;
        int entry;          /* index in the plan, for error reports */
        const char *src;    /* "/oldroot/..." for binds and overlay sources; symlink text */
        const char *dst;    /* "/newroot/..." */
        const char *data;   /* mount(2) data for tmpfs, overlay, the hidden upper tmpfs */
        const char *hidden; /* overlay without upperdir: staging dir of the hidden upper */
        const char *hidden_data;
        const char *mkworkdir;  /* overlay: workdir to create before mounting, or NULL */
        const char *layers;     /* overlay: "path\0path\0...\0\0", every layer path to verify */
        unsigned long ms_flags; /* MS_* for fresh filesystems */
        uint64_t attr_set, attr_clr;
        bool defer_ro;
        bool is_file;
        bool may_create; /* a missing mountpoint lies on a writable tmpfs of ours */
        bool if_present; /* skip when the mountpoint is missing or of another type */
        int cover;       /* entry whose filesystem holds the mountpoint, -1 for the root */
        /* bind: the source as the parent saw it when it compiled the plan (0: not found), and a
         * detached tree the parent made for this run to mount instead (-1: none) */
        dev_t src_dev;
        ino_t src_ino;
        int src_fd;
};

/* Child -> parent reports, one fixed-size record each (< PIPE_BUF, so writes are atomic). */
enum report_kind {
        REPORT_ERROR = 1, /* setup failed; @step, @err, @entry say where */
        REPORT_EXIT,      /* the command was reaped; @wstatus */
        REPORT_DONE,      /* every process is gone and reaped; @ru covers them all */
};

enum child_step {
        STEP_NONE,
        STEP_SETGROUPS,
        STEP_UID_MAP,
        STEP_GID_MAP,
        STEP_USERNS_LIMIT,
        STEP_POOL_JOIN, /* joining the pre-made user and network namespaces */
        STEP_MAKE_PRIVATE,
        STEP_STAGING,
        STEP_PIVOT_STAGING,
        STEP_MOUNTPOINT,         /* creating a missing mountpoint failed */
        STEP_MOUNTPOINT_MISSING, /* missing and not creatable (parent is not our tmpfs) */
        STEP_MOUNTPOINT_TYPE,    /* a file where a directory is needed or the other way round */
        STEP_MOUNTPOINT_SYMLINK, /* the mountpoint's path goes through a symlink */
        STEP_MOUNT,
        STEP_BIND_SOURCE, /* the bind source changed since the plan was compiled */
        STEP_SETATTR,
        STEP_OVERLAY_PREP,
        STEP_DEV,
        STEP_SYMLINK,
        STEP_PIVOT_ROOT,
        STEP_ROOT_RO,
        STEP_CHDIR,
        STEP_HOSTNAME,
        STEP_LOOPBACK,
        STEP_CGROUP_WAIT,
        STEP_CGROUP_JOIN,
        STEP_CGROUPNS,
        STEP_SIGNALFD,
        STEP_FORK,
        STEP_STDIO,
        STEP_RLIMIT,
        STEP_CAPS,
        STEP_NO_NEW_PRIVS,
        STEP_SECCOMP,
        STEP_EXEC,
        _STEP_MAX,
};

struct report {
        int kind;
        int step;
        int err;          /* positive errno */
        int entry;        /* mount entry index, or -1 */
        int wstatus;      /* REPORT_EXIT */
        struct rusage ru; /* REPORT_DONE: init's RUSAGE_CHILDREN */
        char path[256];
};

/* Timestamps the child writes into a shared page, CLOCK_MONOTONIC ns. */
struct child_clock {
        uint64_t maps_ns;
        uint64_t mounts_ns;
        uint64_t exec_ns;
};

struct child_rlimit {
        int resource;
        struct rlimit rl;
};

/* Everything the child needs, prepared by the parent so the child never allocates. */
struct child_plan {
        unsigned flags;
        bool host_root; /* heal runs as host uid 0: the command is host root on what it reaches */
        const struct child_op *ops;
        size_t n_ops;
        const char *cwd;
        const char *const *argv;
        char *const *envp;
        const char *path_env; /* PATH value for the executable lookup */
        char uid_map[64];
        char gid_map[64];
        int report_fd; /* write end: struct report records */
        int ctl_fd;    /* read end: parent -> init control bytes */
        int stdin_fd;
        int stdout_fd;
        int stderr_fd;
        bool wait_go; /* wait for a 'G' on ctl_fd before starting the command (cgroup) */
        bool new_cgroupns;
        /* cgroup v1: init joins these cgroups itself by writing "0" to their "tasks" files
         * (opened by the parent); -1 when unused. */
        int join_fds[2];
        const char *join_dirs[2];
        struct child_rlimit rlimits[8];
        size_t n_rlimits;
        int cap_last_cap;
        const struct sock_fprog *seccomp; /* NULL: no filter */
        struct child_clock *clock;        /* shared page, may be NULL */
        /* A pre-made user + network namespace to join (netpool.c), or -1: the child then
         * creates every namespace with clone3() itself. */
        int pool_user_fd;
        int pool_net_fd;
        int pool_ipc_fd;
};

/* A pre-made user namespace and the network and IPC namespaces it owns (netpool.c). */
struct netns_pair {
        int user_fd;
        int net_fd;
        int ipc_fd;
};

/* Take the pool's pair into @ret (the caller closes both fds); false when none is ready. */
bool netpool_take(struct netns_pair *ret);
/* Make the next pair if the pool is empty and this process asked for one before. */
void netpool_refill(void);

/* child.c, also used by the pool's helper; both return 0 or -errno. */
int child_write_file(const char *path, const char *data);
int loopback_up(void);

/* Control bytes parent -> init. */
#define CTL_GO   'G' /* the cgroup is ready: start the command */
#define CTL_QUIT 'Q' /* send SIGQUIT to every process in the namespace */
#define CTL_KILL 'K' /* kill the command's process group, then everything, and exit */
#define CTL_BYE  'B' /* the last report arrived: exit (child.c, leave()) */

/* A sandbox's cgroup: made on its first run that needs one, reused by every later run (cgroupfs
 * mkdir and rmdir cost milliseconds), removed by heal_sandbox_free(). */
struct cgroup_run {
        heal_sandbox_enforcement mode;
        char *mem_dir;                  /* v1 memory dir, or the v2 dir */
        char *pids_dir;                 /* v1 pids dir, or the v2 dir */
        bool mem;                       /* memory limited through the cgroup */
        bool pids;                      /* pids limited through the cgroup */
        uint64_t mem_limit, pids_limit; /* as written */
        uint64_t oom_base, pids_base;   /* event counters before the run */
        int peak_fd;                    /* v2 memory.peak, reset per run; -1 */
        int tasks_fd[2];                /* v1: memory and pids "tasks" files; -1 */
};
struct heal_sandbox {
        struct mount_entry *entries;
        size_t n_entries;
        heal_sandbox_limits limits;
        unsigned flags;
        char **env; /* "NAME=value", NULL-terminated, sorted by insertion */
        size_t n_env;
        char **env_explicit; /* names set with heal_sandbox_setenv(), win over inherit */
        size_t n_env_explicit;
        char *cwd;
        dev_t cwd_dev; /* heal_sandbox_set_cwd_fd(): what the cwd must still be; 0: unchecked */
        ino_t cwd_ino;
        int stdin_fd;
        heal_sandbox_output_fn output_fn;
        void *output_userdata;
        bool capture;
        struct seccomp_rule *rules;
        size_t n_rules;
        struct sock_fprog *filter; /* compiled on first run, reused while rules/flags hold */
        unsigned filter_flags;
        int cancel_fd; /* eventfd, written by heal_sandbox_cancel() */
        volatile sig_atomic_t canceled;
        struct child_clock *clock;
        struct cgroup_run cg;
        int pending[8]; /* pidfds of inits still tearing their namespaces down */
        size_t n_pending;
};

struct seccomp_rule {
        int nr;
        int errno_value;
};

/* plan.c */
int plan_entry_add(struct mount_entry **entries, size_t *n_entries, int kind, const char *source,
                   const char *target, const char *const *options, bool internal, heal_error *err);
void plan_entries_free(struct mount_entry *entries, size_t n);
int plan_add_secret_masks(struct mount_entry **v, size_t *n, heal_error *err);
/* secrets.c: whether this kernel and /etc allow an idmapped copy (decided once per process and
 * mount namespace; the idmap's user namespace is kept). */
bool plan_etc_idmap_available(void);
/* A fresh detached idmapped copy of /etc for one run (the caller closes it), or -errno; after a
 * failure other than -ENOENT (released meanwhile) the copy counts as not available here. */
int plan_etc_tree(void);
/* plan_default_view() flag (above the public HEAL_SANDBOX_* ones): /etc walked, not idmapped. */
#define PLAN_NO_ETC_IDMAP (1u << 31)
/* Close the user namespace kept for the process (heal_sandbox_pool_release()). */
void plan_etc_release(void);

/*
 * mountwatch.c: the first kernel-filesystem mount (proc, sysfs, cgroupfs, ...) that @real is on
 * or contains, from the mount table read again only when it changed. Returns 1 with the mount
 * point, its type and whether @real is on it; 0 when none; -errno when the table cannot be read.
 */
int mountwatch_kernel_fs(const char *real, char *ret_point, size_t point_len, char *ret_type,
                         size_t type_len, bool *ret_is_on);
/* Close the descriptor of /proc/self/mountinfo kept for that and forget the table. */
void mountwatch_release(void);
bool path_under(const char *path, const char *prefix);
void plan_entry_release(struct mount_entry *e);
/* A deep copy of @e into @ret; -ENOMEM. */
int plan_entry_dup(struct mount_entry *ret, const struct mount_entry *e);
int plan_default_view(struct mount_entry **ret, size_t *ret_n, const char *cwd, unsigned flags,
                      heal_error *err);
/* The default view for @cwd with @extra's entries after it (HEAL_SANDBOX_EXTEND_DEFAULT). */
int plan_extend_default(struct mount_entry **ret, size_t *ret_n, const char *cwd, unsigned flags,
                        const struct mount_entry *extra, size_t n_extra, heal_error *err);
struct plan_compiled {
        struct child_op *ops;
        size_t n_ops;
        char **strings; /* every string the ops point to, freed together */
        size_t n_strings;
};
int plan_compile(struct plan_compiled *ret, const struct mount_entry *entries, size_t n,
                 const heal_sandbox_limits *limits, heal_error *err);
void plan_compiled_release(struct plan_compiled *pc);
const char *plan_kind_name(int kind);

/* child.c: the sandbox's init; never returns. */
_Noreturn void child_main(const struct child_plan *plan);

/* quit.c: SIGQUIT to every process but init, each on its busiest running thread that takes
 * it; the number signalled, -1 without a /proc. Async-signal-safe (the sandbox's init). */
int quit_processes(void);

/* seccomp.c */
int seccomp_compile(struct sock_fprog **ret, unsigned flags, bool host_root,
                    const struct seccomp_rule *rules, size_t n_rules, heal_error *err);
void seccomp_free(struct sock_fprog *prog);
int seccomp_syscall_resolve(const char *name);

/* cgroup.c */
int cgroup_prepare(struct cgroup_run *cg, const heal_sandbox_limits *limits);
void cgroup_begin(struct cgroup_run *cg);
int cgroup_attach(const struct cgroup_run *cg, pid_t pid);
/* v1: the "tasks" files init writes "0" to, to join without the global migration lock. */
int cgroup_join_fds(struct cgroup_run *cg, int fds[2], const char *dirs[2], heal_error *err);
void cgroup_collect(const struct cgroup_run *cg, uint64_t *ret_peak, bool *ret_oom,
                    bool *ret_pids_hit);
void cgroup_release(struct cgroup_run *cg);
heal_sandbox_enforcement cgroup_probe(bool *ret_mem, bool *ret_pids, char *where, size_t len);

/* procsnap.c */
int procsnap_take(heal_sandbox_proc **ret, size_t *ret_n, pid_t init_pid);

/* userns.c */
int userns_explain_clone(heal_error *err, int errnum);
void userns_explain_report(char *msg, size_t len, const struct report *rep,
                           const struct mount_entry *entries, size_t n_entries,
                           const struct child_op *ops);
const char *step_name(int step);

/* supervise.c */
void reap_pending(heal_sandbox *sb, bool block);

/* time helpers */
uint64_t now_ns(void);

#endif
