/* SPDX-License-Identifier: MIT */
#ifndef HEAL_SANDBOX_RUN_INTERNAL_H
#define HEAL_SANDBOX_RUN_INTERNAL_H

#include <limits.h>
#include <sys/resource.h>

#include "heal/buf.h"

#include "sandbox-internal.h"

/* One run of heal_sandbox_run(), from preparation to the result. */
struct run {
        heal_sandbox *sb;
        const char *const *argv;
        heal_sandbox_result *res;
        struct mount_entry *view; /* the default view, when the plan is empty */
        size_t n_view;
        struct plan_compiled pc;
        struct child_plan plan;
        struct cgroup_run *cg; /* the sandbox's; borrowed */
        char *cwd;
        char **envp; /* weak mode: the environment plus TMPDIR */
        char *tmpdir_env;
        char tmpdir[32];
        int out_r, out_w, err_r, err_w, rep_r, rep_w, ctl_r, ctl_w, null_fd;
        int pidfd;
        pid_t pid;
        uint64_t start_ns;
        heal_buf out, errb;
        uint64_t out_total;  /* stdout + stderr bytes seen */
        struct report error; /* first REPORT_ERROR */
        bool have_error;
        int wstatus; /* REPORT_EXIT */
        bool have_exit;
        bool have_done;        /* REPORT_DONE: every process reaped, init about to exit */
        struct rusage done_ru; /* ... and the usage of all of them */
        bool reaped;
        int attach_error; /* the parent could not move init into the cgroup: -errno */
        struct rusage ru;
        heal_sandbox_status stop_reason; /* why heal stopped the run, or OK */
        uint64_t grace_deadline_ns;
        bool quit_sent;
        uint64_t kill_sent_ns; /* CTL_KILL written to init */
        bool killed;           /* SIGKILL sent to init */
};

int supervise(struct run *run, heal_error *err);
int finish(struct run *run, heal_error *err);

#endif
