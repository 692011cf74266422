/* SPDX-License-Identifier: MIT */
/*
 * When to try again, and how long to wait: 429 and 5xx (529 is Anthropic's "overloaded") and
 * broken connections, and a stream the provider ended with "overloaded" (-EAGAIN), are
 * worth another attempt; 4xx are not. Without a Retry-After, exponential
 * backoff with full jitter ("Exponential Backoff And Jitter", AWS Architecture Blog, 2015).
 */
#include <errno.h>
#include <stdlib.h>

#include "llm/llm-internal.h"

bool retry_is_retryable(long status, int r)
{
        if (r == -ECONNREFUSED || r == -ECONNRESET || r == -ETIMEDOUT || r == -EAGAIN)
                return true;
        return status == 429 || status == 500 || status == 502 || status == 503 || status == 504 ||
               status == 529;
}

uint64_t retry_delay_ms(unsigned attempt, int64_t retry_after_ms, uint64_t cap_ms)
{
        uint64_t base = 500ULL << (attempt < 10 ? attempt : 10);

        if (retry_after_ms >= 0)
                return (uint64_t)retry_after_ms < cap_ms ? (uint64_t)retry_after_ms : cap_ms;
        if (base > cap_ms)
                base = cap_ms;
        return base ? (uint64_t)random() % (base + 1) : 0;
}
