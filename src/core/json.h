/* SPDX-License-Identifier: MIT */
#ifndef HEAL_CORE_JSON_H
#define HEAL_CORE_JSON_H

#include <jansson.h>
#include <stddef.h>

/* A JSON string of @len bytes at @data, invalid UTF-8 and NUL replaced by U+FFFD (RFC 3629);
 * NULL only when out of memory. */
json_t *json_string_bytes(const char *data, size_t len);

/* json_string_bytes() of a NUL-terminated @s, or JSON null for NULL. */
json_t *json_string_or_null(const char *s);

#endif
