/* SPDX-License-Identifier: MIT */
/*
 * JSON-RPC 2.0 messages (https://www.jsonrpc.org/specification) as MCP uses them: one object
 * per line, requests with a string or integer id, notifications without one, no batches (MCP
 * 2025-06-18 removed them). Whatever a line holds, it is classified, never fatal.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/json.h"
#include "mcp/mcp-internal.h"

static void invalid(struct jsonrpc_msg *m, int code, const char *why)
{
        m->kind = JSONRPC_INVALID;
        m->code = code;
        snprintf(m->error, sizeof(m->error), "%s", why);
}

/* An id the answer can carry: a string or an integer (JSON-RPC also allows fractional
 * numbers, which it says SHOULD NOT be used; MCP allows only strings and integers). */
static bool usable_id(const json_t *id)
{
        return json_is_string(id) || json_is_integer(id);
}

static void classify(struct jsonrpc_msg *m, json_t *root)
{
        json_t *version = json_object_get(root, "jsonrpc"),
               *method = json_object_get(root, "method");
        json_t *id = json_object_get(root, "id"), *params = json_object_get(root, "params");

        if (usable_id(id))
                m->id = id;
        if (!json_is_string(version) || strcmp(json_string_value(version), "2.0") != 0)
                return invalid(m, JSONRPC_INVALID_REQUEST, "'jsonrpc' must be \"2.0\"");
        if (!method) {
                if (id && (json_object_get(root, "result") || json_object_get(root, "error")))
                        m->kind = JSONRPC_RESPONSE;
                else
                        invalid(m, JSONRPC_INVALID_REQUEST, "no 'method'");
                return;
        }
        if (!json_is_string(method))
                return invalid(m, JSONRPC_INVALID_REQUEST, "'method' must be a string");
        if (id && !usable_id(id))
                return invalid(m, JSONRPC_INVALID_REQUEST, "'id' must be a string or an integer");
        if (params && !json_is_object(params) && !json_is_array(params))
                return invalid(m, JSONRPC_INVALID_REQUEST,
                               "'params' must be an object or an array");
        m->method = json_string_value(method);
        m->params = params;
        m->kind = id ? JSONRPC_REQUEST : JSONRPC_NOTIFICATION;
}

int jsonrpc_parse(struct jsonrpc_msg *m, const char *line, size_t len)
{
        json_error_t jerr;
        json_t *root;

        memset(m, 0, sizeof(*m));
        root = json_loadb(line, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &jerr);
        if (!root) {
                char why[sizeof(m->error)];

                snprintf(why, sizeof(why), "not JSON: %s at byte %d", jerr.text, jerr.position);
                invalid(m, JSONRPC_PARSE_ERROR, why);
                return 0;
        }
        m->root = root;
        if (json_is_array(root))
                invalid(m, JSONRPC_INVALID_REQUEST,
                        "batches are not supported (MCP 2025-06-18 removed JSON-RPC batching): "
                        "send one message per line");
        else if (!json_is_object(root))
                invalid(m, JSONRPC_INVALID_REQUEST, "a message must be a JSON object");
        else
                classify(m, root);
        return 0;
}

void jsonrpc_msg_release(struct jsonrpc_msg *m)
{
        json_decref(m->root);
        memset(m, 0, sizeof(*m));
}

json_t *jsonrpc_result(json_t *id, json_t *result)
{
        return json_pack("{s:s,s:O,s:o}", "jsonrpc", "2.0", "id", id ? id : json_null(), "result",
                         result ? result : json_object());
}

json_t *jsonrpc_error(json_t *id, int code, const char *message, json_t *data)
{
        json_t *e = json_pack("{s:i,s:o}", "code", code, "message",
                              json_string_bytes(message, strlen(message)));

        if (e && data)
                json_object_set_new(e, "data", data);
        else
                json_decref(data);
        return json_pack("{s:s,s:O,s:o}", "jsonrpc", "2.0", "id", id ? id : json_null(), "error",
                         e);
}

json_t *jsonrpc_notification(const char *method, json_t *params)
{
        return json_pack("{s:s,s:s,s:o}", "jsonrpc", "2.0", "method", method, "params",
                         params ? params : json_object());
}
