// SPDX-License-Identifier: GPL-2.0
/* The loaded modules, for the MODULES section of kjit.data: each one's name,
 * where its text starts and how far it may reach (/proc/modules),
 * and the GNU build id of the file it was loaded from (its notes in sysfs),
 * so that a report finds the module's debug file and names its code
 * module-relative. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "kjitctl.h"

void note_build_id(const char *path, char *hex, size_t len)
{
  unsigned char buf[4096];
  hex[0] = 0;
  int f = open(path, O_RDONLY);
  if (f < 0) return;
  ssize_t n = read(f, buf, sizeof buf);
  close(f);
  for (ssize_t off = 0; n > 0 && off + 12 <= n;) {
    uint32_t namesz, descsz, type;
    memcpy(&namesz, buf + off, 4); memcpy(&descsz, buf + off + 4, 4); memcpy(&type, buf + off + 8, 4);
    size_t name_off = off + 12, desc_off = name_off + ((namesz + 3) & ~3u);
    if (namesz > 256 || descsz > 1024 || desc_off + descsz > (size_t)n) return;
    if (type == 3 && namesz == 4 && !memcmp(buf + name_off, "GNU", 4)) {
      for (uint32_t i = 0; i < descsz && 2 * i + 3 <= len; i++) sprintf(hex + 2 * i, "%02x", buf[desc_off + i]);
      return;
    }
    off = desc_off + ((descsz + 3) & ~3u);
  }
}

struct loaded_module {
  char name[64], bid[129];
  unsigned long long base, size;
};

static int by_base(const void *a, const void *b)
{
  const struct loaded_module *x = a, *y = b;
  return x->base < y->base ? -1 : x->base > y->base;
}

/* /proc/modules gives the text base and the size of the whole image.  Where
 * the kernel allocates text, data and read-only data apart (mod->mem[], since
 * 6.4) that size adds regions that are not after the base, and base + size
 * runs into the modules loaded later.  kjit.data maps code addresses only,
 * and a module's text ends before the next module's text starts: each span
 * is cut at the next base. */
void loaded_modules(struct buf *out)
{
  FILE *f = fopen("/proc/modules", "r");
  if (!f) return;
  struct loaded_module *mods = NULL;
  size_t n = 0, cap = 0;
  char line[4096];
  while (fgets(line, sizeof line, f)) {
    struct loaded_module m;
    char state[16], path[128];
    /* name size refcount users state address [taint] */
    if (sscanf(line, "%63s %llu %*s %*s %15s %llx", m.name, &m.size, state, &m.base) != 4) continue;
    if (!m.base || !m.size) continue;   /* addresses hidden (kptr_restrict): nothing to map */
    snprintf(path, sizeof path, "/sys/module/%s/notes/.note.gnu.build-id", m.name);
    note_build_id(path, m.bid, sizeof m.bid);
    if (n == cap) {
      struct loaded_module *grown = realloc(mods, (cap = cap ? 2 * cap : 64) * sizeof(*mods));
      if (!grown) break;   /* the modules read so far */
      mods = grown;
    }
    mods[n++] = m;
  }
  fclose(f);
  qsort(mods, n, sizeof(*mods), by_base);
  for (size_t i = 0; i < n; i++) {
    char text[256];
    unsigned long long size = mods[i].size;
    if (i + 1 < n && mods[i].base + size > mods[i + 1].base) size = mods[i + 1].base - mods[i].base;
    int k = snprintf(text, sizeof text, "%s 0x%llx %llu %s\n", mods[i].name, mods[i].base, size,
                     mods[i].bid[0] ? mods[i].bid : "-");
    if (k > 0 && (size_t)k < sizeof text) buf_put(out, text, (size_t)k);
  }
  free(mods);
}
