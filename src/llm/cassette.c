/* SPDX-License-Identifier: MIT */
/*
 * Cassettes: request/response pairs recorded from a live provider, replayed without a network.
 * One JSON object per line: {"key": XXH3-128 of the canonical request, "request": the canonical
 * request, "response": {"choices": [...], "usage": {...}}}. The canonical request is the Chat
 * Completions encoding of heal_llm_request with sorted keys: the same request always gives the
 * same key, whatever the order of JSON members. Keys and tokens never appear in it (they travel
 * in HTTP headers only).
 * See: https://github.com/Cyan4973/xxHash (XXH3), JSON Lines (https://jsonlines.org).
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "core/util.h"
#include "llm/llm-internal.h"

void cassette_release(struct cassette *c)
{
        for (size_t i = 0; i < c->n; i++) {
                free(c->entries[i].key);
                free(c->entries[i].request);
                json_decref(c->entries[i].response);
        }
        free(c->entries);
        free(c->path);
        memset(c, 0, sizeof(*c));
}

int cassette_key(char **ret_canonical, char ret_key[33], const heal_llm_request *req,
                 heal_error *err)
{
        _cleanup_free_ char *wire = NULL;
        json_t *root;
        XXH128_hash_t h;
        int r = openai_encode(&wire, req, err);

        if (r < 0)
                return r;
        root = json_loads(wire, 0, NULL);
        *ret_canonical = root ? json_dumps(root, JSON_SORT_KEYS | JSON_COMPACT) : NULL;
        json_decref(root);
        if (!*ret_canonical)
                return heal_error_set(err, -ENOMEM, "out of memory");
        h = XXH3_128bits(*ret_canonical, strlen(*ret_canonical));
        snprintf(ret_key, 33, "%016llx%016llx", (unsigned long long)h.high64,
                 (unsigned long long)h.low64);
        return 0;
}

static int add_entry(struct cassette *c, json_t *line, size_t lineno, const char *path,
                     heal_error *err)
{
        json_t *key = json_object_get(line, "key"), *req = json_object_get(line, "request");
        json_t *resp = json_object_get(line, "response");
        struct cassette_entry *grown;

        if (!json_is_string(key) || !json_is_object(req) || !json_is_object(resp))
                return heal_error_set(err, -EBADMSG,
                                      "cassette '%s' line %zu: expected {key, request, response}",
                                      path, lineno);
        grown = realloc(c->entries, (c->n + 1) * sizeof(*grown));
        if (!grown)
                return heal_error_set(err, -ENOMEM, "out of memory");
        c->entries = grown;
        grown[c->n] = (struct cassette_entry){
                .key = strdup(json_string_value(key)),
                .request = json_dumps(req, JSON_SORT_KEYS | JSON_COMPACT),
                .response = json_incref(resp),
        };
        c->n++;
        if (!grown[c->n - 1].key || !grown[c->n - 1].request)
                return heal_error_set(err, -ENOMEM, "out of memory");
        return 0;
}

int cassette_load(struct cassette *c, const char *path, heal_error *err)
{
        FILE *f = fopen(path, "re");
        char *line = NULL;
        size_t cap = 0, lineno = 0;
        ssize_t n;
        int r = 0;

        if (!f)
                return heal_error_set(err, -errno, "cassette '%s': %s", path, strerror(errno));
        while (r == 0 && (n = getline(&line, &cap, f)) > 0) {
                json_error_t jerr;
                json_t *o;

                lineno++;
                if (strspn(line, " \t\r\n") == (size_t)n)
                        continue;
                o = json_loads(line, 0, &jerr);
                if (!o)
                        r = heal_error_set(err, -EBADMSG, "cassette '%s' line %zu: %s", path,
                                           lineno, jerr.text);
                else
                        r = add_entry(c, o, lineno, path, err);
                json_decref(o);
        }
        free(line);
        fclose(f);
        if (r == 0 && !(c->path = strdup(path)))
                r = heal_error_set(err, -ENOMEM, "out of memory");
        if (r < 0)
                cassette_release(c);
        return r;
}

/* The recorded request sharing the longest prefix with @canonical, to explain a miss. */
static const struct cassette_entry *nearest(const struct cassette *c, const char *canonical,
                                            size_t *ret_at)
{
        const struct cassette_entry *best = NULL;
        size_t best_len = 0;

        for (size_t i = 0; i < c->n; i++) {
                size_t k = 0;

                while (canonical[k] && canonical[k] == c->entries[i].request[k])
                        k++;
                if (!best || k > best_len) {
                        best = &c->entries[i];
                        best_len = k;
                }
        }
        *ret_at = best_len;
        return best;
}

int cassette_lookup(const struct cassette *c, const heal_llm_request *req, json_t **ret,
                    heal_error *err)
{
        _cleanup_free_ char *canonical = NULL;
        const struct cassette_entry *near;
        char key[33];
        size_t at;
        int r = cassette_key(&canonical, key, req, err);

        if (r < 0)
                return r;
        for (size_t i = 0; i < c->n; i++)
                if (strcmp(c->entries[i].key, key) == 0) {
                        *ret = c->entries[i].response;
                        return 0;
                }
        near = nearest(c, canonical, &at);
        if (!near)
                return heal_error_set(err, -ENOENT, "the cassette '%s' holds no request at all",
                                      c->path ? c->path : "?");
        return heal_error_set(err, -ENOENT,
                              "no recorded answer for this request (key %s); the nearest "
                              "recorded request differs at byte %zu: recorded '%.40s' vs asked "
                              "'%.40s'",
                              key, at, near->request + at, canonical + at);
}

static json_t *choice_to_json(const heal_llm_choice *ch)
{
        json_t *calls = json_array();

        for (size_t i = 0; i < ch->n_tool_calls; i++)
                json_array_append_new(calls, json_pack("{s:s,s:s,s:s}", "id", ch->tool_calls[i].id,
                                                       "name", ch->tool_calls[i].name, "arguments",
                                                       ch->tool_calls[i].arguments));
        return json_pack("{s:s,s:s,s:o}", "text", ch->text ? ch->text : "", "finish_reason",
                         ch->finish_reason, "tool_calls", calls);
}

json_t *cassette_response_json(const heal_llm_response *resp)
{
        json_t *choices = json_array();

        for (size_t i = 0; i < resp->n_choices; i++)
                json_array_append_new(choices, choice_to_json(&resp->choices[i]));
        return json_pack("{s:o,s:{s:I,s:I,s:I}}", "choices", choices, "usage", "input_tokens",
                         (json_int_t)resp->input_tokens, "output_tokens",
                         (json_int_t)resp->output_tokens, "cached_tokens",
                         (json_int_t)resp->cached_tokens);
}

int cassette_append(const char *path, const heal_llm_request *req, const heal_llm_response *resp,
                    heal_error *err)
{
        _cleanup_free_ char *canonical = NULL, *line = NULL;
        json_t *o, *request;
        char key[33];
        FILE *f;
        int r = cassette_key(&canonical, key, req, err);

        if (r < 0)
                return r;
        request = json_loads(canonical, 0, NULL);
        o = json_pack("{s:s,s:o,s:o}", "key", key, "request", request, "response",
                      cassette_response_json(resp));
        line = o ? json_dumps(o, JSON_SORT_KEYS | JSON_COMPACT) : NULL;
        json_decref(o);
        if (!line)
                return heal_error_set(err, -ENOMEM, "out of memory");
        f = fopen(path, "ae");
        if (!f)
                return heal_error_set(err, -errno, "cassette '%s': %s", path, strerror(errno));
        /* One write per line, so concurrent recorders do not interleave within a line. */
        if (fprintf(f, "%s\n", line) < 0 || fclose(f) != 0)
                return heal_error_set(err, -EIO, "cassette '%s': write failed", path);
        return 0;
}

static char *str_or_empty(json_t *v)
{
        return strdup(json_is_string(v) ? json_string_value(v) : "");
}

int cassette_response(heal_llm_response *resp, json_t *o, heal_error *err)
{
        json_t *choices = json_object_get(o, "choices"), *usage = json_object_get(o, "usage");
        size_t n = json_array_size(choices);

        resp->choices = calloc(n ? n : 1, sizeof(*resp->choices));
        if (!resp->choices)
                return heal_error_set(err, -ENOMEM, "out of memory");
        for (size_t i = 0; i < n; i++, resp->n_choices++) {
                json_t *c = json_array_get(choices, i), *calls = json_object_get(c, "tool_calls");
                heal_llm_choice *ch = &resp->choices[i];
                size_t m = json_array_size(calls);

                ch->text = str_or_empty(json_object_get(c, "text"));
                snprintf(ch->finish_reason, sizeof(ch->finish_reason), "%s",
                         json_string_value(json_object_get(c, "finish_reason")) ?: "");
                ch->tool_calls = calloc(m ? m : 1, sizeof(*ch->tool_calls));
                if (!ch->text || !ch->tool_calls)
                        return heal_error_set(err, -ENOMEM, "out of memory");
                for (size_t j = 0; j < m; j++, ch->n_tool_calls++) {
                        json_t *tc = json_array_get(calls, j);
                        heal_llm_tool_call *t = &ch->tool_calls[j];

                        t->id = str_or_empty(json_object_get(tc, "id"));
                        t->name = str_or_empty(json_object_get(tc, "name"));
                        t->arguments = str_or_empty(json_object_get(tc, "arguments"));
                        if (!t->id || !t->name || !t->arguments)
                                return heal_error_set(err, -ENOMEM, "out of memory");
                        t->arguments_valid = llm_is_json_object(t->arguments);
                }
        }
        resp->input_tokens = (uint64_t)json_integer_value(json_object_get(usage, "input_tokens"));
        resp->output_tokens = (uint64_t)json_integer_value(json_object_get(usage, "output_tokens"));
        resp->cached_tokens = (uint64_t)json_integer_value(json_object_get(usage, "cached_tokens"));
        snprintf(resp->request_id, sizeof(resp->request_id), "replay");
        return 0;
}
