// SPDX-License-Identifier: GPL-2.0
#include "debug_images.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <system_error>

namespace kjit::report {
namespace {

namespace fs = std::filesystem;

// Module names use '_' where file names may use '-' (crc32c-intel.ko is
// module crc32c_intel), as the kernel treats them.
std::string module_key(std::string s) {
  std::replace(s.begin(), s.end(), '-', '_');
  return s;
}

// Every NAME.ko (or NAME.ko.debug) under dir, by module name; the first found wins.
std::map<std::string, std::string> index_dir(const std::string &dir) {
  std::map<std::string, std::string> out;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec), end;
       !ec && it != end; it.increment(ec)) {
    if (!it->is_regular_file(ec)) continue;
    std::string name = it->path().filename().string();
    for (const char *suffix : {".ko.debug", ".ko"}) {
      size_t n = strlen(suffix);
      if (name.size() > n && name.compare(name.size() - n, n, suffix) == 0) {
        out.emplace(module_key(name.substr(0, name.size() - n)), it->path().string());
        break;
      }
    }
  }
  return out;
}

}  // namespace

DebugImages::DebugImages(const Recording &rec, const DebugInfo *vmlinux, int64_t slide, DebugSearch search)
    : rec_(rec), vmlinux_(vmlinux), slide_(slide), search_(std::move(search)) {}

std::string DebugImages::find_ko(const Module &m) const {
  std::vector<std::string> roots = search_.dirs;
  roots.push_back("/usr/lib/debug");
  // 1. the build-id tree (Debian's -dbg packages fill /usr/lib/debug/.build-id)
  if (m.build_id.size() > 2)
    for (const std::string &r : roots) {
      std::string p = r + "/.build-id/" + m.build_id.substr(0, 2) + "/" + m.build_id.substr(2) + ".debug";
      if (!access(p.c_str(), R_OK)) return p;
    }
  // 2. by name: the given directories whole, the vmlinux's modules/ and
  //    /usr/lib/debug/lib/modules/RELEASE (the -dbg package's tree)
  auto it = rec_.meta.find("kernel_release");
  std::vector<std::string> walk = search_.dirs;
  if (!search_.vmlinux_dir.empty()) walk.push_back(search_.vmlinux_dir + "/modules");
  if (it != rec_.meta.end()) walk.push_back("/usr/lib/debug/lib/modules/" + it->second);
  for (const std::string &d : walk) {
    auto idx = index_.find(d);
    if (idx == index_.end()) idx = index_.emplace(d, index_dir(d)).first;
    auto f = idx->second.find(module_key(m.name));
    if (f != idx->second.end()) return f->second;
  }
  return "";
}

const DebugInfo *DebugImages::module_file(const Module &m) const {
  auto it = modules_.find(m.name);
  if (it != modules_.end()) return it->second.get();
  std::unique_ptr<DebugInfo> d;
  std::string path = find_ko(m), err;
  if (!path.empty()) {
    d = std::make_unique<DebugInfo>();
    if (!d->open_module(path, err)) {
      fprintf(stderr, "kjit-report: %s: %s\n", m.name.c_str(), err.c_str());
      d.reset();
    } else if (search_.check_build_id && !m.build_id.empty() && d->build_id() != m.build_id) {
      fprintf(stderr, "kjit-report: %s is not the recorded module %s: build id %s, the recording's is %s"
                      " (--no-build-id-check to use it anyway)\n", path.c_str(), m.name.c_str(),
              d->build_id().empty() ? "(none)" : d->build_id().c_str(), m.build_id.c_str());
      d.reset();
    }
  }
  if (d) paths_[m.name] = path;
  return (modules_[m.name] = std::move(d)).get();
}

std::string DebugImages::module_path(const Module &m) const {
  module_file(m);
  auto it = paths_.find(m.name);
  return it == paths_.end() ? "" : it->second;
}

const DebugInfo *DebugImages::locate(uint64_t addr, uint64_t &file_addr) const {
  const Module *m = rec_.module_at(addr);
  if (!m) {
    file_addr = addr - slide_;
    return vmlinux_;
  }
  const DebugInfo *d = module_file(*m);
  const Symbol *s = rec_.symbol_at(addr);
  if (!d || !s) return nullptr;
  uint64_t start = d->symbol_address(s->name);
  if (!start) return nullptr;
  file_addr = start + (addr - s->addr);
  return d;
}

bool DebugImages::any() const {
  if (vmlinux_) return true;
  for (const Module &m : rec_.modules)
    if (has_code(m) && module_file(m)) return true;
  return false;
}

bool DebugImages::has_code(const Module &m) const {
  for (const Symbol &s : rec_.symbols)
    if (s.module == m.name) return true;
  return false;
}

bool DebugImages::has_lines() const {
  if (vmlinux_ && vmlinux_->has_lines()) return true;
  for (const Module &m : rec_.modules)
    if (const DebugInfo *d = has_code(m) ? module_file(m) : nullptr; d && d->has_lines()) return true;
  return false;
}

bool DebugImages::line_at(uint64_t addr, LineRow &out) const {
  uint64_t a;
  const DebugInfo *d = locate(addr, a);
  if (!d || !d->line_at(a, out)) return false;
  out.addr = out.addr - a + addr;
  return true;
}

std::string DebugImages::function_at(uint64_t addr) const {
  uint64_t a;
  const DebugInfo *d = locate(addr, a);
  return d ? d->function_at(a) : "";
}

std::vector<LineRow> DebugImages::rows_in(uint64_t lo, uint64_t hi) const {
  uint64_t a;
  const DebugInfo *d = locate(lo, a);
  if (!d) return {};
  std::vector<LineRow> rows = d->rows_in(a, a + (hi - lo));
  for (LineRow &r : rows) r.addr = r.addr - a + lo;
  return rows;
}

std::pair<const DebugInfo *, uint64_t> DebugImages::unit_key(uint64_t addr) const {
  uint64_t a;
  const DebugInfo *d = locate(addr, a);
  uint64_t off = d ? d->unit_offset(a) : 0;
  return {off ? d : nullptr, off};
}

bool DebugImages::unit_at(uint64_t addr, RecordedUnit &out) const {
  uint64_t a;
  const DebugInfo *d = locate(addr, a);
  if (!d || !d->unit_at(a, out.unit)) return false;
  out.key = {d, out.unit.offset};
  const Module *m = rec_.module_at(addr);
  if (m && recorded_.empty())
    for (const Symbol &s : rec_.symbols)
      if (!s.module.empty()) recorded_.emplace(std::make_pair(s.module, s.name), s.addr);
  // recorded = file address + delta, per function
  std::vector<int64_t> delta(out.unit.functions.size(), m ? 0 : slide_);
  out.mapped.assign(out.unit.functions.size(), !m);
  for (size_t i = 0; m && i < out.unit.functions.size(); i++) {
    auto it = recorded_.find({m->name, out.unit.functions[i].name});
    if (it == recorded_.end()) continue;
    delta[i] = (int64_t)(it->second - out.unit.functions[i].entry);
    out.mapped[i] = true;
  }
  for (size_t i = 0; i < out.unit.functions.size(); i++) {
    UnitFunction &f = out.unit.functions[i];
    f.entry += delta[i];
    for (auto &[lo, hi] : f.ranges) lo += delta[i], hi += delta[i];
  }
  for (UnitRow &r : out.unit.rows) r.row.addr += delta[r.function];
  return true;
}

bool DebugImages::read(uint64_t addr, size_t n, std::vector<uint8_t> &out) const {
  uint64_t a;
  const DebugInfo *d = locate(addr, a);
  return d && d->read(a, n, out);
}

}  // namespace kjit::report
