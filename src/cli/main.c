/* SPDX-License-Identifier: MIT */
/* heal: the command-line front end of libheal. One file per subcommand. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"

static const char usage[] =
        "usage: heal <command> [options]\n"
        "\n"
        "       heal [options] -- CMD [ARG...]\n"
        "\n"
        "Run code nobody reviewed, fast and contained, and let an LLM repair a failing build\n"
        "or test without touching your tree until the fix is verified.\n"
        "\n"
        "the main job:\n"
        "  heal [options] -- CMD           run CMD (e.g. go test ./...); if it fails, search\n"
        "                                  model-proposed patches in sandboxes and write back\n"
        "                                  only a verified fix; also 'heal fix [options] --\n"
        "                                  CMD'; see 'heal fix --help'\n"
        "\n"
        "commands:\n"
        "  run [options] -- CMD [ARG...]   run CMD in a throwaway sandbox (namespaces, mounts,\n"
        "                                  limits, seccomp); see 'heal run --help'\n"
        "  exec [options] FILE... [-- ARG...]\n"
        "                                  build and run one program (Go, C, Python, sh,\n"
        "                                  bash) in the sandbox; JSON result; see\n"
        "                                  'heal exec --help'\n"
        "  gen [options] \"TASK\"            a model writes a program for TASK, heal runs it and\n"
        "                                  feeds failures back until it works; see\n"
        "                                  'heal gen --help'\n"
        "  ask [options] \"QUESTION\"        a conversation in which the model may run code\n"
        "                                  (a run_code tool) before it answers; see\n"
        "                                  'heal ask --help'\n"
        "  mcp [options]                   the sandbox as MCP tools on stdio (run_code,\n"
        "                                  run_command, heal) for agent hosts; see\n"
        "                                  'heal mcp --help'\n"
        "  analyze [options] -- CMD        run CMD in the sandbox and explain its failure:\n"
        "                                  diagnostics, fingerprints, tests; see\n"
        "                                  'heal analyze --help'\n"
        "  doctor [--json] [--ask-model]   check what this machine supports and how to fix the\n"
        "                                  rest, and which model heal would use (and whether it\n"
        "                                  answers); see 'heal doctor --help'\n"
        "  undo [--list] [--force] [--dry-run] [ID]\n"
        "                                  restore the files a fix written by heal changed\n"
        "                                  (originals kept in .heal/undo/); see\n"
        "                                  'heal undo --help'\n"
        "  report TRACE                    draw a repair search (heal --trace TRACE) as a page\n"
        "                                  with its tree; see 'heal report --help'\n"
        "  --version                       print heal's version\n"
        "\n"
        "docs: README.md, docs/repair.md, docs/sandbox.md, docs/exit-codes.md, docs/json.md,\n"
        "      docs/exec.md, docs/gen.md, docs/mcp.md, docs/error-codes.md, docs/llm.md,\n"
        "      docs/writeback.md, docs/analysis.md, docs/gaming.md, docs/edits.md\n";

/* Started with 0, 1 or 2 closed, heal's own descriptors would take those numbers and the
 * command's output or input would land in them: hold them with /dev/null first. */
static void hold_stdio(void)
{
        for (int fd = 0; fd < 3; fd++)
                if (fcntl(fd, F_GETFD) < 0 &&
                    open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY) != fd)
                        _exit(EXIT_USAGE);
}

int main(int argc, char **argv)
{
        const char *cmd = argc > 1 ? argv[1] : NULL;

        hold_stdio();
        if (!cmd) {
                fputs(usage, stderr);
                return EXIT_USAGE;
        }
        if (strcmp(cmd, "-h") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "help") == 0) {
                fputs(usage, stdout);
                return 0;
        }
        if (strcmp(cmd, "--version") == 0) {
                printf("heal 0.1.0\n");
                return 0;
        }
        if (strcmp(cmd, "run") == 0)
                return cmd_run(argc - 1, argv + 1);
        if (strcmp(cmd, "doctor") == 0)
                return cmd_doctor(argc - 1, argv + 1);
        if (strcmp(cmd, "analyze") == 0)
                return cmd_analyze(argc - 1, argv + 1);
        if (strcmp(cmd, "report") == 0)
                return cmd_report(argc - 1, argv + 1);
        if (strcmp(cmd, "undo") == 0)
                return cmd_undo(argc - 1, argv + 1);
        if (cmd[0] == '-') /* heal [options] -- CMD: the main job */
                return cmd_fix(argc, argv);
        if (strcmp(cmd, "fix") == 0)
                return cmd_fix(argc - 1, argv + 1);
        if (strcmp(cmd, "exec") == 0)
                return cmd_exec(argc - 1, argv + 1);
        if (strcmp(cmd, "gen") == 0)
                return cmd_gen(argc - 1, argv + 1);
        if (strcmp(cmd, "ask") == 0)
                return cmd_ask(argc - 1, argv + 1);
        if (strcmp(cmd, "mcp") == 0)
                return cmd_mcp(argc - 1, argv + 1);
        /* "heal go test ./...": the main job's command wants a "--" before it */
        log_error("unknown command '%s'; to repair a failing command, put it after '--' (heal -- "
                  "%s ...); see 'heal --help'",
                  cmd, cmd);
        return EXIT_USAGE;
}
