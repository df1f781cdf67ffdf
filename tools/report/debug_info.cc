// SPDX-License-Identifier: GPL-2.0
#include "debug_info.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <gelf.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace kjit::report {
namespace {

const Dwfl_Callbacks kOffline = {
    .find_elf = nullptr,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = dwfl_offline_section_address,
    .debuginfo_path = nullptr,
};

}  // namespace

DebugInfo::~DebugInfo() {
  if (dwfl_) dwfl_end(dwfl_);
}

bool DebugInfo::report(const std::string &path, const char *name, std::string &error) {
  if (access(path.c_str(), R_OK)) { error = path + ": " + strerror(errno); return false; }
  dwfl_ = dwfl_begin(&kOffline);
  if (!dwfl_) { error = dwfl_errmsg(-1); return false; }
  mod_ = dwfl_report_offline(dwfl_, name, path.c_str(), -1);
  dwfl_report_end(dwfl_, nullptr, nullptr);
  if (!mod_) { error = path + ": not an ELF file libdwfl can read (" + dwfl_errmsg(-1) + ")"; return false; }
  const unsigned char *bits = nullptr;
  GElf_Addr vaddr;
  int n = dwfl_module_build_id(mod_, &bits, &vaddr);
  for (int i = 0; i < n; i++) {
    char h[3];
    snprintf(h, sizeof h, "%02x", bits[i]);
    build_id_ += h;
  }
  Dwarf_Addr bias;
  has_lines_ = dwfl_module_getdwarf(mod_, &bias) != nullptr;
  return true;
}

bool DebugInfo::open_module(const std::string &path, std::string &error) {
  return report(path, "module", error);
}

uint64_t DebugInfo::symbol_address(const std::string &name) const {
  if (functions_.empty()) {
    int nsym = dwfl_module_getsymtab(mod_);
    for (int i = 0; i < nsym; i++) {
      GElf_Sym sym;
      const char *n = dwfl_module_getsym(mod_, i, &sym, nullptr);
      if (n && GELF_ST_TYPE(sym.st_info) == STT_FUNC && sym.st_value) functions_.emplace(n, sym.st_value);
    }
  }
  auto it = functions_.find(name);
  return it == functions_.end() ? 0 : it->second;
}

bool DebugInfo::open(const std::string &path, std::string &error) {
  if (!report(path, "vmlinux", error)) return false;
  int nsym = dwfl_module_getsymtab(mod_);
  for (int i = 0; i < nsym; i++) {
    GElf_Sym sym;
    const char *name = dwfl_module_getsym(mod_, i, &sym, nullptr);
    if (name && !strcmp(name, "_stext")) { stext_ = sym.st_value; break; }
  }
  if (!stext_) { error = path + ": no _stext symbol (not a vmlinux?)"; return false; }
  return true;
}

// The line tables name C files relative to the source tree and assembly
// files by absolute path, with the build directory (inside the tree, as in
// Debian's debian/build/..., or the tree itself) as comp_dir: an absolute
// path loses the directories it shares with comp_dir, so both become paths
// in the kernel tree (fs/open.c, arch/x86/lib/memset_64.S).  A Debian
// featureset flavour (rt) is built from its own patched copy of the tree,
// debian/build/source_FEATURESET: its paths lose that prefix too, and the
// lab's source for that flavour is the patched copy (tools/lab/fetch-debug.sh).
std::string DebugInfo::relative(const char *file, const char *comp_dir) const {
  std::string f = file ? file : "?";
  if (f[0] == '/' && comp_dir && comp_dir[0] == '/') {
    std::string c = std::string(comp_dir) + "/";
    size_t common = 0;
    for (size_t i = 0; i < f.size() && i < c.size() && f[i] == c[i]; i++)
      if (f[i] == '/') common = i + 1;
    if (common > 1) f = f.substr(common);
  }
  while (f.compare(0, 2, "./") == 0) f = f.substr(2);
  for (const char *tree : {"debian/build/source_", "../source_", "source_"}) {
    const size_t n = strlen(tree), slash = f.find('/', n);
    if (f.compare(0, n, tree) == 0 && slash != std::string::npos) return f.substr(slash + 1);
  }
  return f;
}

bool DebugInfo::line_at(uint64_t addr, LineRow &out) const {
  Dwfl_Line *l = dwfl_module_getsrc(mod_, addr);
  if (!l) return false;
  Dwarf_Addr a;
  int line = 0;
  const char *f = dwfl_lineinfo(l, &a, &line, nullptr, nullptr, nullptr);
  Dwarf_Addr bias;
  Dwarf_Die *cu = dwfl_module_addrdie(mod_, addr, &bias);
  Dwarf_Attribute at;
  const char *comp = cu ? dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &at)) : nullptr;
  out = {a, relative(f, comp), line};
  return f && line > 0;
}

bool DebugInfo::function_symbol(uint64_t addr, std::string &name, uint64_t &start, uint64_t &size) const {
  GElf_Off off = 0;
  GElf_Sym sym;
  const char *n = dwfl_module_addrinfo(mod_, addr, &off, &sym, nullptr, nullptr, nullptr);
  if (!n || GELF_ST_TYPE(sym.st_info) != STT_FUNC) return false;
  name = n;
  start = addr - off;
  size = sym.st_size ? sym.st_size : off + 1;
  return true;
}

std::string DebugInfo::function_at(uint64_t addr) const {
  Dwarf_Addr bias;
  Dwarf_Die *cu = dwfl_module_addrdie(mod_, addr, &bias);
  if (!cu) return "";
  Dwarf_Die *scopes = nullptr;
  int n = dwarf_getscopes(cu, addr - bias, &scopes);
  std::string name;
  // Innermost first: the first subprogram or inlined instance with a name
  // (an inlined one names itself through its abstract origin).
  for (int i = 0; i < n && name.empty(); i++) {
    int tag = dwarf_tag(&scopes[i]);
    if (tag != DW_TAG_subprogram && tag != DW_TAG_inlined_subroutine) continue;
    Dwarf_Attribute at;
    if (const char *s = dwarf_formstring(dwarf_attr_integrate(&scopes[i], DW_AT_name, &at))) name = s;
  }
  free(scopes);
  return name;
}

std::vector<LineRow> DebugInfo::rows_in(uint64_t lo, uint64_t hi) const {
  std::vector<LineRow> rows;
  Dwarf_Addr bias;
  Dwarf_Die *cu = dwfl_module_addrdie(mod_, lo, &bias);
  if (!cu) return rows;
  Dwarf_Attribute at;
  const char *comp = dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &at));
  Dwarf_Lines *lines;
  size_t n;
  if (dwarf_getsrclines(cu, &lines, &n)) return rows;
  for (size_t i = 0; i < n; i++) {
    Dwarf_Line *l = dwarf_onesrcline(lines, i);
    Dwarf_Addr a;
    int line;
    bool end = false;
    if (dwarf_lineaddr(l, &a) || a < lo || a >= hi || dwarf_lineno(l, &line) || line <= 0) continue;
    dwarf_lineendsequence(l, &end);
    if (end) continue;
    rows.push_back({a, relative(dwarf_linesrc(l, nullptr, nullptr), comp), line});
  }
  std::stable_sort(rows.begin(), rows.end(), [](const LineRow &a, const LineRow &b) { return a.addr < b.addr; });
  return rows;
}

const std::vector<DebugInfo::FunctionSymbol> &DebugInfo::by_address() const {
  if (!by_address_.empty()) return by_address_;
  std::vector<std::pair<FunctionSymbol, bool>> all;   // bool: global
  int nsym = dwfl_module_getsymtab(mod_);
  for (int i = 0; i < nsym; i++) {
    GElf_Sym sym;
    const char *n = dwfl_module_getsym(mod_, i, &sym, nullptr);
    if (n && *n && GELF_ST_TYPE(sym.st_info) == STT_FUNC && sym.st_value)
      all.push_back({{sym.st_value, sym.st_size, n}, GELF_ST_BIND(sym.st_info) == STB_GLOBAL});
  }
  std::stable_sort(all.begin(), all.end(), [](const auto &a, const auto &b) {
    return a.first.addr != b.first.addr ? a.first.addr < b.first.addr : a.second > b.second;
  });
  for (auto &[s, global] : all)
    if (by_address_.empty() || by_address_.back().addr != s.addr) by_address_.push_back(std::move(s));
  return by_address_;
}

uint64_t DebugInfo::unit_offset(uint64_t addr) const {
  Dwarf_Addr bias;
  Dwarf_Die *cu = dwfl_module_addrdie(mod_, addr, &bias);
  return cu ? dwarf_dieoffset(cu) : 0;
}

namespace {

// The subprograms of a unit (C: its top-level children; C++ namespaces are
// walked too).
void subprograms(Dwarf_Die *parent, std::vector<Dwarf_Die> &out) {
  Dwarf_Die child;
  if (dwarf_child(parent, &child)) return;
  do {
    int tag = dwarf_tag(&child);
    if (tag == DW_TAG_subprogram) out.push_back(child);
    else if (tag == DW_TAG_namespace) subprograms(&child, out);
  } while (!dwarf_siblingof(&child, &child));
}

std::vector<std::pair<uint64_t, uint64_t>> die_ranges(Dwarf_Die *die, Dwarf_Addr bias) {
  std::vector<std::pair<uint64_t, uint64_t>> out;
  Dwarf_Addr base, lo, hi;
  for (ptrdiff_t off = 0; (off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0;)
    if (hi > lo) out.emplace_back(lo + bias, hi + bias);
  return out;
}

}  // namespace

bool DebugInfo::unit_at(uint64_t addr, UnitLines &out) const {
  Dwarf_Addr bias;
  Dwarf_Die *cu = dwfl_module_addrdie(mod_, addr, &bias);
  if (!cu) return false;
  out = UnitLines{};
  out.offset = dwarf_dieoffset(cu);
  Dwarf_Attribute at;
  const char *comp = dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &at));
  out.file = relative(dwarf_diename(cu), comp);
  const std::vector<FunctionSymbol> &syms = by_address();
  std::vector<Dwarf_Die> dies;
  subprograms(cu, dies);
  for (Dwarf_Die &d : dies) {
    UnitFunction f;
    f.ranges = die_ranges(&d, bias);
    Dwarf_Addr entry;
    if (f.ranges.empty() || dwarf_entrypc(&d, &entry)) continue;   // a declaration, or inlined only
    f.entry = entry + bias;
    auto sym = std::lower_bound(syms.begin(), syms.end(), f.entry,
                                [](const FunctionSymbol &s, uint64_t a) { return s.addr < a; });
    if (sym != syms.end() && sym->addr == f.entry) f.name = sym->name;
    else if (const char *n = dwarf_formstring(dwarf_attr_integrate(&d, DW_AT_name, &at))) f.name = n;
    else continue;
    const char *decl = dwarf_decl_file(&d);
    f.file = decl ? relative(decl, comp) : out.file;
    dwarf_decl_line(&d, &f.line);
    out.functions.push_back(std::move(f));
  }
  if (out.functions.empty()) {
    // No subprograms (an assembly file): its ELF function symbols.
    for (const auto &[lo, hi] : die_ranges(cu, bias))
      for (auto s = std::lower_bound(syms.begin(), syms.end(), lo,
                                     [](const FunctionSymbol &x, uint64_t a) { return x.addr < a; });
           s != syms.end() && s->addr < hi; ++s)
        if (s->size && (out.functions.empty() || out.functions.back().entry != s->addr))
          out.functions.push_back({s->name, out.file, 0, s->addr, {{s->addr, std::min(s->addr + s->size, hi)}}});
  }
  // Which function holds an address: the ranges in address order.
  struct Span { uint64_t lo, hi; size_t fn; };
  std::vector<Span> spans;
  for (size_t i = 0; i < out.functions.size(); i++)
    for (const auto &[lo, hi] : out.functions[i].ranges) spans.push_back({lo, hi, i});
  std::sort(spans.begin(), spans.end(), [](const Span &a, const Span &b) { return a.lo < b.lo; });
  Dwarf_Lines *lines;
  size_t n;
  if (dwarf_getsrclines(cu, &lines, &n)) n = 0;
  for (size_t i = 0; i < n; i++) {
    Dwarf_Line *l = dwarf_onesrcline(lines, i);
    Dwarf_Addr a;
    int line;
    bool end = false, stmt = false;
    if (dwarf_lineaddr(l, &a) || dwarf_lineno(l, &line) || line <= 0) continue;
    dwarf_lineendsequence(l, &end);
    dwarf_linebeginstatement(l, &stmt);
    if (end) continue;
    // A statement row, or any row that owns instructions (the next row of
    // its sequence starts later): a line whose code is all in non-statement
    // rows (a closing brace's epilogue) still ran when they did.
    Dwarf_Addr next;
    if (!stmt && (i + 1 == n || dwarf_lineaddr(dwarf_onesrcline(lines, i + 1), &next) || next <= a)) continue;
    a += bias;
    auto it = std::upper_bound(spans.begin(), spans.end(), a, [](uint64_t x, const Span &s) { return x < s.lo; });
    if (it == spans.begin() || a >= (--it)->hi) continue;
    out.rows.push_back({{a, relative(dwarf_linesrc(l, nullptr, nullptr), comp), line}, it->fn});
  }
  for (const UnitRow &r : out.rows)   // a function without a decl_line: its first row's
    if (UnitFunction &f = out.functions[r.function]; !f.line && r.row.addr == f.entry) f.line = r.row.line;
  return true;
}

bool DebugInfo::read(uint64_t addr, size_t n, std::vector<uint8_t> &out) const {
  GElf_Addr bias;
  Elf *elf = dwfl_module_getelf(mod_, &bias);
  if (!elf) return false;
  Elf_Scn *scn = nullptr;
  while ((scn = elf_nextscn(elf, scn))) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS || !(sh.sh_flags & SHF_EXECINSTR)) continue;
    if (addr < sh.sh_addr || addr + n > sh.sh_addr + sh.sh_size) continue;
    Elf_Data *d = elf_getdata(scn, nullptr);
    if (!d || !d->d_buf || addr - sh.sh_addr + n > d->d_size) return false;
    const uint8_t *p = static_cast<const uint8_t *>(d->d_buf) + (addr - sh.sh_addr);
    out.assign(p, p + n);
    return true;
  }
  return false;
}

}  // namespace kjit::report
