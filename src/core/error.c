/* SPDX-License-Identifier: MIT */
#include "heal/error.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/util.h"

int heal_error_set(heal_error *err, int code, const char *fmt, ...)
{
        va_list ap;

        if (!err)
                return code;
        err->code = code;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
        va_end(ap);
        return code;
}

int heal_error_prefix(heal_error *err, int code, const char *fmt, ...)
{
        char prefix[HEAL_ERROR_MSG_MAX];
        char old[HEAL_ERROR_MSG_MAX];
        va_list ap;

        if (!err)
                return code;
        va_start(ap, fmt);
        vsnprintf(prefix, sizeof(prefix), fmt, ap);
        va_end(ap);
        if (err->msg[0])
                memcpy(old, err->msg, sizeof(old));
        else
                snprintf(old, sizeof(old), "%s", strerror(code < 0 ? -code : code));
        if (snprintf(err->msg, sizeof(err->msg), "%s: %s", prefix, old) < 0)
                err->msg[0] = '\0';
        err->code = code;
        return code;
}

void heal_error_clear(heal_error *err)
{
        if (!err)
                return;
        err->code = 0;
        err->msg[0] = '\0';
}

int str_printf(char *buf, size_t len, const char *fmt, ...)
{
        va_list ap;
        int n;

        va_start(ap, fmt);
        n = vsnprintf(buf, len, fmt, ap);
        va_end(ap);
        if (n < 0)
                return -EINVAL;
        return (size_t)n >= len ? -ENAMETOOLONG : 0;
}
