/* SPDX-License-Identifier: MIT */
#ifndef HEAL_MCP_INTERNAL_H
#define HEAL_MCP_INTERNAL_H

#include <jansson.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "heal/mcp.h"
#include "heal/runner.h"
#include "heal/sandbox.h"

/* JSON-RPC 2.0 error codes (https://www.jsonrpc.org/specification section 5.1). */
enum {
        JSONRPC_PARSE_ERROR = -32700,
        JSONRPC_INVALID_REQUEST = -32600,
        JSONRPC_METHOD_NOT_FOUND = -32601,
        JSONRPC_INVALID_PARAMS = -32602,
        JSONRPC_INTERNAL_ERROR = -32603,
};

#define MCP_LINE_MAX      (16u << 20) /* a longer message is refused and skipped */
#define MCP_MESSAGE_MAX   (8u << 20)  /* an answer, at most: SDK clients drop one over 10 MiB */
#define MCP_CALLS_MAX     64          /* tool calls running or waiting, at most */
#define MCP_PROTOCOL_LAST "2025-11-25"

/* jsonrpc.c: one line of input, classified. */
enum jsonrpc_kind {
        JSONRPC_REQUEST,      /* method and id */
        JSONRPC_NOTIFICATION, /* method, no id */
        JSONRPC_RESPONSE,     /* result or error, any id (@id only when usable): heal sends no
                               * requests, so it is ignored */
        JSONRPC_INVALID,      /* @code and @error say why; @id when one could be read */
};

struct jsonrpc_msg {
        enum jsonrpc_kind kind;
        json_t *root;       /* owned */
        json_t *id;         /* borrowed from @root; NULL when absent or unusable */
        const char *method; /* borrowed */
        json_t *params;     /* borrowed; NULL when absent */
        int code;
        char error[256];
};

/* Classify @len bytes of @line (JSON-RPC 2.0 section 4; no batches: MCP 2025-06-18 removed
 * them). Return: 0; -ENOMEM. */
int jsonrpc_parse(struct jsonrpc_msg *m, const char *line, size_t len);
void jsonrpc_msg_release(struct jsonrpc_msg *m);
/* Messages; each steals @result/@data/@params and borrows @id (JSON null when NULL). */
json_t *jsonrpc_result(json_t *id, json_t *result);
json_t *jsonrpc_error(json_t *id, int code, const char *message, json_t *data);
json_t *jsonrpc_notification(const char *method, json_t *params);

struct mcp_call;

/* tools.c: the tool table. */
struct mcp_tool {
        const char *name, *title, *description;
        json_t *(*input_schema)(void);
        json_t *(*output_schema)(void);
        bool read_only, idempotent;
        /* Run @c: 0 with *ret (an object) and *ret_is_error, or < 0 with @err: a failure of
         * heal itself, answered as an error result. */
        int (*run)(struct mcp_call *c, json_t **ret, bool *ret_is_error, heal_error *err);
};

const struct mcp_tool *mcp_tool_find(const heal_mcp_server *s, const char *name);
/* {"tools": [...]} for tools/list; @structured: with outputSchema (2025-06-18 and later). */
json_t *mcp_tools_list(const heal_mcp_server *s, bool structured);

/* tool_code.c, tool_heal.c */
int mcp_run_code(struct mcp_call *c, json_t **ret, bool *ret_is_error, heal_error *err);
int mcp_run_command(struct mcp_call *c, json_t **ret, bool *ret_is_error, heal_error *err);
int mcp_heal(struct mcp_call *c, json_t **ret, bool *ret_is_error, heal_error *err);
/* The call's "directory", opened beneath the server's root (openat2(2) RESOLVE_BENEATH: a
 * symlink or ".." that leads out is -EPERM), the root itself when absent: an O_PATH fd in
 * *@ret_fd (the caller's) and its path in @out. */
int mcp_open_dir(int *ret_fd, char *out, size_t len, const heal_mcp_server *s, json_t *args,
                 heal_error *err);
json_t *mcp_exec_schema(void);
json_t *mcp_run_schema(void);
json_t *mcp_heal_schema(void);

/* A tools/call in progress; its thread owns it. */
struct mcp_call {
        struct mcp_call *next;
        heal_mcp_server *srv;
        const struct mcp_tool *tool;
        json_t *id;             /* the request's id; owned */
        json_t *progress_token; /* owned, or NULL */
        json_t *arguments;      /* an object; owned */
        uint64_t start_ms;
        uint64_t last_progress_ms;
        const char *stage; /* static: what it is doing, for progress */
        bool running;      /* holds one of the max_calls slots */
        bool canceled;
        bool done; /* its answer is being sent: no more progress */
        /* what a cancellation reaches (under the server's calls lock) */
        heal_runner *runner;
        heal_sandbox *sandbox;
        pid_t pgid;
};

struct heal_mcp_server {
        char *root, *heal_path;
        heal_mcp_opts o;
        int out_fd;
        int stop_fd; /* eventfd: heal_mcp_server_stop() */
        bool out_dead;
        pthread_mutex_t write_lock;
        /* the calls, their slots and the progress ticker */
        pthread_mutex_t lock;
        pthread_cond_t changed;
        struct mcp_call *calls;
        unsigned n_calls, running;
        bool stopping;
        pthread_t ticker;
        /* negotiated at initialize */
        char protocol[16];
        bool structured;
};

/* server.c: send one message (a line) and free it; -EPIPE once the client is gone. */
int mcp_send(heal_mcp_server *s, json_t *msg);
void mcp_log(const heal_mcp_server *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
uint64_t mcp_now_ms(void);

/* dispatch.c: answer one message. */
void mcp_dispatch(heal_mcp_server *s, struct jsonrpc_msg *m);

/* call.c */
/* Start a tools/call in its own thread (it answers it); 0, or a JSON-RPC error code. */
int mcp_call_start(heal_mcp_server *s, const struct mcp_tool *t, json_t *id, json_t *params,
                   char *why, size_t why_len);
void mcp_call_cancel(heal_mcp_server *s, json_t *id);
/* A tools/call with this request id has not been answered yet. */
bool mcp_call_in_flight(heal_mcp_server *s, json_t *id);
/* Cancel every call and wait until all have ended. */
void mcp_calls_stop(heal_mcp_server *s);
int mcp_ticker_start(heal_mcp_server *s);
/* Set @c's stage, and its cancellation handles (NULL / -1: none), under the lock; true when
 * the call was canceled meanwhile (the handle is then canceled at once). */
bool mcp_call_stage(struct mcp_call *c, const char *stage);
bool mcp_call_attach(struct mcp_call *c, heal_runner *runner, heal_sandbox *sandbox, pid_t pgid);
bool mcp_call_canceled(struct mcp_call *c);

#endif
