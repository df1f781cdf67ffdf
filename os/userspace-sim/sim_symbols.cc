// SPDX-License-Identifier: GPL-2.0
#include "sim_symbols.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace kjit::sim {

void SymbolTable::add(uint64_t addr, const std::string &name) { syms_.push_back(Sym{addr, name}); }

void SymbolTable::finalize() {
  // Stable: among aliases at one address the first listed wins, which is
  // what kallsyms readers conventionally print.
  std::stable_sort(syms_.begin(), syms_.end(), [](const Sym &a, const Sym &b) { return a.addr < b.addr; });
}

std::string SymbolTable::parse_kallsyms(const std::string &text) {
  std::istringstream in(text);
  std::string line;
  size_t lineno = 0, nonzero = 0;
  while (std::getline(in, line)) {
    lineno++;
    if (line.empty()) continue;
    std::istringstream ls(line);
    std::string addr_s, type, name;
    if (!(ls >> addr_s >> type >> name) || type.size() != 1)
      return "kallsyms line " + std::to_string(lineno) + ": expected \"addr type name\"";
    char *end = nullptr;
    const uint64_t addr = strtoull(addr_s.c_str(), &end, 16);
    if (end == addr_s.c_str() || *end != '\0')
      return "kallsyms line " + std::to_string(lineno) + ": bad address \"" + addr_s + "\"";
    // Absolute and undefined symbols are not code or data locations.
    if (type == "a" || type == "A" || type == "U") continue;
    if (addr) nonzero++;
    add(addr, name);
  }
  if (!syms_.empty() && nonzero == 0)
    return "every kallsyms address is zero (read as an unprivileged user? kptr_restrict?)";
  finalize();
  return "";
}

std::string SymbolTable::load_kallsyms(const std::string &path) {
  std::string text;
  const bool xz = path.size() > 3 && path.compare(path.size() - 3, 3, ".xz") == 0;
  if (xz) {
    // Quote for the shell: ' becomes '\''.
    std::string quoted = "'";
    for (char c : path) quoted += (c == '\'') ? std::string("'\\''") : std::string(1, c);
    quoted += "'";
    FILE *p = popen(("xz -dc -- " + quoted).c_str(), "r");
    if (!p) return "cannot run xz for " + path;
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) text.append(buf, n);
    if (pclose(p) != 0) return "xz -dc failed on " + path;
  } else {
    std::ifstream f(path);
    if (!f) return "cannot open " + path;
    std::ostringstream ss;
    ss << f.rdbuf();
    text = ss.str();
  }
  std::string err = parse_kallsyms(text);
  return err.empty() ? "" : path + ": " + err;
}

uint64_t SymbolTable::address_of(const std::string &name) const {
  for (const Sym &s : syms_)
    if (s.name == name) return s.addr;
  return 0;
}

uint64_t SymbolTable::start_of(uint64_t addr) const {
  auto it = std::upper_bound(syms_.begin(), syms_.end(), addr,
                             [](uint64_t a, const Sym &s) { return a < s.addr; });
  return it == syms_.begin() ? 0 : std::prev(it)->addr;
}

std::string SymbolTable::symbolize(uint64_t addr) const {
  auto it = std::upper_bound(syms_.begin(), syms_.end(), addr,
                             [](uint64_t a, const Sym &s) { return a < s.addr; });
  if (it == syms_.begin()) return "";
  --it;
  // Back up to the first alias at this address.
  while (it != syms_.begin() && std::prev(it)->addr == it->addr) --it;
  char off[32];
  snprintf(off, sizeof off, "+0x%llx", static_cast<unsigned long long>(addr - it->addr));
  return it->name + off;
}

}  // namespace kjit::sim
