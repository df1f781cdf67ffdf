// SPDX-License-Identifier: GPL-2.0
// kjit-sim info CAPTURE [--symbols KALLSYMS] [--log]: what a capture holds;
// with --log also its replay sections (blocks, reads, nondeterministic
// instructions, resumptions after sleeps) in order, each numbered as the
// replay's "blocks matched" and "reads served" count them, so a failed
// replay's divergence can be read next to what the kernel did.
#include <cstdio>
#include <cstring>
#include <string>

#include "capture_file.h"
#include "cli.h"
#include "commands.h"
#include "reference_runner.h"
#include "diff_runner.h"
#include "sim_symbols.h"
#include "replay_log.h"

namespace kjit::sim {

namespace {

template <typename Sym>
int print_replay_log(const Capture &cap, const Sym &sym) {
  ReplayLog rl;
  std::string err = parse_replay_log(cap, &rl);
  if (!err.empty()) {
    fprintf(stderr, "error: %s\n", err.c_str());
    return 2;
  }
  if (!rl.present) {
    printf("replay log: none (a capture without replay sections)\n");
    return 0;
  }
  auto u = [](uint64_t v) { return static_cast<unsigned long long>(v); };
  printf("blocks:   %zu (flags: c = ends in a call, l = cut by the size limit)\n", rl.blocks.size());
  for (size_t i = 0; i < rl.blocks.size(); i++) {
    const LoggedBlock &b = rl.blocks[i];
    printf("  #%zu 0x%llx %u insns%s%s%s\n", i + 1, u(b.pc), b.ninsns, (b.flags & 1) ? " c" : "",
           (b.flags & 2) ? " l" : "", sym(b.pc).c_str());
  }
  printf("reads:    %zu\n", rl.reads.size());
  for (size_t i = 0; i < rl.reads.size(); i++) {
    const LoggedRead &r = rl.reads[i];
    std::string hex;
    char byte[4];
    for (size_t k = r.bytes.size(); k-- > 0;) {
      snprintf(byte, sizeof byte, "%02x", r.bytes[k]);
      hex += byte;
    }
    printf("  #%zu pc 0x%llx%s addr 0x%llx seg %u flags 0x%x %zu bytes 0x%s\n", i + 1, u(r.pc), sym(r.pc).c_str(),
           u(r.addr), r.segment(), r.flags & kReadFlagsMask, r.bytes.size(), hex.c_str());
  }
  printf("nondet:   %zu\n", rl.nondets.size());
  for (size_t i = 0; i < rl.nondets.size(); i++)
    printf("  #%zu pc 0x%llx%s dest 0x%llx\n", i + 1, u(rl.nondets[i].pc), sym(rl.nondets[i].pc).c_str(),
           u(rl.nondets[i].dest));
  printf("resumes:  %zu\n", rl.resumes.size());
  for (size_t i = 0; i < rl.resumes.size(); i++) {
    const LoggedResume &r = rl.resumes[i];
    printf("  #%zu call at 0x%llx%s into 0x%llx%s, on at 0x%llx on CPU %u\n", i + 1, u(r.pc), sym(r.pc).c_str(),
           u(r.target), sym(r.target).c_str(), u(r.ret), r.cpu);
  }
  printf("kernel:   end %s, pid %u, cpu %u\n", end_reason_name(rl.kernel.end), rl.kernel.pid, rl.kernel.cpu);
  return 0;
}

}  // namespace

int cmd_info(int argc, char **argv) {
  std::string path, sym_path;
  bool log = false;
  enum { kSymbols = 1, kLog };
  static const option kOptions[] = {{"symbols", required_argument, nullptr, kSymbols},
                                    {"log", no_argument, nullptr, kLog}, {nullptr, 0, nullptr, 0}};
  for (int o, first = 1; (o = cli_next(argc, argv, "", kOptions, first)) != -1; first = 0) {
    switch (o) {
      case kSymbols: sym_path = optarg; break;
      case kLog: log = true; break;
      default: return 2;  // getopt said what
    }
  }
  if (!cli_one_operand("info", "CAPTURE", argc, argv, &path)) return 2;
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
  // The capture holds the boot's addresses, the symbol list link-time
  // ones: the KASLR section's offset relates them.
  const CaptureKaslr kaslr = capture_kaslr(cap);
  auto sym = [&](uint64_t a) {
    std::string s = syms.symbolize(kaslr.to_link(a));
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
    if (s.type == KJIT_CAPF_KASLR && s.payload.size() == 3 * sizeof(uint64_t)) {
      printf("kaslr:    offset 0x%llx, kernel image 0x%llx-0x%llx; entry in the vmlinux: 0x%llx\n",
             static_cast<unsigned long long>(kaslr.offset), static_cast<unsigned long long>(kaslr.image_lo),
             static_cast<unsigned long long>(kaslr.image_hi), static_cast<unsigned long long>(kaslr.to_link(cap.entry_pc)));
      continue;
    }
    if (s.type == KJIT_CAPF_KERNEL) {
      const CaptureKernel k = capture_kernel(cap);
      if (k.release.empty()) printf("kernel:   (a malformed KERNEL section, %zu bytes)\n", s.payload.size());
      else printf("kernel:   %s, build id %s\n", k.release.c_str(), k.build_id.empty() ? "unknown" : k.build_id.c_str());
      continue;
    }
    if (log && s.type >= kFirstReplaySection && s.type <= kLastReplaySection) continue;
    printf("extra section: type 0x%x, %zu bytes (not interpreted)\n", s.type, s.payload.size());
  }
  return log ? print_replay_log(cap, sym) : 0;
}

}  // namespace kjit::sim
