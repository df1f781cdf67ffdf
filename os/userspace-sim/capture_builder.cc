// SPDX-License-Identifier: GPL-2.0
#include "capture_builder.h"

#include <algorithm>

namespace kjit::sim {

CaptureBuilder &CaptureBuilder::add_region(uint64_t addr, std::vector<uint8_t> bytes, uint32_t perms) {
  Region r;
  r.addr = addr;
  r.perms = perms;
  r.bytes = std::move(bytes);
  cap_.regions.push_back(std::move(r));
  return *this;
}

CaptureBuilder &CaptureBuilder::add_zero_region(uint64_t addr, uint64_t size, uint32_t perms) {
  return add_region(addr, std::vector<uint8_t>(size, 0), perms);
}

std::string CaptureBuilder::add_elf_sections(const ElfImage &elf, const std::vector<std::string> &names) {
  for (const std::string &name : names) {
    auto it = std::find_if(elf.sections.begin(), elf.sections.end(),
                           [&](const ElfSection &s) { return s.name == name; });
    if (it == elf.sections.end()) return "ELF has no allocated section " + name;
    const uint32_t perms = kPermR | (it->writable ? uint32_t{kPermW} : 0u) | (it->executable ? uint32_t{kPermX} : 0u);
    if (it->nobits)
      add_zero_region(it->addr, it->size, perms);
    else
      add_region(it->addr, it->bytes, perms);
  }
  return "";
}

CaptureBuilder &CaptureBuilder::add_stack(uint64_t top, uint64_t size) {
  add_zero_region(top - size, size, kPermR | kPermW);
  return set_gpr(4, top);
}

CaptureBuilder &CaptureBuilder::set_arg(int index, uint64_t value) {
  static const int kArgRegs[6] = {7 /*rdi*/, 6 /*rsi*/, 2 /*rdx*/, 1 /*rcx*/, 8, 9};
  if (index >= 0 && index < 6) set_gpr(kArgRegs[index], value);
  return *this;
}

CaptureBuilder &CaptureBuilder::set_gpr(int reg, uint64_t value) {
  if (reg >= 0 && reg < 16) cap_.regs.gpr[reg] = value;
  return *this;
}

CaptureBuilder &CaptureBuilder::set_rflags(uint64_t v) { cap_.regs.rflags = v; return *this; }
CaptureBuilder &CaptureBuilder::set_gs_base(uint64_t v) { cap_.regs.gs_base = v; return *this; }
CaptureBuilder &CaptureBuilder::set_fs_base(uint64_t v) { cap_.regs.fs_base = v; return *this; }
CaptureBuilder &CaptureBuilder::set_entry(uint64_t pc) { cap_.entry_pc = pc; return *this; }
CaptureBuilder &CaptureBuilder::set_name(std::string name) { cap_.name = std::move(name); return *this; }

CaptureBuilder &CaptureBuilder::add_raw_section(uint32_t type, std::vector<uint8_t> payload) {
  cap_.extra.push_back(RawSection{type, std::move(payload)});
  return *this;
}

std::string CaptureBuilder::build(Capture *out) const {
  Capture c = cap_;
  std::sort(c.regions.begin(), c.regions.end(),
            [](const Region &a, const Region &b) { return a.addr < b.addr; });
  c.regs.rip = c.entry_pc;
  std::string err = validate_capture(c);
  if (!err.empty()) return err;
  *out = std::move(c);
  return "";
}

}  // namespace kjit::sim
