/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target for the mount plan: heal_sandbox_add_mount() (type, target normalisation, option
 * parsing, source resolution) and plan_compile(), which heal_sandbox_run() uses to turn the plan
 * into mount(2) paths and data strings before it clones. Nothing is mounted and no process is
 * started.
 *
 * Input: one entry per line, "TYPE SOURCE TARGET OPT OPT ...", fields separated by single spaces
 * (so two spaces give an empty field); SOURCE "-" and any missing field mean NULL; no OPT means a
 * NULL option list; empty lines are skipped. Bind sources are resolved on the host with
 * realpath(3), so seeds use paths every machine has (/, /usr, /etc, /tmp).
 *
 * Checks, besides "no crash, no leak" (the sandbox is freed at the end):
 *   - a failing call returns a negative errno, records the same code in heal_error, fills
 *     heal_error.msg with a non-empty NUL-terminated message naming the entry's index (and its
 *     target when short), and leaves the plan as it was;
 *   - an accepted entry is normalised: absolute target without "//", "." or ".." components or
 *     a trailing '/', unique in the plan, "/" only for entry 0 (a bind or tmpfs); a bind has an
 *     absolute source; types that take no source have none; an overlay has a lower layer;
 *   - plan_compile() either fails with a message or yields one op per entry whose destination is
 *     the target under /newroot, whose bind source is the source under /oldroot, and whose tmpfs
 *     data carries size= and nr_inodes= exactly as given (or the limits' defaults).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heal/sandbox.h"

#include "fuzz.h"
#include "sandbox/sandbox-internal.h"

#define MAX_INPUT_BYTES (64 * 1024)

/* Fill @err so that a failure that does not write a message (or its NUL) is visible. */
static void error_poison(heal_error *err)
{
        err->code = 0;
        memset(err->msg, 'X', sizeof(err->msg));
}

static void check_error(const heal_error *err, int r)
{
        FUZZ_ASSERT(r < 0 && r >= -4095);
        FUZZ_ASSERT(err->code == r);
        FUZZ_ASSERT(memchr(err->msg, '\0', sizeof(err->msg)) != NULL);
        FUZZ_ASSERT(err->msg[0] != '\0' && err->msg[0] != 'X');
}

static bool str_eq_prefixed(const char *s, const char *prefix, const char *rest)
{
        size_t n = strlen(prefix);

        return strncmp(s, prefix, n) == 0 && strcmp(s + n, rest) == 0;
}

/* true when the comma-separated list @data holds exactly @key=@value as one item. */
static bool has_item(const char *data, const char *key, const char *value)
{
        size_t klen = strlen(key), vlen = strlen(value);

        for (const char *p = data; p;) {
                const char *end = strchrnul(p, ',');

                if ((size_t)(end - p) == klen + 1 + vlen && strncmp(p, key, klen) == 0 &&
                    p[klen] == '=' && strncmp(p + klen + 1, value, vlen) == 0)
                        return true;
                p = *end ? end + 1 : NULL;
        }
        return false;
}

static bool target_is_normal(const char *t)
{
        if (t[0] != '/')
                return false;
        if (strcmp(t, "/") == 0)
                return true;
        if (t[strlen(t) - 1] == '/' || strstr(t, "//"))
                return false;
        for (const char *p = t; p; p = strchr(p + 1, '/')) {
                const char *c = p + 1;
                size_t n = strcspn(c, "/");

                if ((n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
                        return false;
        }
        return true;
}

static void check_entry(const heal_sandbox *sb, size_t idx)
{
        const struct mount_entry *e = &sb->entries[idx];

        FUZZ_ASSERT(e->kind >= 0 && e->kind < _HEAL_MOUNT_TYPE_MAX);
        FUZZ_ASSERT(e->target && target_is_normal(e->target));
        if (idx == 0)
                FUZZ_ASSERT(strcmp(e->target, "/") == 0 &&
                            (e->kind == HEAL_MOUNT_BIND || e->kind == HEAL_MOUNT_TMPFS));
        else
                FUZZ_ASSERT(strcmp(e->target, "/") != 0);
        for (size_t i = 0; i < idx; i++)
                FUZZ_ASSERT(strcmp(sb->entries[i].target, e->target) != 0);
        switch (e->kind) {
        case HEAL_MOUNT_BIND:
                FUZZ_ASSERT(e->source && e->source[0] == '/');
                break;
        case HEAL_MOUNT_OVERLAY:
                FUZZ_ASSERT(!e->source || (e->source[0] == '/' && e->source_is_dir));
                FUZZ_ASSERT(e->source || e->lowerdir);
                FUZZ_ASSERT(!e->workdir || e->upperdir);
                FUZZ_ASSERT(!e->upperdir || e->upperdir[0] == '/');
                break;
        case HEAL_MOUNT_SYMLINK:
                FUZZ_ASSERT(e->source && e->source[0]); /* the link text, kept as given */
                break;
        default:
                FUZZ_ASSERT(!e->source);
                break;
        }
        if (e->kind != HEAL_MOUNT_TMPFS)
                FUZZ_ASSERT(!e->size && !e->nr_inodes && !e->tmpfs_opts);
        if (e->kind != HEAL_MOUNT_OVERLAY)
                FUZZ_ASSERT(!e->lowerdir && !e->upperdir && !e->workdir);
}

/* One line: split in place at each ' ' and hand the fields to heal_sandbox_add_mount(). */
static void add_line(heal_sandbox *sb, char *line)
{
        size_t n_fields = 1, before = sb->n_entries;
        const char *type, *source = NULL, *target = NULL;
        const char **fields;
        heal_error err;
        char want[64];
        int r;

        for (const char *p = line; *p; p++)
                n_fields += *p == ' ';
        fields = calloc(n_fields + 1, sizeof(*fields));
        if (!fields)
                return;
        n_fields = 0;
        for (char *p = line;; p++) {
                char *sp = strchr(p, ' ');

                fields[n_fields++] = p;
                if (!sp)
                        break;
                *sp = '\0';
                p = sp;
        }
        type = fields[0];
        if (n_fields > 1 && strcmp(fields[1], "-") != 0)
                source = fields[1];
        if (n_fields > 2)
                target = fields[2];

        error_poison(&err);
        r = heal_sandbox_add_mount(sb, type, source, target, n_fields > 3 ? fields + 3 : NULL,
                                   &err);
        if (r == 0) {
                FUZZ_ASSERT(sb->n_entries == before + 1);
                check_entry(sb, before);
        } else {
                check_error(&err, r);
                FUZZ_ASSERT(sb->n_entries == before);
                /* "the message names the entry by its index and target" */
                snprintf(want, sizeof(want), "entry %zu ", before);
                FUZZ_ASSERT(r == -ENOMEM || strstr(err.msg, want));
                if (r != -ENOMEM && target && *target && strlen(target) < 64) {
                        char quoted[80];

                        snprintf(quoted, sizeof(quoted), "'%s'", target);
                        FUZZ_ASSERT(strstr(err.msg, quoted));
                }
        }
        free(fields);
}

static void check_compile(const heal_sandbox *sb)
{
        struct plan_compiled pc = { 0 };
        heal_error err;
        char num[32];
        int r;

        error_poison(&err);
        r = plan_compile(&pc, sb->entries, sb->n_entries, &sb->limits, &err);
        if (r < 0) {
                check_error(&err, r);
                return;
        }
        FUZZ_ASSERT(r == 0 && pc.n_ops == sb->n_entries);
        for (size_t i = 0; i < pc.n_ops; i++) {
                const struct child_op *op = &pc.ops[i];
                const struct mount_entry *e = &sb->entries[i];

                FUZZ_ASSERT(op->kind == e->kind && op->entry == (int)i);
                FUZZ_ASSERT(op->cover < (int)i);
                FUZZ_ASSERT(op->dst && str_eq_prefixed(op->dst, "/newroot",
                                                       strcmp(e->target, "/") ? e->target : ""));
                if (e->kind == HEAL_MOUNT_BIND)
                        FUZZ_ASSERT(op->src &&
                                    str_eq_prefixed(op->src, "/oldroot",
                                                    strcmp(e->source, "/") ? e->source : ""));
                if (e->kind != HEAL_MOUNT_TMPFS)
                        continue;
                FUZZ_ASSERT(op->data);
                if (e->size) {
                        FUZZ_ASSERT(has_item(op->data, "size", e->size));
                } else if (sb->limits.tmpfs_max_bytes) {
                        snprintf(num, sizeof(num), "%llu",
                                 (unsigned long long)sb->limits.tmpfs_max_bytes);
                        FUZZ_ASSERT(has_item(op->data, "size", num));
                }
                if (e->nr_inodes) {
                        FUZZ_ASSERT(has_item(op->data, "nr_inodes", e->nr_inodes));
                } else if (sb->limits.tmpfs_max_inodes) {
                        snprintf(num, sizeof(num), "%llu",
                                 (unsigned long long)sb->limits.tmpfs_max_inodes);
                        FUZZ_ASSERT(has_item(op->data, "nr_inodes", num));
                }
        }
        plan_compiled_release(&pc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        heal_sandbox *sb = NULL;
        char *buf, *line, *next;
        heal_error err;
        int r;

        if (size > MAX_INPUT_BYTES)
                return 0;
        buf = malloc(size + 1);
        if (!buf)
                return 0;
        memcpy(buf, data, size);
        buf[size] = '\0';

        error_poison(&err);
        r = heal_sandbox_new(&sb, &err);
        if (r < 0) {
                check_error(&err, r);
                free(buf);
                return 0;
        }
        /* memchr, not strchr: a NUL byte ends its own line's text, not the rest of the input. */
        for (line = buf; line; line = next) {
                next = memchr(line, '\n', size - (size_t)(line - buf));
                if (next)
                        *next++ = '\0';
                if (*line)
                        add_line(sb, line);
        }
        if (sb->n_entries > 0)
                check_compile(sb);
        sb = heal_sandbox_free(sb);
        FUZZ_ASSERT(!sb);
        free(buf);
        return 0;
}
