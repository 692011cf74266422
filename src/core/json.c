/* SPDX-License-Identifier: MIT */
/* JSON strings from bytes that are not always UTF-8 (program output, model answers, paths):
 * invalid sequences and NUL become U+FFFD, so the document stays valid. */
#include "core/json.h"

#include <stdlib.h>
#include <string.h>

/* Length of the valid UTF-8 sequence at @s (RFC 3629), or 0. */
static size_t utf8_seq(const unsigned char *s, size_t left)
{
        size_t n;
        unsigned cp;

        if (s[0] < 0x80)
                return 1;
        if (s[0] >= 0xC2 && s[0] <= 0xDF)
                n = 2, cp = s[0] & 0x1F;
        else if (s[0] >= 0xE0 && s[0] <= 0xEF)
                n = 3, cp = s[0] & 0x0F;
        else if (s[0] >= 0xF0 && s[0] <= 0xF4)
                n = 4, cp = s[0] & 0x07;
        else
                return 0;
        if (n > left)
                return 0;
        for (size_t i = 1; i < n; i++) {
                if ((s[i] & 0xC0) != 0x80)
                        return 0;
                cp = (cp << 6) | (s[i] & 0x3F);
        }
        if ((n == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
            (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
                return 0;
        return n;
}

json_t *json_string_bytes(const char *data, size_t len)
{
        const unsigned char *s = (const unsigned char *)data;
        char *clean;
        size_t o = 0;
        json_t *j;

        clean = malloc(len * 3 + 1);
        if (!clean)
                return NULL;
        for (size_t i = 0; i < len;) {
                size_t n = utf8_seq(s + i, len - i);

                if (n == 0 || s[i] == 0) {
                        memcpy(clean + o, "\xEF\xBF\xBD", 3); /* U+FFFD */
                        o += 3;
                        i++;
                        continue;
                }
                memcpy(clean + o, s + i, n);
                o += n;
                i += n;
        }
        j = json_stringn(clean, o);
        free(clean);
        return j;
}

json_t *json_string_or_null(const char *s)
{
        return s ? json_string_bytes(s, strlen(s)) : json_null();
}
