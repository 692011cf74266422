/* SPDX-License-Identifier: MIT */
#ifndef HEAL_CORE_PARSE_H
#define HEAL_CORE_PARSE_H

#include <stdint.h>

/*
 * parse_size() - "512", "64K", "64k", "64KiB", "64KB", "1.5G" -> bytes (binary units: K = 1024).
 * Return: 0; -EINVAL for empty, negative or malformed text; -ERANGE on overflow.
 */
int parse_size(const char *s, uint64_t *ret_bytes);

/*
 * parse_duration_ms() - "500ms", "5s", "1.5s", "2m", "1h", or a plain number of seconds
 * (like timeout(1)) -> milliseconds.
 * Return: 0; -EINVAL for malformed text; -ERANGE on overflow.
 */
int parse_duration_ms(const char *s, uint64_t *ret_ms);

/*
 * parse_uint() - A plain decimal count ("64").
 * Return: 0; -EINVAL; -ERANGE.
 */
int parse_uint(const char *s, uint64_t *ret);

#endif
