// SPDX-License-Identifier: GPL-2.0
// core/decode_cache: an instruction decoded before is answered from the
// cache only while its bytes are the same; one not relative to its address
// is answered from a decode of the same encoding elsewhere, one relative to
// it from a decode of the same shape elsewhere, relocated; and the answer
// is the decoder's own.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

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

TEST_F(DecodeCacheTest, RelocatesWhatIsRelativeToItsAddress) {
  const DecodeCacheStats before = decode_cache_stats();
  x86::Insn a = decode({0x48, 0x8b, 0x05, 0x10, 0x00, 0x00, 0x00});  // mov rax, [rip+0x10]
  x86::Insn b = decode({0x48, 0x8b, 0x05, 0x10, 0x00, 0x00, 0x00}, kPc + 0x40);
  x86::Insn c = decode({0x48, 0x8b, 0x05, 0xf0, 0xff, 0xff, 0xff}, kPc + 0x80);  // [rip-0x10]
  EXPECT_EQ(a.target, kPc + 0x17);
  EXPECT_EQ(b.target, kPc + 0x57);
  EXPECT_EQ(c.target, kPc + 0x77);
  EXPECT_EQ(c.bytes[3], 0xf0);
  EXPECT_EQ(decode({0x74, 0x05}, kPc + 0x80).target, kPc + 0x87);  // je +5
  EXPECT_EQ(decode({0x74, 0xfb}, kPc + 0xc0).target, kPc + 0xbd);  // je -5
  const DecodeCacheStats after = decode_cache_stats();
  EXPECT_EQ(after.by_encoding, before.by_encoding);
  EXPECT_EQ(after.decoded - before.decoded, 2u);    // the first mov, the first je
  EXPECT_EQ(after.relocated - before.relocated, 3u);
}

// The target of a relocated call or jump is classified again: a call to a
// thunk is indirect, one to __fentry__ is fentry's, a jump to the return
// thunk returns, whatever the first decode of that shape was.
TEST_F(DecodeCacheTest, ClassifiesARelocatedBranchByItsNewTarget) {
  kjit_os_kernel_facts f;
  memset(&f, 0, sizeof f);
  f.return_thunk = kPc + 0x10000;
  f.fentry = kPc + 0x20000;
  f.retpoline_thunk[KJIT_REG_RAX] = kPc + 0x30000;
  decoder_.init(&f);
  auto rel32 = [](uint8_t opcode, uint64_t at, uint64_t target) {
    const int32_t rel = static_cast<int32_t>(target - (at + 5));
    return std::vector<uint8_t>{opcode, static_cast<uint8_t>(rel), static_cast<uint8_t>(rel >> 8),
                                static_cast<uint8_t>(rel >> 16), static_cast<uint8_t>(rel >> 24)};
  };
  auto at = [&](const std::vector<uint8_t> &b, uint64_t pc) {
    uint8_t buf[16] = {};
    std::copy(b.begin(), b.end(), buf);
    x86::Insn cached{}, fresh{};
    EXPECT_EQ(decode_cached(decoder_, pc, buf, 5, &cached), x86::DecodeStatus::kOk);
    EXPECT_EQ(decoder_.decode(pc, buf, 5, &fresh), x86::DecodeStatus::kOk);
    EXPECT_EQ(memcmp(&cached, &fresh, sizeof cached), 0) << "at " << std::hex << pc;
    return cached;
  };
  const DecodeCacheStats before = decode_cache_stats();
  EXPECT_EQ(at(rel32(0xe8, kPc, kPc + 0x500), kPc).cf, KJIT_CF_CALL);
  x86::Insn thunk = at(rel32(0xe8, kPc + 0x40, kPc + 0x30000), kPc + 0x40);
  EXPECT_EQ(thunk.cf, KJIT_CF_CALL_INDIRECT);
  EXPECT_EQ(thunk.indirect_reg, KJIT_REG_RAX);
  EXPECT_EQ(at(rel32(0xe8, kPc + 0x80, kPc + 0x20000), kPc + 0x80).cf, KJIT_CF_FENTRY);
  EXPECT_EQ(at(rel32(0xe8, kPc + 0xc0, kPc + 0x600), kPc + 0xc0).cf, KJIT_CF_CALL);
  EXPECT_EQ(at(rel32(0xe9, kPc + 0x100, kPc + 0x10000), kPc + 0x100).cf, KJIT_CF_RET);  // not held
  EXPECT_EQ(at(rel32(0xe9, kPc + 0x140, kPc + 0x700), kPc + 0x140).cf, KJIT_CF_JMP);
  EXPECT_EQ(at(rel32(0xe9, kPc + 0x180, kPc + 0x10000), kPc + 0x180).cf, KJIT_CF_RET);
  const DecodeCacheStats after = decode_cache_stats();
  EXPECT_EQ(after.decoded - before.decoded, 3u);  // the first call and both first jumps
  EXPECT_EQ(after.relocated - before.relocated, 4u);
}

// Instruction streams drawn from a few bytes, so that encodings repeat
// (relative ones, RIP-relative ones, prefixes, invalid ones among them),
// each decoded at addresses of its own: every answer equals the decoder's.
TEST_F(DecodeCacheTest, AnswersAreTheDecodersOnRepeatingStreams) {
  const uint8_t alphabet[] = {0x48, 0x89, 0x8b, 0xe5, 0x55, 0x0f, 0x1f, 0x44, 0x00, 0xc3, 0x31, 0xc0, 0x66,
                              0x90, 0xe8, 0xf0, 0x74, 0x05, 0x25, 0x65, 0x41, 0x5d, 0xff, 0x15, 0x83, 0xc4,
                              0xe9, 0xeb, 0x84, 0x3d, 0x0d, 0x80, 0xc7, 0xf6, 0x67, 0x2e};
  // Thunks and fentry where some of the streams' branches land.
  kjit_os_kernel_facts f;
  memset(&f, 0, sizeof f);
  f.return_thunk = kPc + 0x1005;
  f.fentry = kPc + 0x2015;
  f.retpoline_thunk[KJIT_REG_RAX] = kPc + 0x3025;
  decoder_.init(&f);
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
  EXPECT_GT(after.relocated - before.relocated, checked / 50);     // and relocation
}

}  // namespace
}  // namespace kjit
