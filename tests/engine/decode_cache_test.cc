// SPDX-License-Identifier: GPL-2.0
// core/decode_cache: an instruction decoded before is answered from the
// cache only while its bytes are the same; one not relative to its address
// is answered from a decode of the same encoding elsewhere, and the answer
// is the decoder's own.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "core/decode_cache.h"

namespace kjit {
namespace {

constexpr uint64_t kPc = 0xffffffff81000000ull;

class DecodeCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    decoder_.init(nullptr);
    forget_decodes();
  }
  x86::Insn decode(std::initializer_list<uint8_t> bytes, uint64_t pc = kPc) {
    uint8_t buf[15] = {};
    std::copy(bytes.begin(), bytes.end(), buf);
    x86::Insn in{};
    EXPECT_EQ(decode_cached(decoder_, pc, buf, static_cast<uint32_t>(bytes.size()), &in), x86::DecodeStatus::kOk);
    return in;
  }
  x86::Decoder decoder_;
};

TEST_F(DecodeCacheTest, AnswersTheSameInstructionAgain) {
  x86::Insn first = decode({0x48, 0x89, 0xd8});  // mov rax, rbx
  x86::Insn again = decode({0x48, 0x89, 0xd8});
  EXPECT_EQ(memcmp(&first, &again, sizeof first), 0);
  EXPECT_EQ(again.length, 3u);
}

TEST_F(DecodeCacheTest, DecodesChangedBytesAgain) {
  EXPECT_EQ(decode({0x48, 0x89, 0xd8}).length, 3u);           // mov rax, rbx
  x86::Insn patched = decode({0xe9, 0x10, 0x00, 0x00, 0x00});  // jmp +0x10, patched in
  EXPECT_EQ(patched.length, 5u);
  EXPECT_EQ(patched.cf, KJIT_CF_JMP);
  EXPECT_EQ(patched.target, kPc + 0x15);
  x86::Insn nop = decode({0x0f, 0x1f, 0x44, 0x00, 0x00});  // and patched back to a nop
  EXPECT_EQ(nop.cf, KJIT_CF_NONE);
  EXPECT_TRUE(nop.is_nop);
}

TEST_F(DecodeCacheTest, KeepsAddressesApart) {
  x86::Insn a = decode({0xe9, 0x10, 0x00, 0x00, 0x00});
  x86::Insn b = decode({0xe9, 0x10, 0x00, 0x00, 0x00}, kPc + 0x100);  // the same bytes elsewhere
  EXPECT_EQ(a.target, kPc + 0x15);
  EXPECT_EQ(b.target, kPc + 0x115);
  EXPECT_EQ(decode({0xe9, 0x10, 0x00, 0x00, 0x00}).target, kPc + 0x15);
}

TEST_F(DecodeCacheTest, AShorterReadThanTheInstructionIsDecodedAgain) {
  decode({0xe9, 0x10, 0x00, 0x00, 0x00});
  uint8_t buf[3] = {0xe9, 0x10, 0x00};  // the end of readable code
  x86::Insn in{};
  EXPECT_NE(decode_cached(decoder_, kPc, buf, sizeof buf, &in), x86::DecodeStatus::kOk);
}

TEST_F(DecodeCacheTest, AnswersTheSameEncodingElsewhereFromTheFirstDecode) {
  const DecodeCacheStats before = decode_cache_stats();
  x86::Insn a = decode({0x48, 0x8b, 0x47, 0x08});             // mov rax, [rdi+8]
  x86::Insn b = decode({0x48, 0x8b, 0x47, 0x08}, kPc + 0x40);  // the same, elsewhere
  const DecodeCacheStats after = decode_cache_stats();
  EXPECT_EQ(after.decoded - before.decoded, 1u);
  EXPECT_EQ(after.by_encoding - before.by_encoding, 1u);
  EXPECT_EQ(b.pc, kPc + 0x40);
  b.pc = a.pc;
  EXPECT_EQ(memcmp(&a, &b, sizeof a), 0);
}

TEST_F(DecodeCacheTest, DecodesWhatIsRelativeToItsAddressAtEachAddress) {
  const DecodeCacheStats before = decode_cache_stats();
  x86::Insn a = decode({0x48, 0x8b, 0x05, 0x10, 0x00, 0x00, 0x00});  // mov rax, [rip+0x10]
  x86::Insn b = decode({0x48, 0x8b, 0x05, 0x10, 0x00, 0x00, 0x00}, kPc + 0x40);
  EXPECT_EQ(a.target, kPc + 0x17);
  EXPECT_EQ(b.target, kPc + 0x57);
  EXPECT_EQ(decode({0x74, 0x05}, kPc + 0x80).target, kPc + 0x87);  // je +5
  EXPECT_EQ(decode({0x74, 0x05}, kPc + 0xc0).target, kPc + 0xc7);
  EXPECT_EQ(decode_cache_stats().by_encoding, before.by_encoding);
}

// Instruction streams drawn from a few bytes, so that encodings repeat
// (relative ones, RIP-relative ones, prefixes, invalid ones among them),
// each decoded at addresses of its own: every answer equals the decoder's.
TEST_F(DecodeCacheTest, AnswersAreTheDecodersOnRepeatingStreams) {
  const uint8_t alphabet[] = {0x48, 0x89, 0x8b, 0xe5, 0x55, 0x0f, 0x1f, 0x44, 0x00, 0xc3, 0x31, 0xc0, 0x66,
                              0x90, 0xe8, 0xf0, 0x74, 0x05, 0x25, 0x65, 0x41, 0x5d, 0xff, 0x15, 0x83, 0xc4};
  std::mt19937 rng(12345);
  std::uniform_int_distribution<uint32_t> pick(0, sizeof alphabet - 1);
  const DecodeCacheStats before = decode_cache_stats();
  uint64_t checked = 0;
  for (uint32_t stream = 0; stream < 2000; stream++) {
    uint8_t code[64];
    for (uint8_t &c : code) c = alphabet[pick(rng)];
    const uint64_t base = kPc + 0x1000ull * stream;
    for (uint32_t at = 0; at + 15 <= sizeof code;) {
      x86::Insn cached{}, fresh{};
      // 15 bytes or the rest of the stream: a copy or the code in place
      const uint32_t len = stream % 2 ? 15 : static_cast<uint32_t>(sizeof code - at);
      const x86::DecodeStatus s1 = decode_cached(decoder_, base + at, code + at, len, &cached);
      const x86::DecodeStatus s2 = decoder_.decode(base + at, code + at, len, &fresh);
      ASSERT_EQ(s1, s2) << "stream " << stream << " offset " << at;
      if (s1 != x86::DecodeStatus::kOk) {
        at++;
        continue;
      }
      ASSERT_EQ(memcmp(&cached, &fresh, sizeof cached), 0) << "stream " << stream << " offset " << at;
      checked++;
      at += fresh.length;
    }
  }
  const DecodeCacheStats after = decode_cache_stats();
  EXPECT_GT(checked, 10000u);
  EXPECT_GT(after.by_encoding - before.by_encoding, checked / 4);  // the memo did answer
}

}  // namespace
}  // namespace kjit
