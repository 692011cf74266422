/* SPDX-License-Identifier: MIT */
/* heal_llm_client: one endpoint, one reusable curl handle, the retry loop around each request. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "core/util.h"
#include "llm/llm-internal.h"

struct heal_llm_client {
        heal_llm_config cfg;
        bool replay;
        char *url;
        char *api_key;
        char *record; /* cassette to append answers to, or NULL */
        struct cassette cassette;
        char *cache_dir;
        struct llm_budget_state budget;
        CURL *curl;
};

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;

static void curl_init(void)
{
        curl_global_init(CURL_GLOBAL_DEFAULT);
        srandom((unsigned)time(NULL));
}

static int replay_client_new(heal_llm_client **ret, const heal_llm_config *cfg, heal_error *err)
{
        heal_llm_client *c;
        int r;

        if (!cfg->cassette || !*cfg->cassette)
                return heal_error_set(err, -EINVAL, "the replay provider needs a cassette file");
        c = calloc(1, sizeof(*c));
        if (!c)
                return heal_error_set(err, -ENOMEM, "out of memory");
        c->replay = true;
        r = cassette_load(&c->cassette, cfg->cassette, err);
        if (r < 0) {
                heal_llm_client_free(c);
                return r;
        }
        *ret = c;
        return 0;
}

int heal_llm_client_new(heal_llm_client **ret, const heal_llm_config *cfg, heal_error *err)
{
        heal_llm_client *c;
        size_t n;

        if (!ret || !cfg)
                return heal_error_set(err, -EINVAL, "invalid argument");
        if (cfg->provider && strcmp(cfg->provider, "replay") == 0)
                return replay_client_new(ret, cfg, err);
        if (!cfg->provider || strcmp(cfg->provider, "openai") != 0)
                return heal_error_set(err, -EINVAL, "unknown provider '%s' (known: openai, replay)",
                                      cfg->provider ? cfg->provider : "(null)");
        if (!cfg->base_url || !*cfg->base_url)
                return heal_error_set(err, -EINVAL, "no base URL for the model provider");
        pthread_once(&curl_once, curl_init);
        c = calloc(1, sizeof(*c));
        if (!c)
                return heal_error_set(err, -ENOMEM, "out of memory");
        c->cfg = *cfg;
        n = strlen(cfg->base_url);
        while (n > 0 && cfg->base_url[n - 1] == '/')
                n--;
        if (asprintf(&c->url, "%.*s/chat/completions", (int)n, cfg->base_url) < 0)
                c->url = NULL;
        c->api_key = cfg->api_key ? strdup(cfg->api_key) : NULL;
        c->record = cfg->cassette ? strdup(cfg->cassette) : NULL;
        c->cache_dir = cfg->cache_dir ? strdup(cfg->cache_dir) : NULL;
        c->curl = curl_easy_init();
        if (!c->url || (cfg->api_key && !c->api_key) || (cfg->cassette && !c->record) ||
            (cfg->cache_dir && !c->cache_dir) || !c->curl) {
                heal_llm_client_free(c);
                return heal_error_set(err, -ENOMEM, "out of memory");
        }
        c->cfg.base_url = c->cfg.api_key = c->cfg.provider = c->cfg.cassette = NULL; /* copied */
        c->cfg.cache_dir = NULL;
        *ret = c;
        return 0;
}

heal_llm_client *heal_llm_client_free(heal_llm_client *c)
{
        if (!c)
                return NULL;
        if (c->api_key) {
                explicit_bzero(c->api_key, strlen(c->api_key));
                free(c->api_key);
        }
        free(c->url);
        free(c->record);
        free(c->cache_dir);
        budget_release(&c->budget);
        cassette_release(&c->cassette);
        if (c->curl)
                curl_easy_cleanup(c->curl);
        free(c);
        return NULL;
}

void heal_llm_response_release(heal_llm_response *r)
{
        if (!r)
                return;
        for (size_t i = 0; i < r->n_choices; i++) {
                heal_llm_choice *ch = &r->choices[i];

                free(ch->text);
                for (size_t j = 0; j < ch->n_tool_calls; j++) {
                        free(ch->tool_calls[j].id);
                        free(ch->tool_calls[j].name);
                        free(ch->tool_calls[j].arguments);
                }
                free(ch->tool_calls);
        }
        free(r->choices);
        memset(r, 0, sizeof(*r));
}

/* A non-2xx answer: the error quotes the provider's own message. */
static int http_error(const struct http_reply *rep, const char *url, heal_error *err)
{
        char msg[300];
        int code = rep->status == 401 || rep->status == 403   ? -EACCES
                   : rep->status == 404                       ? -ENOENT
                   : rep->status >= 500 || rep->status == 429 ? -EAGAIN
                                                              : -EINVAL;

        openai_error_message(msg, sizeof(msg), rep->body.data ? rep->body.data : "", rep->body.len);
        return heal_error_set(err, code, "'%s' answered HTTP %ld: %s%s", url, rep->status, msg,
                              code == -EACCES ? " (check the API key)" : "");
}

static int accept_reply(heal_llm_response *resp, const struct http_reply *rep, const char *url,
                        struct openai_stream *stream, heal_error *err)
{
        if (rep->streamed) {
                if (rep->request_id[0]) /* else the id the chunks carried */
                        snprintf(resp->request_id, sizeof(resp->request_id), "%s", rep->request_id);
                return openai_stream_finish(stream, err);
        }
        if (!strcasestr(rep->content_type, "json"))
                return heal_error_set(err, -EPROTO,
                                      "expected JSON from '%s', got content type '%s': '%.60s'",
                                      url, rep->content_type[0] ? rep->content_type : "(none)",
                                      rep->body.data ? rep->body.data : "");
        snprintf(resp->request_id, sizeof(resp->request_id), "%s", rep->request_id);
        return openai_decode(resp, rep->body.data ? rep->body.data : "", rep->body.len, err);
}

static int replay_complete(heal_llm_client *c, const heal_llm_request *req, heal_llm_response *ret,
                           heal_error *err)
{
        heal_llm_response resp = { 0 };
        json_t *recorded;
        int r = cassette_lookup(&c->cassette, req, &recorded, err);

        if (r >= 0)
                r = cassette_response(&resp, recorded, err);
        if (r < 0) {
                heal_llm_response_release(&resp);
                return r;
        }
        *ret = resp;
        return 0;
}

static int http_complete(heal_llm_client *c, const heal_llm_request *req, heal_llm_response *ret,
                         heal_error *err)
{
        heal_llm_response resp = { 0 };
        _cleanup_free_ char *body = NULL;
        int r;

        r = openai_encode(&body, req, err);
        for (unsigned attempt = 0; r >= 0; attempt++) {
                struct openai_stream *stream = NULL;
                struct http_sink sink = { openai_stream_feed, NULL };
                struct http_reply rep;
                uint64_t wait_ms;

                /* A fresh assembler per attempt: a retried stream starts over. Every attempt is
                 * a request the budget pays for: check before sending. */
                if ((r = budget_check(&c->budget, err)) < 0)
                        break;
                if (req->stream &&
                    (r = openai_stream_new(&stream, &resp, c->cfg.max_response_bytes, err)) < 0)
                        break;
                if (stream)
                        openai_stream_notify(stream, req, attempt + 1);
                c->budget.tally.requests++;
                sink.userdata = stream;
                r = http_post_json(c->curl, c->url, c->api_key, body, &c->cfg,
                                   stream ? &sink : NULL, &rep, err);
                resp.attempts++;
                if (r == 0 && rep.status >= 200 && rep.status < 300) {
                        r = accept_reply(&resp, &rep, c->url, stream, err);
                        openai_stream_free(stream);
                        http_reply_release(&rep);
                        break;
                }
                openai_stream_free(stream);
                if (r == 0)
                        r = http_error(&rep, c->url, err);
                if (!retry_is_retryable(rep.status, r) || attempt >= c->cfg.max_retries) {
                        http_reply_release(&rep);
                        if (retry_is_retryable(rep.status, r))
                                r = heal_error_prefix(err, r == -EAGAIN ? -EAGAIN : r,
                                                      "gave up after %u attempts", resp.attempts);
                        break;
                }
                wait_ms = retry_delay_ms(attempt, rep.retry_after_ms, c->cfg.max_retry_wait_ms);
                http_reply_release(&rep);
                nanosleep(&(struct timespec){ .tv_sec = (time_t)(wait_ms / 1000),
                                              .tv_nsec = (long)(wait_ms % 1000) * 1000000 },
                          NULL);
                r = 0;
                heal_error_clear(err);
        }
        if (r >= 0 && c->record)
                r = cassette_append(c->record, req, &resp, err);
        if (r < 0) {
                heal_llm_response_release(&resp);
                return r;
        }
        *ret = resp;
        return 0;
}

static uint64_t mono_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

int heal_llm_complete(heal_llm_client *c, const heal_llm_request *req, heal_llm_response *ret,
                      heal_error *err)
{
        uint64_t start;
        int r;

        if (!c || !req || !ret)
                return heal_error_set(err, -EINVAL, "invalid argument");
        start = mono_ms();
        if (c->replay) {
                r = replay_complete(c, req, ret, err);
                c->budget.tally.cache_hits += r == 0;
        } else if ((r = budget_check(&c->budget, err)) < 0) {
                return r;
        } else if (c->cache_dir && cache_get(c->cache_dir, req, ret) == 0) {
                c->budget.tally.cache_hits++;
        } else {
                r = http_complete(c, req, ret, err);
                if (r == 0) {
                        budget_add(&c->budget, req->model, ret);
                        if (c->cache_dir)
                                cache_put(c->cache_dir, req, ret);
                }
        }
        c->budget.tally.wall_ms += mono_ms() - start;
        return r;
}

void heal_llm_client_set_budget(heal_llm_client *c, const heal_llm_budget *budget)
{
        if (c && budget)
                c->budget.limits = *budget;
}

int heal_llm_client_set_price(heal_llm_client *c, const char *model, double input_per_mtok,
                              double output_per_mtok, double cached_input_per_mtok)
{
        if (!c || !model)
                return -EINVAL;
        return budget_set_price(&c->budget, model, input_per_mtok, output_per_mtok,
                                cached_input_per_mtok);
}

void heal_llm_client_tally(const heal_llm_client *c, heal_llm_tally *ret)
{
        if (c && ret)
                *ret = c->budget.tally;
}
