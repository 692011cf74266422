/* SPDX-License-Identifier: MIT */
/*
 * The methods: initialize (version negotiation, 2025-11-25 basic/lifecycle.mdx), ping,
 * tools/list, tools/call (started in a thread, call.c), notifications/cancelled. Requests for
 * anything else are "method not found"; notifications heal does not know are ignored, as the
 * specification asks.
 */
#include <stdio.h>
#include <string.h>

#include "core/json.h"
#include "core/util.h"
#include "mcp/mcp-internal.h"

/* Newest first: an unknown version is answered with the first. */
static const char *const versions[] = { "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05" };

static const char instructions[] =
        "heal runs code in a Linux sandbox (namespaces, no network, time, memory and output "
        "limits; nothing is written on the host). run_code builds and runs one program (go, c, "
        "python3, sh, bash) and returns its status, exit code and output per stage. "
        "run_command runs a command in the server's directory seen as a copy-on-write overlay: "
        "it can build and test, and its writes vanish. heal runs a failing build or test "
        "command, asks a model for patches, verifies one in sandboxes and returns it as a diff "
        "(written only with write: true).";

static void reply_error(heal_mcp_server *s, struct jsonrpc_msg *m, int code, const char *msg)
{
        mcp_send(s, jsonrpc_error(m->id, code, msg, NULL));
}

static json_t *versions_json(void)
{
        json_t *a = json_array();

        for (size_t i = 0; i < ELEMENTSOF(versions); i++)
                json_array_append_new(a, json_string(versions[i]));
        return a;
}

static void initialize(heal_mcp_server *s, struct jsonrpc_msg *m)
{
        const char *asked = json_string_value(json_object_get(m->params, "protocolVersion"));
        const char *chosen = versions[0];

        if (!asked) {
                mcp_send(s, jsonrpc_error(m->id, JSONRPC_INVALID_PARAMS,
                                          "initialize: 'protocolVersion' (a string) is missing",
                                          json_pack("{s:o}", "supported", versions_json())));
                return;
        }
        for (size_t i = 0; i < ELEMENTSOF(versions); i++)
                if (!strcmp(asked, versions[i]))
                        chosen = versions[i];
        snprintf(s->protocol, sizeof(s->protocol), "%s", chosen);
        /* structuredContent and outputSchema came with 2025-06-18; dates compare as text */
        s->structured = strcmp(chosen, "2025-06-18") >= 0;
        mcp_send(s, jsonrpc_result(m->id,
                                   json_pack("{s:s,s:{s:{s:b}},s:{s:s,s:s,s:s},s:s}",
                                             "protocolVersion", chosen, "capabilities", "tools",
                                             "listChanged", 0, "serverInfo", "name", "heal",
                                             "title", "heal: code in a sandbox, and repairs",
                                             "version", "0.1.0", "instructions", instructions)));
}

static void tools_call(heal_mcp_server *s, struct jsonrpc_msg *m)
{
        const char *name = json_string_value(json_object_get(m->params, "name"));
        json_t *args = json_object_get(m->params, "arguments");
        const struct mcp_tool *t;
        char why[256] = "";
        int code;

        if (!name)
                return reply_error(s, m, JSONRPC_INVALID_PARAMS,
                                   "tools/call: 'name' (a string) is missing");
        if (args && !json_is_object(args) && !json_is_null(args))
                return reply_error(s, m, JSONRPC_INVALID_PARAMS,
                                   "tools/call: 'arguments' must be an object");
        t = mcp_tool_find(s, name);
        if (!t) {
                char msg[300];

                snprintf(msg, sizeof(msg), "Unknown tool: %.200s", name);
                return reply_error(s, m, JSONRPC_INVALID_PARAMS, msg);
        }
        code = mcp_call_start(s, t, m->id, m->params, why, sizeof(why));
        if (code)
                reply_error(s, m, code, why);
}

static void cancelled(heal_mcp_server *s, struct jsonrpc_msg *m)
{
        json_t *id = json_object_get(m->params, "requestId");

        if (json_is_string(id) || json_is_integer(id))
                mcp_call_cancel(s, id);
}

static void request(heal_mcp_server *s, struct jsonrpc_msg *m)
{
        char msg[300];

        /* an id names one request until it is answered (JSON-RPC 2.0 section 4) */
        if (mcp_call_in_flight(s, m->id))
                return reply_error(s, m, JSONRPC_INVALID_REQUEST,
                                   "a call with this request id is in progress");
        if (m->params && !json_is_object(m->params))
                return reply_error(s, m, JSONRPC_INVALID_PARAMS, "'params' must be an object");
        if (!strcmp(m->method, "initialize"))
                return initialize(s, m);
        if (!strcmp(m->method, "ping"))
                return (void)mcp_send(s, jsonrpc_result(m->id, json_object()));
        if (!strcmp(m->method, "tools/list"))
                return (void)mcp_send(s, jsonrpc_result(m->id, mcp_tools_list(s, s->structured)));
        if (!strcmp(m->method, "tools/call"))
                return tools_call(s, m);
        snprintf(msg, sizeof(msg), "Method not found: %.200s", m->method);
        reply_error(s, m, JSONRPC_METHOD_NOT_FOUND, msg);
}

void mcp_dispatch(heal_mcp_server *s, struct jsonrpc_msg *m)
{
        switch (m->kind) {
        case JSONRPC_INVALID:
                mcp_send(s,
                         jsonrpc_error(m->id, m->code,
                                       m->code == JSONRPC_PARSE_ERROR ? "Parse error"
                                                                      : "Invalid Request",
                                       json_pack("{s:o}", "reason",
                                                 json_string_bytes(m->error, strlen(m->error)))));
                break;
        case JSONRPC_REQUEST:
                request(s, m);
                break;
        case JSONRPC_NOTIFICATION:
                if (!strcmp(m->method, "notifications/cancelled") && json_is_object(m->params))
                        cancelled(s, m);
                break;
        case JSONRPC_RESPONSE:
                break;
        }
}
