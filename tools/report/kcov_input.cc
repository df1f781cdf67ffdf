// SPDX-License-Identifier: GPL-2.0
#include "kcov_input.h"

#include "arch/x86/disasm/disassembly.h"

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

namespace kjit::report {
namespace {

// Bytes and instructions from `addr` (vmlinux) through the first control
// transfer, at most 4 KiB (a block of the data format).
bool block_extent(const DebugInfo &dbg, uint64_t addr, uint32_t &len, uint16_t &ninsn) {
  std::vector<uint8_t> bytes;
  if (!dbg.read(addr, 4096, bytes) && !dbg.read(addr, 256, bytes)) return false;
  len = 0;
  ninsn = 0;
  while (len < bytes.size()) {
    bool transfers_control = false;
    const uint32_t n = x86::disasm::decode_transfer(bytes.data() + len, bytes.size() - len, &transfers_control);
    if (!n) return ninsn > 0;
    len += n;
    ninsn++;
    if (transfers_control) return true;
  }
  return true;
}

}  // namespace

bool recording_from_kcov(const std::string &path, const DebugInfo &dbg, Recording &out, std::string &error) {
  std::ifstream f(path);
  if (!f) { error = path + ": " + strerror(errno); return false; }
  std::map<uint64_t, uint64_t> pcs;
  uint64_t stext = 0;
  std::string line;
  while (std::getline(f, line)) {
    std::istringstream l(line);
    std::string first, second;
    l >> first >> second;
    char *end = nullptr;
    if (first == "stext") {
      stext = strtoull(second.c_str(), &end, 16);
      if (!end || *end || !stext) { error = path + ": bad stext line: " + line; return false; }
    } else if (first.rfind("0x", 0) == 0) {
      uint64_t pc = strtoull(first.c_str(), &end, 16);
      if (end && !*end && pc) pcs[pc]++;
    }
  }
  if (pcs.empty()) { error = path + ": no PCs (lines starting with 0x)"; return false; }
  out = Recording{};
  out.stext = stext ? stext : dbg.stext();
  out.meta = {{"tool", "kcov"}, {"kernel_release", "?"}, {"build_id", ""}, {"command", path},
              {"stext", std::to_string(out.stext)}};
  const int64_t slide = (int64_t)(out.stext - dbg.stext());
  std::map<uint64_t, Symbol> syms;
  for (const auto &[pc, n] : pcs) {
    kjit_data_block b{pc, n, 0, 0, 0};
    if (!block_extent(dbg, pc - slide, b.len, b.ninsn)) {
      error = path + ": PC " + std::to_string(pc) + " is not in the vmlinux's text" +
              (stext ? "" : " (no stext line: is the kernel's text relocated?)");
      return false;
    }
    out.blocks.push_back(b);
    std::string name;
    uint64_t start, size;
    if (dbg.function_symbol(pc - slide, name, start, size))
      syms[start + slide] = Symbol{start + slide, static_cast<uint32_t>(size), name, {}};
  }
  for (auto &[a, s] : syms) out.symbols.push_back(s);
  return true;
}

}  // namespace kjit::report
