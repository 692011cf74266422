/* SPDX-License-Identifier: MIT */
#ifndef HEAL_BUF_H
#define HEAL_BUF_H

#include <stdbool.h>
#include <stddef.h>

/**
 * struct heal_buf - A growable byte buffer with a hard size cap.
 * @data: NUL-terminated contents (NULL until the first append); owned by the buffer.
 * @len:  bytes stored, excluding the terminating NUL.
 * @cap:  bytes allocated.
 * @max:  most bytes the buffer will ever hold; appends past it are cut and flagged.
 * @truncated: true once an append did not fit.
 *
 * Every buffer filled by a child process, the network or a model is a heal_buf, so that a
 * hostile producer cannot grow heal's memory without bound.
 * See: curl's dynbuf (curl/curl docs/internals/DYNBUF.md).
 */
typedef struct heal_buf {
        char *data;
        size_t len;
        size_t cap;
        size_t max;
        bool truncated;
} heal_buf;

#define HEAL_BUF_INIT(max_bytes) \
 {                               \
  NULL, 0, 0, (max_bytes), false \
 }

/**
 * heal_buf_init() - Prepare an empty buffer.
 * @buf: the buffer to initialise; must not hold memory (use heal_buf_release() first).
 * @max: cap in bytes; 0 means the buffer stores nothing (only counts truncation).
 */
void heal_buf_init(heal_buf *buf, size_t max);

/**
 * heal_buf_append() - Append @len bytes of @data, as much as fits under the cap.
 * @buf:  the buffer.
 * @data: bytes to copy; may contain NULs.
 * @len:  number of bytes.
 *
 * Return: 0 when everything was stored; -E2BIG when the cap cut the data (what fits was
 *         stored and @buf->truncated is set); -ENOMEM when memory ran out (nothing stored).
 */
int heal_buf_append(heal_buf *buf, const void *data, size_t len);

/**
 * heal_buf_puts() - Append a NUL-terminated string; see heal_buf_append().
 */
int heal_buf_puts(heal_buf *buf, const char *s);

/**
 * heal_buf_printf() - Append printf(3)-formatted text; see heal_buf_append().
 */
int heal_buf_printf(heal_buf *buf, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/**
 * heal_buf_detach() - Take the contents out of @buf.
 * @buf:     the buffer; left empty (same cap) afterwards.
 * @ret_len: optional; receives the length.
 *
 * Return: the NUL-terminated contents, owned by the caller (free(3)); an empty buffer gives a
 *         newly allocated "" (NULL only when that allocation fails).
 */
char *heal_buf_detach(heal_buf *buf, size_t *ret_len);

/**
 * heal_buf_release() - Free the memory of @buf; it may be reused after heal_buf_init().
 */
void heal_buf_release(heal_buf *buf);

#endif
