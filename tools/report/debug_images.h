/* SPDX-License-Identifier: GPL-2.0 */
// The debug files of a recording, asked in its addresses: the vmlinux
// (--vmlinux) for the kernel image, and for an address in a module (the
// MODULES section) that module's .ko with DWARF, found by build id or by
// name under the debug directories.  A module's code is mapped to its .ko
// through the function holding it: the recording's symbol gives the name
// and offset, the .ko's symbol table where that function is in the file.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "data_file.h"
#include "debug_info.h"

namespace kjit::report {

struct DebugSearch {
  std::vector<std::string> dirs;   // --debug-dir / KJIT_DEBUG_DIR: searched whole
  std::string vmlinux_dir;         // the --vmlinux's directory: its modules/ subtree
  bool check_build_id = true;
};

// A compilation unit (DebugInfo::unit_at) in recorded addresses: each
// function moved to where it ran.  A module's function the recording has
// no symbol of is not mapped (no block ran in it: its lines count 0).
struct RecordedUnit {
  std::pair<const DebugInfo *, uint64_t> key;   // which file, which unit
  UnitLines unit;
  std::vector<bool> mapped;                     // per function
};

class DebugImages {
 public:
  // vmlinux may be nullptr; slide = recorded - vmlinux address.
  DebugImages(const Recording &rec, const DebugInfo *vmlinux, int64_t slide, DebugSearch search);
  // Whether lines can come from anywhere: the vmlinux's DWARF or a module's.
  bool has_lines() const;
  // A vmlinux, or the debug file of a module the recording has code of.
  bool any() const;
  bool line_at(uint64_t addr, LineRow &out) const;
  std::string function_at(uint64_t addr) const;
  // Rows in [lo, hi) of one function, with recorded addresses.
  std::vector<LineRow> rows_in(uint64_t lo, uint64_t hi) const;
  bool read(uint64_t addr, size_t n, std::vector<uint8_t> &out) const;
  // Which unit holds a recorded address ({nullptr, 0}: none), cheap.
  std::pair<const DebugInfo *, uint64_t> unit_key(uint64_t addr) const;
  // That unit, read whole.
  bool unit_at(uint64_t addr, RecordedUnit &out) const;
  // The debug file of a module, opened on first use; nullptr when none is found.
  const DebugInfo *module_file(const Module &m) const;
  // Where module_file found it ("" when it did not).
  std::string module_path(const Module &m) const;

 private:
  // The debug file holding a recorded address and the address in it.
  const DebugInfo *locate(uint64_t addr, uint64_t &file_addr) const;
  std::string find_ko(const Module &m) const;
  bool has_code(const Module &m) const;   // a recorded symbol is in it
  const Recording &rec_;
  const DebugInfo *vmlinux_;
  int64_t slide_;
  DebugSearch search_;
  mutable std::map<std::string, std::unique_ptr<DebugInfo>> modules_;   // null: not found
  mutable std::map<std::string, std::string> paths_;
  mutable std::map<std::string, std::map<std::string, std::string>> index_;   // dir -> name -> .ko
  mutable std::map<std::pair<std::string, std::string>, uint64_t> recorded_;   // (module, name) -> addr
};

}  // namespace kjit::report
