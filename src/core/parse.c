/* SPDX-License-Identifier: MIT */
#include "core/parse.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <strings.h>

/* *v = *v * 10 + digit, false on overflow. */
static bool mul10_add(uint64_t *v, int digit)
{
        if (*v > UINT64_MAX / 10 || (*v == UINT64_MAX / 10 && (uint64_t)digit > UINT64_MAX % 10))
                return false;
        *v = *v * 10 + (uint64_t)digit;
        return true;
}

/* "12.75" -> 12 and 0.75 scaled to 1e6 (micro-units), without floating point. */
static int parse_decimal(const char **p, uint64_t *ret_int, uint64_t *ret_micro)
{
        const char *s = *p;
        uint64_t v = 0, frac = 0, scale = 100000;

        if (!isdigit((unsigned char)*s))
                return -EINVAL;
        for (; isdigit((unsigned char)*s); s++)
                if (!mul10_add(&v, *s - '0'))
                        return -ERANGE;
        if (*s == '.') {
                s++;
                if (!isdigit((unsigned char)*s))
                        return -EINVAL;
                for (; isdigit((unsigned char)*s); s++) {
                        frac += (uint64_t)(*s - '0') * scale;
                        scale /= 10;
                }
        }
        *p = s;
        *ret_int = v;
        *ret_micro = frac;
        return 0;
}

static int scale_value(uint64_t v, uint64_t micro, uint64_t unit, uint64_t *ret)
{
        unsigned __int128 t =
                (unsigned __int128)v * unit + (unsigned __int128)micro * unit / 1000000;

        if (t > UINT64_MAX)
                return -ERANGE;
        *ret = (uint64_t)t;
        return 0;
}

int parse_size(const char *s, uint64_t *ret_bytes)
{
        static const struct {
                const char *suffix;
                uint64_t unit;
        } units[] = {
                { "", 1 },
                { "b", 1 },
                { "k", 1ULL << 10 },
                { "kb", 1ULL << 10 },
                { "kib", 1ULL << 10 },
                { "m", 1ULL << 20 },
                { "mb", 1ULL << 20 },
                { "mib", 1ULL << 20 },
                { "g", 1ULL << 30 },
                { "gb", 1ULL << 30 },
                { "gib", 1ULL << 30 },
                { "t", 1ULL << 40 },
                { "tb", 1ULL << 40 },
                { "tib", 1ULL << 40 },
        };
        uint64_t v, micro;
        int r;

        if (!s)
                return -EINVAL;
        r = parse_decimal(&s, &v, &micro);
        if (r < 0)
                return r;
        for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
                if (strcasecmp(s, units[i].suffix) == 0)
                        return scale_value(v, micro, units[i].unit, ret_bytes);
        return -EINVAL;
}

int parse_duration_ms(const char *s, uint64_t *ret_ms)
{
        static const struct {
                const char *suffix;
                uint64_t ms;
        } units[] = {
                { "", 1000 }, { "ms", 1 }, { "s", 1000 }, { "m", 60000 }, { "h", 3600000 },
        };
        uint64_t v, micro;
        int r;

        if (!s)
                return -EINVAL;
        r = parse_decimal(&s, &v, &micro);
        if (r < 0)
                return r;
        for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
                if (strcmp(s, units[i].suffix) == 0)
                        return scale_value(v, micro, units[i].ms, ret_ms);
        return -EINVAL;
}

int parse_uint(const char *s, uint64_t *ret)
{
        uint64_t v = 0;

        if (!s || !*s)
                return -EINVAL;
        for (; *s; s++) {
                if (!isdigit((unsigned char)*s))
                        return -EINVAL;
                if (!mul10_add(&v, *s - '0'))
                        return -ERANGE;
        }
        *ret = v;
        return 0;
}
