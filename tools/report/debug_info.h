/* SPDX-License-Identifier: GPL-2.0 */
// A file a report names things with, the vmlinux or a module's .ko: build
// id, _stext (vmlinux), DWARF line tables (elfutils libdwfl), and its bytes
// (for disassembly).
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

struct Dwfl;
struct Dwfl_Module;

namespace kjit::report {

struct LineRow {
  uint64_t addr;      // vmlinux address of the row's first instruction
  std::string file;   // as the line table names it, made relative (below)
  int line;
};

// One compilation unit as gcov would list its source: every function with
// code in it (DWARF subprograms with address ranges; in a unit without
// them, an assembly file, the ELF function symbols inside the unit), and
// the rows of the line table inside those functions that are statements
// (is_stmt) or own instructions (the next row starts at a higher address).
struct UnitFunction {
  std::string name;   // the ELF symbol at its entry, else DWARF's name
  std::string file;   // where it is defined (relative, as LineRow::file)
  int line = 0;       // the line of its definition
  uint64_t entry = 0;
  std::vector<std::pair<uint64_t, uint64_t>> ranges;   // [lo, hi)
};

struct UnitRow {
  LineRow row;
  size_t function;    // index into UnitLines::functions
};

struct UnitLines {
  uint64_t offset = 0;   // the unit's DIE offset: which unit it is
  std::string file;      // its primary source file (relative)
  std::vector<UnitFunction> functions;
  std::vector<UnitRow> rows;   // in line-table order
};

class DebugInfo {
 public:
  DebugInfo() = default;
  ~DebugInfo();
  DebugInfo(const DebugInfo &) = delete;
  DebugInfo &operator=(const DebugInfo &) = delete;

  // A vmlinux: it must have _stext.
  bool open(const std::string &path, std::string &error);
  // A module's debug file (a relocatable .ko with DWARF): libdwfl lays its
  // sections out at addresses of its own; symbol_address says where a
  // function landed.
  bool open_module(const std::string &path, std::string &error);
  // The address of the function symbol `name` in this file, 0 if none.
  uint64_t symbol_address(const std::string &name) const;
  const std::string &build_id() const { return build_id_; }
  uint64_t stext() const { return stext_; }
  bool has_lines() const { return has_lines_; }
  // file:line of one address (file relative to the kernel tree).
  bool line_at(uint64_t addr, LineRow &out) const;
  // The function symbol holding addr: its start and size (vmlinux
  // addresses); false when none does.
  bool function_symbol(uint64_t addr, std::string &name, uint64_t &start, uint64_t &size) const;
  // The innermost function holding addr, inlined ones included (the C
  // function a line belongs to: ksys_lseek inside __x64_sys_lseek); "" if
  // DWARF does not say.
  std::string function_at(uint64_t addr) const;
  // The line-table rows whose address is in [lo, hi), in address order.
  std::vector<LineRow> rows_in(uint64_t lo, uint64_t hi) const;
  // Which compilation unit holds addr (its DIE offset; 0: none), cheap.
  uint64_t unit_offset(uint64_t addr) const;
  // The compilation unit holding addr, read whole; false when DWARF has none.
  bool unit_at(uint64_t addr, UnitLines &out) const;
  // Bytes of the file's text at [addr, addr + n); false outside it.
  bool read(uint64_t addr, size_t n, std::vector<uint8_t> &out) const;

 private:
  bool report(const std::string &path, const char *name, std::string &error);
  std::string relative(const char *file, const char *comp_dir) const;
  Dwfl *dwfl_ = nullptr;
  Dwfl_Module *mod_ = nullptr;
  std::string build_id_;
  uint64_t stext_ = 0;
  bool has_lines_ = false;
  // The function symbols by address (aliases: a global one first), built once.
  struct FunctionSymbol { uint64_t addr, size; std::string name; };
  const std::vector<FunctionSymbol> &by_address() const;
  mutable std::map<std::string, uint64_t> functions_;   // symbol_address's index, built once
  mutable std::vector<FunctionSymbol> by_address_;
  int fd_ = -1;
};

}  // namespace kjit::report
