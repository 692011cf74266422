/* SPDX-License-Identifier: MIT */
#ifndef HEAL_LLM_INTERNAL_H
#define HEAL_LLM_INTERNAL_H

#include <curl/curl.h>
#include <jansson.h>
#include <stdint.h>

#include "heal/buf.h"
#include "heal/llm.h"

/* libcurl.c: libcurl's functions, loaded on first use (see there why) */
struct libcurl {
        bool loaded;
        CURLcode (*global_init)(long flags);
        CURL *(*easy_init)(void);
        void (*easy_cleanup)(CURL *h);
        void (*easy_reset)(CURL *h);
        CURLcode (*easy_setopt)(CURL *h, CURLoption opt, ...);
        CURLcode (*easy_getinfo)(CURL *h, CURLINFO info, ...);
        const char *(*easy_strerror)(CURLcode c);
        struct curl_slist *(*slist_append)(struct curl_slist *l, const char *s);
        void (*slist_free_all)(struct curl_slist *l);
        CURLM *(*multi_init)(void);
        CURLMcode (*multi_cleanup)(CURLM *m);
        CURLMcode (*multi_add_handle)(CURLM *m, CURL *h);
        CURLMcode (*multi_remove_handle)(CURLM *m, CURL *h);
        CURLMcode (*multi_perform)(CURLM *m, int *running);
        CURLMcode (*multi_poll)(CURLM *m, struct curl_waitfd *extra, unsigned n, int timeout_ms,
                                int *ret);
        CURLMsg *(*multi_info_read)(CURLM *m, int *left);
};
extern struct libcurl lc;
/* Load libcurl once (and curl_global_init it); 0, or -ENOPKG naming what is missing. */
int libcurl_load(heal_error *err);

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
        int64_t reset_ms;       /* the latest rate-limit reset header, from now; -1: none */
        CURL *curl;
        const struct http_sink *sink;
        uint64_t received;   /* body bytes, streamed or not */
        int sink_error;      /* what the sink returned when it stopped the transfer */
        bool streamed;       /* the body went to the sink */
        uint64_t timeout_ms; /* the whole request's limit, for the message */
};

struct llm_provider;

/* http.c: one POST, started on an easy handle that a multi handle then drives */
int http_start(CURL *curl, const char *url, struct curl_slist *hdrs, const char *body,
               const heal_llm_config *cfg, const struct http_sink *sink, struct http_reply *out);
/* The transfer ended with @code: 0 with out->status set, or the mapped connection error. */
int http_done(struct http_reply *out, CURLcode code, const char *url, heal_error *err);
void http_reply_release(struct http_reply *r);
int64_t http_parse_retry_after(const char *value, int64_t now_s);
/* "6m0s", "1.5s", "20ms", "1h2m" -> ms (capped at a day); -1 when unreadable. */
int64_t http_parse_duration(const char *value);
/* An RFC 3339 time ("2026-11-29T14:00:30Z", "...+01:00") -> ms from @now_s (0 if past); -1 when
 * unreadable. */
int64_t http_parse_rfc3339(const char *value, int64_t now_s);
/* The request's headers: JSON in, @p's authentication and version; NULL when out of memory. */
struct curl_slist *http_headers(const struct llm_provider *p, const char *api_key, bool stream);
/* Wipe (the key may be in it) and free a header list. */
void http_headers_free(struct curl_slist *h);

struct llm_stream;
struct sse_event;

/* A wire format. */
struct llm_provider {
        const char *name;
        const char *path;       /* appended to the base URL */
        const char *end_marker; /* what ends its streams, for the error when one is cut */
        bool native_n;          /* one request can ask for n candidates */
        int (*encode)(char **ret, const heal_llm_request *req, heal_error *err);
        int (*decode)(heal_llm_response *resp, const char *body, size_t len, heal_error *err);
        int (*stream_event)(struct llm_stream *s, const struct sse_event *ev);
        /* Append the authentication and version headers. */
        struct curl_slist *(*headers)(struct curl_slist *h, const char *api_key);
};
extern const struct llm_provider llm_openai, llm_anthropic;

/* openai.c: the Chat Completions wire format */
int openai_encode(char **ret, const heal_llm_request *req, heal_error *err);
int openai_decode(heal_llm_response *resp, const char *body, size_t len, heal_error *err);
/* The provider's own message in an error body ({"error": {"message"}} for both wire formats),
 * else the body's start. */
void llm_error_message(char *out, size_t len, const char *body, size_t body_len);
/* Do tool-call arguments parse as a JSON object? (small models emit broken JSON) */
bool llm_is_json_object(const char *text);
/* openai_stream.c */
int openai_stream_event(struct llm_stream *s, const struct sse_event *ev);

/* anthropic.c, anthropic_stream.c: the Messages API */
int anthropic_encode(char **ret, const heal_llm_request *req, heal_error *err);
int anthropic_decode(heal_llm_response *resp, const char *body, size_t len, heal_error *err);
const char *anthropic_finish_reason(const char *stop_reason);
void anthropic_usage(heal_llm_response *resp, json_t *usage);
int anthropic_stream_event(struct llm_stream *s, const struct sse_event *ev);

/* cassette.c: record/replay */
struct cassette_entry {
        char *key;
        char *request; /* canonical JSON */
        json_t *response;
};
struct cassette {
        struct cassette_entry *entries;
        size_t n;
        char *path; /* for messages */
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
        uint64_t call_start_ms;   /* CLOCK_MONOTONIC start of the call in progress, or 0 */
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

/* client.c, transfer.c */
#define LLM_PARALLEL_MAX 64 /* requests in flight at once, at most */

struct heal_llm_client {
        heal_llm_config cfg;
        const struct llm_provider *wire; /* NULL for replay and exec */
        bool replay;
        char *url;
        char *api_key;
        char *command; /* exec: the command line */
        char *record;  /* cassette to append answers to, or NULL */
        struct cassette cassette;
        char *cache_dir;
        struct llm_budget_state budget;
        CURLM *multi;
        CURL *idle[LLM_PARALLEL_MAX]; /* easy handles kept for connection reuse */
        size_t n_idle;
        unsigned parallel; /* most transfers at once */
        unsigned running;  /* transfers now */
};

/* One HTTP request of a call and its retries. */
struct llm_job {
        heal_llm_request req; /* as sent: a copy whose n may be 1 (one of a split) */
        size_t choice_base;   /* index of its first candidate in the caller's answer */
        char *body;
        heal_llm_response resp;
        heal_error err;
        int r;
        bool done;
        bool running;
        unsigned attempts;
        uint64_t ready_ms; /* when the next attempt may start (CLOCK_MONOTONIC, ms) */
        CURL *curl;
        struct curl_slist *hdrs;
        struct llm_stream *stream;
        struct http_sink sink;
        struct http_reply rep;
};

uint64_t llm_mono_ms(void);
/* Encode @req asking for @n candidates; on failure the job is done with its error. */
int llm_job_init(struct llm_job *j, const struct llm_provider *wire, const heal_llm_request *req,
                 unsigned n, size_t choice_base);
void llm_job_release(struct llm_job *j);
/* Run @jobs until each is done (answered, failed, or out of retries or budget). @jobs must not
 * move meanwhile. */
void llm_jobs_run(heal_llm_client *c, struct llm_job *jobs, size_t n);

/* exec.c: the exec provider */
int exec_complete(heal_llm_client *c, const heal_llm_request *req, heal_llm_response *ret,
                  heal_error *err);

/* retry.c */
bool retry_is_retryable(long status, int r);
uint64_t retry_delay_ms(unsigned attempt, int64_t retry_after_ms, uint64_t cap_ms);

#endif
