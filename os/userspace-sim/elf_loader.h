/* SPDX-License-Identifier: GPL-2.0 */
// Minimal ELF64 little-endian reader: allocated sections and symbols of a
// vmlinux-style file, enough to build captures of kernel functions.
#ifndef KJIT_SIM_ELF_LOADER_H
#define KJIT_SIM_ELF_LOADER_H

#include <cstdint>
#include <string>
#include <vector>

namespace kjit::sim {

struct ElfSection {
  std::string name;
  uint64_t addr = 0;
  uint64_t size = 0;
  bool writable = false;
  bool executable = false;
  bool nobits = false;          // .bss-like: zero-filled, no file bytes
  std::vector<uint8_t> bytes;   // empty when nobits
};

struct ElfSymbol {
  std::string name;
  uint64_t value = 0;
  uint64_t size = 0;
  bool function = false;
};

struct ElfImage {
  std::vector<ElfSection> sections;  // allocated sections with an address
  std::vector<ElfSymbol> symbols;    // from .symtab, defined symbols only
};

// Parses an in-memory ELF file.  Returns "" or an error; never reads out of
// bounds on malformed input.
std::string parse_elf(const std::vector<uint8_t> &file, ElfImage *out);
std::string load_elf_file(const std::string &path, ElfImage *out);

}  // namespace kjit::sim
#endif
