/* SPDX-License-Identifier: GPL-2.0 */
// A kernel symbol table (from /proc/kallsyms text, or an ELF .symtab), used
// to symbolize addresses and to find the kernel facts the engine needs.
#ifndef KJIT_SIM_SIM_SYMBOLS_H
#define KJIT_SIM_SIM_SYMBOLS_H

#include <cstdint>
#include <string>
#include <vector>

namespace kjit::sim {

class SymbolTable {
 public:
  // Reads "addr type name [module]" lines; a path ending in ".xz" is
  // decompressed through `xz -dc`.  Returns "" or an error.
  std::string load_kallsyms(const std::string &path);
  // Same format from a string (tests, pipes).
  std::string parse_kallsyms(const std::string &text);

  void add(uint64_t addr, const std::string &name);
  // Must be called after the last add() and before lookups (the loaders
  // call it themselves).
  void finalize();

  bool empty() const { return syms_.empty(); }
  size_t size() const { return syms_.size(); }
  // Address of the first symbol called `name`, 0 if absent.
  uint64_t address_of(const std::string &name) const;
  // Address of the closest symbol at or below addr, 0 if none.
  uint64_t start_of(uint64_t addr) const;
  // "name+0xoff" of the closest symbol at or below addr, "" if none.
  std::string symbolize(uint64_t addr) const;

  struct Sym {
    uint64_t addr;
    std::string name;
  };
  // Every symbol, sorted by address (after finalize()).
  const std::vector<Sym> &all() const { return syms_; }

 private:
  std::vector<Sym> syms_;  // sorted by address after finalize()
};

}  // namespace kjit::sim
#endif
