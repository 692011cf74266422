/* SPDX-License-Identifier: MIT */
/*
 * The tools and their JSON Schemas (2025-11-25 server/tools.mdx). Input schemas describe what
 * the handlers accept (tool_code.c, tool_heal.c check every field again and say what is wrong:
 * a client need not validate). Output schemas describe exactly the documents the handlers
 * return (docs/exec.md, docs/json.md, docs/repair.md); the SDK's client rejects a result whose
 * structuredContent does not match, so tests drive it with that client.
 */
#include <string.h>

#include "core/util.h"
#include "mcp/mcp-internal.h"

static json_t *type(const char *t, const char *description)
{
        json_t *o = json_pack("{s:s}", "type", t);

        if (description)
                json_object_set_new(o, "description", json_string(description));
        return o;
}

/* {"type": [@t, "null"]} */
static json_t *nullable(const char *t)
{
        return json_pack("{s:[s,s]}", "type", t, "null");
}

static json_t *strings(const char *description)
{
        json_t *o = json_pack("{s:s,s:{s:s}}", "type", "array", "items", "type", "string");

        if (description)
                json_object_set_new(o, "description", json_string(description));
        return o;
}

static json_t *count(const char *description)
{
        return json_pack("{s:s,s:i,s:s}", "type", "integer", "minimum", 1, "description",
                         description);
}

/* An object schema from @props (stolen) and the NULL-terminated @required names. */
static json_t *object(json_t *props, const char *const *required)
{
        json_t *req = json_array();

        for (size_t i = 0; required && required[i]; i++)
                json_array_append_new(req, json_string(required[i]));
        return json_pack("{s:s,s:o,s:o}", "type", "object", "properties", props, "required", req);
}

static json_t *langs_enum(void)
{
        json_t *e = json_array();
        const char *l = heal_runner_langs();

        for (const char *p = l; *p;) {
                size_t n = strcspn(p, ",");

                json_array_append_new(e, json_stringn(p, n));
                p += n;
                p += strspn(p, ", ");
        }
        return json_pack("{s:s,s:o,s:s}", "type", "string", "enum", e, "description",
                         "the program's language (may be left out when files name it by "
                         "extension)");
}

/* An input schema: no property but those listed (heal refuses others by name too). */
static json_t *closed(json_t *o)
{
        json_object_set_new(o, "additionalProperties", json_false());
        return o;
}

static json_t *run_code_input(void)
{
        json_t *file = object(json_pack("{s:o,s:o}", "name",
                                        type("string", "path relative to the program's directory"),
                                        "content", type("string", NULL)),
                              (const char *const[]){ "name", "content", NULL });

        return closed(object(
                json_pack("{s:o,s:o,s:{s:s,s:i,s:i,s:o,s:s},s:o,s:o,s:o,s:o}", "language",
                          langs_enum(), "code",
                          type("string", "the whole program: Go package main with func main, C "
                                         "with main, or a script"),
                          "files", "type", "array", "minItems", 1, "maxItems", 100, "items", file,
                          "description", "instead of code: several files, the first the main one",
                          "stdin", type("string", "the program's standard input"), "args",
                          strings("the program's arguments"), "timeout_ms",
                          count("wall-time limit of the run, ms (default 10000)"), "memory_mb",
                          count("memory limit of the run, MiB (default 512)")),
                NULL));
}

static json_t *run_command_input(void)
{
        json_t *argv = strings("the command and its arguments, run without a shell (use "
                               "[\"sh\", \"-c\", \"...\"] for one)");

        json_object_set_new(argv, "minItems", json_integer(1));
        return closed(object(json_pack("{s:o,s:o,s:o,s:o,s:o}", "argv", argv, "directory",
                                       type("string", "where to run it, relative to the server's "
                                                      "directory (default: that directory)"),
                                       "stdin", type("string", "the command's standard input"),
                                       "timeout_ms", count("wall-time limit, ms (default 60000)"),
                                       "memory_mb", count("memory limit, MiB (default 512)")),
                             (const char *const[]){ "argv", NULL }));
}

static json_t *heal_input(void)
{
        json_t *cmd = strings("the failing build or test command, e.g. [\"go\", \"test\", "
                              "\"./...\"]; run without a shell");

        json_object_set_new(cmd, "minItems", json_integer(1));
        return closed(object(
                json_pack("{s:o,s:o,s:{s:s,s:b,s:s},s:o,s:{s:s,s:f,s:s},s:o,s:o}", "command", cmd,
                          "directory",
                          type("string", "the project, relative to the server's directory "
                                         "(default: that directory)"),
                          "write", "type", "boolean", "default", 0, "description",
                          "write the verified fix into the project (undo with 'heal undo'); "
                          "default: only return it",
                          "max_requests", count("model requests at most (default 16)"),
                          "max_cost_usd", "type", "number", "exclusiveMinimum", 0.0, "description",
                          "money at most, US dollars (default 1.00)", "timeout_ms",
                          count("limit of each run of the command, ms"), "search_time_ms",
                          count("the search's wall time, ms (default 600000)")),
                (const char *const[]){ "command", NULL }));
}

static const struct mcp_tool tools[] = {
        {
                .name = "run_code",
                .title = "Run code in a sandbox",
                .description = "Build and run one program (go, c, python3, sh, bash) in a Linux "
                               "sandbox: no network, time, memory and output limits, nothing "
                               "written on the host. Returns the status (ok, compile_error, "
                               "runtime_error, timeout, memory_limit, cpu_limit, output_limit, "
                               "internal_error) and each stage's exit code, output and usage. "
                               "isError is true unless the program ran and exited 0.",
                .input_schema = run_code_input,
                .output_schema = mcp_exec_schema,
                .read_only = true,
                .run = mcp_run_code,
        },
        {
                .name = "run_command",
                .title = "Run a command in the project, in a sandbox",
                .description = "Run a command (an argument vector) in a sandbox in the "
                               "server's directory, seen as a copy-on-write overlay: it can "
                               "read, build and test the project, and whatever it writes "
                               "vanishes afterwards. No network, no home directory, time and "
                               "memory limits. isError is true unless it exited 0.",
                .input_schema = run_command_input,
                .output_schema = mcp_run_schema,
                .read_only = true,
                .run = mcp_run_command,
        },
        {
                .name = "heal",
                .title = "Repair a failing build or test",
                .description = "Run a build or test command in the project; if it fails, ask "
                               "a model for candidate patches, evaluate each in its own "
                               "sandbox, and return the first one that makes the command pass "
                               "(verified twice, tests intact) as a unified diff. Writes it "
                               "only with write: true. isError is true unless the command "
                               "passed or a fix was found.",
                .input_schema = heal_input,
                .output_schema = mcp_heal_schema,
                .run = mcp_heal,
        },
};

const struct mcp_tool *mcp_tool_find(const heal_mcp_server *s, const char *name)
{
        for (size_t i = 0; i < ELEMENTSOF(tools); i++)
                if (!strcmp(tools[i].name, name) && (tools[i].run != mcp_heal || s->heal_path))
                        return &tools[i];
        return NULL;
}

json_t *mcp_tools_list(const heal_mcp_server *s, bool structured)
{
        json_t *list = json_array();

        for (size_t i = 0; i < ELEMENTSOF(tools); i++) {
                const struct mcp_tool *t = &tools[i];
                json_t *o;

                if (!mcp_tool_find(s, t->name))
                        continue;
                o = json_pack("{s:s,s:s,s:s,s:o,s:{s:s,s:b,s:b,s:b,s:b}}", "name", t->name, "title",
                              t->title, "description", t->description, "inputSchema",
                              t->input_schema(), "annotations", "title", t->title, "readOnlyHint",
                              t->read_only, "destructiveHint", 0, "idempotentHint", t->idempotent,
                              "openWorldHint", 0);
                if (o && structured)
                        json_object_set_new(o, "outputSchema", t->output_schema());
                json_array_append_new(list, o);
        }
        return json_pack("{s:o}", "tools", list);
}

/* The documents the tools return. */

static json_t *procs_schema(void)
{
        return json_pack(
                "{s:s,s:o}", "type", "array", "items",
                object(json_pack("{s:o,s:o,s:o,s:o,s:o,s:o,s:o}", "pid", type("integer", NULL),
                                 "ppid", type("integer", NULL), "state", type("string", NULL),
                                 "comm", type("string", NULL), "wchan", type("string", NULL),
                                 "syscall", type("string", NULL), "cpu_ms", type("integer", NULL)),
                       (const char *const[]){ "pid", "state", "comm", NULL }));
}

/* A stage of an exec (docs/exec.md), null when it did not run. */
static json_t *stage_schema(void)
{
        json_t *o = object(
                json_pack("{s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o}", "status",
                          type("string", NULL), "stdout", type("string", NULL), "stderr",
                          type("string", NULL), "stdout_truncated", type("boolean", NULL),
                          "stderr_truncated", type("boolean", NULL), "exit_code",
                          nullable("integer"), "signal", nullable("integer"), "signal_name",
                          nullable("string"), "wall_ms", type("integer", NULL), "cpu_ms",
                          type("integer", NULL), "memory_bytes", type("integer", NULL),
                          "limits_hit", strings(NULL), "enforcement", type("string", NULL),
                          "message", type("string", NULL), "processes", procs_schema()),
                (const char *const[]){ "status", "stdout", "stderr", "exit_code", "signal",
                                       "wall_ms", NULL });

        json_object_set_new(o, "type", json_pack("[s,s]", "object", "null"));
        return o;
}

json_t *mcp_exec_schema(void)
{
        return object(json_pack("{s:o,s:o,s:o,s:o,s:o}", "status", type("string", NULL), "language",
                                nullable("string"), "message", type("string", NULL), "compile",
                                stage_schema(), "run", stage_schema()),
                      (const char *const[]){ "status", "message", "compile", "run", NULL });
}

json_t *mcp_run_schema(void)
{
        json_t *timing =
                object(json_pack("{s:o,s:o,s:o,s:o,s:o}", "clone", type("integer", NULL), "maps",
                                 type("integer", NULL), "mounts", type("integer", NULL), "exec",
                                 type("integer", NULL), "end", type("integer", NULL)),
                       NULL);

        return object(
                json_pack("{s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o}", "status",
                          type("string", NULL), "exit_code", type("integer", NULL), "signal",
                          type("integer", NULL), "limits_hit", strings(NULL), "enforcement",
                          type("string", NULL), "wall_ms", type("integer", NULL), "cpu_ms",
                          type("integer", NULL), "memory_peak_bytes", type("integer", NULL),
                          "stdout", type("string", NULL), "stdout_truncated", type("boolean", NULL),
                          "stderr", type("string", NULL), "stderr_truncated", type("boolean", NULL),
                          "message", type("string", NULL), "processes", procs_schema(), "timing_us",
                          timing),
                (const char *const[]){ "status", "exit_code", "signal", "stdout", "stderr", NULL });
}

json_t *mcp_heal_schema(void)
{
        return object(
                json_pack("{s:o,s:o,s:o,s:o,s:o,s:o,s:o}", "exit_code",
                          type("integer", "heal's exit status (docs/exit-codes.md)"), "verdict",
                          type("string", "passed, fixed, not_found, budget, limit, canceled "
                                         "(from the report); without one: ok, not_found, "
                                         "budget, not_written, flaky, canceled, error"),
                          "patch", nullable("string"), "written", nullable("string"), "report",
                          nullable("object"), "report_left_out",
                          type("boolean", "the report was too large to send (over 2 MiB)"), "log",
                          type("string", "the end of heal's stderr: the command's output and "
                                         "heal's own errors")),
                (const char *const[]){ "exit_code", "verdict", "patch", "written", "report", "log",
                                       NULL });
}
