// SPDX-License-Identifier: GPL-2.0
#include "capture_builder.h"

#include <gtest/gtest.h>

#include <cstring>

#include "elf_loader.h"
#include "kjit/plugin.h"
#include "reference_runner.h"

namespace kjit::sim {
namespace {

// Writes a minimal ELF64 file: sections .text (AX), .data (WA), .bss
// (WA, NOBITS), .symtab, .strtab, .shstrtab.
std::vector<uint8_t> tiny_elf() {
  std::vector<uint8_t> f(64, 0);
  auto put = [&f](size_t off, uint64_t v, int n) {
    for (int i = 0; i < n; i++) f[off + i] = uint8_t(v >> (8 * i));
  };
  memcpy(f.data(), "\x7f" "ELF", 4);
  f[4] = 2;  // 64-bit
  f[5] = 1;  // little endian
  f[6] = 1;
  const std::vector<uint8_t> text = {0x48, 0x8d, 0x04, 0x37, 0xc3};  // lea rax,[rdi+rsi]; ret
  const std::vector<uint8_t> data = {1, 2, 3, 4};
  const std::string shstr = std::string("\0.text\0.data\0.bss\0.symtab\0.strtab\0.shstrtab\0", 46);
  const std::string str = std::string("\0add2\0", 6);
  auto append = [&f](const void *p, size_t n) {
    const size_t at = f.size();
    f.insert(f.end(), static_cast<const uint8_t *>(p), static_cast<const uint8_t *>(p) + n);
    return at;
  };
  const size_t text_off = append(text.data(), text.size());
  const size_t data_off = append(data.data(), data.size());
  std::vector<uint8_t> sym(48, 0);  // null symbol + add2
  sym[24] = 1;                      // name offset
  sym[24 + 4] = 0x12;               // GLOBAL FUNC
  sym[24 + 6] = 1;                  // shndx = .text
  const uint64_t add2 = 0xffffffff81000000ull;
  memcpy(&sym[24 + 8], &add2, 8);
  const size_t sym_off = append(sym.data(), sym.size());
  const size_t str_off = append(str.data(), str.size());
  const size_t shstr_off = append(shstr.data(), shstr.size());
  while (f.size() % 8) f.push_back(0);
  const size_t shoff = f.size();
  struct S { uint32_t name, type; uint64_t flags, addr, off, size; uint32_t link; uint64_t entsize; };
  const S secs[] = {
      {0, 0, 0, 0, 0, 0, 0, 0},
      {1, 1, 6, add2, text_off, text.size(), 0, 0},                       // .text
      {7, 1, 3, 0xffffffff82000000ull, data_off, data.size(), 0, 0},     // .data
      {13, 8, 3, 0xffffffff82001000ull, 0, 64, 0, 0},                     // .bss
      {18, 2, 0, 0, sym_off, sym.size(), 5, 24},                          // .symtab
      {26, 3, 0, 0, str_off, str.size(), 0, 0},                           // .strtab
      {34, 3, 0, 0, shstr_off, shstr.size(), 0, 0},                       // .shstrtab
  };
  for (const S &s : secs) {
    const size_t o = f.size();
    f.resize(o + 64, 0);
    put(o, s.name, 4);
    put(o + 4, s.type, 4);
    put(o + 8, s.flags, 8);
    put(o + 16, s.addr, 8);
    put(o + 24, s.off, 8);
    put(o + 32, s.size, 8);
    put(o + 40, s.link, 4);
    put(o + 56, s.entsize, 8);
  }
  put(0x28, shoff, 8);
  put(0x3a, 64, 2);
  put(0x3c, 7, 2);
  put(0x3e, 6, 2);
  return f;
}

TEST(Elf, ParsesSectionsAndSymbols) {
  ElfImage img;
  ASSERT_EQ(parse_elf(tiny_elf(), &img), "");
  ASSERT_EQ(img.sections.size(), 3u);
  EXPECT_EQ(img.sections[0].name, ".text");
  EXPECT_TRUE(img.sections[0].executable);
  EXPECT_TRUE(img.sections[1].writable);
  EXPECT_TRUE(img.sections[2].nobits);
  ASSERT_EQ(img.symbols.size(), 1u);
  EXPECT_EQ(img.symbols[0].name, "add2");
  EXPECT_TRUE(img.symbols[0].function);
}

TEST(Elf, RejectsTruncatedFilesWithoutCrashing) {
  const auto f = tiny_elf();
  for (size_t n = 0; n < f.size(); n += 7) {
    ElfImage img;
    parse_elf(std::vector<uint8_t>(f.begin(), f.begin() + n), &img);  // must not crash
  }
  ElfImage img;
  EXPECT_NE(parse_elf(std::vector<uint8_t>(f.begin(), f.begin() + 40), &img), "");
}

TEST(CaptureBuilder, BuildsARunnableCaptureFromElf) {
  ElfImage img;
  ASSERT_EQ(parse_elf(tiny_elf(), &img), "");
  CaptureBuilder b;
  ASSERT_EQ(b.add_elf_sections(img, {".text", ".data", ".bss"}), "");
  EXPECT_NE(b.add_elf_sections(img, {".nope"}), "");
  b.add_stack(0xffffc90000010000ull, 0x4000).set_arg(0, 40).set_arg(1, 2).set_entry(img.symbols[0].value);
  Capture cap;
  ASSERT_EQ(b.build(&cap), "");
  EXPECT_EQ(cap.regs.rip, cap.entry_pc);
  const ReferenceResult r = run_reference(cap);
  ASSERT_EQ(r.run.reason, StopReason::kSentinel) << r.run.message;
  EXPECT_EQ(r.final_regs.gpr[KJIT_REG_RAX], 42u);
}

TEST(CaptureBuilder, RejectsInvalidLayouts) {
  CaptureBuilder b;
  b.add_region(0x1000, {0xc3}, kPermR | kPermX).add_region(0x1000, {0}, kPermR).set_entry(0x1000);
  Capture cap;
  EXPECT_NE(b.build(&cap), "");
}

}  // namespace
}  // namespace kjit::sim
