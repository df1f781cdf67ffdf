// SPDX-License-Identifier: GPL-2.0
/* Canonical addresses, as recordings hold them: an address in the kernel
 * image (vmlinux) without the KASLR offset, i.e. its link-time address, so
 * recordings of two boots or two machines line up with each other and with
 * the vmlinux; module addresses stay as they run (a recording's MODULES
 * section says where each module was). */
#include <stdio.h>
#include <string.h>
#include "kjitctl.h"

unsigned long long kjit_kaslr_offset;

void kernel_image_range(unsigned long long *lo, unsigned long long *hi)
{
  static unsigned long long text, end;
  static int read_once;
  if (!read_once) {
    read_once = 1;
    FILE *f = fopen("/proc/kallsyms", "r");
    char line[512];
    while (f && fgets(line, sizeof line, f) && !(text && end)) {
      unsigned long long a;
      char type, name[400];
      if (sscanf(line, "%llx %c %399s", &a, &type, name) != 3) continue;
      if (!strcmp(name, "_text")) text = a;
      else if (!strcmp(name, "_end")) end = a;
    }
    if (f) fclose(f);
  }
  *lo = text;
  *hi = end;
}

unsigned long long canonical_addr(unsigned long long a)
{
  unsigned long long lo, hi;
  kernel_image_range(&lo, &hi);
  return a >= lo && a < hi ? a - kjit_kaslr_offset : a;
}
