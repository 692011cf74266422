/* SPDX-License-Identifier: MIT */
/*
 * The stdio transport of MCP (2025-11-25 basic/transports.mdx): messages are lines of UTF-8
 * JSON without embedded newlines, in both directions; nothing but messages goes to the
 * output; the server ends when its input ends. The reading thread answers everything but
 * tools/call itself (those run in threads of their own, call.c), so a ping or a cancellation
 * is read while a program runs.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/util.h"
#include "mcp/mcp-internal.h"

#define READ_CHUNK (64u << 10)
#define OUT_MAX    (1u << 20)

uint64_t mcp_now_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

void mcp_log(const heal_mcp_server *s, const char *fmt, ...)
{
        char line[1024];
        va_list ap;

        (void)s;
        va_start(ap, fmt);
        vsnprintf(line, sizeof(line), fmt, ap);
        va_end(ap);
        fprintf(stderr, "heal mcp: %s\n", line);
}

int heal_mcp_server_new(heal_mcp_server **ret, const heal_mcp_opts *o, heal_error *err)
{
        heal_mcp_server *s;
        struct stat st;

        if (!ret || !o || !o->root || o->root[0] != '/')
                return heal_error_set(err, -EINVAL, "the server's root must be an absolute path");
        if (stat(o->root, &st) < 0)
                return heal_error_set(err, -errno, "root '%s': %s", o->root, strerror(errno));
        if (!S_ISDIR(st.st_mode))
                return heal_error_set(err, -ENOTDIR, "root '%s' is not a directory", o->root);
        s = calloc(1, sizeof(*s));
        if (!s)
                return heal_error_set(err, -ENOMEM, "out of memory");
        s->o = *o;
        s->root = strdup(o->root);
        s->heal_path = o->heal_path ? strdup(o->heal_path) : NULL;
        s->o.root = s->root;
        s->o.heal_path = s->heal_path;
        if (!s->o.max_wall_ms)
                s->o.max_wall_ms = 300000;
        if (!s->o.max_mem_bytes)
                s->o.max_mem_bytes = s->o.run_limits.mem_max_bytes ? s->o.run_limits.mem_max_bytes
                                                                   : 512ULL << 20;
        if (!s->o.max_out_bytes)
                s->o.max_out_bytes = 256u << 10;
        s->o.max_out_bytes = MIN(s->o.max_out_bytes, (uint64_t)OUT_MAX);
        if (!s->o.max_calls)
                s->o.max_calls = 4;
        s->out_fd = -1;
        s->structured = true; /* until initialize says otherwise: the newest protocol */
        s->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        pthread_mutex_init(&s->write_lock, NULL);
        pthread_mutex_init(&s->lock, NULL);
        {
                pthread_condattr_t ca; /* the ticker waits on CLOCK_MONOTONIC */

                pthread_condattr_init(&ca);
                pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
                pthread_cond_init(&s->changed, &ca);
                pthread_condattr_destroy(&ca);
        }
        if (!s->root || (o->heal_path && !s->heal_path) || s->stop_fd < 0) {
                int r = s->stop_fd < 0 ? -errno : -ENOMEM;

                heal_mcp_server_free(s);
                return heal_error_set(err, r, "cannot create the server: %s", strerror(-r));
        }
        *ret = s;
        return 0;
}

heal_mcp_server *heal_mcp_server_free(heal_mcp_server *s)
{
        if (!s)
                return NULL;
        if (s->stop_fd >= 0)
                close(s->stop_fd);
        pthread_mutex_destroy(&s->write_lock);
        pthread_mutex_destroy(&s->lock);
        pthread_cond_destroy(&s->changed);
        free(s->root);
        free(s->heal_path);
        free(s);
        return NULL;
}

void heal_mcp_server_stop(heal_mcp_server *s)
{
        uint64_t one = 1;
        ssize_t w;

        if (!s || s->stop_fd < 0)
                return;
        w = write(s->stop_fd, &one, sizeof(one));
        (void)w;
}

int mcp_send(heal_mcp_server *s, json_t *msg)
{
        char *text = msg ? json_dumps(msg, JSON_COMPACT) : NULL;
        size_t len = text ? strlen(text) : 0, off = 0;
        int r = 0;

        json_decref(msg);
        if (!text) {
                mcp_log(s, "out of memory while formatting a message");
                return -ENOMEM;
        }
        text[len] = '\n'; /* json_dumps() left room for its NUL, which is not sent */
        pthread_mutex_lock(&s->write_lock);
        while (!s->out_dead && off < len + 1) {
                ssize_t n = write(s->out_fd, text + off, len + 1 - off);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0 && errno == EAGAIN) {
                        /* a client that does not read: wait for room, or for a stop */
                        struct pollfd p[2] = { { s->out_fd, POLLOUT, 0 },
                                               { s->stop_fd, POLLIN, 0 } };

                        if (poll(p, 2, -1) < 0 && errno != EINTR)
                                s->out_dead = true;
                        if (p[1].revents)
                                s->out_dead = true;
                        continue;
                }
                if (n <= 0) {
                        s->out_dead = true;
                        r = -EPIPE;
                        break;
                }
                off += (size_t)n;
        }
        if (s->out_dead)
                r = -EPIPE;
        pthread_mutex_unlock(&s->write_lock);
        free(text);
        return r;
}

static void handle_line(heal_mcp_server *s, char *line, size_t len)
{
        struct jsonrpc_msg m;

        while (len && (line[len - 1] == '\r' || line[len - 1] == ' ' || line[len - 1] == '\t'))
                len--;
        if (!len)
                return;
        if (jsonrpc_parse(&m, line, len) < 0) {
                mcp_log(s, "out of memory reading a message");
                return;
        }
        mcp_dispatch(s, &m);
        jsonrpc_msg_release(&m);
}

struct reader {
        char *buf;
        size_t len, cap;
        bool skipping; /* inside a line that was too long */
};

static void too_long(heal_mcp_server *s)
{
        mcp_send(s, jsonrpc_error(NULL, JSONRPC_INVALID_REQUEST,
                                  "message longer than 16 MiB: skipped", NULL));
}

/* Every complete line in the buffer; what follows the last newline stays. A line over
 * MCP_LINE_MAX is refused once, whether it came whole or its start was dropped already. */
static void handle_lines(heal_mcp_server *s, struct reader *rd)
{
        size_t start = 0;

        for (;;) {
                char *nl = memchr(rd->buf + start, '\n', rd->len - start);
                size_t len;

                if (!nl)
                        break;
                len = (size_t)(nl - (rd->buf + start));
                if (!rd->skipping && len > MCP_LINE_MAX)
                        too_long(s);
                else if (!rd->skipping)
                        handle_line(s, rd->buf + start, len);
                rd->skipping = false;
                start = (size_t)(nl - rd->buf) + 1;
        }
        memmove(rd->buf, rd->buf + start, rd->len - start);
        rd->len -= start;
        if (rd->len > MCP_LINE_MAX) {
                if (!rd->skipping)
                        too_long(s);
                rd->skipping = true;
                rd->len = 0;
        }
}

/* Wait for input, a stop, or the client closing our output (a pipe's write end reports
 * POLLERR once nobody reads it); 1 readable, 0 stopped or gone, < 0 error. */
static int wait_input(heal_mcp_server *s, int in_fd)
{
        struct pollfd p[3] = { { in_fd, POLLIN, 0 },
                               { s->stop_fd, POLLIN, 0 },
                               { s->out_fd, 0, 0 } };

        for (;;) {
                if (poll(p, 3, -1) < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (p[1].revents)
                        return 0;
                if (p[2].revents & (POLLERR | POLLHUP)) {
                        s->out_dead = true;
                        return 0;
                }
                if (p[0].revents)
                        return 1;
        }
}

/* Whether heal_mcp_server_stop() was called (its eventfd is readable; not consumed). */
static bool stop_requested(const heal_mcp_server *s)
{
        struct pollfd p = { s->stop_fd, POLLIN, 0 };

        return poll(&p, 1, 0) > 0 && (p.revents & POLLIN);
}

static int read_loop(heal_mcp_server *s, int in_fd, heal_error *err)
{
        struct reader rd = { 0 };
        int r;

        while ((r = wait_input(s, in_fd)) > 0 && !s->out_dead) {
                ssize_t n;

                if (rd.cap - rd.len < READ_CHUNK) {
                        char *b = realloc(rd.buf, rd.cap + READ_CHUNK + 1);

                        if (!b) {
                                r = heal_error_set(err, -ENOMEM, "out of memory");
                                break;
                        }
                        rd.buf = b;
                        rd.cap += READ_CHUNK;
                }
                n = read(in_fd, rd.buf + rd.len, rd.cap - rd.len);
                if (n < 0 && (errno == EINTR || errno == EAGAIN))
                        continue;
                if (n < 0) {
                        r = heal_error_set(err, -errno, "reading the input: %s", strerror(errno));
                        break;
                }
                if (n == 0) { /* the input ended: a last line without its newline counts */
                        if (rd.len && !rd.skipping)
                                handle_line(s, rd.buf, rd.len);
                        r = 0;
                        break;
                }
                rd.len += (size_t)n;
                handle_lines(s, &rd);
        }
        free(rd.buf);
        /* A stop while a write waited for room marks the output dead too: still a stop. */
        if (r == 0 && s->out_dead && !stop_requested(s))
                r = heal_error_set(err, -EPIPE, "the client closed the output");
        return r < 0 ? r : 0;
}

int heal_mcp_server_serve(heal_mcp_server *s, int in_fd, int out_fd, heal_error *err)
{
        int r, flags;

        if (!s || in_fd < 0 || out_fd < 0)
                return heal_error_set(err, -EINVAL, "invalid argument");
        s->out_fd = out_fd;
        s->out_dead = false;
        s->stopping = false;
        /* writes never block a stop: a client that stops reading must not hold SIGTERM off */
        flags = fcntl(out_fd, F_GETFL);
        if (flags >= 0)
                fcntl(out_fd, F_SETFL, flags | O_NONBLOCK);
        r = mcp_ticker_start(s);
        if (r < 0) {
                if (flags >= 0)
                        fcntl(out_fd, F_SETFL, flags);
                return heal_error_set(err, r, "cannot start the progress thread: %s", strerror(-r));
        }
        r = read_loop(s, in_fd, err);
        mcp_calls_stop(s);
        if (flags >= 0)
                fcntl(out_fd, F_SETFL, flags);
        return r;
}
