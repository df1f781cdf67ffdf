// SPDX-License-Identifier: GPL-2.0
/* The loaded modules, for the MODULES section of kjit.data: each one's name,
 * where its core (text and data) starts and how long it is (/proc/modules),
 * and the GNU build id of the file it was loaded from (its notes in sysfs),
 * so that a report finds the module's debug file and names its code
 * module-relative. */
#include <fcntl.h>
#include <stdio.h>
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

void loaded_modules(struct buf *out)
{
  FILE *f = fopen("/proc/modules", "r");
  if (!f) return;
  char line[4096];
  while (fgets(line, sizeof line, f)) {
    char name[64], state[16], path[128], bid[129], text[256];
    unsigned long long size, base;
    /* name size refcount users state address [taint] */
    if (sscanf(line, "%63s %llu %*s %*s %15s %llx", name, &size, state, &base) != 4) continue;
    if (!base || !size) continue;   /* addresses hidden (kptr_restrict): nothing to map */
    snprintf(path, sizeof path, "/sys/module/%s/notes/.note.gnu.build-id", name);
    note_build_id(path, bid, sizeof bid);
    int n = snprintf(text, sizeof text, "%s 0x%llx %llu %s\n", name, base, size, bid[0] ? bid : "-");
    if (n > 0 && (size_t)n < sizeof text) buf_put(out, text, (size_t)n);
  }
  fclose(f);
}
