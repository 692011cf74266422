/* SPDX-License-Identifier: MIT */
/*
 * The SSE parser, differentially: the input parsed in one piece and in pieces whose sizes come
 * from the input's first byte must give the same events, the same error and the same end state.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "llm/sse.h"

struct log {
        char text[1 << 16];
        size_t len;
};

static int record(const sse_event *ev, void *userdata)
{
        struct log *l = userdata;
        size_t need = strlen(ev->event) + strlen(ev->id) + ev->data_len + 3;

        FUZZ_ASSERT(ev->event[0] != '\0');
        FUZZ_ASSERT(strlen(ev->data) <= ev->data_len); /* data may hold NUL, never run past */
        if (l->len + need > sizeof(l->text))
                return 0;
        l->len += (size_t)snprintf(l->text + l->len, sizeof(l->text) - l->len, "%s|%s|", ev->event,
                                   ev->id);
        memcpy(l->text + l->len, ev->data, ev->data_len);
        l->len += ev->data_len;
        l->text[l->len++] = '\n';
        return 0;
}

static int parse(const uint8_t *data, size_t size, size_t step, struct log *l)
{
        struct sse_parser p;
        int r = 0;

        sse_parser_init(&p, 4096, record, l);
        for (size_t off = 0; off < size && r == 0; off += step)
                r = sse_parser_feed(&p, (const char *)data + off,
                                    size - off < step ? size - off : step);
        if (r == 0)
                r = sse_parser_finish(&p);
        FUZZ_ASSERT(r == 0 || r == -EPROTO || r == -E2BIG);
        sse_parser_release(&p);
        return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static struct log whole, pieces;
        size_t step;
        int r1, r2;

        if (size < 1)
                return 0;
        step = (size_t)(data[0] % 16) + 1;
        data++, size--;
        whole.len = pieces.len = 0;
        r1 = parse(data, size, size ? size : 1, &whole);
        r2 = parse(data, size, step, &pieces);
        FUZZ_ASSERT(r1 == r2);
        if (r1 == 0 || r1 == -EPROTO) {
                FUZZ_ASSERT(whole.len == pieces.len);
                FUZZ_ASSERT(memcmp(whole.text, pieces.text, whole.len) == 0);
        }
        return 0;
}
