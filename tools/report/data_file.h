/* SPDX-License-Identifier: GPL-2.0 */
// Reading kjit.data (include/uapi/kjit/data_format.h, docs/data-format.md).
// Every field is checked: a corrupt or truncated file gives an error
// message, never a crash or a half-read recording.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "uapi/kjit/data_format.h"

namespace kjit::report {

struct Symbol {
  uint64_t addr = 0;
  uint32_t size = 0;
  std::string name;
  std::string module;   // the module whose code it is; "" for the kernel image
  // The canonical name: "module:name" in a module, else the name.
  std::string full_name() const { return module.empty() ? name : module + ":" + name; }
};

// A loaded module (MODULES): its code is named relative to `base`.
struct Module {
  std::string name;
  uint64_t base = 0, size = 0;  // run-time core base and length
  std::string build_id;         // hex; "" when the recording has none
};

struct Recording {
  std::map<std::string, std::string> meta, stats;
  std::vector<kjit_data_block> blocks;
  std::vector<kjit_data_event> events;
  std::vector<kjit_data_call> calls;
  std::vector<kjit_data_branch> branches;  // branches recordings
  std::vector<Symbol> symbols;            // sorted by address
  std::vector<Module> modules;            // sorted by base (MODULES)
  std::string targets;                    // TARGETS text
  uint64_t stext = 0;                     // META stext, the running kernel's
  uint32_t version = 0;                   // the file's format version

  const std::string &tool() const;
  // The symbol holding a running-kernel address, or nullptr.
  const Symbol *symbol_at(uint64_t addr) const;
  // The module whose core holds addr, or nullptr (the kernel image).
  const Module *module_at(uint64_t addr) const;
  // "name+0xoff", "module:name+0xoff" in a module, "module+0xoff" in a
  // module without a symbol, or "0xaddr".
  std::string name_of(uint64_t addr) const;
};

// Reads `path` into `out`; false with `error` set (what is wrong, where).
bool read_recording(const std::string &path, Recording &out, std::string &error);
// The same from memory (the fuzz target).
bool parse_recording(const uint8_t *data, size_t size, Recording &out, std::string &error);

}  // namespace kjit::report
