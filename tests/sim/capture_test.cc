// SPDX-License-Identifier: GPL-2.0
#include "capture_file.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <unistd.h>

#include "capture_builder.h"

namespace kjit::sim {
namespace {

// A tiny independent encoder, so corrupt files can be built with correct
// CRCs around the one field under test.
struct Raw {
  std::vector<uint8_t> b;
  Raw &u32(uint32_t v) { for (int i = 0; i < 4; i++) b.push_back(uint8_t(v >> (8 * i))); return *this; }
  Raw &u64(uint64_t v) { for (int i = 0; i < 8; i++) b.push_back(uint8_t(v >> (8 * i))); return *this; }
  Raw &bytes(const std::vector<uint8_t> &v) { b.insert(b.end(), v.begin(), v.end()); return *this; }
};

std::vector<uint8_t> region(uint64_t addr, std::vector<uint8_t> bytes, uint32_t perms) {
  Raw r;
  r.u64(addr).u64(bytes.size()).u32(perms).u32(0).bytes(bytes);
  return r.b;
}

std::vector<uint8_t> regions(std::initializer_list<std::vector<uint8_t>> rs) {
  Raw r;
  r.u32(static_cast<uint32_t>(rs.size()));
  for (const auto &x : rs) r.bytes(x);
  return r.b;
}

std::vector<uint8_t> regs() { return std::vector<uint8_t>(160, 0); }
std::vector<uint8_t> entry(uint64_t pc, uint64_t sentinel) { return Raw().u64(pc).u64(sentinel).b; }

std::vector<uint8_t> file(const std::vector<std::pair<uint32_t, std::vector<uint8_t>>> &sections,
                          uint32_t version = 1, uint32_t flags = 0) {
  Raw f;
  f.bytes({'K', 'J', 'I', 'T', 'C', 'A', 'P', 0}).u32(version).u32(uint32_t(sections.size())).u32(flags).u32(0);
  for (const auto &[type, payload] : sections)
    f.u32(type).u64(payload.size()).u32(section_crc(type, payload.data(), payload.size())).bytes(payload);
  return f.b;
}

std::vector<std::pair<uint32_t, std::vector<uint8_t>>> good_sections() {
  return {{1, regions({region(0x1000, {0x90, 0xc3}, kPermR | kPermX), region(0x3000, {1, 2, 3}, kPermR | kPermW)})},
          {2, regs()},
          {3, entry(0x1000, 0x9000)},
          {4, {'n', 'a', 'm', 'e'}}};
}

std::string parse(const std::vector<uint8_t> &f) {
  Capture c;
  return parse_capture(f.data(), f.size(), &c);
}

Capture small_capture() {
  CaptureBuilder b;
  b.add_region(0xffffffff81000000ull, {0x48, 0x89, 0xf8, 0xc3}, kPermR | kPermX)
      .add_region(0xffff888000001000ull, {1, 2, 3, 4, 5}, kPermR | kPermW)
      .set_gpr(0, 0x1111).set_gpr(15, 0xffff).set_gs_base(0x4242).set_fs_base(0x4343).set_rflags(0x246)
      .set_entry(0xffffffff81000000ull)
      .set_name("small")
      .add_raw_section(0x100, {9, 8, 7});
  Capture c;
  EXPECT_EQ(b.build(&c), "");
  return c;
}

TEST(Capture, RoundTrip) {
  const Capture c = small_capture();
  std::vector<uint8_t> bytes;
  ASSERT_EQ(serialize_capture(c, &bytes), "");
  Capture d;
  ASSERT_EQ(parse_capture(bytes.data(), bytes.size(), &d), "");
  ASSERT_EQ(d.regions.size(), 2u);
  for (size_t i = 0; i < 2; i++) {
    EXPECT_EQ(d.regions[i].addr, c.regions[i].addr);
    EXPECT_EQ(d.regions[i].perms, c.regions[i].perms);
    EXPECT_EQ(d.regions[i].bytes, c.regions[i].bytes);
  }
  EXPECT_EQ(d.regs.gpr, c.regs.gpr);
  EXPECT_EQ(d.regs.rip, c.regs.rip);
  EXPECT_EQ(d.regs.rflags, 0x246u);
  EXPECT_EQ(d.regs.gs_base, 0x4242u);
  EXPECT_EQ(d.regs.fs_base, 0x4343u);
  EXPECT_EQ(d.entry_pc, c.entry_pc);
  EXPECT_EQ(d.sentinel, c.sentinel);
  EXPECT_EQ(d.name, "small");
  ASSERT_EQ(d.extra.size(), 1u);
  EXPECT_EQ(d.extra[0].type, 0x100u);
  EXPECT_EQ(d.extra[0].payload, (std::vector<uint8_t>{9, 8, 7}));
  std::vector<uint8_t> again;
  ASSERT_EQ(serialize_capture(d, &again), "");
  EXPECT_EQ(again, bytes);
}

TEST(Capture, FileRoundTrip) {
  char path[] = "/tmp/kjit-capture-XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  close(fd);
  ASSERT_EQ(save_capture_file(path, small_capture()), "");
  Capture d;
  EXPECT_EQ(load_capture_file(path, &d), "");
  EXPECT_EQ(d.name, "small");
  unlink(path);
  EXPECT_NE(load_capture_file(path, &d), "");
}

TEST(Capture, EveryTruncationIsAnError) {
  std::vector<uint8_t> bytes;
  ASSERT_EQ(serialize_capture(small_capture(), &bytes), "");
  for (size_t n = 0; n < bytes.size(); n++) {
    std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + n);
    EXPECT_NE(parse(cut), "") << "truncated to " << n << " bytes";
  }
}

TEST(Capture, EverySingleByteCorruptionIsHandled) {
  // Not every flip is detectable (e.g. a flip in a stored CRC is, a flip in
  // the reserved-zero fields is), but none may crash; payload flips must
  // all be caught by the CRC.
  std::vector<uint8_t> bytes;
  ASSERT_EQ(serialize_capture(small_capture(), &bytes), "");
  // Section headers and payloads are all under a CRC; the file header's
  // fields are all checked: every flip must be caught.
  for (size_t i = 0; i < bytes.size(); i++) {
    std::vector<uint8_t> bad = bytes;
    bad[i] ^= 0x5a;
    EXPECT_NE(parse(bad), "") << "flip at " << i;
  }
}

TEST(Capture, ValidFileParses) { EXPECT_EQ(parse(file(good_sections())), ""); }

TEST(Capture, HeaderErrors) {
  auto f = file(good_sections());
  f[0] = 'X';
  EXPECT_NE(parse(f).find("magic"), std::string::npos);
  // A version newer than the reader knows is refused.
  EXPECT_NE(parse(file(good_sections(), kCaptureVersion + 1)).find("version"), std::string::npos);
  EXPECT_NE(parse(file(good_sections(), 1, 1)).find("flags"), std::string::npos);
  f = file(good_sections());
  f[12] = 0xff;  // section count
  EXPECT_NE(parse(f), "");
  f = file(good_sections());
  f.push_back(0);
  EXPECT_NE(parse(f).find("trailing"), std::string::npos);
}

TEST(Capture, BadCrcIsAnError) {
  auto f = file(good_sections());
  f.back() ^= 1;  // last byte of the NAME payload
  EXPECT_NE(parse(f).find("CRC"), std::string::npos);
}

TEST(Capture, SectionLengthBeyondFileIsAnError) {
  auto s = good_sections();
  auto f = file(s);
  // First section header starts at 24: type(4) then length(8).
  f[28 + 7] = 0x7f;
  EXPECT_NE(parse(f).find("exceeds"), std::string::npos);
}

TEST(Capture, RegionErrors) {
  auto with_regions = [](std::vector<uint8_t> r) {
    auto s = good_sections();
    s[0].second = std::move(r);
    return parse(file(s));
  };
  const auto code = region(0x1000, {0x90, 0xc3}, kPermR | kPermX);
  EXPECT_NE(with_regions(regions({code, region(0x1001, {1}, kPermR)})).find("overlaps"), std::string::npos);
  EXPECT_NE(with_regions(regions({region(0x3000, {1}, kPermR), code})).find("sorted"), std::string::npos);
  EXPECT_NE(with_regions(regions({code, region(0x3000, {}, kPermR)})), "");
  EXPECT_NE(with_regions(regions({code, region(0x3000, {1}, 8)})).find("permission"), std::string::npos);
  EXPECT_NE(with_regions(regions({code, region(0xffffffffffffffffull, {1, 2}, kPermR)})), "");
  auto r = regions({code});
  r[0] = 200;  // count far beyond the payload
  EXPECT_NE(with_regions(r).find("count"), std::string::npos);
  r = regions({code});
  r[4 + 8] = 50;  // region size beyond the section
  EXPECT_NE(with_regions(r).find("exceeds"), std::string::npos);
  r = regions({code});
  r.push_back(0);
  EXPECT_NE(with_regions(r).find("trailing"), std::string::npos);
  EXPECT_NE(with_regions(regions({})), "");
}

TEST(Capture, SectionErrors) {
  auto s = good_sections();
  s[1].second.pop_back();
  EXPECT_NE(parse(file(s)).find("REGS"), std::string::npos);
  s = good_sections();
  s[2].second.push_back(0);
  EXPECT_NE(parse(file(s)).find("ENTRY"), std::string::npos);
  s = good_sections();
  s[3].second[1] = 0;
  EXPECT_NE(parse(file(s)).find("NUL"), std::string::npos);
  s = good_sections();
  s.push_back(s[1]);
  EXPECT_NE(parse(file(s)).find("duplicate"), std::string::npos);
  for (size_t missing = 0; missing < 3; missing++) {
    s = good_sections();
    s.erase(s.begin() + missing);
    EXPECT_NE(parse(file(s)).find("missing"), std::string::npos);
  }
  s = good_sections();
  s[2].second = entry(0x3000, 0x9000);  // entry in a non-executable region
  EXPECT_NE(parse(file(s)).find("executable"), std::string::npos);
  s[2].second = entry(0x5000, 0x9000);  // entry outside every region
  EXPECT_NE(parse(file(s)), "");
  s[2].second = entry(0x1000, 0x3001);  // sentinel inside a region
  EXPECT_NE(parse(file(s)).find("sentinel"), std::string::npos);
}

TEST(Capture, UnknownSectionsAreSkippedButChecked) {
  auto s = good_sections();
  s.push_back({0x102, {1, 2, 3}});
  s.push_back({0x7777, {}});
  Capture c;
  auto f = file(s);
  ASSERT_EQ(parse_capture(f.data(), f.size(), &c), "");
  ASSERT_EQ(c.extra.size(), 2u);
  EXPECT_EQ(c.extra[1].type, 0x7777u);
  f[f.size() - 16 - 3] ^= 1;  // a byte of the BLOCKS payload
  EXPECT_NE(parse(f).find("CRC"), std::string::npos);
}

// KERNEL (6): the release and build id that name the debug vmlinux; a
// malformed one is no kernel at all, not an error.
TEST(Capture, KernelSectionNamesTheKernel) {
  auto section = [](const std::string &release, const std::string &bid) {
    RawSection s;
    s.type = KJIT_CAPF_KERNEL;
    for (const std::string *str : {&release, &bid}) {
      const uint32_t n = static_cast<uint32_t>(str->size());
      s.payload.insert(s.payload.end(), reinterpret_cast<const uint8_t *>(&n), reinterpret_cast<const uint8_t *>(&n) + 4);
      s.payload.insert(s.payload.end(), str->begin(), str->end());
    }
    return s;
  };
  Capture cap;
  EXPECT_EQ(capture_kernel(cap).release, "");
  cap.extra.push_back(section("6.1.0-57-cloud-amd64", "01d2640d3a13145ee314eb05b155f141b7b7058b"));
  EXPECT_EQ(capture_kernel(cap).release, "6.1.0-57-cloud-amd64");
  EXPECT_EQ(capture_kernel(cap).build_id, "01d2640d3a13145ee314eb05b155f141b7b7058b");
  cap.extra[0] = section("6.1.0 with a space", "");
  EXPECT_EQ(capture_kernel(cap).release, "");
  cap.extra[0] = section("6.1.0", "");
  cap.extra[0].payload.push_back(0);  // a byte past the two strings
  EXPECT_EQ(capture_kernel(cap).release, "");
  cap.extra[0] = section(std::string(KJIT_CAPF_KERNEL_STRING_MAX + 1, 'a'), "");
  EXPECT_EQ(capture_kernel(cap).release, "");
  cap.extra[0].payload.resize(3);  // not even a length
  EXPECT_EQ(capture_kernel(cap).release, "");
}

TEST(Capture, WriterRefusesInvalidCaptures) {
  Capture c = small_capture();
  c.regions[1].addr = c.regions[0].addr + 1;
  std::vector<uint8_t> out;
  EXPECT_NE(serialize_capture(c, &out), "");
  EXPECT_TRUE(out.empty());
}

TEST(Capture, Crc32KnownValue) {
  const char *s = "123456789";
  const auto *p = reinterpret_cast<const uint8_t *>(s);
  EXPECT_EQ(crc32(p, 9), 0xcbf43926u);
  EXPECT_EQ(crc32_update(crc32(p, 4), p + 4, 5), 0xcbf43926u);
}

}  // namespace
}  // namespace kjit::sim
