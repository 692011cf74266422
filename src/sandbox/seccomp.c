/* SPDX-License-Identifier: MIT */
/*
 * The default seccomp filter, built with libseccomp in the parent and handed to the child as a
 * ready BPF program (the child may not allocate, and libseccomp does).
 *
 * Default action: allow. A blocklist, not an allowlist, so that syscalls newer than this code
 * (clone3, faccessat2, close_range, rseq, ...) keep working: the classic container breakages
 * (moby#42680, crun#646, moby#43595) came from allowlists answering EPERM to what libc probes.
 * Refused calls that programs probe and fall back from answer ENOSYS; the others EPERM.
 * Non-native architectures (int 0x80 i386 calls, x32) answer ENOSYS.
 * See: seccomp(2), seccomp_init(3), seccomp_rule_add(3), seccomp_export_bpf(3).
 */
#include <errno.h>
#include <seccomp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/util.h"
#include "sandbox-internal.h"

struct refusal {
        const char *name;
        int errno_value;
};

static const struct refusal refused[] = {
        /* io_uring bypasses most syscall filtering and has a long CVE list; users fall back. */
        { "io_uring_setup", ENOSYS },
        { "io_uring_enter", ENOSYS },
        { "io_uring_register", ENOSYS },
        { "bpf", EPERM },
        { "keyctl", EPERM },
        { "add_key", EPERM },
        { "request_key", EPERM },
        { "perf_event_open", EPERM },
        { "userfaultfd", EPERM },
        { "kexec_load", EPERM },
        { "kexec_file_load", EPERM },
        { "init_module", EPERM },
        { "finit_module", EPERM },
        { "delete_module", EPERM },
        /* The mount family: the plan is set up before the filter is installed. */
        { "mount", EPERM },
        { "umount2", EPERM },
        { "pivot_root", EPERM },
        { "move_mount", EPERM },
        { "open_tree", EPERM },
        { "fsopen", EPERM },
        { "fsconfig", EPERM },
        { "fsmount", EPERM },
        { "fspick", EPERM },
        { "mount_setattr", EPERM },
        { "swapon", EPERM },
        { "swapoff", EPERM },
        { "reboot", EPERM },
        { "acct", EPERM },
        { "quotactl", EPERM },
        { "open_by_handle_at", EPERM },
};

static const struct refusal ptrace_family[] = {
        { "ptrace", EPERM },
        { "process_vm_readv", EPERM },
        { "process_vm_writev", EPERM },
};

int seccomp_syscall_resolve(const char *name)
{
        int nr = seccomp_syscall_resolve_name(name);

        return nr == __NR_SCMP_ERROR || nr < 0 ? -EINVAL : nr;
}

static int add_refusals(scmp_filter_ctx ctx, const struct refusal *list, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                int nr = seccomp_syscall_resolve_name(list[i].name);
                int r;

                if (nr == __NR_SCMP_ERROR)
                        continue; /* not on this architecture */
                r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO((unsigned)list[i].errno_value), nr, 0);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int add_ioctl_refusals(scmp_filter_ctx ctx)
{
        static const unsigned long cmds[] = { TIOCSTI, TIOCLINUX };

        /* The kernel reads the command as 32 bits: compare the low half only, or a caller sets
         * high bits to slip past (the flatpak CVE-2019-10063 pattern). */
        for (size_t i = 0; i < ELEMENTSOF(cmds); i++) {
                int r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(ioctl), 1,
                                         SCMP_A1_64(SCMP_CMP_MASKED_EQ, 0xFFFFFFFFULL, cmds[i]));
                if (r < 0)
                        return r;
        }
        return 0;
}

/*
 * As host root the command could leave a setuid-root (or setgid-root) program in a directory it
 * shares with the host, for any local user to run: refuse setting those bits. The mode argument's
 * position per syscall; open/openat only use it with O_CREAT, and then it must not carry them.
 */
static int add_setid_refusals(scmp_filter_ctx ctx)
{
        static const struct {
                const char *name;
                unsigned arg;
        } calls[] = {
                { "chmod", 1 },     { "fchmod", 1 }, { "fchmodat", 2 },
                { "fchmodat2", 2 }, { "creat", 1 },  { "open", 2 },
                { "openat", 3 },    { "mknod", 1 },  { "mknodat", 2 },
        };
        static const unsigned long bits[] = { S_ISUID, S_ISGID };

        for (size_t i = 0; i < ELEMENTSOF(calls); i++) {
                int nr = seccomp_syscall_resolve_name(calls[i].name);

                if (nr == __NR_SCMP_ERROR)
                        continue;
                for (size_t b = 0; b < ELEMENTSOF(bits); b++) {
                        struct scmp_arg_cmp cmp = {
                                .arg = calls[i].arg,
                                .op = SCMP_CMP_MASKED_EQ,
                                .datum_a = bits[b],
                                .datum_b = bits[b],
                        };
                        int r = seccomp_rule_add_array(ctx, SCMP_ACT_ERRNO(EPERM), nr, 1, &cmp);

                        if (r < 0)
                                return r;
                }
        }
        /* openat2 carries its mode in a struct the filter cannot read: glibc falls back. */
        return seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(openat2), 0);
}

static int export_bpf(struct sock_fprog **ret, scmp_filter_ctx ctx)
{
        _cleanup_close_ int fd = memfd_create("heal-seccomp", MFD_CLOEXEC);
        struct sock_fprog *prog;
        off_t size;
        int r;

        if (fd < 0)
                return -errno;
        r = seccomp_export_bpf(ctx, fd);
        if (r < 0)
                return r;
        size = lseek(fd, 0, SEEK_END);
        if (size <= 0 || size % sizeof(struct sock_filter) != 0)
                return -EIO;
        prog = calloc(1, sizeof(*prog) + (size_t)size);
        if (!prog)
                return -ENOMEM;
        prog->filter = (struct sock_filter *)(prog + 1);
        prog->len = (unsigned short)(size / sizeof(struct sock_filter));
        if (pread(fd, prog->filter, (size_t)size, 0) != size) {
                free(prog);
                return -EIO;
        }
        *ret = prog;
        return 0;
}

int seccomp_compile(struct sock_fprog **ret, unsigned flags, bool host_root,
                    const struct seccomp_rule *rules, size_t n_rules, heal_error *err)
{
        scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
        int r = 0;

        if (!ctx)
                return heal_error_set(err, -ENOMEM, "seccomp: cannot create a filter");
        if (seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_ERRNO(ENOSYS)) < 0 ||
            seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0) < 0 ||
            seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2) < 0)
                r = -EINVAL;
        if (r >= 0 && !(flags & HEAL_SANDBOX_NO_SECCOMP)) {
                r = add_refusals(ctx, refused, ELEMENTSOF(refused));
                if (r >= 0 && !(flags & HEAL_SANDBOX_ALLOW_PTRACE))
                        r = add_refusals(ctx, ptrace_family, ELEMENTSOF(ptrace_family));
                if (r >= 0)
                        r = add_ioctl_refusals(ctx);
        }
        if (r >= 0 && host_root)
                r = add_setid_refusals(ctx);
        for (size_t i = 0; r >= 0 && i < n_rules; i++)
                r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO((unsigned)rules[i].errno_value),
                                     rules[i].nr, 0);
        if (r >= 0)
                r = export_bpf(ret, ctx);
        seccomp_release(ctx);
        if (r < 0)
                return heal_error_set(err, r, "seccomp: cannot build the filter: %s", strerror(-r));
        return 0;
}

void seccomp_free(struct sock_fprog *prog)
{
        free(prog);
}
