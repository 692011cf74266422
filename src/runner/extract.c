/* SPDX-License-Identifier: MIT */
/*
 * The program in a model's answer. Models wrap code in Markdown fences of every shape: tagged
 * or not, the tag in any case or as a file name, tildes, a little indentation, several blocks
 * (the program, then how to run it, then its output), prose around them, and no closing fence
 * when the answer was cut at the token limit; some answer with bare code. Fences follow
 * CommonMark 0.30 section 4.5; which block is the program is decided by language and by
 * whether it is complete (heal/gen.h).
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heal/gen.h"

#include "core/util.h"

#define BLOCKS_MAX 256

enum tag_kind {
        TAG_NONE,  /* untagged */
        TAG_MATCH, /* the language asked for */
        TAG_OTHER, /* another language, or output, or a shell session */
};

struct block {
        const char *start; /* first content line */
        const char *end;   /* end of the last content line */
        unsigned indent;   /* the opening fence's indentation, removed from content lines */
        char tag[32];
        enum tag_kind kind;
        bool closed;
};

struct line {
        const char *s;
        size_t len;  /* without the line end */
        size_t next; /* offset of the next line */
};

static void next_line(struct line *l, const char *text, size_t len, size_t off)
{
        const char *nl = memchr(text + off, '\n', len - off);

        l->s = text + off;
        l->len = nl ? (size_t)(nl - l->s) : len - off;
        l->next = nl ? (size_t)(nl - text) + 1 : len;
        while (l->len && l->s[l->len - 1] == '\r')
                l->len--;
}

/* A fence at the start of @l: its character, length and indentation; false when none. */
static bool fence_at(const struct line *l, char *ret_ch, size_t *ret_n, unsigned *ret_indent)
{
        size_t i = 0, n = 0;
        char ch;

        while (i < l->len && i < 3 && l->s[i] == ' ')
                i++;
        if (i >= l->len || (l->s[i] != '`' && l->s[i] != '~'))
                return false;
        ch = l->s[i];
        while (i + n < l->len && l->s[i + n] == ch)
                n++;
        if (n < 3)
                return false;
        if (ch == '`' && memchr(l->s + i + n, '`', l->len - i - n))
                return false; /* inline code such as ```x``` */
        *ret_ch = ch;
        *ret_n = n;
        *ret_indent = (unsigned)i;
        return true;
}

static bool is_closing(const struct line *l, char ch, size_t n)
{
        char c;
        size_t k;
        unsigned indent;

        if (!fence_at(l, &c, &k, &indent) || c != ch || k < n)
                return false;
        for (size_t i = indent + k; i < l->len; i++)
                if (!isspace((unsigned char)l->s[i]))
                        return false;
        return true;
}

/* The tag: the info string's first word, lowercased, without braces, a leading '.' or a
 * trailing ':' ("```{python}", "```.go", "```go:main.go" -> "go"). */
static void parse_tag(char *tag, size_t size, const char *info, size_t len)
{
        size_t i = 0, o = 0;

        while (i < len && (isspace((unsigned char)info[i]) || info[i] == '{' || info[i] == '.'))
                i++;
        while (i < len && o + 1 < size && !isspace((unsigned char)info[i]) && info[i] != '}' &&
               info[i] != ',' && info[i] != ':' && info[i] != '=')
                tag[o++] = (char)tolower((unsigned char)info[i++]);
        tag[o] = '\0';
}

static bool is_shell(const char *name)
{
        return name && (!strcmp(name, "sh") || !strcmp(name, "bash") || !strcmp(name, "shell"));
}

static enum tag_kind classify(const char *tag, const char *lang)
{
        const char *canon;

        if (!*tag)
                return TAG_NONE;
        canon = heal_runner_lang_canonical(tag);
        if (!canon)
                canon = heal_runner_lang_for_file(tag); /* "main.go" */
        if (canon && !strcmp(canon, lang))
                return TAG_MATCH;
        if (is_shell(lang) && (is_shell(tag) || (canon && is_shell(canon))))
                return TAG_MATCH;
        return TAG_OTHER;
}

/* Every fenced block of @text, at most @max; the count of blocks found (may exceed @max). */
static size_t find_blocks(struct block *b, size_t max, const char *text, size_t len,
                          const char *lang)
{
        size_t off = 0, n = 0;

        while (off < len) {
                struct line l;
                char ch;
                size_t k;
                unsigned indent;
                struct block cur = { 0 };

                next_line(&l, text, len, off);
                off = l.next;
                if (!fence_at(&l, &ch, &k, &indent))
                        continue;
                parse_tag(cur.tag, sizeof(cur.tag), l.s + indent + k, l.len - indent - k);
                cur.kind = classify(cur.tag, lang);
                cur.indent = indent;
                cur.start = cur.end = text + off;
                while (off < len) {
                        next_line(&l, text, len, off);
                        if (is_closing(&l, ch, k)) {
                                cur.closed = true;
                                off = l.next;
                                break;
                        }
                        off = l.next;
                        cur.end = text + off;
                }
                if (n < max)
                        b[n] = cur;
                n++;
        }
        return n;
}

/* "main" followed by '(' as a whole word: a C main function or its declaration. */
static bool has_c_main(const char *s, size_t len)
{
        for (size_t i = 0; i + 4 <= len; i++) {
                size_t j = i + 4;

                if (memcmp(s + i, "main", 4) != 0 ||
                    (i > 0 && (isalnum((unsigned char)s[i - 1]) || s[i - 1] == '_')))
                        continue;
                while (j < len && (s[j] == ' ' || s[j] == '\t'))
                        j++;
                if (j < len && s[j] == '(')
                        return true;
        }
        return false;
}

/* A line of @s that starts, after indentation, with @prefix. */
static bool has_line_prefix(const char *s, size_t len, const char *prefix)
{
        size_t k = strlen(prefix), off = 0;

        while (off < len) {
                struct line l;
                size_t i = 0;

                next_line(&l, s, len, off);
                while (i < l.len && (l.s[i] == ' ' || l.s[i] == '\t'))
                        i++;
                if (l.len - i >= k && memcmp(l.s + i, prefix, k) == 0)
                        return true;
                off = l.next;
        }
        return false;
}

static bool is_complete(const char *s, size_t len, const char *lang)
{
        if (!strcmp(lang, "go"))
                return has_line_prefix(s, len, "package main") && memmem(s, len, "func main()", 11);
        if (!strcmp(lang, "c"))
                return has_c_main(s, len);
        return true;
}

static bool is_blank(const char *s, size_t len)
{
        for (size_t i = 0; i < len; i++)
                if (!isspace((unsigned char)s[i]))
                        return false;
        return true;
}

/* Lines [start, end) with @indent leading spaces removed from each and CRLF made LF. */
static char *copy_lines(const char *start, const char *end, unsigned indent, size_t *ret_len)
{
        size_t len = (size_t)(end - start), off = 0, o = 0;
        char *out = malloc(len + 1);

        if (!out)
                return NULL;
        while (off < len) {
                struct line l;
                size_t skip = 0;

                next_line(&l, start, len, off);
                while (skip < indent && skip < l.len && l.s[skip] == ' ')
                        skip++;
                memcpy(out + o, l.s + skip, l.len - skip);
                o += l.len - skip;
                if (start[l.next - 1] == '\n')
                        out[o++] = '\n';
                off = l.next;
        }
        out[o] = '\0';
        *ret_len = o;
        return out;
}

/* Candidates' rank: complete and tagged, complete, tagged, untagged; 0 for no candidate. */
static int rank(const struct block *b, const char *lang)
{
        size_t len = (size_t)(b->end - b->start);

        if (b->kind == TAG_OTHER || is_blank(b->start, len))
                return 0;
        return 1 + (b->kind == TAG_MATCH) + 2 * is_complete(b->start, len, lang);
}

static int pick(const struct block *b, size_t n, const char *lang)
{
        int best = -1, best_rank = 0;
        size_t best_len = 0;

        for (size_t i = 0; i < n; i++) {
                int r = rank(&b[i], lang);
                size_t len = (size_t)(b[i].end - b[i].start);

                if (r > best_rank || (r && r == best_rank && len >= best_len)) {
                        best = (int)i;
                        best_rank = r;
                        best_len = len;
                }
        }
        return best;
}

/* A sentence rather than code: a capital letter, at least three words, a full stop, colon or
 * exclamation at the end, and none of the characters code is made of. */
static bool is_prose(const char *s, size_t len)
{
        size_t words = 1;

        while (len && isspace((unsigned char)s[len - 1]))
                len--;
        if (!len || s[0] < 'A' || s[0] > 'Z' || !strchr(".:!?", s[len - 1]))
                return false;
        for (size_t i = 0; i < len; i++) {
                if (strchr("()=[]{}\"'`$#<>;|", s[i]))
                        return false;
                words += s[i] == ' ';
        }
        return words >= 3;
}

/* The first line that is not blank. */
static void first_line(struct line *l, const char *text, size_t len)
{
        size_t off = 0;

        do {
                next_line(l, text, len, off);
                off = l->next;
        } while (off < len && is_blank(l->s, l->len));
}

/* Code without fences: Go and C from the first line that starts a program to the last line
 * that starts with '}', the interpreters' whole answer unless it opens with a sentence. */
static bool bare_code(const char *text, size_t len, const char *lang, const char **ret_start,
                      const char **ret_end)
{
        static const char *const go_starts[] = { "package ", NULL };
        static const char *const c_starts[] = { "#include", "#define", "int main", NULL };
        const char *const *starts = !strcmp(lang, "go")  ? go_starts
                                    : !strcmp(lang, "c") ? c_starts
                                                         : NULL;
        const char *start = NULL, *end = NULL;
        size_t off = 0;

        if (!starts) {
                struct line l;

                first_line(&l, text, len);
                *ret_start = text;
                *ret_end = text + len;
                return !is_blank(text, len) && !is_prose(l.s, l.len);
        }
        while (off < len) {
                struct line l;

                next_line(&l, text, len, off);
                for (size_t i = 0; !start && starts[i]; i++)
                        if (l.len >= strlen(starts[i]) &&
                            !memcmp(l.s, starts[i], strlen(starts[i])))
                                start = l.s;
                if (start && l.len && l.s[0] == '}')
                        end = text + l.next;
                off = l.next;
        }
        if (!start || !end || end <= start)
                return false;
        *ret_start = start;
        *ret_end = end;
        return true;
}

static int no_code(heal_error *err, const struct block *b, size_t n, const char *lang)
{
        for (size_t i = 0; i < n; i++)
                if (b[i].kind == TAG_OTHER)
                        return heal_error_set(err, -ENOMSG,
                                              "the answer's code is tagged '%s', not %s: answer "
                                              "with the whole %s program in one ```%s block",
                                              b[i].tag, lang, lang, lang);
        if (n)
                return heal_error_set(err, -ENOMSG,
                                      "the answer's code blocks are empty: answer with the "
                                      "whole %s program in one ```%s block",
                                      lang, lang);
        return heal_error_set(err, -ENOMSG,
                              "the answer holds no code block: answer with the whole %s "
                              "program in one ```%s block",
                              lang, lang);
}

int heal_gen_extract(heal_gen_code *ret, const char *answer, size_t len, const char *lang,
                     heal_error *err)
{
        struct block *blocks;
        heal_gen_code c = { 0 };
        const char *canon = lang ? heal_runner_lang_canonical(lang) : NULL;
        const char *start, *end;
        size_t n;
        int i;

        if (!ret || (!answer && len))
                return heal_error_set(err, -EINVAL, "invalid argument");
        if (!canon)
                return heal_error_set(err, -EINVAL, "unknown language '%s' (known: %s)",
                                      lang ? lang : "(none)", heal_runner_langs());
        blocks = calloc(BLOCKS_MAX, sizeof(*blocks));
        if (!blocks)
                return heal_error_set(err, -ENOMEM, "out of memory");
        n = find_blocks(blocks, BLOCKS_MAX, answer, len, canon);
        c.n_blocks = (unsigned)MIN(n, (size_t)BLOCKS_MAX);
        i = pick(blocks, c.n_blocks, canon);
        if (i >= 0) {
                start = blocks[i].start;
                end = blocks[i].end;
                c.block = (unsigned)i + 1;
                c.closed = blocks[i].closed;
                snprintf(c.tag, sizeof(c.tag), "%s", blocks[i].tag);
                c.code = copy_lines(start, end, blocks[i].indent, &c.len);
        } else if (c.n_blocks == 0 && bare_code(answer, len, canon, &start, &end)) {
                c.closed = true;
                c.code = copy_lines(start, end, 0, &c.len);
        } else {
                int r = no_code(err, blocks, c.n_blocks, canon);

                free(blocks);
                return r;
        }
        free(blocks);
        if (!c.code)
                return heal_error_set(err, -ENOMEM, "out of memory");
        c.complete = is_complete(c.code, c.len, canon);
        *ret = c;
        return 0;
}

void heal_gen_code_release(heal_gen_code *c)
{
        if (!c)
                return;
        free(c->code);
        memset(c, 0, sizeof(*c));
}
