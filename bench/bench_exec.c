/* SPDX-License-Identifier: MIT */
/*
 * bench-exec: what running a model's program through heal costs, against running it on the
 * host with no sandbox at all, and the MCP round trip.
 *
 * Pairs, each round running every case once (the first case rotating so that machine noise
 * lands on all alike), after BENCH_EXEC_WARMUP untimed rounds (warm caches: the host's Go build
 * cache for go run, heal's own for heal exec):
 *   go      heal exec hello.go                        vs  go run hello.go
 *   c       heal exec hello.c                         vs  sh -c 'cc -O2 -Wall -o prog hello.c
 *                                                          -lm && ./prog'  (heal's C flags)
 *   python  heal exec hello.py                        vs  python3 hello.py
 * and, through one 'heal mcp' kept running, the time from writing a tools/call run_code
 * request (Python hello, Go hello) to reading its answer.
 *
 * The targets: heal exec hello.go <= 1.2x go run, heal exec hello.c <= 1.5x cc &&
 * ./a.out. The reference the seed replaced, a Docker container per run, was measured at 480 ms
 * for 'docker run' alone on this kind of machine (no Docker engine runs here to measure it).
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench-util.h"

#define BENCH_EXEC_WARMUP 3u
#define DOCKER_RUN_MS     480.0 /* docker run, measured on this kind of machine (issue 2) */

enum { C_GO_HEAL, C_GO_HOST, C_C_HEAL, C_C_HOST, C_PY_HEAL, C_PY_HOST, C_MCP_PY, C_MCP_GO, N_C };

static const char *const names[N_C] = {
        "heal exec hello.go", "go run hello.go",  "heal exec hello.c", "cc && ./prog",
        "heal exec hello.py", "python3 hello.py", "mcp run_code py",   "mcp run_code go",
};

static const char hello_go[] = "package main\n\nimport \"fmt\"\n\nfunc main() {\n"
                               "\tfmt.Println(\"hello\")\n}\n";
static const char hello_c[] = "#include <stdio.h>\n\nint main(void)\n{\n\tputs(\"hello\");\n"
                              "\treturn 0;\n}\n";
static const char hello_py[] = "print('hello')\n";

struct bcase {
        double *ms;
        size_t n;
        struct bench_stats st;
};

struct mcp_peer {
        pid_t pid;
        int in, out;
        char buf[1 << 20];
        size_t len;
        unsigned id;
};

struct ctx {
        unsigned runs;
        bool json;
        char dir[PATH_MAX];
        int null_fd;
        struct bcase c[N_C];
        struct mcp_peer mcp;
};

static int write_file(const char *dir, const char *name, const char *text)
{
        char path[PATH_MAX];
        FILE *f;

        snprintf(path, sizeof(path), "%s/%s", dir, name);
        f = fopen(path, "w");
        if (!f || fputs(text, f) < 0 || fclose(f) != 0)
                return -errno;
        return 0;
}

static int mcp_start(struct mcp_peer *m, const char *dir)
{
        int in[2], out[2];

        if (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0)
                return -errno;
        m->pid = fork();
        if (m->pid < 0)
                return -errno;
        if (m->pid == 0) {
                int null = open("/dev/null", O_WRONLY);

                dup2(in[0], 0), dup2(out[1], 1), dup2(null, 2);
                execl(HEAL_BENCH_BIN, "heal", "mcp", "-q", "--root", dir, "--no-heal-tool",
                      (char *)NULL);
                _exit(127);
        }
        close(in[0]), close(out[1]);
        m->in = in[1];
        m->out = out[0];
        return 0;
}

/* Send @line, wait for the answer to it (the next line). ns, or 0 on failure. */
static uint64_t mcp_roundtrip(struct mcp_peer *m, const char *line)
{
        uint64_t t0 = bench_now_ns();
        size_t len = strlen(line);

        if (write(m->in, line, len) != (ssize_t)len || write(m->in, "\n", 1) != 1)
                return 0;
        for (;;) {
                char *nl = memchr(m->buf, '\n', m->len);
                ssize_t n;

                if (nl) {
                        bool ok = strstr(m->buf, "\"isError\":false") ||
                                  strstr(m->buf, "\"result\":{}") ||
                                  strstr(m->buf, "\"protocolVersion\"");

                        m->len -= (size_t)(nl + 1 - m->buf);
                        memmove(m->buf, nl + 1, m->len);
                        return ok ? bench_now_ns() - t0 : 0;
                }
                n = read(m->out, m->buf + m->len, sizeof(m->buf) - m->len);
                if (n <= 0)
                        return 0;
                m->len += (size_t)n;
        }
}

static uint64_t mcp_call(struct ctx *x, const char *lang, const char *code)
{
        json_t *req = json_pack("{s:s,s:i,s:s,s:{s:s,s:{s:s,s:s}}}", "jsonrpc", "2.0", "id",
                                (int)++x->mcp.id, "method", "tools/call", "params", "name",
                                "run_code", "arguments", "language", lang, "code", code);
        char *line = json_dumps(req, JSON_COMPACT);
        uint64_t ns = line ? mcp_roundtrip(&x->mcp, line) : 0;

        free(line);
        json_decref(req);
        return ns;
}

/* The python3 the sandbox runs: the first in PATH under /usr or /bin (the sandbox sees no home
 * directory, so a pyenv or venv shim there is not what it finds). */
static char x_python3[PATH_MAX] = "python3";

static void find_python3(void)
{
        const char *path = getenv("PATH");

        for (const char *p = path ? path : ""; *p;) {
                size_t n = strcspn(p, ":");

                if ((!strncmp(p, "/usr/", 5) || !strncmp(p, "/bin", 4)) &&
                    snprintf(x_python3, sizeof(x_python3), "%.*s/python3", (int)n, p) > 0 &&
                    access(x_python3, X_OK) == 0)
                        return;
                p += n + (p[n] == ':');
        }
        snprintf(x_python3, sizeof(x_python3), "python3");
}

static uint64_t run_case(struct ctx *x, int i)
{
        const char *const argvs[][8] = {
                [C_GO_HEAL] = { HEAL_BENCH_BIN, "exec", "hello.go", NULL },
                [C_GO_HOST] = { "go", "run", "hello.go", NULL },
                [C_C_HEAL] = { HEAL_BENCH_BIN, "exec", "hello.c", NULL },
                [C_C_HOST] = { "sh", "-c", "cc -O2 -Wall -o prog hello.c -lm && ./prog", NULL },
                [C_PY_HEAL] = { HEAL_BENCH_BIN, "exec", "hello.py", NULL },
                [C_PY_HOST] = { x_python3, "hello.py", NULL },
        };
        uint64_t ns = 0;
        int st;

        if (i == C_MCP_PY)
                return mcp_call(x, "python3", hello_py);
        if (i == C_MCP_GO)
                return mcp_call(x, "go", hello_go);
        st = bench_spawn_wait(argvs[i], NULL, x->dir, x->null_fd, &ns);
        return st == 0 ? ns : 0;
}

static int measure(struct ctx *x)
{
        for (unsigned round = 0; round < BENCH_EXEC_WARMUP + x->runs; round++) {
                for (int k = 0; k < N_C; k++) {
                        int i = (int)((round + (unsigned)k) % N_C);
                        uint64_t ns = run_case(x, i);

                        if (!ns) {
                                fprintf(stderr, "bench-exec: '%s' failed (round %u)\n", names[i],
                                        round);
                                return -1;
                        }
                        if (round >= BENCH_EXEC_WARMUP)
                                x->c[i].ms[x->c[i].n++] = (double)ns / 1e6;
                }
        }
        for (int i = 0; i < N_C; i++)
                bench_stats_compute(&x->c[i].st, x->c[i].ms, x->c[i].n);
        return 0;
}

static const char *met(double ratio, double target)
{
        return isnan(ratio) ? "unknown" : ratio <= target ? "met" : "not met";
}

static void print_human(const struct ctx *x)
{
        double go = bench_ratio(x->c[C_GO_HEAL].st.median, x->c[C_GO_HOST].st.median);
        double c = bench_ratio(x->c[C_C_HEAL].st.median, x->c[C_C_HOST].st.median);
        double py = bench_ratio(x->c[C_PY_HEAL].st.median, x->c[C_PY_HOST].st.median);

        printf("bench-exec: %u runs per case (after %u warm-up rounds), ms\n\n", x->runs,
               BENCH_EXEC_WARMUP);
        printf("%-22s %9s %9s %9s\n", "case", "median", "p10", "p90");
        for (int i = 0; i < N_C; i++)
                printf("%-22s %9.2f %9.2f %9.2f\n", names[i], x->c[i].st.median, x->c[i].st.p10,
                       x->c[i].st.p90);
        printf("\nheal exec / host: go %.2fx (target <= 1.2x: %s), c %.2fx (target <= 1.5x: %s), "
               "python %.2fx\n",
               go, met(go, 1.2), c, met(c, 1.5), py);
        printf("reference: a container per run, 'docker run' alone %.0f ms on this kind of "
               "machine (%.1fx heal exec hello.py)\n",
               DOCKER_RUN_MS, DOCKER_RUN_MS / x->c[C_PY_HEAL].st.median);
}

static int print_json(const struct ctx *x)
{
        json_t *cases = json_object();

        for (int i = 0; i < N_C; i++)
                json_object_set_new(cases, names[i],
                                    json_pack("{s:o,s:o,s:o}", "median_ms",
                                              bench_json_num(x->c[i].st.median), "p10_ms",
                                              bench_json_num(x->c[i].st.p10), "p90_ms",
                                              bench_json_num(x->c[i].st.p90)));
        return bench_json_print(json_pack(
                "{s:i,s:o,s:{s:o,s:o,s:o}}", "runs", (int)x->runs, "cases", cases, "ratios", "go",
                bench_json_num(bench_ratio(x->c[C_GO_HEAL].st.median, x->c[C_GO_HOST].st.median)),
                "c",
                bench_json_num(bench_ratio(x->c[C_C_HEAL].st.median, x->c[C_C_HOST].st.median)),
                "python",
                bench_json_num(bench_ratio(x->c[C_PY_HEAL].st.median, x->c[C_PY_HOST].st.median))));
}

static int rm_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
        (void)st, (void)type, (void)ftw;
        return remove(path);
}

static int setup(struct ctx *x)
{
        static const char init[] = "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\","
                                   "\"params\":{\"protocolVersion\":\"2025-11-25\","
                                   "\"capabilities\":{},\"clientInfo\":{\"name\":\"bench\","
                                   "\"version\":\"1\"}}}";
        const char *tmp = getenv("TMPDIR");

        snprintf(x->dir, sizeof(x->dir), "%s/heal-bench-exec-XXXXXX", tmp && *tmp ? tmp : "/tmp");
        if (!mkdtemp(x->dir))
                return -errno;
        x->null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
        for (int i = 0; i < N_C; i++)
                if (!(x->c[i].ms = calloc(x->runs, sizeof(double))))
                        return -ENOMEM;
        if (write_file(x->dir, "hello.go", hello_go) < 0 ||
            write_file(x->dir, "hello.c", hello_c) < 0 ||
            write_file(x->dir, "hello.py", hello_py) < 0)
                return -EIO;
        if (mcp_start(&x->mcp, x->dir) < 0 || !mcp_roundtrip(&x->mcp, init))
                return -EIO;
        return 0;
}

static void teardown(struct ctx *x)
{
        if (x->mcp.pid > 0) {
                close(x->mcp.in);
                waitpid(x->mcp.pid, NULL, 0);
                close(x->mcp.out);
        }
        if (*x->dir)
                nftw(x->dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
        for (int i = 0; i < N_C; i++)
                free(x->c[i].ms);
        if (x->null_fd >= 0)
                close(x->null_fd);
}

int main(int argc, char **argv)
{
        static const struct option opts[] = { { "runs", required_argument, NULL, 'r' },
                                              { "json", no_argument, NULL, 'j' },
                                              { 0, 0, 0, 0 } };
        struct ctx *x = calloc(1, sizeof(*x));
        int o, r;

        if (!x)
                return 1;
        x->runs = 20;
        x->null_fd = -1;
        while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
                if (o == 'r' && bench_parse_runs(optarg, &x->runs))
                        continue;
                if (o == 'j') {
                        x->json = true;
                        continue;
                }
                fprintf(stderr, "usage: bench-exec [--runs N] [--json]\n");
                return 2;
        }
        signal(SIGPIPE, SIG_IGN);
        find_python3();
        r = setup(x);
        if (r < 0)
                fprintf(stderr, "bench-exec: setup failed: %s\n", strerror(-r));
        else
                r = measure(x);
        if (r == 0)
                r = x->json ? print_json(x) : (print_human(x), 0);
        teardown(x);
        free(x);
        return r == 0 ? 0 : 1;
}
