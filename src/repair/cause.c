/* SPDX-License-Identifier: MIT */
/* The cause fingerprint and the message templates it is made of (see fingerprint.c). */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "heal/buf.h"

#include "core/util.h"
#include "repair/repair-internal.h"

static bool ident_start(unsigned char c)
{
        return isalpha(c) || c == '_';
}

static bool ident_char(unsigned char c)
{
        return isalnum(c) || c == '_' || c == '.';
}

/* Is the word @w (@n bytes) an identifier of @code? */
static bool in_code(const char *code, const char *w, size_t n)
{
        for (const char *p = code; (p = memmem(p, strlen(p), w, n)); p++)
                if ((p == code || (!isalnum((unsigned char)p[-1]) && p[-1] != '_')) &&
                    !isalnum((unsigned char)p[n]) && p[n] != '_')
                        return true;
        return false;
}

static int cmp_str(const void *a, const void *b)
{
        return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool looks_like_code(const char *w, size_t n)
{
        for (size_t i = 0; i < n; i++)
                if (w[i] == '.' || w[i] == '_' || isdigit((unsigned char)w[i]) ||
                    (i > 0 && isupper((unsigned char)w[i])))
                        return true;
        return false;
}

/* Compilers name symbols in set places: "undefined: X", "X declared but not used", "declared and
 * not used: X", "X redeclared in this block", "imported and not used: X". */
static bool names_a_symbol(const char *msg, const char *w, const char *end)
{
        static const char *const before[] = { "undefined: ", "not used: ", "not defined: " };
        static const char *const after[] = { " declared but not used", " declared and not used",
                                             " redeclared", " is not used", " not declared" };

        for (size_t k = 0; k < ELEMENTSOF(before); k++) {
                size_t n = strlen(before[k]);

                if ((size_t)(w - msg) >= n && strncmp(w - n, before[k], n) == 0)
                        return true;
        }
        for (size_t k = 0; k < ELEMENTSOF(after); k++)
                if (starts_with(end, after[k]))
                        return true;
        return false;
}

/* The closing quote for an opening one at @s, or NULL. */
static const char *closing(const char *s, size_t *open_len)
{
        static const char *const pairs[][2] = {
                { "\"", "\"" },
                { "'", "'" },
                { "`", "'" },
                { "`", "`" },
                { "\xe2\x80\x98", "\xe2\x80\x99" },
                { "\xe2\x80\x9c", "\xe2\x80\x9d" },
        };

        for (size_t k = 0; k < ELEMENTSOF(pairs); k++) {
                size_t n = strlen(pairs[k][0]);
                const char *end;

                if (strncmp(s, pairs[k][0], n) != 0)
                        continue;
                for (end = s + n; *end; end++) {
                        if (*end == '\\' && end[1]) {
                                end++;
                                continue;
                        }
                        if (strncmp(end, pairs[k][1], strlen(pairs[k][1])) == 0) {
                                *open_len = n;
                                return end + strlen(pairs[k][1]);
                        }
                }
        }
        return NULL;
}

void message_template(char *out, size_t len, const char *msg, const char *code)
{
        size_t o = 0;

        for (const char *s = msg; *s && o + 4 < len;) {
                size_t open;
                const char *end = closing(s, &open);

                if (end && end - s > (ptrdiff_t)open) {
                        o += (size_t)snprintf(out + o, len - o, "Q");
                        s = end;
                } else if (isdigit((unsigned char)*s)) {
                        while (isalnum((unsigned char)*s) || *s == '.' || *s == '_')
                                s++;
                        o += (size_t)snprintf(out + o, len - o, "N");
                } else if (ident_start((unsigned char)*s)) {
                        const char *w = s;
                        size_t n;

                        while (ident_char((unsigned char)*s))
                                s++;
                        while (s > w + 1 && s[-1] == '.') /* a sentence's full stop */
                                s--;
                        n = (size_t)(s - w);
                        if (looks_like_code(w, n) || (code && in_code(code, w, n)) || *s == '(' ||
                            names_a_symbol(msg, w, s))
                                o += (size_t)snprintf(out + o, len - o, "ID");
                        else
                                o += (size_t)snprintf(out + o, len - o, "%.*s", (int)n, w);
                } else {
                        out[o++] = *s++;
                        out[o] = '\0';
                }
        }
        out[MIN(o, len - 1)] = '\0';
}

/* A race is the pair of functions that touch the memory, in either order: the detector may
 * report it once or twice, as "read / previous write" or the other way round, from run to
 * run. */
static int race_tuple(char **ret, const heal_diag *d)
{
        const char *a = d->function ? d->function : "", *b = "";
        char other[256] = "";

        for (size_t k = 0; k < d->n_notes; k++)
                if (starts_with(d->notes[k], "other access: ")) {
                        const char *f = d->notes[k] + 14, *at = strstr(f, " at ");

                        snprintf(other, sizeof(other), "%.*s", (int)(at ? at - f : (long)strlen(f)),
                                 f);
                        b = other;
                }
        if (strcmp(a, b) > 0) {
                const char *t = a;

                a = b;
                b = t;
        }
        return asprintf(ret, "data_race\t%s\t%s", a, b) < 0 ? -1 : 0;
}

int fingerprint_cause(heal_analysis *a, const heal_analyze_opts *o, heal_error *err)
{
        char **tuples = calloc(a->n_diags + 1, sizeof(*tuples));
        heal_buf b = HEAL_BUF_INIT((size_t)-1);
        size_t n = 0;
        XXH128_hash_t h;

        if (!tuples)
                return heal_error_set(err, -ENOMEM, "out of memory");
        for (size_t i = 0; i < a->n_diags; i++) {
                const heal_diag *d = &a->diags[i];
                char tmpl[1024], fn[256], code[LINE_MAX_PARSED];

                if (d->severity != HEAL_SEVERITY_ERROR)
                        continue;
                if (d->kind == HEAL_DIAG_DATA_RACE) {
                        if (race_tuple(&tuples[n], d) < 0)
                                break;
                        n++;
                        continue;
                }
                if (!source_function(o, d->file, d->line, fn, sizeof(fn), code, sizeof(code)))
                        code[0] = '\0';
                message_template(tmpl, sizeof(tmpl), d->message, code[0] ? code : NULL);
                if (asprintf(&tuples[n], "%s\t%s\t%s\t%s", heal_diag_kind_name(d->kind),
                             d->file ? d->file : "", d->function ? d->function : "", tmpl) < 0)
                        break;
                n++;
        }
        qsort(tuples, n, sizeof(*tuples), cmp_str);
        for (size_t i = 0; i < n; i++)
                if (i == 0 || strcmp(tuples[i], tuples[i - 1]) != 0)
                        heal_buf_puts(&b, tuples[i]), heal_buf_puts(&b, "\n");
        for (size_t i = 0; i < n; i++)
                free(tuples[i]);
        free(tuples);
        h = XXH3_128bits(b.data ? b.data : "", b.len);
        snprintf(a->cause, sizeof(a->cause), "%016llx%016llx", (unsigned long long)h.high64,
                 (unsigned long long)h.low64);
        heal_buf_release(&b);
        return 0;
}
