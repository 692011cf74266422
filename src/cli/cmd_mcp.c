/* SPDX-License-Identifier: MIT */
/* heal mcp: heal's sandbox as Model Context Protocol tools, on stdio. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "heal/mcp.h"

#include "cli/cli.h"
#include "core/parse.h"

static const char mcp_usage[] =
        "usage: heal mcp [options]\n"
        "\n"
        "Serve heal's sandbox to an agent host as Model Context Protocol tools over stdio\n"
        "(JSON-RPC 2.0, one message per line on stdin and stdout; logs on stderr):\n"
        "  run_code     build and run one program (go, c, python3, sh, bash): language, code\n"
        "               or files, stdin, args, timeout_ms, memory_mb -> the heal exec result\n"
        "  run_command  run an argument vector in the project directory, seen as an overlay\n"
        "               (it can build and test; what it writes vanishes) -> the heal run result\n"
        "  heal         repair a failing build or test command (dry run unless write: true)\n"
        "               -> the diff and heal's report; needs a model (HEAL_MODEL, an API key)\n"
        "The host starts 'heal mcp' and talks to it; you do not type at it. Protocol versions\n"
        "2025-11-25, 2025-06-18, 2025-03-26 and 2024-11-05; cancellation and progress.\n"
        "\n"
        "options:\n"
        "  --root DIR               the project directory run_command and heal act in\n"
        "                           (default: the current directory)\n"
        "  --no-heal-tool           offer only run_code and run_command\n"
        "  --share-net              runs may use the host's network (default: loopback only)\n"
        "  --max-calls N            tool calls run at once, more wait (default 4)\n"
        "  --max-timeout TIME       the longest run a call may ask for (default 5m)\n"
        "  --max-memory SIZE        the most memory a call may ask for (default: --memory)\n"
        "  --output-limit SIZE      output kept per stage, stdout + stderr (default 256K, at\n"
        "                           most 1M)\n"
        "  --timeout TIME           run_code's default run time (10s) and run_command's (60s)\n"
        "  --memory SIZE            the default memory limit (512M)\n"
        "  --cpu-time TIME          CPU time per process\n"
        "  --compile-timeout TIME, --compile-memory SIZE   run_code's build stage\n"
        "  -q, --quiet              no log line per call on stderr\n"
        "\n"
        "register it with a host (Claude Desktop, Cursor, VS Code and others take this shape):\n"
        "  {\"mcpServers\": {\"heal\": {\"command\": \"heal\",\n"
        "                           \"args\": [\"mcp\", \"--root\", \"/path/to/project\"]}}}\n"
        "\n"
        "exit status: 0 the host closed stdin (or SIGTERM); 2 usage error; 125 the server could\n"
        "not start or its stdin or stdout failed.\n";

struct mcp_cli {
        heal_mcp_opts o;
        const char *root;
        bool no_heal;
        heal_runner_limits run, compile;
};

#define mcp_error(fmt, ...) (fprintf(stderr, "heal mcp: " fmt "\n", ##__VA_ARGS__))

static heal_mcp_server *volatile serving;

static void on_signal(int sig)
{
        (void)sig;
        heal_mcp_server_stop(serving);
}

static int valued(struct mcp_cli *m, const char *name, const char *v)
{
        uint64_t n;
        int r;

        if (!strcmp(name, "--root"))
                return m->root = v, 0;
        if (!strcmp(name, "--max-calls")) {
                if (parse_uint(v, &n) < 0 || n == 0 || n > 64)
                        return mcp_error("--max-calls '%s': expected 1 to 64", v), -1;
                return m->o.max_calls = (unsigned)n, 0;
        }
        if (!strcmp(name, "--max-timeout")) {
                if (parse_duration_ms(v, &n) < 0 || n == 0)
                        return mcp_error("--max-timeout '%s': expected a time like 5m", v), -1;
                return m->o.max_wall_ms = n, 0;
        }
        if (!strcmp(name, "--max-memory")) {
                if (parse_size(v, &n) < 0 || n < (1u << 20))
                        return mcp_error("--max-memory '%s': expected a size like 2G", v), -1;
                return m->o.max_mem_bytes = n, 0;
        }
        if (!strcmp(name, "--output-limit")) {
                if (parse_size(v, &n) < 0 || n == 0 || n > (1u << 20))
                        return mcp_error("--output-limit '%s': expected a size up to 1M "
                                         "(a result must stay well under the 10 MiB an MCP "
                                         "client reads)",
                                         v),
                               -1;
                return m->o.max_out_bytes = n, 0;
        }
        r = limit_opt(&m->run, &m->compile, "heal mcp", name, v);
        if (r > 0)
                mcp_error("unknown option '%s'; see 'heal mcp --help'", name);
        return r ? -1 : 0;
}

static bool is_valued(const char *name)
{
        static const char *const names[] = {
                "--root",
                "--max-memory",
                "--max-calls",
                "--max-timeout",
                "--output-limit",
                "--timeout",
                "--memory",
                "--cpu-time",
                "--compile-timeout",
                "--compile-memory",
                "--compile-output-limit",
                "--output-limit",
        };

        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
                if (!strcmp(name, names[i]))
                        return true;
        return false;
}

static int parse(struct mcp_cli *m, int argc, char **argv)
{
        for (int i = 1; i < argc; i++) {
                const char *a = argv[i], *eq = strchr(a, '=');
                char name[64];

                if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
                        fputs(mcp_usage, stdout);
                        exit(0);
                }
                if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
                        m->o.quiet = true;
                        continue;
                }
                if (!strcmp(a, "--share-net") || !strcmp(a, "--no-heal-tool")) {
                        *(a[2] == 's' ? &m->o.share_net : &m->no_heal) = true;
                        continue;
                }
                if (a[0] != '-')
                        return mcp_error("unexpected argument '%s'; see 'heal mcp --help'", a), -1;
                snprintf(name, sizeof(name), "%.*s", eq ? (int)(eq - a) : (int)strlen(a), a);
                if (!is_valued(name))
                        return mcp_error("unknown option '%s'; see 'heal mcp --help'", name), -1;
                if (!eq && i + 1 >= argc)
                        return mcp_error("%s needs a value", name), -1;
                if (valued(m, name, eq ? eq + 1 : argv[++i]) < 0)
                        return -1;
        }
        return 0;
}

/* The protocol's output is a private copy of stdout; stdout itself then points at stderr, so
 * that nothing else the process prints can corrupt the stream. */
static int take_stdout(void)
{
        int fd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);

        if (fd < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
                return -1;
        return fd;
}

static int serve(struct mcp_cli *m, const char *root, const char *self)
{
        struct sigaction sa = { .sa_handler = on_signal };
        heal_error err = HEAL_ERROR_INIT;
        heal_mcp_server *s;
        int out, r;

        m->o.root = root;
        m->o.heal_path = m->no_heal ? NULL : self;
        m->o.run_limits = m->run;
        m->o.compile_limits = m->compile;
        if (heal_mcp_server_new(&s, &m->o, &err) < 0) {
                mcp_error("%s", err.msg);
                return EXIT_SETUP;
        }
        out = take_stdout();
        if (out < 0) {
                mcp_error("stdout: %s", strerror(errno));
                heal_mcp_server_free(s);
                return EXIT_SETUP;
        }
        serving = s;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGTERM, &sa, NULL);
        sigaction(SIGHUP, &sa, NULL);
        signal(SIGPIPE, SIG_IGN);
        if (!m->o.quiet)
                mcp_error("serving run_code, run_command%s on stdio for '%s'",
                          m->no_heal ? "" : ", heal", root);
        r = heal_mcp_server_serve(s, STDIN_FILENO, out, &err);
        serving = NULL;
        heal_mcp_server_free(s);
        close(out);
        if (r < 0 && r != -EPIPE) {
                mcp_error("%s", err.msg);
                return EXIT_SETUP;
        }
        return 0;
}

int cmd_mcp(int argc, char **argv)
{
        struct mcp_cli m = { 0 };
        char root[PATH_MAX], self[PATH_MAX];
        ssize_t n;

        if (parse(&m, argc, argv) < 0)
                return EXIT_USAGE;
        if (!realpath(m.root ? m.root : ".", root)) {
                mcp_error("--root '%s': %s", m.root ? m.root : ".", strerror(errno));
                return EXIT_USAGE;
        }
        n = readlink("/proc/self/exe", self, sizeof(self) - 1);
        if (n < 0) {
                mcp_error("cannot find heal's own binary (/proc/self/exe): %s; use "
                          "--no-heal-tool",
                          strerror(errno));
                return EXIT_SETUP;
        }
        self[n] = '\0';
        return serve(&m, root, self);
}
