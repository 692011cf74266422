/* SPDX-License-Identifier: MIT */
/*
 * Requests in flight together: every job (one HTTP request and its retries) runs on its own
 * easy handle under one curl multi handle, so N candidates cost one round trip, not N. Each job
 * keeps its own retry clock (backoff or Retry-After) and its own streamed-answer assembler; the
 * budget is checked before every attempt. Everything happens on the calling thread: curl's
 * callbacks, the streams' on_delta, the waits (curl_multi_poll).
 * See: https://curl.se/libcurl/c/libcurl-multi.html, lc.multi_poll(3), lc.multi_info_read(3).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "core/util.h"
#include "llm/llm-internal.h"
#include "llm/stream.h"

uint64_t llm_mono_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

int llm_job_init(struct llm_job *j, const struct llm_provider *wire, const heal_llm_request *req,
                 unsigned n, size_t choice_base)
{
        memset(j, 0, sizeof(*j));
        j->req = *req;
        j->req.n = n;
        j->choice_base = choice_base;
        j->r = wire->encode(&j->body, &j->req, &j->err);
        j->done = j->r < 0;
        return j->r;
}

void llm_job_release(struct llm_job *j)
{
        free(j->body);
        heal_llm_response_release(&j->resp);
        llm_stream_free(j->stream);
        http_headers_free(j->hdrs);
        memset(j, 0, sizeof(*j));
}

/* An idle easy handle (kept for connection reuse), or a new one. */
static CURL *take_handle(heal_llm_client *c)
{
        return c->n_idle ? c->idle[--c->n_idle] : lc.easy_init();
}

static void give_handle(heal_llm_client *c, CURL *h)
{
        if (c->n_idle < LLM_PARALLEL_MAX)
                c->idle[c->n_idle++] = h;
        else
                lc.easy_cleanup(h);
}

static void job_end(struct llm_job *j, int r)
{
        j->r = r;
        j->done = true;
}

static void job_start(heal_llm_client *c, struct llm_job *j)
{
        int r;

        if ((r = budget_check(&c->budget, &j->err)) < 0)
                return job_end(j, r);
        /* A fresh assembler per attempt: a retried stream starts over. */
        if (j->req.stream && (r = llm_stream_new(&j->stream, c->wire, &j->resp,
                                                 c->cfg.max_response_bytes, &j->err)) < 0)
                return job_end(j, r);
        if (j->stream)
                llm_stream_notify(j->stream, &j->req, j->attempts + 1, j->choice_base);
        j->sink = (struct http_sink){ llm_stream_feed, j->stream };
        j->hdrs = http_headers(c->wire, c->api_key, j->req.stream);
        j->curl = take_handle(c);
        if (!j->curl ||
            http_start(j->curl, c->url, j->hdrs, j->body, &c->cfg, j->stream ? &j->sink : NULL,
                       &j->rep) < 0 ||
            lc.easy_setopt(j->curl, CURLOPT_PRIVATE, j) != CURLE_OK ||
            lc.multi_add_handle(c->multi, j->curl) != CURLM_OK) {
                if (j->curl)
                        give_handle(c, j->curl);
                j->curl = NULL;
                return job_end(j, heal_error_set(&j->err, -ENOMEM, "cannot start a request"));
        }
        c->budget.tally.requests++;
        c->running++;
        j->running = true;
}

/* A non-2xx answer: the error quotes the provider's own message. */
static int http_error(const struct http_reply *rep, const char *url, bool keyed, heal_error *err)
{
        char msg[300];
        int code = rep->status == 401 || rep->status == 403   ? -EACCES
                   : rep->status == 404                       ? -ENOENT
                   : rep->status >= 500 || rep->status == 429 ? -EAGAIN
                                                              : -EINVAL;

        llm_error_message(msg, sizeof(msg), rep->body.data ? rep->body.data : "", rep->body.len);
        return heal_error_set(err, code, "'%s' answered HTTP %ld: %s%s", url, rep->status, msg,
                              code != -EACCES ? ""
                              : keyed         ? " (check the API key)"
                                              : " (no API key was sent: set the provider's key)");
}

static int accept_reply(heal_llm_client *c, struct llm_job *j)
{
        const struct http_reply *rep = &j->rep;

        if (rep->streamed) {
                if (rep->request_id[0]) /* else the id the events carried */
                        snprintf(j->resp.request_id, sizeof(j->resp.request_id), "%s",
                                 rep->request_id);
                return llm_stream_finish(j->stream, &j->err);
        }
        if (!strcasestr(rep->content_type, "json"))
                return heal_error_set(&j->err, -EPROTO,
                                      "expected JSON from '%s', got content type '%s': '%.60s'",
                                      c->url, rep->content_type[0] ? rep->content_type : "(none)",
                                      rep->body.data ? rep->body.data : "");
        snprintf(j->resp.request_id, sizeof(j->resp.request_id), "%s", rep->request_id);
        return c->wire->decode(&j->resp, rep->body.data ? rep->body.data : "", rep->body.len,
                               &j->err);
}

/* The attempt's transfer ended with @code: finish the job, or schedule its next attempt. */
static void job_finished(heal_llm_client *c, struct llm_job *j, CURLcode code)
{
        int r = http_done(&j->rep, code, c->url, &j->err);
        bool retryable;
        uint64_t wait_ms;

        lc.multi_remove_handle(c->multi, j->curl);
        give_handle(c, j->curl);
        j->curl = NULL;
        http_headers_free(j->hdrs);
        j->hdrs = NULL;
        c->running--;
        j->running = false;
        j->attempts++;
        j->resp.attempts++;
        if (r == 0 && j->rep.status >= 200 && j->rep.status < 300)
                r = accept_reply(c, j);
        else if (r == 0)
                r = http_error(&j->rep, c->url, c->api_key && *c->api_key, &j->err);
        else if (j->rep.status >= 200 && j->rep.status < 300)
                j->rep.status = 0; /* the transfer broke after the status line */
        llm_stream_free(j->stream);
        j->stream = NULL;
        retryable = r < 0 && retry_is_retryable(j->rep.status, r);
        if (r == 0 || !retryable || j->attempts > c->cfg.max_retries) {
                if (retryable)
                        r = heal_error_prefix(&j->err, r, "gave up after %u attempt%s", j->attempts,
                                              j->attempts == 1 ? "" : "s");
                http_reply_release(&j->rep);
                return job_end(j, r);
        }
        /* Without a Retry-After, a 429 waits for the rate limit's reset when the server said. */
        wait_ms = retry_delay_ms(j->attempts - 1,
                                 j->rep.retry_after_ms >= 0 ? j->rep.retry_after_ms
                                 : j->rep.status == 429     ? j->rep.reset_ms
                                                            : -1,
                                 c->cfg.max_retry_wait_ms);
        http_reply_release(&j->rep);
        heal_error_clear(&j->err);
        j->ready_ms = llm_mono_ms() + wait_ms;
}

/* Start what may start; return when the next waiting job is due (UINT64_MAX: none). */
static uint64_t start_ready(heal_llm_client *c, struct llm_job *jobs, size_t n, size_t *left)
{
        uint64_t now = llm_mono_ms(), next = UINT64_MAX;

        *left = 0;
        for (size_t i = 0; i < n; i++) {
                struct llm_job *j = &jobs[i];

                if (!j->done && !j->running && j->ready_ms <= now && c->running < c->parallel)
                        job_start(c, j);
                else if (!j->done && !j->running && j->ready_ms > now)
                        next = MIN(next, j->ready_ms);
                *left += !j->done;
        }
        return next;
}

/* Hand each finished transfer to its job; return how many finished. */
static size_t drain(heal_llm_client *c)
{
        size_t finished = 0;
        CURLMsg *m;
        int q;

        while ((m = lc.multi_info_read(c->multi, &q)))
                if (m->msg == CURLMSG_DONE) {
                        struct llm_job *j = NULL;

                        lc.easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&j);
                        job_finished(c, j, m->data.result);
                        finished++;
                }
        return finished;
}

void llm_jobs_run(heal_llm_client *c, struct llm_job *jobs, size_t n)
{
        for (;;) {
                size_t left;
                uint64_t next = start_ready(c, jobs, n, &left), now;
                int still;

                if (left == 0)
                        break;
                lc.multi_perform(c->multi, &still);
                if (drain(c) > 0)
                        continue; /* start what waited for a slot or retries at once */
                /* A job waiting for a slot starts when a transfer ends, which wakes the poll; a
                 * job waiting to retry starts when its time comes. */
                now = llm_mono_ms();
                next = next == UINT64_MAX ? 1000 : next > now ? MIN(next - now, 1000) : 0;
                if (c->running || next)
                        lc.multi_poll(c->multi, NULL, 0, (int)next, NULL);
        }
}
