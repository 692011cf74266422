/* SPDX-License-Identifier: MIT */
#ifndef HEAL_SANDBOX_H
#define HEAL_SANDBOX_H

/*
 * libheal's process sandbox: run a command in new user, mount, PID, network, IPC, UTS and cgroup
 * namespaces, over a mount plan, under limits and a seccomp filter, and report what happened.
 *
 * Lifecycle:
 *   1. heal_sandbox_new()
 *   2. optional: heal_sandbox_add_mount() (none = the default view), heal_sandbox_set_limits(),
 *      heal_sandbox_inherit_env() / heal_sandbox_setenv(), heal_sandbox_set_cwd(),
 *      heal_sandbox_set_flags(), heal_sandbox_set_stdin_fd(), heal_sandbox_set_output_fn(),
 *      heal_sandbox_add_seccomp_rule()
 *   3. heal_sandbox_run(), as many times as wanted (each run is a fresh sandbox)
 *   4. heal_sandbox_result_release() for each result, heal_sandbox_free()
 *
 * A heal_sandbox is not thread-safe: use one per thread. heal_sandbox_run() itself is safe in a
 * multi-threaded process: it never changes the caller's namespaces, signal dispositions or mask,
 * and never reaps a child it did not start.
 *
 * Threat model: this contains accidents and confused models (loops, deletes, writes where they
 * should not go, fork bombs, runaway output, reading the user's secrets); it is not a boundary
 * against a determined kernel attacker. For that, use gVisor or a microVM. See docs/sandbox.md.
 */

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "heal/defaults.h"
#include "heal/error.h"

typedef struct heal_sandbox heal_sandbox;

/**
 * enum heal_mount_type - Kinds of entries in a mount plan.
 * @HEAL_MOUNT_BIND:    a host file or directory (recursive bind); options ro/rw and the flags.
 * @HEAL_MOUNT_TMPFS:   a fresh tmpfs; options size=, mode=, uid=, gid=, nr_inodes=.
 * @HEAL_MOUNT_PROC:    a fresh procfs of the sandbox's PID namespace.
 * @HEAL_MOUNT_OVERLAY: an overlayfs; source (optional) is a host directory used as the lowest
 *                      layer; options lowerdir= (sandbox paths, ':'-separated, mounted earlier),
 *                      upperdir= (a sandbox path; without it writes go to a hidden tmpfs and are
 *                      discarded), workdir= (optional; made next to upperdir when absent).
 * @HEAL_MOUNT_DEV:     a minimal /dev: null, zero, full, random, urandom, tty, pts/, ptmx, shm/,
 *                      fd, stdin, stdout, stderr.
 * @HEAL_MOUNT_SYMLINK: a symbolic link at the target whose text is the source (kept as given,
 *                      not resolved); its parent must be a writable tmpfs of the plan.
 */
typedef enum heal_mount_type {
        HEAL_MOUNT_BIND,
        HEAL_MOUNT_TMPFS,
        HEAL_MOUNT_PROC,
        HEAL_MOUNT_OVERLAY,
        HEAL_MOUNT_DEV,
        HEAL_MOUNT_SYMLINK,
        _HEAL_MOUNT_TYPE_MAX,
        _HEAL_MOUNT_TYPE_INVALID = -EINVAL,
} heal_mount_type;

/**
 * struct heal_sandbox_limits - Resource limits of one run. 0 means "no limit" for each field
 * except @grace_ms, where 0 means "no grace period: kill at once".
 * @wall_ms:          wall-clock time, ms (CLOCK_MONOTONIC).
 * @cpu_ms:           CPU time per process, ms (RLIMIT_CPU, rounded up to whole seconds).
 * @mem_max_bytes:    memory: the cgroup's memory.max / memory.limit_in_bytes where heal can write
 *                    one, else RLIMIT_DATA per process (never RLIMIT_AS, which breaks Go).
 * @pids_max:         processes and threads: the cgroup's pids.max, else RLIMIT_NPROC (counted
 *                    per user namespace by Linux >= 5.14).
 * @fsize_max_bytes:  largest file a process may write, bytes (RLIMIT_FSIZE; writes past it fail
 *                    with EFBIG since SIGXFSZ is ignored in the sandbox).
 * @nofile_max:       open files per process (RLIMIT_NOFILE), clamped to heal's own hard limit.
 * @out_max_bytes:    stdout + stderr bytes captured; when reached the run is stopped with
 *                    HEAL_STATUS_OUTPUT_LIMIT.
 * @tmpfs_max_bytes:  size of each tmpfs heal makes without an explicit size= (the default
 *                    view's /tmp and /dev/shm, hidden overlay upper layers), bytes.
 * @tmpfs_max_inodes: inodes of those tmpfs mounts.
 * @grace_ms:         on timeout, time between SIGQUIT to every sandboxed process (Go and the JVM
 *                    print all stacks) and SIGKILL of the PID namespace, ms.
 */
typedef struct heal_sandbox_limits {
        uint64_t wall_ms;
        uint64_t cpu_ms;
        uint64_t mem_max_bytes;
        uint64_t pids_max;
        uint64_t fsize_max_bytes;
        uint64_t nofile_max;
        uint64_t out_max_bytes;
        uint64_t tmpfs_max_bytes;
        uint64_t tmpfs_max_inodes;
        uint64_t grace_ms;
} heal_sandbox_limits;

#define HEAL_SANDBOX_LIMITS_INIT                                                                \
 {                                                                                              \
  .wall_ms = 0, .cpu_ms = 0, .mem_max_bytes = 0, .pids_max = HEAL_DEFAULT_PIDS_MAX,             \
  .fsize_max_bytes = 0, .nofile_max = HEAL_DEFAULT_NOFILE_MAX,                                  \
  .out_max_bytes = HEAL_DEFAULT_OUT_MAX_BYTES, .tmpfs_max_bytes = HEAL_DEFAULT_TMPFS_MAX_BYTES, \
  .tmpfs_max_inodes = HEAL_DEFAULT_TMPFS_MAX_INODES, .grace_ms = HEAL_DEFAULT_GRACE_MS,         \
 }

/**
 * enum heal_sandbox_flags - Switches for heal_sandbox_set_flags().
 * @HEAL_SANDBOX_SHARE_NET:      keep the host's network namespace (default: a new one with only
 *                               loopback, up).
 * @HEAL_SANDBOX_CWD_OVERLAY:    in the default view, mount the working directory as an overlay
 *                               whose writes go to a hidden tmpfs and are discarded (default: a
 *                               read-write bind).
 * @HEAL_SANDBOX_ALLOW_USERNS:   let sandboxed code create nested user namespaces (default: refused
 *                               with ENOSPC through the namespace's user.max_user_namespaces = 0).
 * @HEAL_SANDBOX_NO_SECCOMP:     do not install the default seccomp filter (rules added with
 *                               heal_sandbox_add_seccomp_rule() still apply).
 * @HEAL_SANDBOX_ALLOW_PTRACE:   let sandboxed code use ptrace(2) on its own processes (gdb,
 *                               strace, LeakSanitizer); refused by default.
 * @HEAL_SANDBOX_ISOLATION_NONE: no namespaces and no seccomp filter: only limits, a new session
 *                               and process group, the environment allow-list and a private
 *                               temporary directory. Contains much less; see docs/sandbox.md.
 * @HEAL_SANDBOX_EXTEND_DEFAULT: the mount plan's entries are applied on top of the default view
 *                               instead of replacing it (its first entry need not be "/"); an
 *                               entry whose target is the working directory takes the place of
 *                               the default's bind of it. How heal's repair workspaces stack a
 *                               candidate's files over the tree.
 * @HEAL_SANDBOX_NO_POOL:        create every namespace in the run itself: never join, nor ask the
 *                               library's thread for, pre-made ones (heal_sandbox_pool_release());
 *                               for a process that runs one sandbox (heal run sets it).
 */
enum heal_sandbox_flags {
        HEAL_SANDBOX_SHARE_NET = 1u << 0,
        HEAL_SANDBOX_CWD_OVERLAY = 1u << 1,
        HEAL_SANDBOX_ALLOW_USERNS = 1u << 2,
        HEAL_SANDBOX_NO_SECCOMP = 1u << 3,
        HEAL_SANDBOX_ALLOW_PTRACE = 1u << 4,
        HEAL_SANDBOX_ISOLATION_NONE = 1u << 5,
        HEAL_SANDBOX_EXTEND_DEFAULT = 1u << 6,
        HEAL_SANDBOX_NO_POOL = 1u << 7,
};

/**
 * enum heal_sandbox_status - The verdict of a run (a verdict is not an error).
 * @HEAL_STATUS_OK:           the command exited with status 0.
 * @HEAL_STATUS_EXIT_NONZERO: the command exited with a nonzero status (@exit_code).
 * @HEAL_STATUS_SIGNALED:     the command was killed by a signal (@signal) heal did not send.
 * @HEAL_STATUS_TIMEOUT:      the wall-time limit was reached; heal stopped the run.
 * @HEAL_STATUS_MEMORY_LIMIT: the memory cgroup killed a process for going over the limit.
 * @HEAL_STATUS_OUTPUT_LIMIT: the output cap was reached; heal stopped the run.
 * @HEAL_STATUS_CPU_LIMIT:    the command went over its CPU time (SIGXCPU/SIGKILL from RLIMIT_CPU).
 * @HEAL_STATUS_SETUP_ERROR:  the command never ran: the sandbox could not be set up or the
 *                            program could not be executed; @message says why.
 * @HEAL_STATUS_CANCELED:     heal_sandbox_cancel() stopped the run.
 */
typedef enum heal_sandbox_status {
        HEAL_STATUS_OK,
        HEAL_STATUS_EXIT_NONZERO,
        HEAL_STATUS_SIGNALED,
        HEAL_STATUS_TIMEOUT,
        HEAL_STATUS_MEMORY_LIMIT,
        HEAL_STATUS_OUTPUT_LIMIT,
        HEAL_STATUS_CPU_LIMIT,
        HEAL_STATUS_SETUP_ERROR,
        HEAL_STATUS_CANCELED,
        _HEAL_STATUS_MAX,
        _HEAL_STATUS_INVALID = -EINVAL,
} heal_sandbox_status;

/**
 * enum heal_sandbox_limit_hit - Bits of heal_sandbox_result.limits_hit: every limit that was
 * observed to be reached during the run, including ones that did not end it (a fork bomb that
 * hits the process limit and then the wall time sets both HEAL_LIMIT_PIDS and HEAL_LIMIT_WALL).
 */
enum heal_sandbox_limit_hit {
        HEAL_LIMIT_WALL = 1u << 0,
        HEAL_LIMIT_CPU = 1u << 1,
        HEAL_LIMIT_MEMORY = 1u << 2,
        HEAL_LIMIT_PIDS = 1u << 3,
        HEAL_LIMIT_OUTPUT = 1u << 4,
        HEAL_LIMIT_FSIZE = 1u << 5,
};

/**
 * enum heal_sandbox_enforcement - How the memory and process limits were enforced
 * (heal_sandbox_result.enforcement); heal doctor prints the same for the machine.
 */
typedef enum heal_sandbox_enforcement {
        HEAL_ENFORCE_RLIMIT,    /* RLIMIT_DATA / RLIMIT_NPROC per process */
        HEAL_ENFORCE_CGROUP_V1, /* memory.limit_in_bytes, pids.max */
        HEAL_ENFORCE_CGROUP_V2, /* memory.max, pids.max */
} heal_sandbox_enforcement;

/**
 * struct heal_sandbox_proc - One sandboxed process as /proc showed it when the wall-time limit
 * was reached, before any signal was sent.
 * @pid:     PID inside the sandbox.
 * @ppid:    parent PID inside the sandbox (0 for the sandbox's init).
 * @state:   /proc/PID/stat state letter (R running, S sleeping, D disk, T stopped, Z zombie).
 * @comm:    command name (/proc/PID/comm).
 * @wchan:   kernel function the process sleeps in, or "0" (/proc/PID/wchan).
 * @syscall: /proc/PID/syscall: "running", or the syscall number and arguments.
 * @cpu_ms:  CPU time used so far (utime + stime), ms.
 */
typedef struct heal_sandbox_proc {
        int pid;
        int ppid;
        char state;
        char comm[32];
        char wchan[64];
        char syscall[160];
        uint64_t cpu_ms;
} heal_sandbox_proc;

/**
 * struct heal_sandbox_timing - Where the start-up time went, µs since heal_sandbox_run() began.
 * @clone_us:   clone3() returned in the parent.
 * @maps_us:    the child had written its uid/gid maps.
 * @mounts_us:  the mount plan was applied and the root pivoted.
 * @exec_us:    the command was about to execve(2).
 * @end_us:     the run was reaped.
 * @pooled:     the run joined pre-made user, network and IPC namespaces instead of creating
 *              them (see heal_sandbox_pool_release()); @maps_us is then when it had joined.
 */
typedef struct heal_sandbox_timing {
        uint64_t clone_us;
        uint64_t maps_us;
        uint64_t mounts_us;
        uint64_t exec_us;
        uint64_t end_us;
        bool pooled;
} heal_sandbox_timing;

/**
 * struct heal_sandbox_result - What happened in one run; filled by heal_sandbox_run().
 * @status:        the verdict.
 * @exit_code:     the command's exit status (valid for OK and EXIT_NONZERO; 126/127 for a
 *                 program that could not be executed or found).
 * @signal:        the signal that killed the command, or 0.
 * @limits_hit:    enum heal_sandbox_limit_hit bits.
 * @enforcement:   how memory and process limits were enforced.
 * @wall_ms:       wall time from clone to reaping, ms.
 * @cpu_ms:        user + system CPU time of every sandboxed process, ms.
 * @mem_peak_bytes: peak memory: the cgroup's peak where one was used, else the largest
 *                 maximum resident set size of any process, bytes.
 * @out, @out_len, @out_truncated: captured stdout (NUL-terminated; owned by the result).
 * @err, @err_len, @err_truncated: captured stderr (NUL-terminated; owned by the result).
 * @procs, @n_procs: the process snapshot taken when the wall-time limit hit (else NULL, 0).
 * @message:       human explanation of SETUP_ERROR, or of the limit that ended the run.
 * @timing:        start-up breakdown.
 */
typedef struct heal_sandbox_result {
        heal_sandbox_status status;
        int exit_code;
        int signal;
        unsigned limits_hit;
        heal_sandbox_enforcement enforcement;
        uint64_t wall_ms;
        uint64_t cpu_ms;
        uint64_t mem_peak_bytes;
        char *out;
        size_t out_len;
        bool out_truncated;
        char *err;
        size_t err_len;
        bool err_truncated;
        heal_sandbox_proc *procs;
        size_t n_procs;
        char message[HEAL_ERROR_MSG_MAX];
        heal_sandbox_timing timing;
} heal_sandbox_result;

/**
 * typedef heal_sandbox_output_fn - Receives the command's output as it arrives.
 * @stream:   1 for stdout, 2 for stderr.
 * @data:     the bytes; borrowed for the duration of the call.
 * @len:      number of bytes (> 0).
 * @userdata: as given to heal_sandbox_set_output_fn().
 *
 * Context: called from heal_sandbox_run()'s thread; must not call back into the sandbox.
 */
typedef void (*heal_sandbox_output_fn)(int stream, const char *data, size_t len, void *userdata);

/**
 * heal_sandbox_new() - Create a sandbox description with the default view and limits.
 * @ret: on success, the new sandbox; free with heal_sandbox_free(). Untouched on failure.
 * @err: optional.
 *
 * Return: 0; -EINVAL if @ret is NULL; -ENOMEM.
 */
int heal_sandbox_new(heal_sandbox **ret, heal_error *err);

/**
 * heal_sandbox_free() - Free @sb. Accepts NULL.
 * Return: NULL, for "sb = heal_sandbox_free(sb);".
 */
heal_sandbox *heal_sandbox_free(heal_sandbox *sb);

/**
 * heal_sandbox_add_mount() - Append an entry to the mount plan.
 * @sb:      the sandbox.
 * @type:    "bind", "tmpfs", "proc", "overlay", "dev" or "symlink".
 * @source:  bind: absolute host path (symlinks resolved now, on the host); overlay: optional
 *           host directory for the lowest layer; symlink: the link's text; others: must be
 *           NULL or "". Copied.
 * @target:  absolute path inside the sandbox. Copied.
 * @options: NULL-terminated list, one option per element (no ',' or NUL inside one): ro/rw,
 *           noexec/exec, nosuid/suid, nodev/dev, noatime/atime (the last of each pair wins) and
 *           the type's own (see enum heal_mount_type). May be NULL. Copied.
 * @err:     optional; the message names the entry by its index and target.
 *
 * An empty plan means the default view; a nonempty plan replaces it, and its first entry must
 * be a bind or tmpfs at "/". Entries are applied in order, so parents and overlay layers come
 * first. A missing mountpoint is created only when its parent is a writable tmpfs (never
 * through a bind, which would create it on the host).
 *
 * Return: 0; -EINVAL for an unknown type, a relative or duplicate target, an option with ',',
 *         an unknown option, a first entry that is not bind/tmpfs at "/", a source given to a
 *         type that takes none; -ENOENT when a bind source does not exist; -ENOMEM.
 * See: mount(2), mount_setattr(2), tmpfs(5), Documentation/filesystems/overlayfs.rst.
 */
int heal_sandbox_add_mount(heal_sandbox *sb, const char *type, const char *source,
                           const char *target, const char *const *options, heal_error *err);

/**
 * heal_sandbox_set_limits() - Replace the limits of later runs.
 * @sb:     the sandbox.
 * @limits: copied; start from HEAL_SANDBOX_LIMITS_INIT.
 * Return: 0; -EINVAL if @limits is NULL.
 */
int heal_sandbox_set_limits(heal_sandbox *sb, const heal_sandbox_limits *limits, heal_error *err);

/**
 * heal_sandbox_get_limits() - Borrowed view of the current limits, valid until @sb changes.
 */
const heal_sandbox_limits *heal_sandbox_get_limits(const heal_sandbox *sb);

/**
 * heal_sandbox_set_flags() - Replace the enum heal_sandbox_flags of later runs.
 * Return: 0; -EINVAL for unknown bits.
 */
int heal_sandbox_set_flags(heal_sandbox *sb, unsigned flags, heal_error *err);

/**
 * heal_sandbox_inherit_env() - Copy the allow-listed variables of @envp into the environment.
 * @sb:   the sandbox.
 * @envp: NULL-terminated "NAME=value" list (e.g. environ); borrowed.
 *
 * The allow-list is PATH, LANG, LANGUAGE, the LC_* categories of locale(7), TERM, TZ: nothing
 * else (no API key or token) is copied.
 * Variables set with heal_sandbox_setenv() win whatever the order of calls.
 * Return: 0; -ENOMEM.
 */
int heal_sandbox_inherit_env(heal_sandbox *sb, const char *const *envp, heal_error *err);

/**
 * heal_sandbox_setenv() - Set or (with @value NULL) remove one variable. Copied.
 * Return: 0; -EINVAL for a name that is empty or holds '='; -ENOMEM.
 */
int heal_sandbox_setenv(heal_sandbox *sb, const char *name, const char *value, heal_error *err);

/**
 * heal_sandbox_set_cwd() - Working directory of the command inside the sandbox. Copied.
 *
 * With the default view it is also the host directory shared with the sandbox (bound at the
 * same path). Defaults to heal's own working directory.
 * Return: 0; -EINVAL for a relative path; -ENOMEM.
 */
int heal_sandbox_set_cwd(heal_sandbox *sb, const char *path, heal_error *err);

/**
 * heal_sandbox_set_cwd_fd() - The working directory as a directory the caller opened and checked.
 * @dirfd: borrowed; an open directory (O_PATH is enough), for instance one opened beneath a root
 *         with openat2(2) RESOLVE_BENEATH.
 *
 * As heal_sandbox_set_cwd() with the directory's path (read from /proc/self/fd), and later runs
 * share it with the default view only if the directory found at that path when the sandbox
 * mounts it is still this one (same device and inode): a directory swapped for another, or a
 * symlink put on the way, between the caller's check and the run makes the run a setup error
 * instead of a view of something else.
 * Return: 0; -EBADF or -ENOTDIR for @dirfd; -ENAMETOOLONG; -ENOMEM.
 * See: openat2(2), proc(5) /proc/PID/fd.
 */
int heal_sandbox_set_cwd_fd(heal_sandbox *sb, int dirfd, heal_error *err);

/**
 * heal_sandbox_set_stdin_fd() - Use @fd as the command's stdin instead of /dev/null.
 * @fd: borrowed; must stay open during heal_sandbox_run(); -1 restores /dev/null.
 */
void heal_sandbox_set_stdin_fd(heal_sandbox *sb, int fd);

/**
 * heal_sandbox_set_output_fn() - Stream output to @fn as it arrives.
 * @fn:       callback, or NULL.
 * @userdata: passed to @fn.
 * @capture:  also keep the output in the result (up to @out_max_bytes); when false the result's
 *            @out/@err are empty but the cap still stops the run.
 */
void heal_sandbox_set_output_fn(heal_sandbox *sb, heal_sandbox_output_fn fn, void *userdata,
                                bool capture);

/**
 * heal_sandbox_add_seccomp_rule() - Make @syscall fail with @errno_value in the sandbox.
 * @syscall:     syscall name as libseccomp knows it (e.g. "socket"). Copied.
 * @errno_value: positive errno the call returns (e.g. EPERM).
 * Return: 0; -EINVAL for an unknown syscall name or an errno outside 1..4095; -ENOMEM.
 * See: seccomp_rule_add(3).
 */
int heal_sandbox_add_seccomp_rule(heal_sandbox *sb, const char *syscall, int errno_value,
                                  heal_error *err);

/**
 * heal_sandbox_run() - Run @argv in a fresh sandbox and wait for it to finish.
 * @sb:         the sandbox; borrowed.
 * @argv:       NULL-terminated argument vector; argv[0] is looked up in the sandbox's PATH.
 * @ret_result: on success, the verdict and usage; release with heal_sandbox_result_release().
 * @err:        optional.
 *
 * Namespaces are entered with clone3(2) in a child; a small init (PID 1 of the new PID
 * namespace) reaps zombies and starts the command in a new session; when the command exits, init
 * exits and the kernel kills whatever is left. No descriptor other than 0, 1, 2 reaches the
 * command. On wall timeout every process gets SIGQUIT, then after @grace_ms the namespace is
 * killed; the process snapshot and the output (with Go's stack dump) stay in the result.
 *
 * Context: blocking; forks; safe in a multi-threaded process and with SIGCHLD ignored (the child
 *          is started with no exit signal and waited for through its pidfd).
 * Return: 0 if the run was carried out, whatever its verdict (a failed setup inside the sandbox
 *         is @status HEAL_STATUS_SETUP_ERROR with @message); -EINVAL bad arguments or plan;
 *         -EPERM / -ENOSPC user namespaces refused by the system (the message names the setting
 *         and the fix); -ENOMEM; other -errno from pipe2(2), clone3(2) or seccomp export.
 * See: user_namespaces(7), pid_namespaces(7), pivot_root(2), isolate(1) for the verdict model.
 */
int heal_sandbox_run(heal_sandbox *sb, const char *const *argv, heal_sandbox_result *ret_result,
                     heal_error *err);

/**
 * heal_sandbox_pool_release() - Close what the library keeps across runs: pre-made namespaces,
 *                               the mount-table watch, and as root the user namespace that
 *                               idmaps /etc.
 *
 * Once its first sandbox with a network namespace of its own is over, a process keeps one
 * pre-made user namespace with the network and IPC namespaces it owns (three descriptors,
 * O_CLOEXEC), so that its second run on joins one: after each such run, a thread of the library
 * (started on first need, every signal blocked, idle otherwise) makes the next set, and the next
 * heal_sandbox_run() joins it with setns(2) instead of creating a network namespace (about 0.35 ms
 * of kernel work) on its critical path; the sandbox's own mount, PID, UTS and cgroup namespaces are
 * still new. Each set serves one sandbox only and is never used by a forked child of the process
 * that made it. As root, the default view's /etc is an idmapped copy of the host's /etc, made
 * per run through one user namespace the process keeps (one more descriptor; docs/sandbox.md,
 * "Running heal as root"). Once a
 * default view shared a working directory, one descriptor of /proc/self/mountinfo stays open: the
 * check that the directory is no kernel filesystem reads the mount table again only when poll(2)
 * on it says the table changed (or the process changed mount namespace or root, or forked).
 * Call this to get the descriptors back (before counting descriptors, or before a long idle
 * period); later runs make new ones as needed.
 *
 * heal_sandbox_run() waits for a set the thread is making rather than create its own namespaces
 * meanwhile: the set is ready sooner, and the two would contend for the kernel's sysctl lock.
 *
 * Context: thread-safe; waits while the pool's thread is making a set.
 * See: setns(2), network_namespaces(7), user_namespaces(7) ("Defining user and group ID
 *      mappings"), clone(2) (CLONE_VM | CLONE_VFORK, as posix_spawn(3)), proc(5)
 *      ("/proc/pid/mounts": POLLPRI on a change).
 */
void heal_sandbox_pool_release(void);

/**
 * heal_sandbox_pool_wait() - Wait until the pool's thread has made the set it was asked for.
 *
 * For benchmarks and tests: a run that starts while the set is being made waits for it, and a
 * measurement taken meanwhile shares the CPUs with the thread.
 * Return: true when a set is ready for this process's next run; false when none was asked for
 *         yet (before a process's first run is over, or after heal_sandbox_pool_release()) or
 *         making one failed (user namespaces refused: the cold path then explains why).
 */
bool heal_sandbox_pool_wait(void);

/**
 * heal_sandbox_cancel() - Stop the run in progress on @sb (status HEAL_STATUS_CANCELED).
 *
 * Context: async-signal-safe and thread-safe: may be called from a SIGINT handler or another
 *          thread. Without a run in progress, the next run is canceled at once.
 */
void heal_sandbox_cancel(heal_sandbox *sb);

/**
 * heal_sandbox_result_release() - Free what @result owns and zero it. Accepts a zeroed result.
 */
void heal_sandbox_result_release(heal_sandbox_result *result);

/**
 * heal_sandbox_probe_enforcement() - How this process can enforce memory and process limits.
 * @ret_mem_cgroup:  set to true when memory limits go through a cgroup.
 * @ret_pids_cgroup: set to true when process limits go through a cgroup.
 * @where:           receives the cgroup directories used, or "" (NUL-terminated).
 * @len:             size of @where in bytes.
 *
 * The answer is computed once per process (cgroup v2 delegation, $HEAL_CGROUP, v1 hierarchies).
 * Context: thread-safe.
 * Return: the mode memory limits use (HEAL_ENFORCE_RLIMIT when no cgroup is writable).
 */
heal_sandbox_enforcement heal_sandbox_probe_enforcement(bool *ret_mem_cgroup, bool *ret_pids_cgroup,
                                                        char *where, size_t len);

/**
 * heal_sandbox_status_to_string() - "ok", "exit_nonzero", "signaled", "timeout",
 * "memory_limit", "output_limit", "cpu_limit", "setup_error", "canceled"; NULL if out of range.
 */
const char *heal_sandbox_status_to_string(heal_sandbox_status status);

/**
 * heal_mount_type_from_string() - Parse "bind", "tmpfs", "proc", "overlay", "dev", "symlink".
 * Return: the type, or _HEAL_MOUNT_TYPE_INVALID.
 */
heal_mount_type heal_mount_type_from_string(const char *s);

/**
 * heal_sandbox_limit_name() - Human name of one enum heal_sandbox_limit_hit bit ("wall time",
 * "cpu time", "memory", "processes", "output", "file size"); NULL for anything else.
 */
const char *heal_sandbox_limit_name(unsigned bit);

#endif
