// SPDX-License-Identifier: GPL-2.0
/* One JSON string escaper (json_escape.h): quotes, backslashes and control
 * characters escaped, valid UTF-8 copied, every other byte U+FFFD. */
#include <string.h>
#include "json_escape.h"

/* An output that counts what it would write and writes what fits. */
struct sink { FILE *f; char *buf; size_t size, n; };

static void put(struct sink *o, const char *p, size_t len)
{
  if (o->f) fwrite(p, 1, len, o->f);
  else
    for (size_t i = 0; i < len; i++, o->n++)
      if (o->n + 1 < o->size) o->buf[o->n] = p[i];
  if (o->f) o->n += len;
}

/* The length of the valid UTF-8 sequence at s (1-4), or 0 when the byte
 * there does not start one (RFC 3629: no overlongs, no surrogates, at
 * most U+10FFFF). */
static size_t utf8_len(const unsigned char *s, size_t left)
{
  unsigned char c = s[0];
  size_t n;
  unsigned lo = 0x80, hi = 0xbf;   /* the allowed range of the second byte */
  if (c < 0x80) return 1;
  if (c >= 0xc2 && c <= 0xdf) n = 2;
  else if (c >= 0xe0 && c <= 0xef) { n = 3; if (c == 0xe0) lo = 0xa0; if (c == 0xed) hi = 0x9f; }
  else if (c >= 0xf0 && c <= 0xf4) { n = 4; if (c == 0xf0) lo = 0x90; if (c == 0xf4) hi = 0x8f; }
  else return 0;
  if (left < n || s[1] < lo || s[1] > hi) return 0;
  for (size_t i = 2; i < n; i++)
    if (s[i] < 0x80 || s[i] > 0xbf) return 0;
  return n;
}

static void escape(struct sink *o, const char *str, size_t len)
{
  const unsigned char *s = (const unsigned char *)str;
  put(o, "\"", 1);
  for (size_t i = 0; i < len;) {
    unsigned char c = s[i];
    char esc[8];
    const char *e = NULL;
    switch (c) {
      case '"': e = "\\\""; break;
      case '\\': e = "\\\\"; break;
      case '\b': e = "\\b"; break;
      case '\f': e = "\\f"; break;
      case '\n': e = "\\n"; break;
      case '\r': e = "\\r"; break;
      case '\t': e = "\\t"; break;
    }
    if (e) { put(o, e, strlen(e)); i++; continue; }
    if (c < 0x20 || c == 0x7f) {   /* DEL is legal JSON; escaped to stay printable */
      snprintf(esc, sizeof esc, "\\u%04x", c);
      put(o, esc, 6);
      i++;
      continue;
    }
    size_t n = utf8_len(s + i, len - i);
    if (!n) { put(o, "\\ufffd", 6); i++; continue; }
    put(o, (const char *)s + i, n);
    i += n;
  }
  put(o, "\"", 1);
}

void json_write_string(FILE *out, const char *s, size_t len)
{
  struct sink o = {out, NULL, 0, 0};
  escape(&o, s, len);
}

size_t json_format_string(char *buf, size_t size, const char *s, size_t len)
{
  struct sink o = {NULL, buf, size, 0};
  escape(&o, s, len);
  if (size) buf[o.n < size ? o.n : size - 1] = 0;
  return o.n;
}
