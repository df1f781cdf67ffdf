// SPDX-License-Identifier: GPL-2.0
// Jumps that are re-pointed while other CPUs may run them: their rel32 is
// always 4-byte aligned (one atomic store, never split across cache lines),
// the padding before them decodes as a single NOP, and a live patch of an
// unaligned field is refused instead of risking a torn fetch.
#include "arch/x86/code_writer.h"

#include <Zydis/Zydis.h>
#include <gtest/gtest.h>

#include <cstring>

namespace {

constexpr uint64_t kExec = 0xffffffffc0a00000ull;

// Decodes the instruction at `p`; its length, or 0.
uint32_t decode_length(const uint8_t *p, ZydisMnemonic *m) {
  ZydisDecoder d;
  ZydisDecoderInit(&d, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
  ZydisDecodedInstruction in;
  ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
  if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(&d, p, 15, &in, ops))) return 0;
  *m = in.mnemonic;
  return in.length;
}

TEST(CodeWriter, PatchableJumpsAreOneInstructionWithAnAlignedField) {
  for (uint32_t start = 0; start < 8; start++) {
    for (int is_jcc = 0; is_jcc < 2; is_jcc++) {
      alignas(16) uint8_t buf[64];
      memset(buf, 0xcc, sizeof(buf));
      kjit::x86::CodeWriter w(buf, kExec, sizeof(buf));
      for (uint32_t i = 0; i < start; i++) w.byte(0x90);
      const uint64_t target = kExec + 48;
      int32_t field = is_jcc ? w.jcc_patchable(0x4, target) : w.jmp_patchable(target);
      ASSERT_GE(field, 0);
      EXPECT_EQ((kExec + static_cast<uint32_t>(field)) & 3, 0u) << "start " << start;
      // The padding is prefixes of the branch itself: one instruction from
      // `start` to the end of the field, nothing else executes.
      ZydisMnemonic m;
      ASSERT_EQ(decode_length(buf + start, &m), static_cast<uint32_t>(field) + 4 - start) << "start " << start;
      EXPECT_EQ(m, is_jcc ? ZYDIS_MNEMONIC_JZ : ZYDIS_MNEMONIC_JMP);
      int32_t rel;
      memcpy(&rel, buf + field, 4);
      EXPECT_EQ(kExec + field + 4 + rel, target);
    }
  }
}

TEST(CodeWriter, LivePatchRefusesUnalignedFieldsAndRetargetsAlignedOnes) {
  alignas(16) uint8_t buf[32] = {};
  // An aligned field: re-pointed.
  ASSERT_TRUE(kjit::x86::patch_rel32_live(buf + 8, kExec + 8, kExec + 100));
  int32_t rel;
  memcpy(&rel, buf + 8, 4);
  EXPECT_EQ(kExec + 12 + rel, kExec + 100);
  // Unaligned: refused, bytes untouched.
  const uint8_t before[4] = {1, 2, 3, 4};
  memcpy(buf + 17, before, 4);
  EXPECT_FALSE(kjit::x86::patch_rel32_live(buf + 17, kExec + 17, kExec + 100));
  EXPECT_EQ(memcmp(buf + 17, before, 4), 0);
  // Out of reach: refused.
  EXPECT_FALSE(kjit::x86::patch_rel32_live(buf + 8, kExec + 8, 0x7fff00000000ull));
}

}  // namespace
