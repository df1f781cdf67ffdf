// SPDX-License-Identifier: GPL-2.0
// kjit-sim info CAPTURE: what a capture holds.
#include <cstdio>
#include <cstring>
#include <string>

#include "capture_file.h"
#include "commands.h"
#include "reference_runner.h"
#include "diff_runner.h"
#include "sim_symbols.h"

namespace kjit::sim {

int cmd_info(int argc, char **argv) {
  std::string path, sym_path;
  for (int i = 0; i < argc; i++) {
    if (strcmp(argv[i], "--symbols") == 0 && i + 1 < argc) {
      sym_path = argv[++i];
    } else if (argv[i][0] != '-' && path.empty()) {
      path = argv[i];
    } else {
      fprintf(stderr, "info: unexpected argument %s\n", argv[i]);
      return 2;
    }
  }
  if (path.empty()) {
    fprintf(stderr, "info: missing CAPTURE\n");
    return 2;
  }
  Capture cap;
  std::string err = load_capture_file(path, &cap);
  if (!err.empty()) {
    fprintf(stderr, "error: %s\n", err.c_str());
    return 2;
  }
  SymbolTable syms;
  if (!sym_path.empty()) {
    err = syms.load_kallsyms(sym_path);
    if (!err.empty()) {
      fprintf(stderr, "error: %s\n", err.c_str());
      return 2;
    }
  }
  auto sym = [&](uint64_t a) {
    std::string s = syms.symbolize(a);
    return s.empty() ? s : " <" + s + ">";
  };
  printf("name:     %s\n", cap.name.empty() ? "(none)" : cap.name.c_str());
  printf("entry:    0x%llx%s: %s\n", static_cast<unsigned long long>(cap.entry_pc), sym(cap.entry_pc).c_str(),
         disassemble_capture(cap, cap.entry_pc).c_str());
  printf("sentinel: 0x%llx\n", static_cast<unsigned long long>(cap.sentinel));
  printf("regions:  %zu\n", cap.regions.size());
  for (const Region &r : cap.regions)
    printf("  0x%016llx-0x%016llx %c%c%c %8zu bytes%s\n", static_cast<unsigned long long>(r.addr),
           static_cast<unsigned long long>(r.end()), (r.perms & kPermR) ? 'r' : '-', (r.perms & kPermW) ? 'w' : '-',
           (r.perms & kPermX) ? 'x' : '-', r.bytes.size(), sym(r.addr).c_str());
  static const char *const kNames[16] = {"rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi",
                                         "r8",  "r9",  "r10", "r11", "r12", "r13", "r14", "r15"};
  printf("registers:\n");
  for (int i = 0; i < 16; i++)
    printf("  %-3s 0x%016llx%s", kNames[i], static_cast<unsigned long long>(cap.regs.gpr[i]), (i % 4 == 3) ? "\n" : "");
  printf("  rip 0x%016llx  rflags 0x%llx  gs_base 0x%llx  fs_base 0x%llx\n",
         static_cast<unsigned long long>(cap.regs.rip), static_cast<unsigned long long>(cap.regs.rflags),
         static_cast<unsigned long long>(cap.regs.gs_base), static_cast<unsigned long long>(cap.regs.fs_base));
  for (const RawSection &s : cap.extra) {
    uint64_t kaslr[3];
    if (s.type == KJIT_CAPF_KASLR && s.payload.size() == sizeof kaslr) {
      memcpy(kaslr, s.payload.data(), sizeof kaslr);
      const bool in_image = cap.entry_pc >= kaslr[1] && cap.entry_pc < kaslr[2];
      printf("kaslr:    offset 0x%llx, kernel image 0x%llx-0x%llx; entry in the vmlinux: 0x%llx\n",
             static_cast<unsigned long long>(kaslr[0]), static_cast<unsigned long long>(kaslr[1]),
             static_cast<unsigned long long>(kaslr[2]),
             static_cast<unsigned long long>(in_image ? cap.entry_pc - kaslr[0] : cap.entry_pc));
      continue;
    }
    printf("extra section: type 0x%x, %zu bytes (not interpreted)\n", s.type, s.payload.size());
  }
  return 0;
}

}  // namespace kjit::sim
