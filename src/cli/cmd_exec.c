/* SPDX-License-Identifier: MIT */
/* heal exec: build and run one program (Go, C, Python 3, sh, bash) in the sandbox. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/exec.h"
#include "core/util.h"
#include "runner/result-json.h"

static const char exec_usage[] =
        "usage: heal exec [options] FILE... [-- ARG...]\n"
        "       heal exec [options] DIR [-- ARG...]\n"
        "       heal exec --lang LANG [options] - [-- ARG...]     (the code on stdin)\n"
        "\n"
        "Build and run a program nobody reviewed -- typically one a model just wrote -- in the\n"
        "sandbox, and say what happened: its output, then one status line on stderr. The code is\n"
        "written as files into a fresh private directory (never pasted into a shell command, so\n"
        "quotes, backticks and $(...) stay as written); the compile stage builds it there; the run\n"
        "stage runs it with ARGs, without network, with the directory as an overlay whose writes\n"
        "vanish. The directory is removed afterwards. Languages: go, c, python3 (python, py), sh,\n"
        "bash; from the first FILE's extension, a DIR's files (go.mod or *.go means Go), or\n"
        "--lang. The first FILE is the main one (the script an interpreter runs); in a DIR it is\n"
        "main.EXT or the only *.EXT. Go code without a go.mod gets 'module main'; builds share\n"
        "heal's own warm cache (~/.cache/heal/go-build) and read your module cache; nothing is\n"
        "downloaded (GOPROXY=off) unless --share-net.\n"
        "\n"
        "options:\n"
        "  --lang LANG                go, c, python3, sh or bash (needed for code on stdin)\n"
        "  --stdin FILE               the program's stdin ('-': heal's own; default: /dev/null)\n"
        "  --json                     print the result as JSON on stdout (docs/exec.md)\n"
        "  --share-net                host network for both stages; Go may download modules\n"
        "\n"
        "limits of the run stage (TIME: 500ms, 5s, 2m; SIZE: 512K, 64M, 1G):\n"
        "  --timeout TIME             wall time (default 10s); also stops a program that\n"
        "                             stopped itself (SIGSTOP)\n"
        "  --cpu-time TIME            CPU time per process (default: none), reported as\n"
        "                             cpu_limit, not as a timeout\n"
        "  --memory SIZE              memory (default 512M)\n"
        "  --output-limit SIZE        stdout + stderr kept before the program is stopped\n"
        "                             (default 1M)\n"
        "limits of the compile stage (Go, C):\n"
        "  --compile-timeout TIME     (default 60s)\n"
        "  --compile-memory SIZE      (default 2G)\n"
        "  --compile-output-limit SIZE (default 1M)\n"
        "\n"
        "exit status: the program's own; 128+N if signal N killed it; 120 compile error,\n"
        "121 output limit, 122 cpu limit, 123 memory limit, 124 timeout, 125 heal could not run\n"
        "it (usage, sandbox or missing toolchain), 130 interrupted (docs/exit-codes.md).\n"
        "\n"
        "examples:\n"
        "  heal exec hello.go\n"
        "  heal exec --timeout 2s --json main.py -- --verbose input.txt\n"
        "  echo 'print(sum(range(10)))' | heal exec --lang python3 -\n"
        "  heal exec ./prog/ --stdin data.txt\n";

struct exec_opts {
        heal_runner_opts ro;
        const char *stdin_path;
        bool json;
        char **inputs;
        size_t n_inputs;
};

static heal_runner *running;

static void on_signal(int sig)
{
        (void)sig;
        heal_runner_cancel(running);
}

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int usage_error(const char *fmt, ...)
{
        va_list ap;

        fprintf(stderr, "heal exec: ");
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fprintf(stderr, "\nsee 'heal exec --help'\n");
        return -EINVAL;
}

/* One option with a value: 0, 1 when @name is not one of them, < 0 for a bad value. */
static int opt_value(struct exec_opts *o, const char *name, const char *v)
{
        if (strcmp(name, "--lang") == 0) {
                if (!(o->ro.lang = heal_runner_lang_canonical(v)))
                        return usage_error("--lang '%s': heal runs %s", v, heal_runner_langs());
                return 0;
        }
        if (strcmp(name, "--stdin") == 0)
                return o->stdin_path = v, 0;
        return limit_opt(&o->ro.run_limits, &o->ro.compile_limits, "heal exec", name, v);
}

static int parse_opt(struct exec_opts *o, int argc, char **argv, int *i)
{
        const char *a = argv[*i], *eq = strchr(a, '=');
        char name[64];
        int r;

        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
                fputs(exec_usage, stdout);
                exit(0);
        }
        if (strcmp(a, "--json") == 0)
                return o->json = true, 0;
        if (strcmp(a, "--share-net") == 0)
                return o->ro.share_net = true, 0;
        snprintf(name, sizeof(name), "%.*s", eq ? (int)(eq - a) : (int)strlen(a), a);
        if (!eq && *i + 1 >= argc) {
                r = opt_value(o, name, "");
                return r > 0 ? usage_error("unknown option '%s'", name)
                             : usage_error("%s needs a value", name);
        }
        r = opt_value(o, name, eq ? eq + 1 : argv[*i + 1]);
        if (r > 0)
                return usage_error("unknown option '%s'", name);
        if (!eq)
                (*i)++;
        return r;
}

static int parse_args(struct exec_opts *o, int argc, char **argv)
{
        int i;

        o->inputs = calloc((size_t)argc, sizeof(char *));
        if (!o->inputs)
                return usage_error("out of memory");
        for (i = 1; i < argc; i++) {
                if (strcmp(argv[i], "--") == 0) {
                        o->ro.args = (const char *const *)argv + i + 1;
                        break;
                }
                if (argv[i][0] == '-' && argv[i][1]) {
                        if (parse_opt(o, argc, argv, &i) < 0)
                                return -EINVAL;
                        continue;
                }
                o->inputs[o->n_inputs++] = argv[i];
        }
        if (o->n_inputs == 0)
                return usage_error("nothing to run: give FILE..., a DIR, or --lang LANG - for "
                                   "code on stdin");
        return 0;
}

static int load_inputs(struct exec_opts *o, struct exec_input *in)
{
        struct stat st;

        if (o->n_inputs == 1 && strcmp(o->inputs[0], "-") == 0) {
                if (o->stdin_path && strcmp(o->stdin_path, "-") == 0)
                        return usage_error("the code comes from stdin, so --stdin - cannot give "
                                           "the program stdin too: use --stdin FILE");
                if (!o->ro.lang)
                        return usage_error("code on stdin needs --lang (one of: %s)",
                                           heal_runner_langs());
                return exec_input_stdin(in, o->ro.lang);
        }
        for (size_t i = 0; i < o->n_inputs; i++)
                if (strcmp(o->inputs[i], "-") == 0)
                        return usage_error("'-' (code on stdin) cannot be mixed with files");
        if (o->n_inputs == 1 && stat(o->inputs[0], &st) == 0 && S_ISDIR(st.st_mode))
                return exec_input_dir(in, o->inputs[0], &o->ro.lang);
        if (!o->ro.lang && !heal_runner_lang_for_file(o->inputs[0]))
                return usage_error("no language for '%s': heal knows .go, .c, .py, .sh, .bash; "
                                   "name it with --lang (%s)",
                                   o->inputs[0], heal_runner_langs());
        return exec_input_files(in, o->inputs, o->n_inputs);
}

static int open_stdin(const struct exec_opts *o)
{
        int fd;

        if (!o->stdin_path)
                return -1;
        if (strcmp(o->stdin_path, "-") == 0)
                return dup(STDIN_FILENO);
        fd = open(o->stdin_path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                log_error("--stdin '%s': %s", o->stdin_path, strerror(errno));
        return fd < 0 ? -2 : fd;
}

static void write_all(int fd, const char *data, size_t len)
{
        while (len > 0) {
                ssize_t n = write(fd, data, len);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        return;
                data += n;
                len -= (size_t)n;
        }
}

static int exit_code(const heal_runner_result *res)
{
        switch (res->status) {
        case HEAL_EXEC_OK:
                return 0;
        case HEAL_EXEC_RUNTIME_ERROR:
                return res->run.res.signal ? 128 + res->run.res.signal : res->run.res.exit_code;
        case HEAL_EXEC_COMPILE_ERROR:
                return EXIT_COMPILE_ERROR;
        case HEAL_EXEC_TIMEOUT:
                return EXIT_TIMEOUT;
        case HEAL_EXEC_MEMORY_LIMIT:
                return EXIT_MEMORY_LIMIT;
        case HEAL_EXEC_CPU_LIMIT:
                return EXIT_CPU_LIMIT;
        case HEAL_EXEC_OUTPUT_LIMIT:
                return EXIT_OUTPUT_LIMIT;
        case HEAL_EXEC_CANCELED:
                return EXIT_CANCELED;
        case HEAL_EXEC_INTERNAL_ERROR:
        default:
                return EXIT_SETUP;
        }
}

/* The program's output, the compiler's (on stderr), then one status line on stderr. */
static void report_human(const heal_runner_result *res)
{
        const heal_sandbox_result *c = &res->compile.res, *r = &res->run.res;
        char line[HEAL_ERROR_MSG_MAX + 256];
        int n;

        if (res->compile.ran) {
                write_all(STDERR_FILENO, c->out, c->out_len);
                write_all(STDERR_FILENO, c->err, c->err_len);
        }
        if (res->run.ran) {
                write_all(STDOUT_FILENO, r->out, r->out_len);
                write_all(STDERR_FILENO, r->err, r->err_len);
        }
        n = snprintf(line, sizeof(line), "heal: %s%s%s (%s",
                     heal_exec_status_to_string(res->status), *res->message ? ": " : "",
                     res->message, res->lang);
        if (res->compile.ran && n > 0 && (size_t)n < sizeof(line))
                n += snprintf(line + n, sizeof(line) - (size_t)n, "; compile %llu ms",
                              (unsigned long long)c->wall_ms);
        if (res->run.ran && n > 0 && (size_t)n < sizeof(line))
                n += snprintf(line + n, sizeof(line) - (size_t)n,
                              "; run %llu ms, cpu %llu ms, memory %.1f MiB",
                              (unsigned long long)r->wall_ms, (unsigned long long)r->cpu_ms,
                              (double)r->mem_peak_bytes / (1 << 20));
        fprintf(stderr, "%s)\n", line);
}

static int run(struct exec_opts *o, struct exec_input *in)
{
        heal_runner_result res = { 0 };
        heal_error err = HEAL_ERROR_INIT;
        struct sigaction sa = { .sa_handler = on_signal };
        _cleanup_close_ int stdin_fd = open_stdin(o);
        int r, code;

        if (stdin_fd == -2)
                return EXIT_SETUP;
        o->ro.files = in->files;
        o->ro.n_files = in->n;
        o->ro.stdin_fd = stdin_fd;
        r = heal_runner_new(&running, &err);
        if (r >= 0) {
                sigaction(SIGINT, &sa, NULL);
                sigaction(SIGTERM, &sa, NULL);
                sigaction(SIGHUP, &sa, NULL);
                signal(SIGPIPE, SIG_IGN);
                r = heal_runner_exec(&res, running, &o->ro, &err);
        }
        if (r < 0) {
                log_error("%s", err.msg);
                if (o->json)
                        json_print(json_pack("{s:s,s:n,s:o,s:n,s:n}", "status", "internal_error",
                                             "language", "message",
                                             json_string_bytes(err.msg, strlen(err.msg)), "compile",
                                             "run"));
                code = EXIT_SETUP;
        } else {
                if (!o->json)
                        report_human(&res);
                code = exit_code(&res);
                if (o->json && json_print(runner_result_json(&res)) < 0)
                        code = EXIT_SETUP; /* the result is lost: not the program's status */
        }
        heal_runner_result_release(&res);
        signal(SIGINT, SIG_DFL);
        running = heal_runner_free(running);
        return code;
}

int cmd_exec(int argc, char **argv)
{
        struct exec_opts o = { .ro = HEAL_RUNNER_OPTS_INIT };
        struct exec_input in = { 0 };
        int code = EXIT_SETUP;

        if (parse_args(&o, argc, argv) >= 0 && load_inputs(&o, &in) >= 0)
                code = run(&o, &in);
        exec_input_release(&in);
        free(o.inputs);
        return code;
}
