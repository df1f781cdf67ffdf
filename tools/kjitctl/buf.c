// SPDX-License-Identifier: GPL-2.0
/* A growing byte buffer: how kjitctl assembles the files it writes
 * (capture files, kjit.data) before writing each at once. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kjitctl.h"

void buf_put(struct buf *b, const void *v, size_t n)
{
  if (b->n + n > b->cap) {
    size_t c = b->cap ? b->cap * 2 : 4096;
    while (c < b->n + n) c *= 2;
    b->p = realloc(b->p, c);
    if (!b->p) { fprintf(stderr, "kjitctl: out of memory\n"); exit(1); }
    b->cap = c;
  }
  memcpy(b->p + b->n, v, n);
  b->n += n;
}

void buf_u32(struct buf *b, uint32_t v) { buf_put(b, &v, 4); }
void buf_u64(struct buf *b, uint64_t v) { buf_put(b, &v, 8); }
