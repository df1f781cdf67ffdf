// SPDX-License-Identifier: GPL-2.0
#include "elf_loader.h"

#include <cstring>
#include <fstream>
#include <iterator>

namespace kjit::sim {
namespace {

// ELF constants (from the ELF specification; not including <elf.h> keeps
// the reader's assumptions visible here).
constexpr uint32_t kShtSymtab = 2, kShtNobits = 8;
constexpr uint64_t kShfWrite = 1, kShfAlloc = 2, kShfExec = 4;
constexpr uint8_t kSttFunc = 2;
constexpr uint16_t kShnUndef = 0;

struct Bytes {
  const std::vector<uint8_t> &f;
  bool in(uint64_t off, uint64_t len) const { return off <= f.size() && len <= f.size() - off; }
  template <typename T>
  T get(uint64_t off) const {
    T v = 0;
    for (size_t i = 0; i < sizeof(T); i++) v |= static_cast<T>(f[off + i]) << (8 * i);
    return v;
  }
};

struct Shdr {
  uint32_t name, type;
  uint64_t flags, addr, offset, size;
  uint32_t link;
  uint64_t entsize;
};

}  // namespace

std::string parse_elf(const std::vector<uint8_t> &file, ElfImage *out) {
  *out = ElfImage{};
  Bytes b{file};
  if (!b.in(0, 64) || memcmp(file.data(), "\x7f" "ELF", 4) != 0) return "not an ELF file";
  if (file[4] != 2) return "not a 64-bit ELF file";
  if (file[5] != 1) return "not a little-endian ELF file";
  const uint64_t shoff = b.get<uint64_t>(0x28);
  const uint16_t shentsize = b.get<uint16_t>(0x3a), shnum = b.get<uint16_t>(0x3c),
                 shstrndx = b.get<uint16_t>(0x3e);
  if (shnum == 0) return "no section headers";
  if (shentsize < 64) return "section header entries too small";
  if (!b.in(shoff, uint64_t{shentsize} * shnum)) return "section headers out of file bounds";
  if (shstrndx >= shnum) return "bad section name table index";
  std::vector<Shdr> sh(shnum);
  for (uint16_t i = 0; i < shnum; i++) {
    const uint64_t o = shoff + uint64_t{shentsize} * i;
    sh[i] = Shdr{b.get<uint32_t>(o), b.get<uint32_t>(o + 4), b.get<uint64_t>(o + 8),
                 b.get<uint64_t>(o + 16), b.get<uint64_t>(o + 24), b.get<uint64_t>(o + 32),
                 b.get<uint32_t>(o + 40), b.get<uint64_t>(o + 56)};
    if (sh[i].type != kShtNobits && !b.in(sh[i].offset, sh[i].size))
      return "section " + std::to_string(i) + " out of file bounds";
  }
  // A NUL-terminated string inside string-table section `tab`.
  auto str = [&](uint16_t tab, uint64_t off) -> std::string {
    const Shdr &t = sh[tab];
    if (t.type == kShtNobits || off >= t.size) return "";
    const char *p = reinterpret_cast<const char *>(file.data() + t.offset + off);
    return std::string(p, strnlen(p, t.size - off));
  };
  for (uint16_t i = 0; i < shnum; i++) {
    const Shdr &s = sh[i];
    if (!(s.flags & kShfAlloc) || s.addr == 0 || s.size == 0) continue;
    ElfSection sec;
    sec.name = str(shstrndx, s.name);
    sec.addr = s.addr;
    sec.size = s.size;
    sec.writable = s.flags & kShfWrite;
    sec.executable = s.flags & kShfExec;
    sec.nobits = s.type == kShtNobits;
    if (!sec.nobits) sec.bytes.assign(file.begin() + s.offset, file.begin() + s.offset + s.size);
    out->sections.push_back(std::move(sec));
  }
  for (uint16_t i = 0; i < shnum; i++) {
    const Shdr &s = sh[i];
    if (s.type != kShtSymtab) continue;
    if (s.link >= shnum) return "symbol table has a bad string table link";
    if (s.entsize < 24) return "symbol table entries too small";
    for (uint64_t o = s.offset; o + s.entsize <= s.offset + s.size; o += s.entsize) {
      const uint8_t info = file[o + 4];
      const uint16_t shndx = b.get<uint16_t>(o + 6);
      if (shndx == kShnUndef) continue;
      ElfSymbol sym;
      sym.name = str(static_cast<uint16_t>(s.link), b.get<uint32_t>(o));
      sym.value = b.get<uint64_t>(o + 8);
      sym.size = b.get<uint64_t>(o + 16);
      sym.function = (info & 0xf) == kSttFunc;
      if (!sym.name.empty()) out->symbols.push_back(std::move(sym));
    }
  }
  return "";
}

std::string load_elf_file(const std::string &path, ElfImage *out) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return "cannot open " + path;
  std::vector<uint8_t> data((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::string err = parse_elf(data, out);
  return err.empty() ? "" : path + ": " + err;
}

}  // namespace kjit::sim
