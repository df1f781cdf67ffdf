// SPDX-License-Identifier: GPL-2.0
/* The JSON string escaper every kjit tool prints with (json_escape.h):
 * quotes, backslashes, every control character, valid UTF-8 kept, every
 * byte of an invalid sequence U+FFFD.  With --stdin it escapes its input
 * instead (json-escape.sh parses that with Python on random bytes). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "json_escape.h"

static int failed;

static void check(const char *what, const char *in, size_t len, const char *want)
{
  char out[512];
  size_t n = json_format_string(out, sizeof out, in, len);
  if (n != strlen(want) || strcmp(out, want)) {
    printf("FAIL %s: got %s (%zu), want %s\n", what, out, n, want);
    failed = 1;
  }
}

#define CHECK(what, lit, want) check(what, lit, sizeof(lit) - 1, want)

int main(int argc, char **argv)
{
  if (argc > 1 && !strcmp(argv[1], "--stdin")) {
    static char buf[1 << 20];
    size_t n = fread(buf, 1, sizeof buf, stdin);
    json_write_string(stdout, buf, n);
    putchar('\n');
    return 0;
  }
  CHECK("plain", "vfs_read+0x12", "\"vfs_read+0x12\"");
  CHECK("empty", "", "\"\"");
  CHECK("quote and backslash", "a\"b\\c", "\"a\\\"b\\\\c\"");
  CHECK("short escapes", "\b\f\n\r\t", "\"\\b\\f\\n\\r\\t\"");
  CHECK("NUL inside", "a\0b", "\"a\\u0000b\"");
  CHECK("other controls", "\x01\x1f\x7f", "\"\\u0001\\u001f\\u007f\"");
  /* every control character is escaped */
  for (int c = 0; c < 0x20; c++) {
    char in[1] = {(char)c}, out[16];
    json_format_string(out, sizeof out, in, 1);
    if (out[1] != '\\') { printf("FAIL control 0x%02x not escaped: %s\n", c, out); failed = 1; }
  }
  CHECK("UTF-8 kept", "\xc3\xa9\xe2\x82\xac\xf0\x9d\x84\x9e", "\"\xc3\xa9\xe2\x82\xac\xf0\x9d\x84\x9e\"");
  CHECK("lone continuation", "a\x80z", "\"a\\ufffdz\"");
  CHECK("0xff", "\xff", "\"\\ufffd\"");
  CHECK("overlong slash", "\xc0\xaf", "\"\\ufffd\\ufffd\"");
  CHECK("overlong 3 bytes", "\xe0\x80\xaf", "\"\\ufffd\\ufffd\\ufffd\"");
  CHECK("surrogate", "\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\"");
  CHECK("above U+10FFFF", "\xf4\x90\x80\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");
  CHECK("truncated at the end", "x\xe2\x82", "\"x\\ufffd\\ufffd\"");
  CHECK("truncated before ASCII", "\xe2\x82z", "\"\\ufffd\\ufffdz\"");
  CHECK("largest code point", "\xf4\x8f\xbf\xbf", "\"\xf4\x8f\xbf\xbf\"");
  /* a short buffer: terminated, the full length returned */
  char small[6];
  size_t n = json_format_string(small, sizeof small, "abcdefgh", 8);
  if (n != 10 || strcmp(small, "\"abcd")) { printf("FAIL truncation: %s %zu\n", small, n); failed = 1; }
  if (json_format_string(NULL, 0, "a\n", 2) != 5) { printf("FAIL length only\n"); failed = 1; }
  printf("json_escape: %s\n", failed ? "FAIL" : "PASS");
  return failed;
}
