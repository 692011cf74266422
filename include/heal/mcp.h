/* SPDX-License-Identifier: MIT */
#ifndef HEAL_MCP_H
#define HEAL_MCP_H

/*
 * libheal's Model Context Protocol server: heal's sandbox as tools any agent host can call,
 * over stdio (JSON-RPC 2.0, one message per line). Tools:
 *   run_code     build and run one program (heal/runner.h): language, code or files, stdin,
 *                args, limits -> the exec document of docs/exec.md;
 *   run_command  run an argument vector in the sandbox in the server's directory, seen as an
 *                overlay (nothing is written to it) -> the run document of docs/json.md;
 *   heal         the main job on a command (dry run unless asked to write) -> heal's report.
 * Each has an inputSchema and an outputSchema; results carry structuredContent, the same JSON
 * as text, and isError when the program, command or repair failed.
 *
 * Lifecycle: heal_mcp_server_new(), heal_mcp_server_serve() until the client closes the input
 * or heal_mcp_server_stop() is called, heal_mcp_server_free().
 */

#include <stdbool.h>
#include <stdint.h>

#include "heal/error.h"
#include "heal/runner.h"

typedef struct heal_mcp_server heal_mcp_server;

/**
 * struct heal_mcp_opts - How the server runs tools; strings copied by heal_mcp_server_new().
 * @root:           the directory run_command and heal act in (a call's "directory" must lie
 *                  beneath it); absolute; required.
 * @heal_path:      the heal program the heal tool runs ("heal fix --json ..."), or NULL: no
 *                  heal tool is offered (an embedding program is not heal).
 * @run_limits:     run_code's run stage and run_command's limits (0 fields: the drivers'
 *                  defaults; run_command: 60 s wall time, 512 MiB).
 * @compile_limits: run_code's compile stage (0 fields: the drivers' defaults).
 * @max_wall_ms:    the longest run a call may ask for with timeout_ms (0: 300000).
 * @max_mem_bytes:  the most memory a call may ask for with memory_mb, bytes (0: the
 *                  @run_limits' memory, else 512 MiB).
 * @max_out_bytes:  output kept of each stage (stdout + stderr), bytes; calls may ask for
 *                  less (0: 256 KiB; at most 1 MiB, so that a result stays well under the
 *                  10 MiB a client reads in one message).
 * @max_calls:      tool calls run at once; more wait (0: 4).
 * @share_net:      runs may use the host's network (default: loopback only).
 * @quiet:          no log line per call on stderr (errors are still logged).
 */
typedef struct heal_mcp_opts {
        const char *root;
        const char *heal_path;
        heal_runner_limits run_limits;
        heal_runner_limits compile_limits;
        uint64_t max_wall_ms;
        uint64_t max_mem_bytes;
        uint64_t max_out_bytes;
        unsigned max_calls;
        bool share_net;
        bool quiet;
} heal_mcp_opts;

/**
 * heal_mcp_server_new() - Create a server.
 * @ret: on success, the server; free with heal_mcp_server_free(). Untouched on failure.
 * @o:   copied.
 * @err: optional.
 * Return: 0; -EINVAL for a missing or relative @root or a NULL argument; -ENOENT, -ENOTDIR
 *         when @root is not a directory; -ENOMEM; -errno from eventfd(2).
 */
int heal_mcp_server_new(heal_mcp_server **ret, const heal_mcp_opts *o, heal_error *err);

/**
 * heal_mcp_server_serve() - Read JSON-RPC messages from @in_fd and answer on @out_fd until the
 * input ends or heal_mcp_server_stop().
 * @s:      the server.
 * @in_fd:  messages, one per line (UTF-8, no embedded newline); borrowed.
 * @out_fd: answers and notifications, one per line, nothing else; borrowed. The caller keeps
 *          every other writer away from it (heal mcp points its own stdout at stderr). It is
 *          made non-blocking while serving (a client that stops reading cannot hold off a
 *          stop), and the server ends when the client closes it.
 * @err:    optional.
 *
 * Protocol versions 2025-11-25, 2025-06-18, 2025-03-26 and 2024-11-05 are negotiated at
 * initialize (another request gets the newest); ping, tools/list, tools/call,
 * notifications/cancelled (the call is stopped and gets no answer) and
 * notifications/progress (about once a second for a call with a progressToken, with its
 * stage) are supported. Malformed input is answered with the JSON-RPC error codes (-32700
 * parse error, -32600 invalid request, -32601 method not found, -32602 invalid params) and
 * never ends the server; a line over 16 MiB is refused and skipped. Tool calls run in threads
 * of their own, at most @max_calls at once. At the end every running call is canceled and
 * waited for.
 *
 * Context: blocking; starts threads; forks. One serve at a time per server.
 * Return: 0 when the input ended or the server was stopped; -EPIPE when @out_fd was closed by
 *         the client; -errno from read(2) or write(2).
 * See: https://modelcontextprotocol.io/specification/2025-11-25 (basic/transports.mdx: stdio;
 *      basic/lifecycle.mdx; server/tools.mdx; basic/utilities/cancellation.mdx, progress.mdx),
 *      https://www.jsonrpc.org/specification
 */
int heal_mcp_server_serve(heal_mcp_server *s, int in_fd, int out_fd, heal_error *err);

/**
 * heal_mcp_server_stop() - End heal_mcp_server_serve() as if the input had ended.
 * Context: async-signal-safe (a SIGTERM handler may call it) and thread-safe.
 */
void heal_mcp_server_stop(heal_mcp_server *s);

/** heal_mcp_server_free() - Free @s (not while it serves); accepts NULL. Return: NULL. */
heal_mcp_server *heal_mcp_server_free(heal_mcp_server *s);

#endif
