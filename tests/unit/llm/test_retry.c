/* SPDX-License-Identifier: MIT */
/* How long to wait before trying again: Retry-After, the providers' rate-limit reset headers,
 * and backoff with jitter under the cap. */
#include <criterion/criterion.h>
#include <errno.h>

#include "llm/llm-internal.h"

Test(retry, retry_after_seconds_and_http_date)
{
        cr_assert_eq(http_parse_retry_after("7", 0), 7000);
        cr_assert_eq(http_parse_retry_after(" 0", 0), 0);
        cr_assert_eq(http_parse_retry_after("99999999", 0), 86400000, "capped at a day");
        /* Sun, 06 Nov 1994 08:49:37 GMT is 784111777 (RFC 9110's example). */
        cr_assert_eq(http_parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", 784111770), 7000);
        cr_assert_eq(http_parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", 784111790), 0,
                     "a date in the past: now");
        cr_assert_eq(http_parse_retry_after("soon", 0), -1);
}

Test(retry, openai_reset_durations)
{
        cr_assert_eq(http_parse_duration("1s"), 1000);
        cr_assert_eq(http_parse_duration("6m0s"), 360000);
        cr_assert_eq(http_parse_duration("59.5s"), 59500);
        cr_assert_eq(http_parse_duration("20ms"), 20);
        cr_assert_eq(http_parse_duration("1h2m3s"), 3723000);
        cr_assert_eq(http_parse_duration("100h"), 86400000, "capped at a day");
        cr_assert_eq(http_parse_duration(""), -1);
        cr_assert_eq(http_parse_duration("5"), -1, "a number without a unit");
        cr_assert_eq(http_parse_duration("5x"), -1);
        cr_assert_eq(http_parse_duration("-1s"), -1);
}

Test(retry, anthropic_reset_times)
{
        /* 2026-11-29T14:00:00Z is 1795960800. */
        cr_assert_eq(http_parse_rfc3339("2026-11-29T14:00:30Z", 1795960800), 30000);
        cr_assert_eq(http_parse_rfc3339("2026-11-29T14:00:30.750Z", 1795960800), 30000);
        cr_assert_eq(http_parse_rfc3339("2026-11-29T15:00:30+01:00", 1795960800), 30000);
        cr_assert_eq(http_parse_rfc3339("2026-11-29T13:00:30-01:00", 1795960800), 30000);
        cr_assert_eq(http_parse_rfc3339("2026-11-29T14:00:30-01:00", 1795960800), 3630000);
        cr_assert_eq(http_parse_rfc3339("2026-11-29T13:59:00Z", 1795960800), 0, "past: now");
        cr_assert_eq(http_parse_rfc3339("2026-11-29 14:00:30", 1795960800), -1);
        cr_assert_eq(http_parse_rfc3339("2026-11-29T14:00:30", 1795960800), -1, "no zone");
}

Test(retry, what_is_retried)
{
        cr_assert(retry_is_retryable(429, -EAGAIN));
        cr_assert(retry_is_retryable(529, -EAGAIN));
        cr_assert(retry_is_retryable(0, -ECONNRESET));
        cr_assert(retry_is_retryable(200, -EAGAIN), "an overloaded error event mid-stream");
        cr_assert_not(retry_is_retryable(400, -EINVAL));
        cr_assert_not(retry_is_retryable(401, -EACCES));
        cr_assert_not(retry_is_retryable(404, -ENOENT));
        cr_assert_not(retry_is_retryable(200, -EPROTO));
}

Test(retry, delays_follow_the_server_under_the_cap)
{
        cr_assert_eq(retry_delay_ms(0, 1500, 60000), 1500);
        cr_assert_eq(retry_delay_ms(0, 120000, 60000), 60000, "capped");
        for (unsigned a = 0; a < 20; a++)
                cr_assert_leq(retry_delay_ms(a, -1, 8000), 8000);
        for (unsigned i = 0; i < 100; i++)
                cr_assert_leq(retry_delay_ms(0, -1, 60000), 500, "first backoff within 500 ms");
}
