/* SPDX-License-Identifier: MIT */
/* heal gen and heal ask: their shared options, the model client and runner, Ctrl-C. */
#include "cli/agent.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "heal/buf.h"

#include "core/parse.h"

#define STDIN_MAX (64u << 20)

static heal_runner *volatile running;
static volatile sig_atomic_t waiting;
static char interrupted_msg[96]; /* made before the handler is installed: write(2) only */

static uint64_t now_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

double agent_elapsed_s(const struct agent *a)
{
        return (double)(now_ms() - a->start_ms) / 1000;
}

static int usage(const struct agent_opts *o, const char *msg, const char *name)
{
        fprintf(stderr, "%s: %s%s\nsee '%s --help'\n", o->cmd, name, msg, o->cmd);
        return -1;
}

static int count_value(const struct agent_opts *o, const char *name, const char *v, unsigned *ret)
{
        uint64_t n;

        if (parse_uint(v, &n) < 0 || n == 0 || n > 100000)
                return usage(o, " needs a number from 1 to 100000", name);
        *ret = (unsigned)n;
        return 1;
}

/* Options with a value: 1 taken, 0 not one of them, -1 bad value. */
static int valued(struct agent_opts *o, const char *name, const char *v)
{
        int r;

        if (!strcmp(name, "--max-requests")) {
                o->max_requests_set = true;
                return count_value(o, name, v, &o->max_requests);
        }
        if (!strcmp(name, "--max-cost")) {
                char *end;
                double d = strtod(v, &end);

                if (*end || !(d > 0) || d > 1000)
                        return usage(o, " needs a positive amount of US dollars, e.g. 0.50", name);
                o->max_cost = d;
                return 1;
        }
        if (!strcmp(name, "--stdin")) {
                o->stdin_path = v;
                return 1;
        }
        r = limit_opt(&o->run, &o->compile, o->cmd, name, v);
        return r < 0 ? -1 : !r;
}

int agent_opt(struct agent_opts *o, int argc, char **argv, int *i)
{
        static const char *const flags[] = { "--no-cache", "--json",    "-q",         "--quiet",
                                             "-v",         "--verbose", "--share-net" };
        bool *slots[] = { &o->no_cache, &o->json,    &o->quiet,    &o->quiet,
                          &o->verbose,  &o->verbose, &o->share_net };
        const char *a = argv[*i], *eq = strchr(a, '=');
        char name[64];
        int r = llm_opts_parse(&o->llm, argc, argv, i);

        if (r)
                return r < 0 ? -1 : 1;
        for (size_t k = 0; k < sizeof(flags) / sizeof(flags[0]); k++)
                if (!strcmp(a, flags[k]))
                        return *slots[k] = true, 1;
        snprintf(name, sizeof(name), "%.*s", eq ? (int)(eq - a) : (int)strlen(a), a);
        if (eq)
                return valued(o, name, eq + 1);
        r = valued(o, name, *i + 1 < argc ? argv[*i + 1] : "");
        if (r > 0 && *i + 1 >= argc)
                return usage(o, " needs a value", name);
        if (r > 0)
                (*i)++;
        return r;
}

static void on_signal(int sig)
{
        (void)sig;
        heal_runner_cancel(running);
        if (waiting) {
                ssize_t w = write(STDERR_FILENO, interrupted_msg, strlen(interrupted_msg));

                (void)w;
                _exit(EXIT_CANCELED);
        }
}

void agent_waiting_for_model(bool w)
{
        waiting = w;
}

static int open_model(struct agent *a, const struct agent_opts *o)
{
        heal_error err = HEAL_ERROR_INIT;
        heal_llm_budget budget = { .max_requests = o->max_requests,
                                   .max_cost_micro_usd = (uint64_t)(o->max_cost * 1e6) };
        int r = llm_opts_select(&o->llm, &a->sel, 0, &err);

        if (r == 0 && !o->no_cache && strcmp(a->sel.provider, "replay") &&
            strcmp(a->sel.provider, "exec") && llm_cache_dir(a->cache, sizeof(a->cache)))
                a->sel.config.cache_dir = a->cache;
        if (r == 0)
                r = heal_llm_client_new(&a->llm, &a->sel.config, &err);
        if (r < 0) {
                fprintf(stderr, "%s: %s\n", o->cmd, err.msg);
                return r == -ENOENT || r == -EINVAL || r == -EPERM ? EXIT_USAGE : EXIT_SETUP;
        }
        heal_llm_client_set_budget(a->llm, &budget);
        snprintf(a->model, sizeof(a->model), "%s:%s", a->sel.provider, a->sel.model);
        return 0;
}

/* --stdin FILE read whole (at most STDIN_MAX bytes), since each attempt reads it again. */
static int read_stdin(struct agent *a, const struct agent_opts *o)
{
        heal_buf b = HEAL_BUF_INIT(STDIN_MAX);
        int fd = strcmp(o->stdin_path, "-") == 0
                         ? STDIN_FILENO
                         : open(o->stdin_path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        char chunk[65536];
        ssize_t n;

        if (fd < 0) {
                fprintf(stderr, "%s: --stdin '%s': %s\n", o->cmd, o->stdin_path, strerror(errno));
                return -1;
        }
        while ((n = read(fd, chunk, sizeof(chunk))) > 0 || (n < 0 && errno == EINTR))
                if (n > 0 && heal_buf_append(&b, chunk, (size_t)n) < 0)
                        break;
        if (n < 0 || b.truncated) {
                fprintf(stderr, "%s: --stdin '%s': %s\n", o->cmd, o->stdin_path,
                        n < 0 ? strerror(errno) : "larger than 64 MiB");
                heal_buf_release(&b);
                if (fd != STDIN_FILENO)
                        close(fd);
                return -1;
        }
        if (fd != STDIN_FILENO)
                close(fd);
        a->stdin_data = heal_buf_detach(&b, &a->stdin_len);
        return a->stdin_data ? 0 : -1;
}

int agent_open(struct agent *a, const struct agent_opts *o)
{
        struct sigaction sa = { .sa_handler = on_signal };
        heal_error err = HEAL_ERROR_INIT;
        const char *nc = getenv("NO_COLOR");
        int code;

        memset(a, 0, sizeof(*a));
        a->start_ms = now_ms();
        a->color = isatty(STDERR_FILENO) && !(nc && *nc);
        if (o->stdin_path && read_stdin(a, o) < 0)
                return EXIT_USAGE;
        code = open_model(a, o);
        if (code)
                return code;
        if (heal_runner_new(&a->runner, &err) < 0) {
                fprintf(stderr, "%s: %s\n", o->cmd, err.msg);
                return EXIT_SETUP;
        }
        running = a->runner;
        snprintf(interrupted_msg, sizeof(interrupted_msg),
                 "\n%s: interrupted while waiting for the model\n", o->cmd);
        sigemptyset(&sa.sa_mask);
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGTERM, &sa, NULL);
        sigaction(SIGHUP, &sa, NULL);
        signal(SIGPIPE, SIG_IGN);
        return 0;
}

void agent_close(struct agent *a)
{
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        signal(SIGHUP, SIG_DFL);
        running = NULL;
        a->runner = heal_runner_free(a->runner);
        a->llm = heal_llm_client_free(a->llm);
        heal_llm_selection_release(&a->sel);
        free(a->stdin_data);
        a->stdin_data = NULL;
}

void agent_put_text(FILE *f, const char *s, size_t len, bool one_line)
{
        for (size_t i = 0; s && i < len; i++) {
                unsigned char c = (unsigned char)s[i];

                if (c == '\n' && one_line)
                        return;
                fputc((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f ? '?' : c, f);
        }
}

json_t *agent_tally_json(const heal_llm_tally *t)
{
        return json_pack("{s:I,s:I,s:I,s:I,s:I,s:f,s:I}", "requests", (json_int_t)t->requests,
                         "cache_hits", (json_int_t)t->cache_hits, "input_tokens",
                         (json_int_t)t->input_tokens, "output_tokens", (json_int_t)t->output_tokens,
                         "cached_tokens", (json_int_t)t->cached_tokens, "cost_usd",
                         (double)t->cost_micro_usd / 1e6, "wall_ms", (json_int_t)t->wall_ms);
}
