// SPDX-License-Identifier: GPL-2.0
// core/code_reader: a block's instructions are read a window at a time,
// each window ending on a 64-byte boundary, and a build reads the same
// 64-byte chunks of text that one read per instruction would.
#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "core/code_reader.h"
#include "engine/engine_fixture.h"
#include "engine/test_shim.h"

namespace kjit::test {
namespace {

// The 64-byte chunks [addr, addr + len) touches.
void add_chunks(std::set<uint64_t> *chunks, uint64_t addr, uint64_t len) {
  for (uint64_t c = addr & ~63ull; c < addr + len; c += 64) chunks->insert(c);
}

class CodeReaderTest : public EngineTest {};

TEST_F(CodeReaderTest, ABlockIsReadInWindowsThatEndOnChunkBoundaries) {
  // 40 two-byte moves and a ret: 81 bytes from 8 bytes into a chunk.
  const uint64_t pc = kText + 8;
  std::vector<uint8_t> code;
  for (int i = 0; i < 40; i++) code.insert(code.end(), {0x89, 0xc8});  // mov eax, ecx
  code.push_back(0xc3);
  test_shim_add_code(pc, code);
  uint64_t succ[4];
  uint32_t nsucc = 0, ninsns = 0;
  ASSERT_GE(kjit_engine_build_only(pc, succ, &nsucc, &ninsns), 0);
  ASSERT_EQ(ninsns, 41u);

  std::set<uint64_t> read, per_insn;
  int block_reads = 0;
  for (const ShimCodeRead &r : test_shim_code_reads()) {
    if (r.addr < pc || r.addr >= pc + code.size()) continue;  // liveness past the ret, if any
    block_reads++;
    EXPECT_EQ((r.addr + r.len) % 64, 0u) << std::hex << r.addr << "+" << r.len;  // asked, not got
    EXPECT_GE(r.len, CodeReader::kMaxInsn);
    add_chunks(&read, r.addr, r.len);
  }
  for (uint64_t at = pc; at < pc + code.size(); at += at + 1 == pc + code.size() ? 1 : 2)
    add_chunks(&per_insn, at, CodeReader::kMaxInsn);
  // One read per instruction would be 41; windows: the first to the end of
  // its chunk, the next where an instruction crosses it, up to the end of
  // the text (a short read: nothing more to read after it).
  EXPECT_EQ(block_reads, 2);
  EXPECT_EQ(read, per_insn);
}

TEST_F(CodeReaderTest, AnInstructionAcrossAWindowsEndIsReadWhole) {
  // movabs rax, imm64 (10 bytes) starting 2 bytes before a chunk boundary:
  // the first window ends in its middle, so it is read again from its start.
  const uint64_t pc = kText + 64 - 20;
  std::vector<uint8_t> code(18, 0x90);  // nop x 18: the movabs starts at kText + 62
  code.insert(code.end(), {0x48, 0xb8, 1, 2, 3, 4, 5, 6, 7, 8, 0xc3});
  test_shim_add_code(pc, code);
  CodeReader reader;
  const uint8_t *bytes = nullptr;
  ASSERT_EQ(reader.at(pc, &bytes), CodeReader::kMaxInsn);
  EXPECT_EQ(bytes[0], 0x90);
  const uint64_t movabs = pc + 18;
  ASSERT_EQ(reader.at(movabs, &bytes), CodeReader::kMaxInsn - 4);  // 11 bytes of code left in the region
  EXPECT_EQ(bytes[0], 0x48);
  EXPECT_EQ(bytes[9], 8);
  EXPECT_EQ(bytes[10], 0xc3);
  ASSERT_EQ(test_shim_code_reads().size(), 2u);
  EXPECT_EQ(test_shim_code_reads()[1].addr, movabs);
}

TEST_F(CodeReaderTest, WhereTextEndsItGivesWhatThereIsAndThenNothing) {
  const uint64_t pc = kText + 0x100;
  test_shim_add_code(pc, {0x89, 0xc8, 0xc3});
  CodeReader reader;
  const uint8_t *bytes = nullptr;
  EXPECT_EQ(reader.at(pc, &bytes), 3u);
  EXPECT_EQ(reader.at(pc + 2, &bytes), 1u);
  EXPECT_EQ(bytes[0], 0xc3);
  EXPECT_EQ(reader.at(pc + 3, &bytes), 0u);
  EXPECT_EQ(reader.at(pc - 1, &bytes), 0u);
}

}  // namespace
}  // namespace kjit::test
