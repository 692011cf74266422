/* SPDX-License-Identifier: MIT */
/*
 * Server-sent events, following the WHATWG "event stream interpretation" algorithm: lines end
 * with CRLF, LF or CR (a CRLF may be split across two reads); a line starting with ':' is a
 * comment (OpenRouter sends ": OPENROUTER PROCESSING" while it waits); "field: value" drops one
 * space after the colon; an empty line dispatches the event, unless no data was given.
 */
#include "llm/sse.h"

#include <errno.h>
#include <string.h>

void sse_parser_init(struct sse_parser *p, size_t max_bytes, sse_event_fn fn, void *userdata)
{
        memset(p, 0, sizeof(*p));
        heal_buf_init(&p->line, max_bytes);
        heal_buf_init(&p->data, max_bytes);
        heal_buf_init(&p->event, 256);
        heal_buf_init(&p->id, 256);
        p->fn = fn;
        p->userdata = userdata;
}

void sse_parser_release(struct sse_parser *p)
{
        heal_buf_release(&p->line);
        heal_buf_release(&p->data);
        heal_buf_release(&p->event);
        heal_buf_release(&p->id);
}

static void reset_event(struct sse_parser *p)
{
        p->data.len = 0;
        p->event.len = 0;
        p->pending = false;
        if (p->data.data)
                p->data.data[0] = '\0';
        if (p->event.data)
                p->event.data[0] = '\0';
}

static int dispatch(struct sse_parser *p)
{
        sse_event ev;
        int r = 0;

        if (p->data.len > 0) {
                p->data.data[--p->data.len] = '\0'; /* the '\n' after the last data line */
                ev = (sse_event){
                        .event = p->event.len ? p->event.data : "message",
                        .data = p->data.data,
                        .data_len = p->data.len,
                        .id = p->id.len ? p->id.data : "",
                };
                r = p->fn ? p->fn(&ev, p->userdata) : 0;
        }
        reset_event(p);
        return r;
}

static int set_buf(heal_buf *b, const char *v, size_t len)
{
        b->len = 0;
        b->truncated = false;
        if (len == 0) {
                if (b->data)
                        b->data[0] = '\0';
                return 0;
        }
        return heal_buf_append(b, v, len);
}

static int process_field(struct sse_parser *p, const char *name, size_t nlen, const char *v,
                         size_t vlen)
{
        int r;

        if (nlen == 4 && memcmp(name, "data", 4) == 0) {
                p->pending = true;
                r = heal_buf_append(&p->data, v, vlen);
                return r < 0 ? r : heal_buf_append(&p->data, "\n", 1);
        }
        if (nlen == 5 && memcmp(name, "event", 5) == 0) {
                p->pending = true;
                /* No event name holds NUL: such a value would read as "" to every caller. */
                return memchr(v, '\0', vlen) ? 0 : set_buf(&p->event, v, vlen);
        }
        if (nlen == 2 && memcmp(name, "id", 2) == 0) {
                if (!memchr(v, '\0', vlen)) /* an id holding NUL is ignored */
                        return set_buf(&p->id, v, vlen);
                return 0;
        }
        if (nlen == 5 && memcmp(name, "retry", 5) == 0 && vlen > 0 && vlen <= 9 &&
            strspn(v, "0123456789") >= vlen) {
                unsigned ms = 0;

                for (size_t i = 0; i < vlen; i++)
                        ms = ms * 10 + (unsigned)(v[i] - '0');
                p->retry_ms = ms;
        }
        return 0; /* unknown fields are ignored */
}

static int process_line(struct sse_parser *p, const char *line, size_t len)
{
        const char *colon;
        const char *v;
        size_t vlen;

        if (len == 0)
                return dispatch(p);
        if (line[0] == ':')
                return 0; /* comment */
        colon = memchr(line, ':', len);
        if (!colon)
                return process_field(p, line, len, "", 0);
        v = colon + 1;
        vlen = len - (size_t)(v - line);
        if (vlen > 0 && v[0] == ' ')
                v++, vlen--;
        return process_field(p, line, (size_t)(colon - line), v, vlen);
}

/* Strip a UTF-8 byte order mark at the very start of the stream. */
static size_t skip_bom(struct sse_parser *p, const char *buf, size_t len)
{
        static const char bom[] = "\xEF\xBB\xBF";
        size_t have = p->line.len;

        if (p->started)
                return 0;
        /* Wait until three bytes are known; they sit in p->line meanwhile. */
        if (have + len < 3 && memcmp(bom, p->line.data ? p->line.data : "", have) == 0 &&
            memcmp(bom + have, buf, len) == 0)
                return (size_t)-1;
        p->started = true;
        if (have + len >= 3 && have <= 3 &&
            memcmp(bom, p->line.data ? p->line.data : "", have) == 0 &&
            memcmp(bom + have, buf, 3 - have) == 0) {
                p->line.len = 0;
                return 3 - have;
        }
        return 0;
}

int sse_parser_feed(struct sse_parser *p, const char *buf, size_t len)
{
        size_t skip = skip_bom(p, buf, len), start;
        int r;

        if (skip == (size_t)-1)
                return heal_buf_append(&p->line, buf, len) == -E2BIG ? -E2BIG : 0;
        start = skip;
        for (size_t i = skip; i < len; i++) {
                char c = buf[i];

                if (c != '\n' && c != '\r') {
                        p->after_cr = false;
                        continue;
                }
                if (c == '\n' && p->after_cr && i == start) {
                        /* the LF of a CRLF whose CR ended the previous piece or line */
                        p->after_cr = false;
                        start = i + 1;
                        continue;
                }
                r = heal_buf_append(&p->line, buf + start, i - start);
                if (r < 0)
                        return r == -E2BIG ? -E2BIG : r;
                r = process_line(p, p->line.data ? p->line.data : "", p->line.len);
                p->line.len = 0;
                if (r < 0)
                        return r;
                p->after_cr = c == '\r';
                start = i + 1;
        }
        if (start < len) {
                r = heal_buf_append(&p->line, buf + start, len - start);
                if (r < 0)
                        return r == -E2BIG ? -E2BIG : r;
        }
        return 0;
}

int sse_parser_finish(struct sse_parser *p)
{
        bool cut = p->line.len > 0 || p->pending;

        reset_event(p);
        p->line.len = 0;
        return cut ? -EPROTO : 0;
}
