// SPDX-License-Identifier: GPL-2.0
// Test driver of tools/report/debug_find.h: prints the vmlinux found for a
// kernel release and build id (exit 0), or the error kjit-report would
// print (exit 1).   Usage: debug_find_probe RELEASE BUILD_ID
#include <cstdio>
#include <string>

#include "debug_find.h"

int main(int argc, char **argv) {
  if (argc != 3) { fprintf(stderr, "usage: debug_find_probe RELEASE BUILD_ID\n"); return 2; }
  std::string path, err;
  if (!kjit::report::find_vmlinux(argv[1], argv[2], path, err)) { fprintf(stderr, "%s\n", err.c_str()); return 1; }
  printf("%s\n", path.c_str());
  return 0;
}
