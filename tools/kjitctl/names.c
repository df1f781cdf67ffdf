// SPDX-License-Identifier: GPL-2.0
/* A list of function names in the order they were added, with a hash
 * index so that "is it there already" costs one probe: expanding broad
 * globs (`-e '*'`, several overlapping ones) adds tens of thousands of
 * names, each checked against those before it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kjitctl.h"

struct names *names_new(void) { return calloc(1, sizeof(struct names)); }

static void *need(void *p)
{
  if (!p) { fprintf(stderr, "kjitctl: out of memory\n"); exit(1); }
  return p;
}

/* FNV-1a, then mixed (murmur3's finaliser): the index takes the low bits,
 * which FNV alone leaves clustered for names that share a long suffix. */
static size_t name_hash(const char *s)
{
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  h ^= h >> 33;
  return (size_t)h;
}

/* Rebuilds the index (open addressing, names' positions + 1, 0 empty) at
 * twice the names' capacity: at most half full. */
static void index_rebuild(struct names *s)
{
  free(s->index);
  s->index_cap = s->cap * 2;
  s->index = need(calloc(s->index_cap, sizeof *s->index));
  for (size_t i = 0; i < s->n; i++) {
    size_t h = name_hash(s->v[i]) & (s->index_cap - 1);
    while (s->index[h]) h = (h + 1) & (s->index_cap - 1);
    s->index[h] = i + 1;
  }
}

size_t names_find(const struct names *s, const char *name)
{
  if (!s->index_cap) return 0;
  for (size_t h = name_hash(name) & (s->index_cap - 1); s->index[h]; h = (h + 1) & (s->index_cap - 1))
    if (!strcmp(s->v[s->index[h] - 1], name)) return s->index[h];
  return 0;
}

void names_add(struct names *s, const char *name)
{
  if (s->n == s->cap) {
    s->cap = s->cap ? s->cap * 2 : 256;   /* a power of two: the index masks */
    s->v = need(realloc(s->v, s->cap * sizeof *s->v));
    s->v[s->n++] = need(strdup(name));
    index_rebuild(s);
    return;
  }
  s->v[s->n++] = need(strdup(name));
  size_t h = name_hash(name) & (s->index_cap - 1);
  while (s->index[h]) h = (h + 1) & (s->index_cap - 1);
  s->index[h] = s->n;
}

int names_has(const struct names *s, const char *name) { return names_find(s, name) != 0; }

void names_add_new(struct names *s, const char *name)
{
  if (!names_has(s, name)) names_add(s, name);
}

static int str_cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

void names_uniq(struct names *s)
{
  if (!s->n) return;
  qsort(s->v, s->n, sizeof *s->v, str_cmp);
  size_t k = 1;
  for (size_t i = 1; i < s->n; i++) {
    if (!strcmp(s->v[k - 1], s->v[i])) { free(s->v[i]); continue; }
    s->v[k++] = s->v[i];
  }
  s->n = k;
  index_rebuild(s);
}

