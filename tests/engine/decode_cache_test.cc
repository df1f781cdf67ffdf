// SPDX-License-Identifier: GPL-2.0
// core/decode_cache: an instruction decoded before is answered from the
// cache only while its bytes are the same.
#include <gtest/gtest.h>

#include <cstring>

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

}  // namespace
}  // namespace kjit
