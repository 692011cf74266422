/* SPDX-License-Identifier: MIT */
/* Sizes, durations, capped buffers and the error object. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "heal/buf.h"
#include "heal/error.h"

#include "core/parse.h"

struct size_case {
        char text[32];
        int r;
        uint64_t bytes;
};

ParameterizedTestParameters(parse, size)
{
        static struct size_case cases[] = {
                { "0", 0, 0 },
                { "512", 0, 512 },
                { "64K", 0, 64 << 10 },
                { "64k", 0, 64 << 10 },
                { "64KiB", 0, 64 << 10 },
                { "64M", 0, 64ULL << 20 },
                { "1.5G", 0, 3ULL << 29 },
                { "2t", 0, 2ULL << 40 },
                { "16E", -EINVAL, 0 },
                { "18446744073709551615", 0, UINT64_MAX },
                { "18446744073709551616", -ERANGE, 0 },
                { "20000000T", -ERANGE, 0 },
                { "", -EINVAL, 0 },
                { "-5", -EINVAL, 0 },
                { "5 M", -EINVAL, 0 },
                { "M", -EINVAL, 0 },
                { "1.", -EINVAL, 0 },
        };
        return cr_make_param_array(struct size_case, cases, sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct size_case *c, parse, size)
{
        uint64_t v = 12345;
        int r = parse_size(c->text, &v);

        cr_assert_eq(r, c->r, "'%s': %d", c->text, r);
        if (r == 0)
                cr_assert_eq(v, c->bytes, "'%s': %llu", c->text, (unsigned long long)v);
        else
                cr_assert_eq(v, 12345, "failure must not clobber the output");
}

Test(parse, durations)
{
        uint64_t ms;

        cr_assert_eq(parse_duration_ms("500ms", &ms), 0);
        cr_assert_eq(ms, 500);
        cr_assert_eq(parse_duration_ms("5", &ms), 0);
        cr_assert_eq(ms, 5000);
        cr_assert_eq(parse_duration_ms("1.5s", &ms), 0);
        cr_assert_eq(ms, 1500);
        cr_assert_eq(parse_duration_ms("2m", &ms), 0);
        cr_assert_eq(ms, 120000);
        cr_assert_eq(parse_duration_ms("1h", &ms), 0);
        cr_assert_eq(ms, 3600000);
        cr_assert_eq(parse_duration_ms("5x", &ms), -EINVAL);
        cr_assert_eq(parse_duration_ms("s", &ms), -EINVAL);
        cr_assert_eq(parse_duration_ms("99999999999999999999", &ms), -ERANGE);
        cr_assert_eq(parse_uint("42", &ms), 0);
        cr_assert_eq(ms, 42);
        cr_assert_eq(parse_uint("4 2", &ms), -EINVAL);
        cr_assert_eq(parse_uint("", &ms), -EINVAL);
}

Test(buf, cap_cuts_and_flags)
{
        heal_buf b = HEAL_BUF_INIT(10);
        size_t len;
        char *s;

        cr_assert_eq(heal_buf_puts(&b, "hello"), 0);
        cr_assert_eq(heal_buf_append(&b, " world!", 7), -E2BIG);
        cr_assert(b.truncated);
        cr_assert_eq(b.len, 10);
        cr_assert_str_eq(b.data, "hello worl");
        cr_assert_eq(heal_buf_printf(&b, "%d", 7), -E2BIG);
        s = heal_buf_detach(&b, &len);
        cr_assert_str_eq(s, "hello worl");
        cr_assert_eq(len, 10);
        free(s);
        s = heal_buf_detach(&b, &len);
        cr_assert_str_eq(s, "");
        free(s);
        heal_buf_release(&b);
}

Test(buf, large_printf_and_binary)
{
        heal_buf b = HEAL_BUF_INIT(1 << 20);
        char big[2000];

        memset(big, 'x', sizeof(big) - 1);
        big[sizeof(big) - 1] = '\0';
        cr_assert_eq(heal_buf_printf(&b, "%s%s", big, big), 0);
        cr_assert_eq(b.len, 2 * (sizeof(big) - 1));
        cr_assert_eq(heal_buf_append(&b, "\0\1", 2), 0);
        cr_assert_eq(b.len, 2 * (sizeof(big) - 1) + 2);
        heal_buf_release(&b);
}

Test(error, set_prefix_clear)
{
        heal_error e = HEAL_ERROR_INIT;

        cr_assert_eq(heal_error_set(&e, -EINVAL, "bad '%s'", "x"), -EINVAL);
        cr_assert_str_eq(e.msg, "bad 'x'");
        cr_assert_eq(heal_error_prefix(&e, -EINVAL, "entry %d", 3), -EINVAL);
        cr_assert_str_eq(e.msg, "entry 3: bad 'x'");
        heal_error_clear(&e);
        cr_assert_eq(e.code, 0);
        cr_assert_eq(heal_error_prefix(&e, -ENOENT, "file"), -ENOENT);
        cr_assert_str_eq(e.msg, "file: No such file or directory");
        cr_assert_eq(heal_error_set(NULL, -EIO, "ignored"), -EIO);
}
