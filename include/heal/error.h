/* SPDX-License-Identifier: MIT */
#ifndef HEAL_ERROR_H
#define HEAL_ERROR_H

/*
 * Errors in libheal: every function that can fail returns an int, >= 0 on success and -errno on
 * failure, and optionally fills a caller-allocated heal_error with a one-line message naming the
 * cause. Filling an error never allocates, so the out-of-memory path reports like any other.
 * The meaning of each code is listed in docs/error-codes.md.
 */

#include <stdarg.h>

#define HEAL_ERROR_MSG_MAX 512

/**
 * struct heal_error - Where a failure is described for a human.
 * @code: the negative errno the failing function returned; 0 while no error is set.
 * @msg:  NUL-terminated message: lowercase, no trailing period, user data quoted in '...'.
 */
typedef struct heal_error {
        int code;
        char msg[HEAL_ERROR_MSG_MAX];
} heal_error;

#define HEAL_ERROR_INIT \
 {                      \
  0,                    \
  {                     \
   0                    \
  }                     \
 }

/**
 * heal_error_set() - Record a failure in @err and return @code.
 * @err:  optional; when NULL only @code is returned.
 * @code: negative errno; returned unchanged.
 * @fmt:  printf(3) format of the message; truncated to HEAL_ERROR_MSG_MAX - 1 bytes.
 *
 * Context: never allocates; safe on the out-of-memory path.
 * Return: @code, so that "return heal_error_set(err, -EINVAL, ...);" is one line.
 */
int heal_error_set(heal_error *err, int code, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

/**
 * heal_error_prefix() - Add context in front of the message already in @err.
 * @err:  optional; when NULL only @code is returned.
 * @code: negative errno to record and return.
 * @fmt:  printf(3) format of the prefix; ": " separates it from the old message.
 *
 * When @err holds no message yet, the prefix becomes the message, followed by strerror(-@code).
 *
 * Context: never allocates.
 * Return: @code.
 * See: crun's crun_error_wrap() in containers/crun src/libcrun/error.c.
 */
int heal_error_prefix(heal_error *err, int code, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

/**
 * heal_error_clear() - Reset @err to "no error".
 * @err: optional.
 */
void heal_error_clear(heal_error *err);

#endif
