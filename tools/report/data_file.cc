// SPDX-License-Identifier: GPL-2.0
#include "data_file.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "uapi/kjit/capture_format.h"

namespace kjit::report {
namespace {

std::string fmt(const char *f, unsigned long long a, unsigned long long b = 0) {
  char buf[256];
  snprintf(buf, sizeof buf, f, a, b);
  return buf;
}

// "key=value\n" lines; every line must have a key and a '='.
bool parse_kv(const uint8_t *p, size_t n, std::map<std::string, std::string> &out, const char *what,
              std::string &error) {
  std::string s(reinterpret_cast<const char *>(p), n);
  size_t pos = 0;
  while (pos < s.size()) {
    size_t end = s.find('\n', pos);
    if (end == std::string::npos) { error = std::string(what) + ": last line has no newline"; return false; }
    std::string line = s.substr(pos, end - pos);
    size_t eq = line.find('=');
    if (eq == 0 || eq == std::string::npos || line.find('\0') != std::string::npos) {
      error = std::string(what) + ": malformed line \"" + line.substr(0, 60) + "\"";
      return false;
    }
    out[line.substr(0, eq)] = line.substr(eq + 1);
    pos = end + 1;
  }
  return true;
}

template <typename T>
bool parse_array(const uint8_t *p, size_t n, std::vector<T> &out, const char *what, std::string &error) {
  if (n % sizeof(T)) {
    error = std::string(what) + fmt(": %llu bytes is not a whole number of %llu-byte records", n, sizeof(T));
    return false;
  }
  out.resize(n / sizeof(T));
  if (n) memcpy(out.data(), p, n);
  return true;
}

// EVENTS of a version 1 file: no instruction counts (flags 0).
bool parse_events_v1(const uint8_t *p, size_t n, std::vector<kjit_data_event> &out, std::string &error) {
  std::vector<kjit_data_event_v1> v1;
  if (!parse_array(p, n, v1, "EVENTS", error)) return false;
  out.reserve(v1.size());
  for (const auto &e : v1) out.push_back(kjit_data_event{e.pc, e.sp, e.ns, e.pid, e.cpu, e.type, 0, 0, 0, 0});
  return true;
}

bool parse_symbols(const uint8_t *p, size_t n, std::vector<Symbol> &out, std::string &error) {
  size_t off = 0;
  while (off < n) {
    kjit_data_symbol s;
    if (n - off < sizeof s) { error = "SYMBOLS: truncated record"; return false; }
    memcpy(&s, p + off, sizeof s);
    off += sizeof s;
    size_t padded = (s.name_len + 7u) & ~7u;
    if (!s.name_len || n - off < padded) { error = "SYMBOLS: bad name length"; return false; }
    Symbol sym{s.addr, s.size, std::string(reinterpret_cast<const char *>(p + off), s.name_len)};
    if (sym.name.find('\0') != std::string::npos) { error = "SYMBOLS: NUL in a name"; return false; }
    out.push_back(std::move(sym));
    off += padded;
  }
  std::sort(out.begin(), out.end(), [](const Symbol &a, const Symbol &b) { return a.addr < b.addr; });
  return true;
}

// "name base size build_id" lines (data_format.h); names are what
// /proc/modules shows, bases and sizes must not wrap or overlap.
bool parse_modules(const uint8_t *p, size_t n, std::vector<Module> &out, std::string &error) {
  std::string s(reinterpret_cast<const char *>(p), n);
  size_t pos = 0;
  while (pos < s.size()) {
    size_t end = s.find('\n', pos);
    if (end == std::string::npos) { error = "MODULES: last line has no newline"; return false; }
    std::string line = s.substr(pos, end - pos);
    pos = end + 1;
    char name[64], bid[130];
    unsigned long long base, size;
    int used = 0;
    if (sscanf(line.c_str(), "%63s %llx %llu %129s%n", name, &base, &size, bid, &used) != 4 ||
        (size_t)used != line.size() || !size || base + size < base ||
        strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") != strlen(name) ||
        (strcmp(bid, "-") && strspn(bid, "0123456789abcdef") != strlen(bid))) {
      error = "MODULES: malformed line \"" + line.substr(0, 60) + "\"";
      return false;
    }
    out.push_back(Module{name, base, size, strcmp(bid, "-") ? bid : ""});
  }
  std::sort(out.begin(), out.end(), [](const Module &a, const Module &b) { return a.base < b.base; });
  for (size_t i = 1; i < out.size(); i++)
    if (out[i].base < out[i - 1].base + out[i - 1].size) {
      error = "MODULES: " + out[i - 1].name + " and " + out[i].name + " overlap";
      return false;
    }
  return true;
}

}  // namespace

const Module *Recording::module_at(uint64_t addr) const {
  auto it = std::upper_bound(modules.begin(), modules.end(), addr,
                             [](uint64_t a, const Module &m) { return a < m.base; });
  if (it == modules.begin()) return nullptr;
  --it;
  return addr - it->base < it->size ? &*it : nullptr;
}

const std::string &Recording::tool() const {
  static const std::string none;
  auto it = meta.find("tool");
  return it == meta.end() ? none : it->second;
}

const Symbol *Recording::symbol_at(uint64_t addr) const {
  auto it = std::upper_bound(symbols.begin(), symbols.end(), addr,
                             [](uint64_t a, const Symbol &s) { return a < s.addr; });
  if (it == symbols.begin()) return nullptr;
  --it;
  return addr - it->addr < std::max<uint64_t>(it->size, 1) ? &*it : nullptr;
}

std::string Recording::name_of(uint64_t addr) const {
  const Symbol *s = symbol_at(addr);
  char buf[64];
  if (!s) {
    if (const Module *m = module_at(addr)) {
      snprintf(buf, sizeof buf, "+0x%llx", (unsigned long long)(addr - m->base));
      return m->name + buf;
    }
    snprintf(buf, sizeof buf, "0x%llx", (unsigned long long)addr);
    return buf;
  }
  if (addr == s->addr) return s->full_name();
  snprintf(buf, sizeof buf, "+0x%llx", (unsigned long long)(addr - s->addr));
  return s->full_name() + buf;
}

bool parse_recording(const uint8_t *d, size_t size, Recording &out, std::string &error) {
  out = Recording{};
  if (size < KJIT_DATA_HEADER_SIZE || memcmp(d, KJIT_DATA_MAGIC, 8)) {
    error = "not a kjit data file (no KJITDATA header)";
    return false;
  }
  uint32_t version, nsec;
  memcpy(&version, d + 8, 4);
  memcpy(&nsec, d + 12, 4);
  if (version < 1 || version > KJIT_DATA_VERSION) {
    error = fmt("data file version %llu; this kjit-report reads versions 1 to %llu", version, KJIT_DATA_VERSION);
    return false;
  }
  out.version = version;
  size_t off = KJIT_DATA_HEADER_SIZE;
  uint32_t seen = 0;
  for (uint32_t i = 0; i < nsec; i++) {
    if (size - off < KJIT_DATA_SECTION_HEADER_SIZE) {
      error = fmt("truncated: section %llu of %llu has no header", i + 1, nsec);
      return false;
    }
    uint32_t type, crc;
    uint64_t len;
    memcpy(&type, d + off, 4);
    memcpy(&crc, d + off + 4, 4);
    memcpy(&len, d + off + 8, 8);
    off += KJIT_DATA_SECTION_HEADER_SIZE;
    uint64_t padded = (len + 7) & ~7ull;
    if (len > KJIT_DATA_MAX_SECTION || padded > size - off) {
      error = fmt("truncated: section %llu needs %llu bytes", i + 1, len);
      return false;
    }
    const uint8_t *p = d + off;
    if (kjit_capf_section_crc(type, p, len) != crc) {
      error = fmt("corrupt: section %llu (type %llu) fails its checksum", i + 1, type);
      return false;
    }
    off += padded;
    if (type < 32) {
      if (seen & (1u << type)) { error = fmt("section type %llu appears twice", type); return false; }
      seen |= 1u << type;
    }
    bool ok = true;
    switch (type) {
      case KJIT_DATA_META: ok = parse_kv(p, len, out.meta, "META", error); break;
      case KJIT_DATA_STATS: ok = parse_kv(p, len, out.stats, "STATS", error); break;
      case KJIT_DATA_BLOCKS: ok = parse_array(p, len, out.blocks, "BLOCKS", error); break;
      case KJIT_DATA_EVENTS:
        ok = version == 1 ? parse_events_v1(p, len, out.events, error) : parse_array(p, len, out.events, "EVENTS", error);
        break;
      case KJIT_DATA_CALLS: ok = parse_array(p, len, out.calls, "CALLS", error); break;
      case KJIT_DATA_BRANCHES: ok = parse_array(p, len, out.branches, "BRANCHES", error); break;
      case KJIT_DATA_SYMBOLS: ok = parse_symbols(p, len, out.symbols, error); break;
      case KJIT_DATA_TARGETS: out.targets.assign(reinterpret_cast<const char *>(p), len); break;
      case KJIT_DATA_MODULES: ok = parse_modules(p, len, out.modules, error); break;
      default: break;  // a newer writer's section
    }
    if (!ok) return false;
  }
  if (off != size) { error = fmt("%llu bytes after the last section", size - off); return false; }
  if (!(seen & (1u << KJIT_DATA_META))) { error = "no META section"; return false; }
  for (const char *k : {"tool", "stext", "kernel_release"})
    if (!out.meta.count(k)) { error = std::string("META has no ") + k; return false; }
  for (Symbol &sym : out.symbols)
    if (const Module *m = out.module_at(sym.addr)) {   // its extent ends with the module
      sym.module = m->name;
      sym.size = static_cast<uint32_t>(std::min<uint64_t>(sym.size, m->base + m->size - sym.addr));
    }
  char *end = nullptr;
  out.stext = strtoull(out.meta["stext"].c_str(), &end, 0);
  if (!end || *end || !out.stext) { error = "META stext is not an address"; return false; }
  for (const auto &b : out.blocks)
    if (!b.len || !b.ninsn || b.len > 4096 || b.ninsn > b.len) {
      error = fmt("BLOCKS: block at 0x%llx has length %llu", b.addr, b.len);
      return false;
    }
  // A conditional branch is at most 6 bytes and jumps at most 2 GiB away.
  for (const auto &b : out.branches)
    if (b.target - b.addr + (1ull << 31) > (1ull << 32)) {
      error = fmt("BRANCHES: branch at 0x%llx jumps to 0x%llx", b.addr, b.target);
      return false;
    }
  for (const auto &e : out.events)
    if (e.type < KJIT_DATA_EV_ENTRY || e.type > KJIT_DATA_EV_RETURN || (e.flags & ~KJIT_DATA_EV_INSNS)) {
      error = fmt("EVENTS: event type %llu, flags %llu", e.type, e.flags);
      return false;
    }
  return true;
}

bool read_recording(const std::string &path, Recording &out, std::string &error) {
  FILE *f = fopen(path.c_str(), "rb");
  if (!f) { error = path + ": " + strerror(errno); return false; }
  std::vector<uint8_t> buf;
  uint8_t chunk[1 << 16];
  size_t n;
  while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
    buf.insert(buf.end(), chunk, chunk + n);
    if (buf.size() > (1ull << 32)) { fclose(f); error = path + ": larger than 4 GiB"; return false; }
  }
  bool io_error = ferror(f);
  fclose(f);
  if (io_error) { error = path + ": read error"; return false; }
  if (!parse_recording(buf.data(), buf.size(), out, error)) { error = path + ": " + error; return false; }
  return true;
}

}  // namespace kjit::report
