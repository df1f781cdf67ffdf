/* SPDX-License-Identifier: GPL-2.0 */
// Builds captures programmatically: for tests, and for a harness that runs
// kernel functions from a vmlinux file with chosen arguments.
#ifndef KJIT_SIM_CAPTURE_BUILDER_H
#define KJIT_SIM_CAPTURE_BUILDER_H

#include <cstdint>
#include <string>
#include <vector>

#include "capture_file.h"
#include "elf_loader.h"

namespace kjit::sim {

// An address no kernel uses for code or data and that the simulator's own
// areas (code cache, data window, gates) avoid.
constexpr uint64_t kDefaultSentinel = 0xfffffffff0000000ull;

class CaptureBuilder {
 public:
  CaptureBuilder &add_region(uint64_t addr, std::vector<uint8_t> bytes, uint32_t perms);
  CaptureBuilder &add_zero_region(uint64_t addr, uint64_t size, uint32_t perms);
  // Copies the named allocated sections of `elf` as regions (NOBITS ones as
  // zeros), with permissions from their flags.  Missing names are an error.
  std::string add_elf_sections(const ElfImage &elf,
                               const std::vector<std::string> &names = {".text", ".rodata", ".data"});
  // A read-write stack of `size` bytes below `top`; rsp = top (the state
  // before the call: the runner pushes the sentinel).
  CaptureBuilder &add_stack(uint64_t top, uint64_t size);
  // SysV argument `index` (0..5: rdi, rsi, rdx, rcx, r8, r9).
  CaptureBuilder &set_arg(int index, uint64_t value);
  CaptureBuilder &set_gpr(int reg, uint64_t value);  // KJIT_REG_* numbering
  CaptureBuilder &set_rflags(uint64_t v);
  CaptureBuilder &set_gs_base(uint64_t v);
  CaptureBuilder &set_fs_base(uint64_t v);
  CaptureBuilder &set_entry(uint64_t pc);
  CaptureBuilder &set_name(std::string name);
  CaptureBuilder &add_raw_section(uint32_t type, std::vector<uint8_t> payload);

  // Sorts the regions, sets rip = entry, validates.  "" or an error.
  std::string build(Capture *out) const;

 CaptureBuilder() { cap_.sentinel = kDefaultSentinel; }

 private:
  Capture cap_;
};

}  // namespace kjit::sim
#endif
