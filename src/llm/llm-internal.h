/* SPDX-License-Identifier: MIT */
#ifndef HEAL_LLM_INTERNAL_H
#define HEAL_LLM_INTERNAL_H

#include <curl/curl.h>
#include <jansson.h>
#include <stdint.h>

#include "heal/buf.h"
#include "heal/llm.h"

/* Where a successful text/event-stream body goes, piece by piece, instead of a buffer. */
struct http_sink {
        int (*fn)(const char *data, size_t len, void *userdata); /* < 0 stops the transfer */
        void *userdata;
};

/* One HTTP exchange. */
struct http_reply {
        long status;
        heal_buf body;
        char content_type[128];
        char request_id[128];
        int64_t retry_after_ms; /* from Retry-After / retry-after-ms; -1 when absent */
        CURL *curl;
        const struct http_sink *sink;
        uint64_t received; /* body bytes, streamed or not */
        int sink_error;    /* what the sink returned when it stopped the transfer */
        bool streamed;     /* the body went to the sink */
};

/* http.c */
int http_post_json(CURL *curl, const char *url, const char *api_key, const char *body,
                   const heal_llm_config *cfg, const struct http_sink *sink, struct http_reply *out,
                   heal_error *err);
void http_reply_release(struct http_reply *r);
int64_t http_parse_retry_after(const char *value, int64_t now_s);

/* openai.c: the Chat Completions wire format */
int openai_encode(char **ret, const heal_llm_request *req, heal_error *err);
int openai_decode(heal_llm_response *resp, const char *body, size_t len, heal_error *err);
void openai_error_message(char *out, size_t len, const char *body, size_t body_len);
/* Do tool-call arguments parse as a JSON object? (small models emit broken JSON) */
bool llm_is_json_object(const char *text);

/* openai_stream.c: a streamed chat completion assembled from its SSE chunks */
struct openai_stream;
int openai_stream_new(struct openai_stream **ret, heal_llm_response *resp, size_t max_bytes,
                      heal_error *err);
/* Tell @req's on_delta (if any) each text fragment, as HTTP attempt @attempt (from 1). */
void openai_stream_notify(struct openai_stream *s, const heal_llm_request *req, unsigned attempt);
int openai_stream_feed(const char *data, size_t len, void *userdata);
int openai_stream_finish(struct openai_stream *s, heal_error *err);
void openai_stream_free(struct openai_stream *s);

/* cassette.c: record/replay */
struct cassette_entry {
        char *key;
        char *request; /* canonical JSON */
        json_t *response;
};
struct cassette {
        struct cassette_entry *entries;
        size_t n;
};
int cassette_key(char **ret_canonical, char ret_key[33], const heal_llm_request *req,
                 heal_error *err);
int cassette_load(struct cassette *c, const char *path, heal_error *err);
void cassette_release(struct cassette *c);
int cassette_lookup(const struct cassette *c, const heal_llm_request *req, json_t **ret,
                    heal_error *err);
int cassette_append(const char *path, const heal_llm_request *req, const heal_llm_response *resp,
                    heal_error *err);
int cassette_response(heal_llm_response *resp, json_t *o, heal_error *err);
json_t *cassette_response_json(const heal_llm_response *resp);

/* budget.c */
struct llm_price {
        const char *model; /* a prefix of model names */
        double input, output, cached;
};
struct llm_budget_state {
        heal_llm_budget limits;
        heal_llm_tally tally;
        struct llm_price *prices; /* overrides, checked before the built-in table */
        size_t n_prices;
};
const struct llm_price *budget_price(const struct llm_budget_state *b, const char *model);
int budget_set_price(struct llm_budget_state *b, const char *model, double in, double out,
                     double cached);
void budget_release(struct llm_budget_state *b);
int budget_check(const struct llm_budget_state *b, heal_error *err);
void budget_add(struct llm_budget_state *b, const char *model, const heal_llm_response *r);

/* cache.c: answers on disk, keyed like cassettes */
int cache_get(const char *dir, const heal_llm_request *req, heal_llm_response *ret);
void cache_put(const char *dir, const heal_llm_request *req, const heal_llm_response *resp);

/* retry.c */
bool retry_is_retryable(long status, int r);
uint64_t retry_delay_ms(unsigned attempt, int64_t retry_after_ms, uint64_t cap_ms);

#endif
