/* SPDX-License-Identifier: GPL-2.0 */
/* JSON strings (RFC 8259) for every JSON the kjit tools print: kjitctl's
 * (C) and kjit-report's (C++) use this one escaper.  Bytes that are not
 * UTF-8 (a stray continuation byte, a truncated or overlong sequence, a
 * surrogate, anything above U+10FFFF) become U+FFFD, one per bad byte, so
 * the output is valid JSON for any input, and the same input always gives
 * the same output. */
#ifndef KJIT_JSON_ESCAPE_H
#define KJIT_JSON_ESCAPE_H

#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The version of the JSON documents the kjit tools print: the field
 * "schema_version" of each (docs/data-format.md, "JSON"). */
#define KJIT_JSON_SCHEMA_VERSION 3

/* Writes `s` (len bytes) as a quoted JSON string to `out`. */
void json_write_string(FILE *out, const char *s, size_t len);

/* The same into buf (always terminated): the length the whole string
 * needs, without the terminator, as snprintf counts. */
size_t json_format_string(char *buf, size_t size, const char *s, size_t len);

#ifdef __cplusplus
}
#endif
#endif
