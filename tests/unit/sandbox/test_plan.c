/* SPDX-License-Identifier: MIT */
/* Mount-plan validation: every error heal_sandbox_add_mount() can return, with its message. */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "heal/sandbox.h"

static heal_sandbox *sb;
static heal_error err;

static void setup(void)
{
        err = (heal_error)HEAL_ERROR_INIT;
        cr_assert_eq(heal_sandbox_new(&sb, &err), 0);
}

static void teardown(void)
{
        sb = heal_sandbox_free(sb);
}

TestSuite(plan, .init = setup, .fini = teardown);

static int add(const char *type, const char *src, const char *dst, const char *const *opts)
{
        err = (heal_error)HEAL_ERROR_INIT;
        return heal_sandbox_add_mount(sb, type, src, dst, opts, &err);
}

#define OPTS(...) ((const char *const[]){ __VA_ARGS__, NULL })

static void expect_error(int r, int code, const char *needle)
{
        cr_assert_eq(r, code, "expected %d, got %d (%s)", code, r, err.msg);
        cr_assert_eq(err.code, code);
        cr_assert(strstr(err.msg, needle), "message '%s' lacks '%s'", err.msg, needle);
}

Test(plan, valid_plan_in_order)
{
        cr_assert_eq(add("bind", "/", "/", OPTS("ro")), 0, "%s", err.msg);
        cr_assert_eq(add("tmpfs", NULL, "/tmp", OPTS("mode=1777", "size=64m")), 0, "%s", err.msg);
        cr_assert_eq(add("proc", NULL, "/proc", NULL), 0, "%s", err.msg);
        cr_assert_eq(add("dev", "", "/dev", NULL), 0, "%s", err.msg);
        cr_assert_eq(add("overlay", "/etc", "/mnt", NULL), 0, "%s", err.msg);
        cr_assert_eq(
                add("overlay", NULL, "/opt", OPTS("lowerdir=/tmp/a:/tmp/b", "upperdir=/tmp/u")), 0,
                "%s", err.msg);
}

Test(plan, first_entry_must_be_root)
{
        expect_error(add("proc", NULL, "/proc", NULL), -EINVAL,
                     "first entry must be a bind or tmpfs at '/'");
        expect_error(add("tmpfs", NULL, "/tmp", NULL), -EINVAL, "mount entry 0 (tmpfs at '/tmp')");
        expect_error(add("overlay", "/etc", "/", NULL), -EINVAL, "first entry");
        cr_assert_eq(add("tmpfs", NULL, "/", NULL), 0, "%s", err.msg);
}

Test(plan, only_first_entry_mounts_root)
{
        cr_assert_eq(add("tmpfs", NULL, "/", NULL), 0);
        expect_error(add("bind", "/", "/", NULL), -EINVAL, "only the first entry may mount '/'");
}

Test(plan, unknown_type_names_entry)
{
        expect_error(add("nfs", NULL, "/x", NULL), -EINVAL, "unknown type 'nfs'");
        cr_assert(strstr(err.msg, "mount entry 0"));
}

Test(plan, relative_and_dotdot_targets)
{
        expect_error(add("tmpfs", NULL, "tmp", NULL), -EINVAL, "not an absolute path");
        expect_error(add("tmpfs", NULL, "", NULL), -EINVAL, "target is empty");
        cr_assert_eq(add("tmpfs", NULL, "/", NULL), 0);
        expect_error(add("tmpfs", NULL, "/a/../etc", NULL), -EINVAL, "'..'");
}

Test(plan, duplicate_targets_after_normalisation)
{
        cr_assert_eq(add("tmpfs", NULL, "/", NULL), 0);
        cr_assert_eq(add("tmpfs", NULL, "/tmp", NULL), 0);
        expect_error(add("tmpfs", NULL, "//tmp/./", NULL), -EINVAL, "duplicate target, entry 1");
        cr_assert(strstr(err.msg, "mount entry 2"));
}

Test(plan, option_with_comma_or_unknown)
{
        cr_assert_eq(add("tmpfs", NULL, "/", NULL), 0);
        expect_error(add("tmpfs", NULL, "/t", OPTS("size=1m,mode=700")), -EINVAL, "holds ','");
        expect_error(add("tmpfs", NULL, "/t", OPTS("bogus")), -EINVAL, "unknown option 'bogus'");
        expect_error(add("bind", "/usr", "/u", OPTS("size=1m")), -EINVAL,
                     "unknown option 'size=1m' for type bind");
        expect_error(add("tmpfs", NULL, "/t", OPTS("")), -EINVAL, "empty option");
}

Test(plan, bad_option_values)
{
        cr_assert_eq(add("tmpfs", NULL, "/", NULL), 0);
        expect_error(add("tmpfs", NULL, "/t", OPTS("size=lots")), -EINVAL, "bad value");
        expect_error(add("tmpfs", NULL, "/t", OPTS("mode=999")), -EINVAL, "bad value");
        expect_error(add("tmpfs", NULL, "/t", OPTS("uid=-1")), -EINVAL, "bad value");
        expect_error(add("overlay", "/etc", "/o", OPTS("upperdir=relative")), -EINVAL, "bad value");
        /* strtoull would take these; the kernel would not (or would read them differently). */
        expect_error(add("tmpfs", NULL, "/t", OPTS("size=+64m")), -EINVAL, "bad value");
        expect_error(add("tmpfs", NULL, "/t", OPTS("nr_inodes=\t5")), -EINVAL, "bad value");
        expect_error(add("tmpfs", NULL, "/t", OPTS("uid=+0")), -EINVAL, "bad value");
        expect_error(add("tmpfs", NULL, "/t", OPTS("mode=\v755")), -EINVAL, "bad value");
        expect_error(add("tmpfs", NULL, "/t", OPTS("size=99999999999999999999999")), -EINVAL,
                     "bad value");
        expect_error(add("overlay", "/etc", "/o", OPTS("lowerdir=/a:usr")), -EINVAL, "bad value");
        expect_error(add("overlay", "/etc", "/o", OPTS("lowerdir=/../oldroot/root")), -EINVAL,
                     "bad value");
        expect_error(add("overlay", "/etc", "/o", OPTS("upperdir=/a/../../x")), -EINVAL,
                     "bad value");
        expect_error(add("overlay", "/etc", "/o", OPTS("upperdir=/u", "workdir=/..")), -EINVAL,
                     "bad value");
        /* overlayfs unescapes '\': "/.\./" would pass a '..' check and become "/../". */
        expect_error(add("overlay", "/etc", "/o", OPTS("upperdir=/.\\./oldroot/tmp")), -EINVAL,
                     "bad value");
        expect_error(add("overlay", NULL, "/o", OPTS("lowerdir=/a:/.\\./oldroot/root")), -EINVAL,
                     "bad value");
        /* Long but valid amounts are kept exactly (fuzz/corpus/mount_plan/regress-long-*). */
        cr_assert_eq(add("tmpfs", NULL, "/t",
                         OPTS("size=000000000000000000000000000064m", "nr_inodes=50%")),
                     0, "%s", err.msg);
}

Test(plan, sources)
{
        expect_error(add("bind", NULL, "/", NULL), -EINVAL, "bind needs a source");
        expect_error(add("bind", "usr", "/", NULL), -EINVAL, "not an absolute path");
        expect_error(add("bind", "/nonexistent-heal-test", "/", NULL), -ENOENT,
                     "'/nonexistent-heal-test'");
        cr_assert_eq(add("tmpfs", NULL, "/", NULL), 0);
        expect_error(add("proc", "/proc", "/proc", NULL), -EINVAL, "takes no source");
        expect_error(add("overlay", "/etc/hostname", "/o", NULL), -EINVAL, "not a directory");
}

Test(plan, symlink_entries)
{
        cr_assert_eq(add("tmpfs", NULL, "/", NULL), 0);
        expect_error(add("symlink", NULL, "/bin", NULL), -EINVAL, "symlink needs a source");
        cr_assert_eq(add("symlink", "usr/bin", "/bin", NULL), 0, "%s", err.msg);
        cr_assert_eq(add("symlink", "/does/not/exist", "/x", NULL), 0, "link text is not resolved");
        expect_error(add("symlink", "a", "/bin", NULL), -EINVAL, "duplicate target");
}

Test(plan, overlay_needs_a_lower_layer)
{
        cr_assert_eq(add("tmpfs", NULL, "/", NULL), 0);
        expect_error(add("overlay", NULL, "/o", NULL), -EINVAL,
                     "needs a source directory or lowerdir=");
        expect_error(add("overlay", "/etc", "/o", OPTS("workdir=/w")), -EINVAL,
                     "workdir= needs upperdir=");
}

Test(plan, failed_add_leaves_plan_unchanged)
{
        cr_assert_eq(add("tmpfs", NULL, "/", NULL), 0);
        cr_assert_neq(add("tmpfs", NULL, "/x", OPTS("nope")), 0);
        /* /x was not recorded: adding it again is not a duplicate. */
        cr_assert_eq(add("tmpfs", NULL, "/x", NULL), 0, "%s", err.msg);
}

Test(plan, invalid_arguments)
{
        cr_assert_eq(heal_sandbox_add_mount(NULL, "tmpfs", NULL, "/", NULL, &err), -EINVAL);
        cr_assert_eq(heal_sandbox_add_mount(sb, NULL, NULL, "/", NULL, NULL), -EINVAL);
        cr_assert_eq(heal_sandbox_new(NULL, NULL), -EINVAL);
        cr_assert_eq(heal_sandbox_setenv(sb, "A=B", "c", NULL), -EINVAL);
        cr_assert_eq(heal_sandbox_setenv(sb, "", "c", NULL), -EINVAL);
        cr_assert_eq(heal_sandbox_set_cwd(sb, "rel", NULL), -EINVAL);
        cr_assert_eq(heal_sandbox_set_flags(sb, 1u << 30, NULL), -EINVAL);
        cr_assert_eq(heal_sandbox_add_seccomp_rule(sb, "no_such_syscall", EPERM, NULL), -EINVAL);
        cr_assert_eq(heal_sandbox_add_seccomp_rule(sb, "socket", 0, NULL), -EINVAL);
        cr_assert_eq(heal_sandbox_add_seccomp_rule(sb, "socket", 5000, NULL), -EINVAL);
        cr_assert_eq(heal_sandbox_add_seccomp_rule(sb, "socket", EACCES, NULL), 0);
}

Test(plan, names)
{
        cr_assert_str_eq(heal_sandbox_status_to_string(HEAL_STATUS_TIMEOUT), "timeout");
        cr_assert_str_eq(heal_sandbox_status_to_string(HEAL_STATUS_SETUP_ERROR), "setup_error");
        cr_assert_null(heal_sandbox_status_to_string(_HEAL_STATUS_MAX));
        cr_assert_eq(heal_mount_type_from_string("overlay"), HEAL_MOUNT_OVERLAY);
        cr_assert_eq(heal_mount_type_from_string("symlink"), HEAL_MOUNT_SYMLINK);
        cr_assert_eq(heal_mount_type_from_string("nfs"), _HEAL_MOUNT_TYPE_INVALID);
        cr_assert_str_eq(heal_sandbox_limit_name(HEAL_LIMIT_PIDS), "processes");
        cr_assert_null(heal_sandbox_limit_name(3));
}
