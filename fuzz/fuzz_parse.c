/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target for the number parsers of src/core/parse.h: parse_size(), parse_duration_ms() and
 * parse_uint() (what "--mem 64M", "--timeout 1.5s", "--pids 64" and size= go through).
 *
 * Input: a NUL-terminated copy of the bytes, split at the first newline into two strings; each
 * goes to all three parsers. Checks, besides "no crash, no sanitizer report":
 *   - every return is 0, -EINVAL or -ERANGE, and the output is untouched on failure;
 *   - a reference model of the documented grammar, DIGITS ["." DIGITS] [UNIT], computed here in
 *     128-bit arithmetic, agrees: malformed text is -EINVAL (or -ERANGE when its leading digits
 *     already exceed UINT64_MAX), a value above UINT64_MAX is -ERANGE, and anything else parses
 *     to floor(number * unit) (with more than six fraction digits the result may lie anywhere
 *     between the value of the first six and the exact value);
 *   - plain digits N: parse_uint() gives N, parse_size() gives N, parse_duration_ms() gives
 *     N * 1000 (a bare number is seconds), and N followed by each unit ("k", "KiB", "ms", "h"...)
 *     gives N times the unit, or -ERANGE exactly when that overflows;
 *   - parse_size() ignores case: two parts equal but for case parse alike.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/parse.h"
#include "fuzz.h"

#define SENTINEL UINT64_C(0x5a5a5a5a5a5a5a5a)
#define MICRO    UINT64_C(1000000)

typedef unsigned __int128 u128;

struct unit {
        const char *suffix;
        uint64_t mult;
};

/* parse.h: binary units, K = 1024; suffixes compared without regard to case. */
static const struct unit size_units[] = {
        { "", 1 },
        { "b", 1 },
        { "k", UINT64_C(1) << 10 },
        { "kb", UINT64_C(1) << 10 },
        { "kib", UINT64_C(1) << 10 },
        { "m", UINT64_C(1) << 20 },
        { "mb", UINT64_C(1) << 20 },
        { "mib", UINT64_C(1) << 20 },
        { "g", UINT64_C(1) << 30 },
        { "gb", UINT64_C(1) << 30 },
        { "gib", UINT64_C(1) << 30 },
        { "t", UINT64_C(1) << 40 },
        { "tb", UINT64_C(1) << 40 },
        { "tib", UINT64_C(1) << 40 },
};

/* parse.h: "500ms", "5s", "2m", "1h", and a bare number is seconds (timeout(1)). */
static const struct unit duration_units[] = {
        { "", 1000 }, { "ms", 1 }, { "s", 1000 }, { "m", 60000 }, { "h", 3600000 },
};

/* Spellings tried after plain digits: every case variant parse_size() must take alike. */
static const char *const size_spellings[] = {
        "b",   "B",  "k", "K", "kb",  "KB", "kB", "KiB", "kib", "m",  "M",
        "MiB", "mb", "g", "G", "GiB", "gB", "t",  "T",   "TiB", "tb",
};

#define N_ELEMENTS(a) (sizeof(a) / sizeof((a)[0]))

/*
 * What a correct parser must do with one string. @invalid: -EINVAL, or -ERANGE too when the
 * leading digits alone are above UINT64_MAX (@big: the parser may stop there). Else the exact
 * result lies in [@lo, @hi]: -ERANGE when @lo > UINT64_MAX, success within [lo, hi] when
 * @hi <= UINT64_MAX, and either of the two in between.
 */
struct expect {
        bool invalid;
        bool big;
        u128 lo, hi;
};

static bool is_digit(char c)
{
        return c >= '0' && c <= '9';
}

/* Digits at *@p as a saturating 128-bit value (anything above UINT64_MAX is just "too big"). */
static u128 ref_digits(const char **p)
{
        const u128 cap = (u128)UINT64_MAX + 1;
        u128 v = 0;

        for (; is_digit(**p); (*p)++) {
                v = v * 10 + (u128)(**p - '0');
                if (v > cap)
                        v = cap;
        }
        return v;
}

static struct expect ref_number(const char *s, const struct unit *units, size_t n_units,
                                bool ignore_case)
{
        struct expect e = { .invalid = true };
        uint64_t frac6 = 0, scale = MICRO / 10;
        bool frac_exact = true;
        const struct unit *u = NULL;
        u128 whole;

        if (!is_digit(*s))
                return e;
        whole = ref_digits(&s);
        e.big = whole > UINT64_MAX;
        if (*s == '.') {
                s++;
                if (!is_digit(*s))
                        return e;
                for (; is_digit(*s); s++) {
                        if (scale) {
                                frac6 += (uint64_t)(*s - '0') * scale;
                                scale /= 10;
                        } else if (*s != '0') {
                                frac_exact = false;
                        }
                }
        }
        for (size_t i = 0; i < n_units && !u; i++)
                if ((ignore_case ? strcasecmp(s, units[i].suffix) : strcmp(s, units[i].suffix)) ==
                    0)
                        u = &units[i];
        if (!u)
                return e;
        e.invalid = false;
        /* whole <= 2^64 and mult <= 2^40: no 128-bit overflow. */
        e.lo = whole * u->mult + (u128)frac6 * u->mult / MICRO;
        if (frac_exact)
                e.hi = e.lo;
        else /* the dropped digits add less than one micro-unit */
                e.hi = whole * u->mult + ((u128)(frac6 + 1) * u->mult + MICRO - 1) / MICRO - 1;
        return e;
}

static struct expect ref_uint(const char *s)
{
        struct expect e = { .invalid = true };
        const char *p = s;

        if (!*s)
                return e;
        e.lo = e.hi = ref_digits(&p);
        e.invalid = *p != '\0';
        e.big = e.lo > UINT64_MAX;
        return e;
}

/* Call @fn on @s, check the contract and @want; return its result code, value in *@ret. */
static int check(int (*fn)(const char *, uint64_t *), const char *s, struct expect want,
                 uint64_t *ret)
{
        uint64_t v = SENTINEL;
        int r = fn(s, &v);

        FUZZ_ASSERT(r == 0 || r == -EINVAL || r == -ERANGE);
        if (r < 0)
                FUZZ_ASSERT(v == SENTINEL); /* never clobber an output on failure */
        if (want.invalid)
                FUZZ_ASSERT(r == -EINVAL || (want.big && r == -ERANGE));
        else if (want.lo > UINT64_MAX)
                FUZZ_ASSERT(r == -ERANGE);
        else if (want.hi <= UINT64_MAX)
                FUZZ_ASSERT(r == 0 && v >= want.lo && v <= want.hi);
        else
                FUZZ_ASSERT(r == -ERANGE || (r == 0 && v >= want.lo));
        *ret = v;
        return r;
}

static int check_size(const char *s, uint64_t *ret)
{
        return check(parse_size, s, ref_number(s, size_units, N_ELEMENTS(size_units), true), ret);
}

static int check_duration(const char *s, uint64_t *ret)
{
        return check(parse_duration_ms, s,
                     ref_number(s, duration_units, N_ELEMENTS(duration_units), false), ret);
}

/* @digits followed by @suffix must be @n * @mult, or -ERANGE exactly when that overflows. */
static void check_scaled(int (*fn)(const char *, uint64_t *), const char *digits, size_t len,
                         const char *suffix, uint64_t n, uint64_t mult)
{
        size_t slen = strlen(suffix);
        char *s = malloc(len + slen + 1);
        uint64_t v = SENTINEL, want;
        bool overflow;
        int r;

        if (!s)
                return;
        memcpy(s, digits, len);
        memcpy(s + len, suffix, slen + 1);
        overflow = __builtin_mul_overflow(n, mult, &want);
        r = fn(s, &v);
        if (overflow)
                FUZZ_ASSERT(r == -ERANGE && v == SENTINEL);
        else
                FUZZ_ASSERT(r == 0 && v == want);
        free(s);
}

static void check_part(const char *s, int *ret_size_r, uint64_t *ret_size)
{
        uint64_t n, v;
        size_t len;
        int r;

        *ret_size_r = check_size(s, ret_size);
        (void)check_duration(s, &v);
        r = check(parse_uint, s, ref_uint(s), &n);
        if (r < 0)
                return;

        /* Plain digits: the same number through every parser, and under every unit. */
        len = strlen(s);
        FUZZ_ASSERT(*ret_size_r == 0 && *ret_size == n);
        for (size_t i = 0; i < N_ELEMENTS(size_spellings); i++) {
                const char *suffix = size_spellings[i];
                uint64_t mult = 0;

                for (size_t j = 0; j < N_ELEMENTS(size_units); j++)
                        if (strcasecmp(suffix, size_units[j].suffix) == 0)
                                mult = size_units[j].mult;
                FUZZ_ASSERT(mult != 0);
                check_scaled(parse_size, s, len, suffix, n, mult);
        }
        for (size_t i = 0; i < N_ELEMENTS(duration_units); i++)
                check_scaled(parse_duration_ms, s, len, duration_units[i].suffix, n,
                             duration_units[i].mult);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        uint64_t size_a = 0, size_b = 0;
        int r_a, r_b;
        char *buf, *nl;

        buf = malloc(size + 1);
        if (!buf)
                return 0;
        memcpy(buf, data, size);
        buf[size] = '\0';

        nl = memchr(buf, '\n', size);
        if (nl)
                *nl = '\0';
        check_part(buf, &r_a, &size_a);
        if (nl) {
                check_part(nl + 1, &r_b, &size_b);
                /* Size units ignore case, so the whole string does. */
                if (strcasecmp(buf, nl + 1) == 0)
                        FUZZ_ASSERT(r_a == r_b && (r_a < 0 || size_a == size_b));
        }
        free(buf);
        return 0;
}
