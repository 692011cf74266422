/* SPDX-License-Identifier: MIT */
/*
 * The run_code tool: arguments from a model's tool call or a host's tools/call checked field by
 * field (a model corrects itself from a message that names the field), and the result in the
 * short form a model reads. Code always stays a file's content: it is never put in a command.
 */
#include "runner/tool.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "core/util.h"
#include "runner/runner-internal.h"

#define FILES_MAX 100
#define ARGS_MAX  256

static const char *const run_code_keys[] = {
        "language", "code", "files", "stdin", "args", "timeout_ms", "memory_mb", NULL,
};

char *json_text_take(json_t *v)
{
        char *s = v ? json_dumps(v, JSON_COMPACT) : NULL;

        json_decref(v);
        return s;
}

static int optional_string(const char **ret, size_t *ret_len, json_t *args, const char *key,
                           heal_error *err)
{
        json_t *v = json_object_get(args, key);

        if (!v || json_is_null(v))
                return 0;
        if (!json_is_string(v))
                return heal_error_set(err, -EINVAL, "'%s' must be a string", key);
        *ret = json_string_value(v);
        if (ret_len)
                *ret_len = json_string_length(v);
        return 1;
}

int tool_args_known(json_t *args, const char *const *known, heal_error *err)
{
        const char *key;
        json_t *v;

        json_object_foreach(args, key, v) {
                char list[256] = "";
                size_t i, o = 0;

                for (i = 0; known[i] && strcmp(known[i], key); i++)
                        ;
                if (known[i])
                        continue;
                for (i = 0; known[i] && o < sizeof(list); i++)
                        o += (size_t)snprintf(list + o, sizeof(list) - o, "%s%s", i ? ", " : "",
                                              known[i]);
                return heal_error_set(err, -EINVAL, "unknown argument '%.100s' (the arguments: %s)",
                                      key, list);
        }
        return 0;
}

int tool_arg_uint(uint64_t *ret, json_t *args, const char *key, uint64_t max, heal_error *err)
{
        json_t *v = json_object_get(args, key);

        *ret = 0;
        if (!v || json_is_null(v))
                return 0;
        if (!json_is_integer(v) || json_integer_value(v) <= 0)
                return heal_error_set(err, -EINVAL, "'%s' must be a positive integer", key);
        *ret = MIN((uint64_t)json_integer_value(v), max);
        return 0;
}

static int parse_files(struct run_code_call *c, json_t *files, heal_error *err)
{
        size_t n = json_array_size(files);

        if (!json_is_array(files) || n == 0 || n > FILES_MAX)
                return heal_error_set(err, -EINVAL,
                                      "'files' must be an array of 1 to %d objects "
                                      "{\"name\": ..., \"content\": ...}",
                                      FILES_MAX);
        c->files = calloc(n, sizeof(*c->files));
        if (!c->files)
                return heal_error_set(err, -ENOMEM, "out of memory");
        for (size_t i = 0; i < n; i++) {
                json_t *f = json_array_get(files, i);
                json_t *name = json_object_get(f, "name"), *content = json_object_get(f, "content");

                if (!json_is_string(name) || !json_is_string(content))
                        return heal_error_set(err, -EINVAL,
                                              "files[%zu] must be {\"name\": string, \"content\": "
                                              "string}",
                                              i);
                c->files[i] =
                        (heal_runner_file){ json_string_value(name), json_string_value(content),
                                            json_string_length(content) };
        }
        c->ro.files = c->files;
        c->ro.n_files = n;
        return 0;
}

int tool_arg_strings(const char ***ret, size_t *ret_n, json_t *args, const char *key, size_t min,
                     size_t max, heal_error *err)
{
        json_t *a = json_object_get(args, key);
        size_t n = json_array_size(a);
        const char **v;

        *ret = NULL;
        if (ret_n)
                *ret_n = 0;
        if ((!a || json_is_null(a)) && min == 0)
                return 0;
        if (!json_is_array(a) || n < min || n > max)
                return heal_error_set(err, -EINVAL, "'%s' must be an array of %zu to %zu strings",
                                      key, min, max);
        v = calloc(n + 1, sizeof(*v));
        if (!v)
                return heal_error_set(err, -ENOMEM, "out of memory");
        for (size_t i = 0; i < n; i++) {
                json_t *s = json_array_get(a, i);

                /* a NUL cannot be in an argument of execve(2) */
                if (!json_is_string(s) || strlen(json_string_value(s)) != json_string_length(s)) {
                        free(v);
                        return heal_error_set(err, -EINVAL, "%s[%zu] must be a string without NUL",
                                              key, i);
                }
                v[i] = json_string_value(s);
        }
        *ret = v;
        if (ret_n)
                *ret_n = n;
        return 0;
}

/* language and code, or files (language then from the first file's extension). */
static int parse_program(struct run_code_call *c, json_t *args, heal_error *err)
{
        const char *lang = NULL, *code = NULL;
        size_t code_len = 0;
        json_t *files = json_object_get(args, "files");
        int r = optional_string(&lang, NULL, args, "language", err);

        if (r >= 0)
                r = optional_string(&code, &code_len, args, "code", err);
        if (r < 0)
                return r;
        if (lang && !(c->ro.lang = heal_runner_lang_canonical(lang)))
                return heal_error_set(err, -EINVAL, "'language' '%s' is not one of %s", lang,
                                      heal_runner_langs());
        if (code && files && !json_is_null(files))
                return heal_error_set(err, -EINVAL, "give either 'code' or 'files', not both");
        if (files && !json_is_null(files))
                return parse_files(c, files, err);
        if (!code)
                return heal_error_set(err, -EINVAL, "'code' is missing: the program's text");
        if (!lang)
                return heal_error_set(err, -EINVAL, "'language' is missing: one of %s",
                                      heal_runner_langs());
        c->files = calloc(1, sizeof(*c->files));
        if (!c->files)
                return heal_error_set(err, -ENOMEM, "out of memory");
        c->files[0] = (heal_runner_file){ heal_runner_lang_main_file(c->ro.lang), code, code_len };
        c->ro.files = c->files;
        c->ro.n_files = 1;
        return 0;
}

int run_code_parse(struct run_code_call *c, json_t *args, const heal_runner_limits *run,
                   const heal_runner_limits *compile, const struct run_code_caps *caps,
                   heal_error *err)
{
        uint64_t ms, mb;
        int r;

        *c = (struct run_code_call){ .ro = HEAL_RUNNER_OPTS_INIT };
        if (!json_is_object(args))
                return heal_error_set(err, -EINVAL, "the arguments must be a JSON object");
        r = tool_args_known(args, caps->keys ? caps->keys : run_code_keys, err);
        if (r < 0)
                return r;
        c->held = json_incref(args);
        c->ro.run_limits = *run;
        c->ro.compile_limits = *compile;
        c->ro.share_net = caps->share_net;
        r = parse_program(c, args, err);
        if (r >= 0)
                r = tool_arg_strings(&c->args, NULL, args, "args", 0, ARGS_MAX, err);
        c->ro.args = c->args;
        if (r >= 0 && optional_string(&c->ro.stdin_data, &c->ro.stdin_len, args, "stdin", err) < 0)
                r = -EINVAL;
        if (r >= 0)
                r = tool_arg_uint(&ms, args, "timeout_ms",
                                  caps->max_wall_ms ? caps->max_wall_ms : UINT64_MAX, err);
        if (r >= 0)
                r = tool_arg_uint(&mb, args, "memory_mb",
                                  caps->max_mem_bytes ? caps->max_mem_bytes >> 20 : 1ULL << 30,
                                  err);
        if (r < 0) {
                run_code_release(c);
                return r;
        }
        if (ms)
                c->ro.run_limits.wall_ms = ms;
        else if (caps->default_wall_ms)
                c->ro.run_limits.wall_ms = caps->default_wall_ms;
        if (mb)
                c->ro.run_limits.mem_max_bytes = mb << 20;
        if (caps->max_mem_bytes && (!c->ro.run_limits.mem_max_bytes ||
                                    c->ro.run_limits.mem_max_bytes > caps->max_mem_bytes))
                c->ro.run_limits.mem_max_bytes = caps->max_mem_bytes;
        if (caps->max_out_bytes && (!c->ro.run_limits.out_max_bytes ||
                                    c->ro.run_limits.out_max_bytes > caps->max_out_bytes))
                c->ro.run_limits.out_max_bytes = caps->max_out_bytes;
        if (caps->max_out_bytes && (!c->ro.compile_limits.out_max_bytes ||
                                    c->ro.compile_limits.out_max_bytes > caps->max_out_bytes))
                c->ro.compile_limits.out_max_bytes = caps->max_out_bytes;
        return 0;
}

void run_code_release(struct run_code_call *c)
{
        free(c->files);
        free(c->args);
        json_decref(c->held);
        *c = (struct run_code_call){ .ro = HEAL_RUNNER_OPTS_INIT };
}

static json_t *tail_json(const char *s, size_t len, size_t max)
{
        size_t n;
        const char *t = text_tail(s, len, max, &n);

        return json_string_bytes(t, n);
}

/* The compiler's output: stderr then stdout, as one text. */
static json_t *compile_output(const heal_runner_stage *st, size_t max)
{
        const heal_sandbox_result *c = &st->res;
        heal_buf b = HEAL_BUF_INIT(c->err_len + c->out_len + 1);
        json_t *j;

        heal_buf_append(&b, c->err, c->err_len);
        heal_buf_append(&b, c->out, c->out_len);
        j = tail_json(b.data, b.len, max);
        heal_buf_release(&b);
        return j;
}

json_t *run_code_brief(const heal_runner_result *res, size_t tail_max)
{
        const heal_sandbox_result *r = &res->run.res, *c = &res->compile.res;
        const char *sig = r->signal ? sigabbrev_np(r->signal) : NULL;
        char signame[32] = "";
        json_t *o = json_pack("{s:s,s:o}", "status", heal_exec_status_to_string(res->status),
                              "message", json_string_bytes(res->message, strlen(res->message)));

        if (!o)
                return NULL;
        if (sig)
                snprintf(signame, sizeof(signame), "SIG%s", sig);
        if (res->compile.ran && (res->status == HEAL_EXEC_COMPILE_ERROR || c->err_len))
                json_object_set_new(o, "compile_output", compile_output(&res->compile, tail_max));
        if (res->run.ran) {
                json_object_set_new(o, "exit_code",
                                    r->signal ? json_null() : json_integer(r->exit_code));
                json_object_set_new(o, "signal", *signame ? json_string(signame) : json_null());
                json_object_set_new(o, "stdout", tail_json(r->out, r->out_len, tail_max));
                json_object_set_new(o, "stderr", tail_json(r->err, r->err_len, tail_max));
                if (r->out_truncated || r->err_truncated || r->out_len > tail_max ||
                    r->err_len > tail_max)
                        json_object_set_new(o, "output_cut", json_true());
        }
        return o;
}
