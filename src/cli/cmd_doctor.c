/* SPDX-License-Identifier: MIT */
/* heal doctor: what this machine supports, how limits are enforced, and the fix for the rest. */
#include <seccomp.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "heal/llm.h"

#include "cli/cli.h"
#include "core/util.h"

extern char **environ;

struct check {
        const char *name;
        const char *status; /* "ok", "warn", "fail" */
        char detail[HEAL_ERROR_MSG_MAX + 64];
};

struct doctor {
        struct check checks[16];
        size_t n;
        bool json;
};

static struct check *add(struct doctor *d, const char *name, const char *status)
{
        struct check *c = &d->checks[d->n++];

        c->name = name;
        c->status = status;
        c->detail[0] = '\0';
        return c;
}

/* Run @argv in a sandbox with @mounts (NULL: default view); 0 when it ran and exited 0. */
static int try_run(const char *const *argv, unsigned flags, bool overlay_probe, char *msg,
                   size_t len, heal_sandbox_result *ret)
{
        static const char *const ro[] = { "ro", NULL };
        heal_error err = HEAL_ERROR_INIT;
        heal_sandbox *sb = NULL;
        int r;

        r = heal_sandbox_new(&sb, &err);
        if (r >= 0 && overlay_probe) {
                r = heal_sandbox_add_mount(sb, "bind", "/", "/", ro, &err);
                if (r >= 0)
                        r = heal_sandbox_add_mount(sb, "overlay", "/etc", "/tmp", NULL, &err);
        }
        if (r >= 0)
                r = heal_sandbox_set_flags(sb, flags, &err);
        if (r >= 0)
                r = heal_sandbox_inherit_env(sb, (const char *const *)environ, &err);
        if (r >= 0)
                r = heal_sandbox_setenv(sb, "HOME", "/tmp", &err);
        if (r >= 0)
                r = heal_sandbox_set_cwd(sb, "/", &err);
        if (r >= 0)
                r = heal_sandbox_run(sb, argv, ret, &err);
        heal_sandbox_free(sb);
        if (r < 0) {
                snprintf(msg, len, "%s", err.msg);
                return r;
        }
        if (ret->status != HEAL_STATUS_OK) {
                snprintf(msg, len, "%s",
                         ret->message[0] ? ret->message
                                         : heal_sandbox_status_to_string(ret->status));
                return -1;
        }
        return 0;
}

static void check_namespaces(struct doctor *d)
{
        static const char *const argv[] = { "/bin/true", NULL };
        heal_sandbox_result res = { 0 };
        char msg[HEAL_ERROR_MSG_MAX];
        struct check *c;

        if (try_run(argv, 0, false, msg, sizeof(msg), &res) < 0) {
                c = add(d, "namespaces", "fail");
                snprintf(c->detail, sizeof(c->detail), "%s", msg);
        } else {
                c = add(d, "namespaces", "ok");
                snprintf(c->detail, sizeof(c->detail),
                         "user, mount, pid, net, ipc, uts, cgroup namespaces and the seccomp "
                         "filter (libseccomp %u.%u.%u) work; /bin/true took %.1f ms",
                         seccomp_version()->major, seccomp_version()->minor,
                         seccomp_version()->micro, (double)res.timing.end_us / 1000.0);
        }
        heal_sandbox_result_release(&res);
}

static void check_overlay(struct doctor *d)
{
        static const char *const argv[] = { "/bin/sh", "-c", "echo x > /tmp/heal-probe", NULL };
        heal_sandbox_result res = { 0 };
        char msg[HEAL_ERROR_MSG_MAX];
        struct check *c;

        if (try_run(argv, 0, true, msg, sizeof(msg), &res) < 0) {
                c = add(d, "overlay", "fail");
                snprintf(c->detail, sizeof(c->detail),
                         "%s; heal's repair workspaces need overlayfs in a user namespace", msg);
        } else {
                c = add(d, "overlay", "ok");
                snprintf(c->detail, sizeof(c->detail),
                         "overlayfs over host directories works in a user namespace");
        }
        heal_sandbox_result_release(&res);
}

/* As root: how the default view hides what only root may read under /etc (secrets.c). */
static void check_root_etc(struct doctor *d)
{
        static const char *const argv[] = { "/usr/bin/stat", "-c", "%u", "/etc/passwd", NULL };
        heal_sandbox_result res = { 0 };
        char msg[HEAL_ERROR_MSG_MAX];
        struct check *c;

        if (geteuid() != 0)
                return;
        if (try_run(argv, 0, false, msg, sizeof(msg), &res) < 0) {
                c = add(d, "root-etc", "fail");
                snprintf(c->detail, sizeof(c->detail), "%s", msg);
        } else if (res.out && strcmp(res.out, "65534\n") == 0) {
                c = add(d, "root-etc", "ok");
                snprintf(c->detail, sizeof(c->detail),
                         "/etc is idmapped in the sandbox: the kernel refuses every file under "
                         "it that other users may not read, however late it appeared (root's files "
                         "show as owned by 65534 inside; HEAL_ETC_IDMAP=0 walks /etc instead)");
        } else if (getenv("HEAL_ETC_IDMAP") && strcmp(getenv("HEAL_ETC_IDMAP"), "0") == 0) {
                c = add(d, "root-etc", "warn");
                snprintf(c->detail, sizeof(c->detail),
                         "HEAL_ETC_IDMAP=0: heal hides what other users may not read under /etc by "
                         "a walk of /etc when a process starts, so a file created later stays "
                         "visible to that process's sandboxes; unset it for the idmapped /etc");
        } else {
                c = add(d, "root-etc", "warn");
                snprintf(c->detail, sizeof(c->detail),
                         "/etc cannot be idmapped here (Linux >= 5.12 and a filesystem with "
                         "idmapped mounts needed): heal hides what other users may not read by "
                         "a walk of /etc when a process starts, so a file created later stays "
                         "visible to that process's sandboxes; fix: a newer kernel, or run heal "
                         "as an unprivileged user");
        }
        heal_sandbox_result_release(&res);
}

/* Whether the cgroup v2 hierarchy (pure, or hybrid's "unified") has the memory and pids
 * controllers: where it has not, they are on cgroup v1 and no subtree can be delegated. */
static bool v2_has_controllers(void)
{
        static const char *const files[] = { "/sys/fs/cgroup/cgroup.controllers",
                                             "/sys/fs/cgroup/unified/cgroup.controllers" };

        for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
                char buf[512] = "";
                FILE *f = fopen(files[i], "re");
                bool got = f && fgets(buf, sizeof(buf), f);

                if (f)
                        fclose(f);
                if (got && strstr(buf, "memory") && strstr(buf, "pids"))
                        return true;
        }
        return false;
}

static void check_cgroup(struct doctor *d)
{
        char where[2 * 4096];
        bool mem, pids;
        heal_sandbox_enforcement e =
                heal_sandbox_probe_enforcement(&mem, &pids, where, sizeof(where));
        struct check *c = add(d, "limits", mem && pids ? "ok" : "warn");

        (void)str_printf(c->detail, sizeof(c->detail), "memory: %s; processes: %s%s%s%s",
                         mem ? (e == HEAL_ENFORCE_CGROUP_V2 ? "cgroup v2 memory.max"
                                                            : "cgroup v1 memory.limit_in_bytes")
                             : "RLIMIT_DATA per process (no writable cgroup)",
                         pids ? "cgroup pids.max" : "RLIMIT_NPROC per user namespace",
                         where[0] ? " (" : "", where, where[0] ? ")" : "");
        if (!(mem && pids) && v2_has_controllers())
                snprintf(c->detail + strlen(c->detail), sizeof(c->detail) - strlen(c->detail),
                         "; fix: run as root, or delegate a cgroup v2 subtree to your user and "
                         "set HEAL_CGROUP to it");
        else if (!(mem && pids))
                snprintf(c->detail + strlen(c->detail), sizeof(c->detail) - strlen(c->detail),
                         "; this host's memory and pids controllers are on cgroup v1 (a hybrid "
                         "or legacy layout), and heal uses a delegated subtree only on cgroup "
                         "v2; fix: run as root, or boot with systemd.unified_cgroup_hierarchy=1 "
                         "and delegate a cgroup v2 subtree (HEAL_CGROUP)");
}

static void check_tool(struct doctor *d, const char *name, const char *const *argv,
                       const char *package)
{
        heal_sandbox_result res = { 0 };
        char msg[HEAL_ERROR_MSG_MAX];
        struct check *c;

        if (try_run(argv, 0, false, msg, sizeof(msg), &res) < 0) {
                c = add(d, name, "warn");
                snprintf(c->detail, sizeof(c->detail), "%s; fix: apt-get install %s", msg, package);
        } else {
                const char *out = res.out_len ? res.out : res.err;

                c = add(d, name, "ok");
                snprintf(c->detail, sizeof(c->detail), "%.*s", (int)strcspn(out, "\n"), out);
        }
        heal_sandbox_result_release(&res);
}

/* Send the chosen model a one-line question; say whether and how fast it answered, and what
 * that cost. */
static void ask_model(struct doctor *d, heal_llm_selection *sel)
{
        heal_llm_message msg = { .role = HEAL_LLM_USER, .content = "Reply with the word OK." };
        heal_llm_request req = HEAL_LLM_REQUEST_INIT;
        heal_llm_response resp = { 0 };
        heal_error err = HEAL_ERROR_INIT;
        heal_llm_client *client = NULL;
        heal_llm_tally t;
        char spent[160];
        struct check *c;
        int r;

        req.model = sel->model;
        req.messages = &msg;
        req.n_messages = 1;
        req.max_tokens = 16;
        req.temperature = 0;
        sel->config.max_retries = 1; /* a check, not a job: one retry, then say so */
        if (isatty(STDERR_FILENO))
                fprintf(stderr, "heal doctor: asking %s:%s a one-line question (up to %llu s)...\n",
                        sel->provider, sel->model,
                        (unsigned long long)(sel->config.timeout_ms * 2 / 1000));
        r = heal_llm_client_new(&client, &sel->config, &err);
        if (r == 0)
                r = heal_llm_complete(client, &req, &resp, &err);
        heal_llm_client_tally(client, &t);
        heal_llm_tally_format(&t, spent, sizeof(spent));
        if (r < 0) {
                c = add(d, "llm-answer", "fail");
                (void)str_printf(c->detail, sizeof(c->detail), "%s", err.msg);
        } else {
                c = add(d, "llm-answer", "ok");
                (void)str_printf(c->detail, sizeof(c->detail),
                                 "answered '%.40s' (finish: %s, request id %s); spent: %s",
                                 resp.choices[0].text, resp.choices[0].finish_reason,
                                 resp.request_id[0] ? resp.request_id : "none", spent);
        }
        heal_llm_response_release(&resp);
        heal_llm_client_free(client);
}

/* Which model heal's commands would use, and why; with --ask-model, whether it answers. */
static void check_llm(struct doctor *d, const struct llm_opts *o, bool ask)
{
        heal_llm_selection sel;
        heal_error err = HEAL_ERROR_INIT;
        struct check *c;

        if (llm_opts_select(o, &sel, 60000, &err) < 0) {
                c = add(d, "llm", ask || o->model ? "fail" : "warn");
                snprintf(c->detail, sizeof(c->detail), "%s", err.msg);
                return;
        }
        c = add(d, "llm", "ok");
        (void)str_printf(c->detail, sizeof(c->detail), "%s:%s at %s (chosen by %s%s%s)",
                         sel.provider, sel.model,
                         strcmp(sel.config.provider, "replay") == 0 ? sel.cassette
                         : strcmp(sel.config.provider, "exec") == 0 ? sel.command
                                                                    : sel.base_url,
                         sel.source, sel.key_from[0] ? "; key from " : "", sel.key_from);
        if (ask)
                ask_model(d, &sel);
        heal_llm_selection_release(&sel);
}

static int print(struct doctor *d)
{
        bool failed = false;

        if (d->json) {
                json_t *a = json_array();

                for (size_t i = 0; i < d->n; i++)
                        json_array_append_new(
                                a, json_pack("{s:s,s:s,s:o}", "name", d->checks[i].name, "status",
                                             d->checks[i].status, "detail",
                                             json_string_bytes(d->checks[i].detail,
                                                               strlen(d->checks[i].detail))));
                json_print(json_pack("{s:o}", "checks", a));
        }
        for (size_t i = 0; i < d->n; i++) {
                failed |= strcmp(d->checks[i].status, "fail") == 0;
                if (!d->json)
                        printf("%-5s %-11s %s\n", d->checks[i].status, d->checks[i].name,
                               d->checks[i].detail);
        }
        return failed ? 1 : 0;
}

int cmd_doctor(int argc, char **argv)
{
        static const char *const go[] = { "go", "version", NULL };
        static const char *const cc[] = { "cc", "--version", NULL };
        static const char *const py[] = { "python3", "--version", NULL };
        struct doctor d = { .n = 0 };
        struct llm_opts o = { 0 };
        bool ask = false;
        int k;

        for (int i = 1; i < argc; i++) {
                if ((k = llm_opts_parse(&o, argc, argv, &i)) != 0) {
                        if (k < 0)
                                return EXIT_USAGE;
                } else if (strcmp(argv[i], "--json") == 0) {
                        d.json = true;
                } else if (strcmp(argv[i], "--ask-model") == 0) {
                        ask = true;
                } else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
                        printf("usage: heal doctor [--json] [--ask-model] [model options]\n\n"
                               "Checks namespaces, overlayfs, seccomp, how limits are enforced, "
                               "the toolchains heal runs in the sandbox, and which model heal "
                               "would use and why; prints the fix for each problem.\n\n"
                               "  --json                   one JSON object: {\"checks\": [{name, "
                               "status, detail}]}\n"
                               "  --ask-model              also send the model a one-line question "
                               "(costs a few tokens)\n"
                               "                           and report its answer and what it "
                               "cost\n" LLM_OPTS_HELP
                               "\nExit status: 0 when nothing failed, 1 otherwise, 2 for a usage "
                               "error.\n");
                        return 0;
                } else {
                        fprintf(stderr,
                                "heal doctor: unknown option '%s'; see 'heal doctor "
                                "--help'\n",
                                argv[i]);
                        return EXIT_USAGE;
                }
        }
        check_namespaces(&d);
        check_overlay(&d);
        check_root_etc(&d);
        check_cgroup(&d);
        check_tool(&d, "go", go, "golang-go");
        check_tool(&d, "cc", cc, "gcc");
        check_tool(&d, "python3", py, "python3");
        check_llm(&d, &o, ask);
        if (o.record && !ask)
                fprintf(stderr, "heal doctor: --record has no effect without --ask-model (no "
                                "question is sent)\n");
        return print(&d);
}
