/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target for the MCP server's input: jsonrpc_parse() and mcp_dispatch() of every method
 * but tools/call (which starts sandboxes), answers written to /dev/null.
 *
 * Input: lines, each one message as a client would send it. Checks, besides "no crash, no
 * sanitizer report":
 *   - each line is classified: a request has a method and a string or integer id, a
 *     notification a method and no id, an invalid message the code -32700 or -32600 and a
 *     reason;
 *   - dispatching it (initialize with any version, ping, tools/list, unknown methods,
 *     notifications, responses) never fails the server, and the negotiated version is one
 *     heal supports.
 */
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"
#include "mcp/mcp-internal.h"

static heal_mcp_server *srv;

/* One server for every input (made at the first, as the replay driver has no initializer). */
static void server(void)
{
        heal_mcp_opts o = { .root = "/", .quiet = true };

        if (srv)
                return;
        if (heal_mcp_server_new(&srv, &o, NULL) < 0)
                abort();
        srv->out_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
        if (srv->out_fd < 0)
                abort();
}

static void check(const struct jsonrpc_msg *m)
{
        switch (m->kind) {
        case JSONRPC_REQUEST:
                FUZZ_ASSERT(m->method && (json_is_string(m->id) || json_is_integer(m->id)));
                break;
        case JSONRPC_NOTIFICATION:
                FUZZ_ASSERT(m->method && !m->id);
                break;
        case JSONRPC_INVALID:
                FUZZ_ASSERT(m->code == JSONRPC_PARSE_ERROR || m->code == JSONRPC_INVALID_REQUEST);
                FUZZ_ASSERT(m->error[0] != '\0');
                break;
        case JSONRPC_RESPONSE: /* ignored; its id is kept only when an answer could carry it */
                FUZZ_ASSERT(!m->method &&
                            (!m->id || json_is_string(m->id) || json_is_integer(m->id)));
                break;
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        const char *p = (const char *)data, *end = p + size;

        server();
        while (p < end) {
                const char *nl = memchr(p, '\n', (size_t)(end - p));
                size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
                struct jsonrpc_msg m;

                FUZZ_ASSERT(jsonrpc_parse(&m, p, len) == 0);
                check(&m);
                if (!(m.method && !strcmp(m.method, "tools/call")))
                        mcp_dispatch(srv, &m);
                FUZZ_ASSERT(!*srv->protocol || !strncmp(srv->protocol, "20", 2));
                jsonrpc_msg_release(&m);
                p += len + 1;
        }
        return 0;
}
