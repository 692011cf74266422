/* SPDX-License-Identifier: MIT */
/* The SSE parser against the wire details providers actually send. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "llm/sse.h"

/* Events rendered as "event|id|data\n" lines, for easy comparison. */
static char got[8192];

static int collect(const sse_event *ev, void *userdata)
{
        size_t n = strlen(got);

        (void)userdata;
        snprintf(got + n, sizeof(got) - n, "%s|%s|%.*s\n", ev->event, ev->id, (int)ev->data_len,
                 ev->data);
        return 0;
}

/* Parse @in in pieces of @step bytes (0: all at once); returns finish()'s value. */
static int parse(const char *in, size_t step, size_t max)
{
        struct sse_parser p;
        size_t len = strlen(in);
        int r = 0;

        got[0] = '\0';
        sse_parser_init(&p, max, collect, NULL);
        for (size_t off = 0; off < len && r == 0; off += step ? step : len)
                r = sse_parser_feed(&p, in + off, step && len - off > step ? step : len - off);
        if (r == 0)
                r = sse_parser_finish(&p);
        sse_parser_release(&p);
        return r;
}

static void expect(const char *in, const char *want)
{
        /* The same events whatever the read boundaries. */
        for (size_t step = 0; step <= 7; step++) {
                cr_assert_eq(parse(in, step, 1 << 16), 0, "step %zu", step);
                cr_assert_str_eq(got, want, "step %zu", step);
        }
}

Test(sse, openai_chunks_and_done)
{
        expect("data: {\"a\":1}\n\ndata: {\"a\":2}\n\ndata: [DONE]\n\n",
               "message||{\"a\":1}\nmessage||{\"a\":2}\nmessage||[DONE]\n");
}

Test(sse, comment_lines_are_ignored)
{
        expect(": OPENROUTER PROCESSING\n\ndata: x\n: mid-event comment\n\n", "message||x\n");
}

Test(sse, crlf_cr_and_lf_line_ends)
{
        expect("data: a\r\n\r\ndata: b\r\rdata: c\n\n", "message||a\nmessage||b\nmessage||c\n");
}

Test(sse, anthropic_named_events)
{
        expect("event: message_start\ndata: {\"type\":\"message_start\"}\n\n"
               "event: ping\ndata: {}\n\n"
               "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
               "message_start||{\"type\":\"message_start\"}\nping||{}\n"
               "message_stop||{\"type\":\"message_stop\"}\n");
}

Test(sse, multi_line_data_and_spaces)
{
        expect("data:no-space\ndata:  two-spaces\ndata\n\n", "message||no-space\n two-spaces\n\n");
}

Test(sse, id_retry_and_unknown_fields)
{
        struct sse_parser p;

        expect("id: 7\nfoo: bar\ndata: x\n\ndata: y\n\n", "message|7|x\nmessage|7|y\n");
        sse_parser_init(&p, 1024, NULL, NULL);
        cr_assert_eq(sse_parser_feed(&p, "retry: 1500\nretry: x\n\n", 22), 0);
        cr_assert_eq(p.retry_ms, 1500);
        sse_parser_release(&p);
}

Test(sse, event_names_with_nul_are_ignored)
{
        struct sse_parser p;

        sse_parser_init(&p, 1024, collect, NULL);
        got[0] = '\0';
        cr_assert_eq(sse_parser_feed(&p, "event:\0x\ndata: d\n\n", 19), 0);
        cr_assert_str_eq(got, "message||d\n");
        sse_parser_release(&p);
}

Test(sse, event_without_data_is_not_dispatched)
{
        expect("event: ping\n\ndata: z\n\n", "message||z\n");
}

Test(sse, byte_order_mark_is_skipped)
{
        expect("\xEF\xBB\xBF"
               "data: bom\n\n",
               "message||bom\n");
        /* Not a BOM: the byte belongs to the field name, "\xEF" "data" is no known field. */
        expect("\xEF"
               "data: x\n\ndata: y\n\n",
               "message||y\n");
}

Test(sse, stream_cut_mid_event)
{
        cr_assert_eq(parse("data: {\"a\":1}\n\ndata: {\"partial", 0, 1024), -EPROTO);
        cr_assert_str_eq(got, "message||{\"a\":1}\n", "complete events still arrive");
        cr_assert_eq(parse("data: x\n", 3, 1024), -EPROTO, "no blank line after the last event");
        cr_assert_eq(parse("data: x\n\n", 1, 1024), 0);
}

Test(sse, oversized_line_or_event)
{
        char big[300];

        memset(big, 'a', sizeof(big) - 1);
        big[sizeof(big) - 1] = '\0';
        cr_assert_eq(parse(big, 0, 100), -E2BIG);
        /* Each line fits in 16 bytes, the event's data (22 bytes) does not. */
        cr_assert_eq(parse("data: 0123456789\ndata: 0123456789\n\n", 5, 16), -E2BIG);
}

static int stop_at_second(const sse_event *ev, void *userdata)
{
        int *n = userdata;

        (void)ev;
        return ++*n == 2 ? -ECANCELED : 0;
}

Test(sse, callback_can_stop)
{
        struct sse_parser p;
        int n = 0;

        sse_parser_init(&p, 1024, stop_at_second, &n);
        cr_assert_eq(sse_parser_feed(&p, "data: 1\n\ndata: 2\n\ndata: 3\n\n", 27), -ECANCELED);
        cr_assert_eq(n, 2);
        sse_parser_release(&p);
}
