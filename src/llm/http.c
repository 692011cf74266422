/* SPDX-License-Identifier: MIT */
/* A JSON POST over libcurl with a capped body and the headers the retry policy needs. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "core/util.h"
#include "llm/llm-internal.h"

void http_reply_release(struct http_reply *r)
{
        heal_buf_release(&r->body);
}

/* Returning less than given makes curl stop with CURLE_WRITE_ERROR. */
static size_t on_body(char *data, size_t size, size_t n, void *userdata)
{
        struct http_reply *r = userdata;
        size_t len = size * n;
        long status = 0;

        r->received += len;
        if (r->received > r->body.max) {
                r->body.truncated = true;
                return 0;
        }
        lc.easy_getinfo(r->curl, CURLINFO_RESPONSE_CODE, &status);
        /* Only a successful event stream goes to the sink; errors come as JSON bodies. */
        if (r->sink && status >= 200 && status < 300 &&
            strcasestr(r->content_type, "text/event-stream")) {
                int e = r->sink->fn(data, len, r->sink->userdata);

                r->streamed = true;
                if (e < 0) {
                        r->sink_error = e;
                        return 0;
                }
                return len;
        }
        return heal_buf_append(&r->body, data, len) < 0 ? 0 : len;
}

/* An HTTP-date in any of the three formats recipients must accept (RFC 9110 5.6.7): IMF-fixdate
 * "Sun, 06 Nov 1994 08:49:37 GMT", obsolete RFC 850 "Sunday, 06-Nov-94 08:49:37 GMT" and asctime
 * "Sun Nov  6 08:49:37 1994"; -1 when none fits. */
static time_t http_date(const char *v)
{
        static const char *const formats[] = { "%a, %d %b %Y %H:%M:%S GMT",
                                               "%A, %d-%b-%y %H:%M:%S GMT",
                                               "%a %b %e %H:%M:%S %Y" };

        for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
                struct tm tm = { 0 };
                const char *end = strptime(v, formats[i], &tm);

                if (end && *end == '\0')
                        return timegm(&tm);
        }
        return -1;
}

/* Retry-After: delay-seconds or an HTTP-date (RFC 9110 10.2.3); -1 when unreadable. */
int64_t http_parse_retry_after(const char *value, int64_t now_s)
{
        time_t when;

        while (*value == ' ')
                value++;
        if (isdigit((unsigned char)*value)) {
                long long s = atoll(value);

                return s > 86400 ? 86400000 : s * 1000;
        }
        when = http_date(value);
        if (when < 0)
                return -1;
        return when > now_s ? ((int64_t)when - now_s) * 1000 : 0;
}

int64_t http_parse_duration(const char *v)
{
        double total = 0;
        bool any = false;

        while (*v) {
                char *end;
                double n = strtod(v, &end);

                if (end == v || n < 0)
                        return -1;
                if (strncmp(end, "ms", 2) == 0)
                        total += n, end += 2;
                else if (*end == 'h')
                        total += n * 3600000, end++;
                else if (*end == 'm')
                        total += n * 60000, end++;
                else if (*end == 's')
                        total += n * 1000, end++;
                else
                        return -1;
                any = true;
                v = end;
        }
        if (!any)
                return -1;
        return total > 86400000 ? 86400000 : (int64_t)total;
}

int64_t http_parse_rfc3339(const char *v, int64_t now_s)
{
        struct tm tm = { 0 };
        const char *rest = strptime(v, "%Y-%m-%dT%H:%M:%S", &tm);
        int64_t when;

        if (!rest)
                return -1;
        while (*rest == '.' || isdigit((unsigned char)*rest))
                rest++; /* fractions of a second: the wait is rounded down */
        when = (int64_t)timegm(&tm);
        if ((*rest == '+' || *rest == '-') && isdigit((unsigned char)rest[1])) {
                int hh = 0, mm = 0;

                if (sscanf(rest + 1, "%2d:%2d", &hh, &mm) != 2)
                        return -1;
                when -= (*rest == '+' ? 1 : -1) * (hh * 3600 + mm * 60);
        } else if (*rest != 'Z' && *rest != 'z') {
                return -1;
        }
        if (when <= now_s)
                return 0;
        return when - now_s > 86400 ? 86400000 : (when - now_s) * 1000;
}

/* The rate-limit reset headers: OpenAI's x-ratelimit-reset-{requests,tokens} are durations
 * ("1s", "6m0s", "20ms"), Anthropic's anthropic-ratelimit-*-reset RFC 3339 times. */
static void note_reset(struct http_reply *r, const char *line, const char *v)
{
        int64_t ms = -1;

        if (strncasecmp(line, "x-ratelimit-reset-", 18) == 0)
                ms = http_parse_duration(v);
        else if (strncasecmp(line, "anthropic-ratelimit-", 20) == 0 && strstr(line, "-reset:"))
                ms = http_parse_rfc3339(v, (int64_t)time(NULL));
        if (ms > r->reset_ms)
                r->reset_ms = ms;
}

static void copy_value(char *out, size_t len, const char *v, size_t vlen)
{
        while (vlen > 0 && (v[vlen - 1] == '\r' || v[vlen - 1] == '\n' || v[vlen - 1] == ' '))
                vlen--;
        snprintf(out, len, "%.*s", (int)vlen, v);
}

static size_t on_header(char *line, size_t size, size_t n, void *userdata)
{
        struct http_reply *r = userdata;
        size_t len = size * n;
        char *colon = memchr(line, ':', len);
        char v[128];

        if (!colon)
                return len;
        copy_value(v, sizeof(v), colon + 1 + (colon[1] == ' '),
                   len - (size_t)(colon + 1 - line) - (colon[1] == ' '));
        if (strncasecmp(line, "content-type:", 13) == 0)
                snprintf(r->content_type, sizeof(r->content_type), "%s", v);
        else if (strncasecmp(line, "x-request-id:", 13) == 0 ||
                 strncasecmp(line, "request-id:", 11) == 0)
                snprintf(r->request_id, sizeof(r->request_id), "%s", v);
        else if (strncasecmp(line, "retry-after-ms:", 15) == 0 && isdigit((unsigned char)v[0]))
                r->retry_after_ms = atoll(v);
        else if (strncasecmp(line, "retry-after:", 12) == 0 && r->retry_after_ms < 0)
                r->retry_after_ms = http_parse_retry_after(v, (int64_t)time(NULL));
        else
                note_reset(r, line, v);
        return len;
}

static int map_curl_error(CURLcode c, const struct http_reply *r, heal_error *err, const char *url)
{
        switch (c) {
        case CURLE_WRITE_ERROR:
                if (r->sink_error)
                        return r->sink_error; /* the sink filled @err itself */
                if (r->body.truncated)
                        return heal_error_set(err, -E2BIG,
                                              "the response from '%s' is larger than "
                                              "%zu bytes",
                                              url, r->body.max);
                break;
        case CURLE_COULDNT_CONNECT:
                return heal_error_set(err, -ECONNREFUSED, "cannot connect to '%s'", url);
        case CURLE_COULDNT_RESOLVE_HOST:
                return heal_error_set(err, -EHOSTUNREACH, "cannot resolve the host of '%s'", url);
        case CURLE_OPERATION_TIMEDOUT:
                return heal_error_set(err, -ETIMEDOUT, "'%s' did not answer within %llu ms", url,
                                      (unsigned long long)r->timeout_ms);
        case CURLE_RECV_ERROR:
        case CURLE_SEND_ERROR:
        case CURLE_GOT_NOTHING:
        case CURLE_PARTIAL_FILE:
                return heal_error_set(err, -ECONNRESET, "the connection to '%s' broke: %s", url,
                                      lc.easy_strerror(c));
        default:
                break;
        }
        return heal_error_set(err, -EIO, "request to '%s' failed: %s", url, lc.easy_strerror(c));
}

struct curl_slist *http_headers(const struct llm_provider *p, const char *api_key, bool stream)
{
        struct curl_slist *h = lc.slist_append(NULL, "Content-Type: application/json");

        h = lc.slist_append(h, stream ? "Accept: text/event-stream, application/json"
                                      : "Accept: application/json");
        return p->headers(h, api_key);
}

void http_headers_free(struct curl_slist *h)
{
        for (struct curl_slist *l = h; l; l = l->next)
                explicit_bzero(l->data, strlen(l->data));
        lc.slist_free_all(h);
}

int http_start(CURL *curl, const char *url, struct curl_slist *hdrs, const char *body,
               const heal_llm_config *cfg, const struct http_sink *sink, struct http_reply *out)
{
        *out = (struct http_reply){
                .retry_after_ms = -1,
                .reset_ms = -1,
                .curl = curl,
                .sink = sink,
                .timeout_ms = cfg->timeout_ms,
        };
        heal_buf_init(&out->body, cfg->max_response_bytes);
        lc.easy_reset(curl);
        if (!hdrs || lc.easy_setopt(curl, CURLOPT_URL, url) != CURLE_OK)
                return -ENOMEM;
        lc.easy_setopt(curl, CURLOPT_POSTFIELDS, body);
        lc.easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(body));
        lc.easy_setopt(curl, CURLOPT_HTTPHEADER, hdrs);
        lc.easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body);
        lc.easy_setopt(curl, CURLOPT_WRITEDATA, out);
        lc.easy_setopt(curl, CURLOPT_HEADERFUNCTION, on_header);
        lc.easy_setopt(curl, CURLOPT_HEADERDATA, out);
        lc.easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, (long)cfg->connect_timeout_ms);
        lc.easy_setopt(curl, CURLOPT_TIMEOUT_MS, (long)cfg->timeout_ms);
        lc.easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
        lc.easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L);
        return 0;
}

int http_done(struct http_reply *out, CURLcode code, const char *url, heal_error *err)
{
        if (code != CURLE_OK)
                return map_curl_error(code, out, err, url);
        lc.easy_getinfo(out->curl, CURLINFO_RESPONSE_CODE, &out->status);
        return 0;
}
