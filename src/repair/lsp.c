/* SPDX-License-Identifier: MIT */
/*
 * A Language Server Protocol client, just enough for outlines: JSON-RPC 2.0 over the server's
 * stdin/stdout with Content-Length framing; initialize / initialized, then per file didOpen,
 * documentSymbol, didClose; shutdown and exit at the end. The server (gopls for Go, clangd for
 * C) stays up between requests, so the repair search pays its start once. Every exchange has a
 * deadline: a server that is missing, hangs or dies is an error the caller falls back from
 * (to ctags, then to plain windows). Requests the server sends us (workspace/configuration,
 * window/workDoneProgress/create, ...) are answered with null.
 * See: https://microsoft.github.io/language-server-protocol/specifications/lsp/3.17/specification/
 *      (Base Protocol; textDocument/documentSymbol).
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "heal/buf.h"
#include "heal/prompt.h"

#include "core/util.h"
#include "repair/repair-internal.h"

extern char **environ;

#define MESSAGE_MAX (16u << 20)

struct heal_lsp {
        pid_t pid;
        int to, from; /* the server's stdin, stdout */
        heal_buf in;  /* bytes read, not yet a whole message */
        int next_id;
        char language[8];
        char tree[PATH_MAX];
        uint64_t timeout_ms;
};

static uint64_t now_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static int send_json(heal_lsp *l, json_t *msg, uint64_t deadline)
{
        char *body = json_dumps(msg, JSON_COMPACT), head[64];
        heal_buf b = HEAL_BUF_INIT(MESSAGE_MAX + 64);
        int r = 0;

        json_decref(msg);
        if (!body)
                return -ENOMEM;
        snprintf(head, sizeof(head), "Content-Length: %zu\r\n\r\n", strlen(body));
        heal_buf_puts(&b, head);
        heal_buf_puts(&b, body);
        free(body);
        for (size_t off = 0; r == 0 && off < b.len;) {
                struct pollfd p = { .fd = l->to, .events = POLLOUT };
                uint64_t now = now_ms();
                ssize_t n;

                if (now >= deadline || poll(&p, 1, (int)(deadline - now)) <= 0) {
                        r = -ETIMEDOUT;
                        break;
                }
                n = send(l->to, b.data + off, b.len - off, MSG_NOSIGNAL | MSG_DONTWAIT);
                if (n < 0 && errno != EAGAIN && errno != EINTR)
                        r = -errno;
                else if (n > 0)
                        off += (size_t)n;
        }
        heal_buf_release(&b);
        return r;
}

/* One whole message out of l->in, or NULL when more bytes are needed (*bad: framing broken). */
static json_t *take_message(heal_lsp *l, bool *bad)
{
        char *end = l->in.data ? strstr(l->in.data, "\r\n\r\n") : NULL, *cl;
        size_t head, len;
        json_t *msg;

        if (!end)
                return NULL;
        head = (size_t)(end - l->in.data) + 4;
        cl = strcasestr(l->in.data, "Content-Length:");
        if (!cl || cl > end || (len = strtoul(cl + 15, NULL, 10)) > MESSAGE_MAX) {
                *bad = true;
                return NULL;
        }
        if (l->in.len < head + len)
                return NULL;
        msg = json_loadb(l->in.data + head, len, 0, NULL);
        memmove(l->in.data, l->in.data + head + len, l->in.len - head - len);
        l->in.len -= head + len;
        l->in.data[l->in.len] = '\0';
        if (!msg)
                *bad = true;
        return msg;
}

/* Wait for the response to request @id; answer the server's own requests on the way. */
static int wait_response(heal_lsp *l, int id, json_t **ret, uint64_t deadline)
{
        for (;;) {
                bool bad = false;
                json_t *msg = take_message(l, &bad), *mid;
                char chunk[65536];
                struct pollfd p = { .fd = l->from, .events = POLLIN };
                uint64_t now;
                ssize_t n;

                if (bad)
                        return -EPROTO;
                if (msg) {
                        mid = json_object_get(msg, "id");
                        if (json_object_get(msg, "method") && mid) /* a request to us */
                                send_json(l,
                                          json_pack("{s:s,s:O,s:n}", "jsonrpc", "2.0", "id", mid,
                                                    "result"),
                                          deadline);
                        else if (json_is_integer(mid) && json_integer_value(mid) == id) {
                                *ret = msg;
                                return json_object_get(msg, "error") ? -EPROTO : 0;
                        }
                        json_decref(msg);
                        continue;
                }
                now = now_ms();
                if (now >= deadline || poll(&p, 1, (int)(deadline - now)) <= 0)
                        return -ETIMEDOUT;
                n = read(l->from, chunk, sizeof(chunk));
                if (n == 0)
                        return -EPIPE; /* the server died */
                if (n < 0 && errno != EINTR && errno != EAGAIN)
                        return -errno;
                if (n > 0 && heal_buf_append(&l->in, chunk, (size_t)n) < 0)
                        return -E2BIG;
        }
}

static int request(heal_lsp *l, const char *method, json_t *params, json_t **ret)
{
        uint64_t deadline = now_ms() + l->timeout_ms;
        int id = ++l->next_id, r;
        json_t *resp = NULL;

        r = send_json(l,
                      json_pack("{s:s,s:i,s:s,s:o}", "jsonrpc", "2.0", "id", id, "method", method,
                                "params", params ? params : json_null()),
                      deadline);
        if (r == 0)
                r = wait_response(l, id, &resp, deadline);
        if (r == 0 && ret)
                *ret = json_incref(json_object_get(resp, "result"));
        json_decref(resp);
        return r;
}

static int notify(heal_lsp *l, const char *method, json_t *params)
{
        return send_json(l,
                         json_pack("{s:s,s:s,s:o}", "jsonrpc", "2.0", "method", method, "params",
                                   params ? params : json_object()),
                         now_ms() + l->timeout_ms);
}

/* The server for @language, started in @tree with pipes; stderr to /dev/null. */
static int spawn_server(heal_lsp *l)
{
        char gopls[] = "gopls", clangd[] = "clangd", quiet[] = "--log=error";
        char *go_argv[] = { gopls, NULL }, *c_argv[] = { clangd, quiet, NULL };
        char **argv = strcmp(l->language, "go") == 0 ? go_argv : c_argv;
        posix_spawn_file_actions_t fa;
        int in[2], out[2], r;

        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, in) < 0)
                return -errno;
        if (pipe2(out, O_CLOEXEC) < 0) {
                r = -errno;
                close(in[0]), close(in[1]);
                return r;
        }
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_adddup2(&fa, in[0], 0);
        posix_spawn_file_actions_adddup2(&fa, out[1], 1);
        posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
        posix_spawn_file_actions_addchdir_np(&fa, l->tree);
        r = -posix_spawnp(&l->pid, argv[0], &fa, NULL, argv, environ);
        posix_spawn_file_actions_destroy(&fa);
        close(in[0]), close(out[1]);
        l->to = in[1];
        l->from = out[0];
        return r;
}

heal_lsp *heal_lsp_free(heal_lsp *l)
{
        if (!l)
                return NULL;
        if (l->pid > 0) {
                uint64_t t = l->timeout_ms;

                l->timeout_ms = 1000; /* a polite end, briefly */
                if (request(l, "shutdown", NULL, NULL) == 0)
                        notify(l, "exit", NULL);
                l->timeout_ms = t;
                kill(l->pid, SIGKILL);
                while (waitpid(l->pid, NULL, 0) < 0 && errno == EINTR)
                        ;
        }
        safe_close(l->to);
        safe_close(l->from);
        heal_buf_release(&l->in);
        free(l);
        return NULL;
}

int heal_lsp_start(heal_lsp **ret, const char *language, const char *tree, uint64_t timeout_ms,
                   heal_error *err)
{
        heal_lsp *l;
        char uri[PATH_MAX + 16];
        int r;

        if (!ret || !language || !tree || (strcmp(language, "go") && strcmp(language, "c")))
                return heal_error_set(err, -EINVAL, "language servers: 'go' (gopls), 'c' (clangd)");
        l = calloc(1, sizeof(*l));
        if (!l)
                return heal_error_set(err, -ENOMEM, "out of memory");
        l->to = l->from = -1;
        l->timeout_ms = timeout_ms ? timeout_ms : 10000;
        heal_buf_init(&l->in, MESSAGE_MAX + 4096);
        snprintf(l->language, sizeof(l->language), "%s", language);
        if (!realpath(tree, l->tree)) {
                r = heal_error_set(err, -errno, "'%s': %s", tree, strerror(errno));
                heal_lsp_free(l);
                return r;
        }
        r = spawn_server(l);
        if (r < 0) {
                heal_lsp_free(l);
                return heal_error_set(err, r, "cannot start the %s language server: %s",
                                      strcmp(language, "go") == 0 ? "gopls" : "clangd",
                                      strerror(-r));
        }
        snprintf(uri, sizeof(uri), "file://%s", l->tree);
        r = request(l, "initialize",
                    json_pack("{s:i,s:s,s:{s:{s:{s:b}}}}", "processId", (int)getpid(), "rootUri",
                              uri, "capabilities", "textDocument", "documentSymbol",
                              "hierarchicalDocumentSymbolSupport", 1),
                    NULL);
        if (r == 0)
                r = notify(l, "initialized", NULL);
        if (r < 0) {
                heal_lsp_free(l);
                return heal_error_set(err, r, "the %s language server did not start: %s", language,
                                      r == -ETIMEDOUT ? "no answer in time"
                                      : r == -EPIPE   ? "it exited"
                                                      : strerror(-r));
        }
        *ret = l;
        return 0;
}

const char *heal_lsp_language(const heal_lsp *l)
{
        return l ? l->language : NULL;
}

/* Tags from DocumentSymbol[] (hierarchical: top level only, children lie inside) or
 * SymbolInformation[] (flat: everything). */
static size_t symbols_to_tags(json_t *result, struct tag *v, size_t max)
{
        size_t n = 0, i;
        json_t *s;

        json_array_foreach(result, i, s) {
                json_t *range = json_object_get(s, "range");
                int kind = (int)json_integer_value(json_object_get(s, "kind"));
                bool type = kind == 5 || kind == 10 || kind == 11 || kind == 23;
                bool func = kind == 6 || kind == 9 || kind == 12;

                if (!range)
                        range = json_object_get(json_object_get(s, "location"), "range");
                if (n >= max || !(type || func) || !range)
                        continue;
                v[n].line = (unsigned)json_integer_value(
                                    json_object_get(json_object_get(range, "start"), "line")) +
                            1;
                v[n].end = (unsigned)json_integer_value(
                                   json_object_get(json_object_get(range, "end"), "line")) +
                           1;
                v[n].type = type;
                if (v[n].end < v[n].line)
                        v[n].end = v[n].line;
                n++;
        }
        return n;
}

/* didOpen @file (beneath the tree) and its URI into @uri; -ENOENT when it cannot be read. */
static int open_document(heal_lsp *l, const char *file, char *uri, size_t len)
{
        heal_buf text = HEAL_BUF_INIT(4u << 20);
        FILE *f = tree_open(l->tree, file, 4u << 20);
        char chunk[65536];
        size_t n;
        int r;

        if (!f)
                return -ENOENT;
        while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
                heal_buf_append(&text, chunk, n);
        fclose(f);
        snprintf(uri, len, "file://%s/%s", l->tree, file);
        r = notify(l, "textDocument/didOpen",
                   json_pack("{s:{s:s,s:s,s:i,s:s}}", "textDocument", "uri", uri, "languageId",
                             l->language, "version", 1, "text", text.data ? text.data : ""));
        heal_buf_release(&text);
        return r;
}

static void close_document(heal_lsp *l, const char *uri)
{
        notify(l, "textDocument/didClose", json_pack("{s:{s:s}}", "textDocument", "uri", uri));
}

int lsp_outline(heal_lsp *l, const char *file, char **ret)
{
        char uri[PATH_MAX * 2];
        struct tag *tags = NULL;
        json_t *result = NULL;
        size_t n;
        int r;

        *ret = NULL;
        r = open_document(l, file, uri, sizeof(uri));
        if (r == 0)
                r = request(l, "textDocument/documentSymbol",
                            json_pack("{s:{s:s}}", "textDocument", "uri", uri), &result);
        if (r == 0)
                close_document(l, uri);
        tags = calloc(4096, sizeof(*tags));
        n = r == 0 && tags ? symbols_to_tags(result, tags, 4096) : 0;
        json_decref(result);
        if (r == 0)
                r = n ? outline_render(l->tree, file, tags, n, ret) : -ENOENT;
        free(tags);
        return r;
}

/* A file:// URI in the tree as a relative path into @out; false when outside it. */
static bool uri_in_tree(const heal_lsp *l, const char *uri, char *out, size_t len)
{
        size_t n = strlen(l->tree);

        if (!starts_with(uri, "file://") || strncmp(uri + 7, l->tree, n) != 0 || uri[7 + n] != '/')
                return false;
        snprintf(out, len, "%s", uri + 7 + n + 1);
        return out[0] != '\0';
}

int lsp_definition(heal_lsp *l, const char *file, unsigned line, unsigned col, char *ret_file,
                   size_t len, unsigned *ret_line)
{
        char uri[PATH_MAX * 2];
        json_t *result = NULL, *loc, *target;
        int r;

        if (line == 0 || col == 0)
                return -ENOENT;
        r = open_document(l, file, uri, sizeof(uri));
        /* LSP positions are 0-based; columns count UTF-16 units, bytes for ASCII lines */
        if (r == 0)
                r = request(l, "textDocument/definition",
                            json_pack("{s:{s:s},s:{s:i,s:i}}", "textDocument", "uri", uri,
                                      "position", "line", (int)line - 1, "character", (int)col - 1),
                            &result);
        if (r == 0)
                close_document(l, uri);
        /* Location | Location[] | LocationLink[] */
        loc = json_is_array(result) ? json_array_get(result, 0) : result;
        target = json_object_get(loc, "targetUri") ? json_object_get(loc, "targetUri")
                                                   : json_object_get(loc, "uri");
        if (r == 0 &&
            (!json_is_string(target) || !uri_in_tree(l, json_string_value(target), ret_file, len)))
                r = -ENOENT;
        if (r == 0) {
                json_t *range =
                        json_object_get(loc, "targetRange") ?: json_object_get(loc, "range");

                *ret_line = (unsigned)json_integer_value(
                                    json_object_get(json_object_get(range, "start"), "line")) +
                            1;
        }
        json_decref(result);
        return r;
}
