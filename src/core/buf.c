/* SPDX-License-Identifier: MIT */
#include "heal/buf.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void heal_buf_init(heal_buf *buf, size_t max)
{
        *buf = (heal_buf)HEAL_BUF_INIT(max);
}

static int buf_reserve(heal_buf *buf, size_t need)
{
        size_t cap;
        char *p;

        if (need + 1 <= buf->cap)
                return 0;
        cap = buf->cap ? buf->cap : 256;
        while (cap < need + 1)
                cap = cap > buf->max / 2 + 1 ? buf->max + 1 : cap * 2;
        p = realloc(buf->data, cap);
        if (!p)
                return -ENOMEM;
        buf->data = p;
        buf->cap = cap;
        return 0;
}

int heal_buf_append(heal_buf *buf, const void *data, size_t len)
{
        size_t room = buf->max - buf->len;
        size_t n = len < room ? len : room;
        int r;

        if (n > 0) {
                r = buf_reserve(buf, buf->len + n);
                if (r < 0)
                        return r;
                memcpy(buf->data + buf->len, data, n);
                buf->len += n;
                buf->data[buf->len] = '\0';
        }
        if (n < len) {
                buf->truncated = true;
                return -E2BIG;
        }
        return 0;
}

int heal_buf_puts(heal_buf *buf, const char *s)
{
        return heal_buf_append(buf, s, strlen(s));
}

int heal_buf_printf(heal_buf *buf, const char *fmt, ...)
{
        char small[512];
        va_list ap;
        int n, r;
        char *big;

        va_start(ap, fmt);
        n = vsnprintf(small, sizeof(small), fmt, ap);
        va_end(ap);
        if (n < 0)
                return -EINVAL;
        if ((size_t)n < sizeof(small))
                return heal_buf_append(buf, small, (size_t)n);
        big = malloc((size_t)n + 1);
        if (!big)
                return -ENOMEM;
        va_start(ap, fmt);
        vsnprintf(big, (size_t)n + 1, fmt, ap);
        va_end(ap);
        r = heal_buf_append(buf, big, (size_t)n);
        free(big);
        return r;
}

char *heal_buf_detach(heal_buf *buf, size_t *ret_len)
{
        char *s = buf->data;

        if (!s)
                s = strdup("");
        if (ret_len)
                *ret_len = buf->len;
        buf->data = NULL;
        buf->len = 0;
        buf->cap = 0;
        return s;
}

void heal_buf_release(heal_buf *buf)
{
        free(buf->data);
        buf->data = NULL;
        buf->len = 0;
        buf->cap = 0;
        buf->truncated = false;
}
