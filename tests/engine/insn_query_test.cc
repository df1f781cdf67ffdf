// The plugin API's instruction queries that a recorder needs (capture in
// os/linux/capture.c): string instructions, non-deterministic instructions
// and memory operands that are only hints, answered from the decoder.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "arch/x86/decoder.h"
#include "core/build_context.h"
#include "kjit/plugin.h"

namespace {

constexpr uint64_t kPc = 0xffffffff81000000ull;

kjit_insn decode(std::vector<uint8_t> bytes) {
  kjit::x86::Decoder d;
  d.init(nullptr);
  kjit_insn ki;
  memset(&ki, 0, sizeof(ki));
  EXPECT_EQ(d.decode(kPc, bytes.data(), static_cast<uint32_t>(bytes.size()), &ki.insn),
            kjit::x86::DecodeStatus::kOk);
  return ki;
}

struct StringCase {
  std::vector<uint8_t> bytes;
  kjit_string_op op;
  uint32_t width;
  bool rep;
};

TEST(InsnQuery, StringInstructionsAndTheirWidth) {
  const StringCase cases[] = {
      {{0xa4}, KJIT_STRING_MOVS, 1, false},
      {{0xf3, 0xa4}, KJIT_STRING_MOVS, 1, true},
      {{0xf3, 0x48, 0xa5}, KJIT_STRING_MOVS, 8, true},
      {{0x66, 0xa5}, KJIT_STRING_MOVS, 2, false},
      {{0xa5}, KJIT_STRING_MOVS, 4, false},
      {{0xac}, KJIT_STRING_LODS, 1, false},
      {{0x48, 0xad}, KJIT_STRING_LODS, 8, false},
      {{0xf3, 0xaa}, KJIT_STRING_STOS, 1, true},
      {{0xf3, 0x48, 0xab}, KJIT_STRING_STOS, 8, true},
      {{0xf3, 0xa6}, KJIT_STRING_CMPS, 1, true},
      {{0xa7}, KJIT_STRING_CMPS, 4, false},
      {{0xf2, 0xae}, KJIT_STRING_SCAS, 1, true},
      {{0x66, 0xaf}, KJIT_STRING_SCAS, 2, false},
  };
  for (const StringCase &c : cases) {
    kjit_insn in = decode(c.bytes);
    EXPECT_EQ(kjit_insn_string_op(&in), c.op) << "opcode " << std::hex << int(c.bytes.back());
    EXPECT_EQ(kjit_insn_string_width(&in), c.width) << "opcode " << std::hex << int(c.bytes.back());
    EXPECT_EQ(kjit_insn_has_rep_prefix(&in) != 0, c.rep);
  }
}

TEST(InsnQuery, SseMovsdAndCmpsdAreNotStringInstructions) {
  kjit_insn movsd = decode({0xf2, 0x0f, 0x10, 0x07});        // movsd xmm0, [rdi]
  kjit_insn cmpsd = decode({0xf2, 0x0f, 0xc2, 0xc1, 0x00});  // cmpeqsd xmm0, xmm1
  kjit_insn test = decode({0xa8, 0x01});                     // test al, 1
  kjit_insn load = decode({0x48, 0x8b, 0x07});               // mov rax, [rdi]
  for (kjit_insn *in : {&movsd, &cmpsd, &test, &load}) {
    EXPECT_EQ(kjit_insn_string_op(in), KJIT_STRING_NONE);
    EXPECT_EQ(kjit_insn_string_width(in), 0u);
  }
}

TEST(InsnQuery, NondeterministicInstructionsAndTheirResultRegister) {
  struct Case {
    std::vector<uint8_t> bytes;
    int reg;
  } cases[] = {
      {{0x0f, 0x31}, KJIT_REG_RAX},              // rdtsc
      {{0x0f, 0x01, 0xf9}, KJIT_REG_RAX},        // rdtscp
      {{0x0f, 0xa2}, KJIT_REG_RAX},              // cpuid
      {{0x0f, 0x32}, KJIT_REG_RAX},              // rdmsr
      {{0x0f, 0x33}, KJIT_REG_RAX},              // rdpmc
      {{0xec}, KJIT_REG_RAX},                    // in al, dx
      {{0xe5, 0x40}, KJIT_REG_RAX},              // in eax, 0x40
      {{0xee}, KJIT_REG_RAX},                    // out dx, al
      {{0x0f, 0xc7, 0xf1}, KJIT_REG_RCX},        // rdrand ecx
      {{0x48, 0x0f, 0xc7, 0xf3}, KJIT_REG_RBX},  // rdrand rbx
      {{0x49, 0x0f, 0xc7, 0xf8}, KJIT_REG_R8},   // rdseed r8
      {{0xf3, 0x0f, 0xc7, 0xfa}, KJIT_REG_RDX},  // rdpid rdx
      {{0x48, 0x8b, 0x07}, -1},                  // mov rax, [rdi]
      {{0x0f, 0xc7, 0x0f}, -1},                  // cmpxchg8b [rdi]
      {{0x6c}, -1},                              // insb: a string instruction, not logged as NONDET
  };
  for (const Case &c : cases) {
    kjit_insn in = decode(c.bytes);
    EXPECT_EQ(kjit_insn_nondeterministic_reg(&in), c.reg)
        << "bytes " << std::hex << int(c.bytes[0]) << " " << int(c.bytes[1 % c.bytes.size()]);
  }
}

TEST(InsnQuery, NopAndPrefetchOperandsAreOnlyHints) {
  kjit_insn nopl = decode({0x0f, 0x1f, 0x44, 0x00, 0x00});  // nopl 0(rax,rax,1)
  kjit_insn prefetcht0 = decode({0x0f, 0x18, 0x0f});       // prefetcht0 [rdi]
  kjit_insn prefetchw = decode({0x0f, 0x0d, 0x0f});        // prefetchw [rdi]
  kjit_insn load = decode({0x48, 0x8b, 0x07});
  EXPECT_TRUE(kjit_insn_is_memory_hint(&nopl));
  EXPECT_TRUE(kjit_insn_is_memory_hint(&prefetcht0));
  EXPECT_TRUE(kjit_insn_is_memory_hint(&prefetchw));
  EXPECT_FALSE(kjit_insn_is_memory_hint(&load));
  EXPECT_TRUE(kjit_insn_reads_memory(&load));
}

}  // namespace
