// SPDX-License-Identifier: GPL-2.0
// The plugin API's instruction queries that a recorder needs (capture in
// os/linux/capture/capture.c): string instructions, non-deterministic
// instructions and memory operands that are only hints, answered from the
// decoder.
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

// One case per instruction of each kind (include/kjit/plugin.h lists them):
// the kind, and the GPR a capture logs besides rcx/rdx/rbx (every GPR the
// instruction writes is among those four).
TEST(InsnQuery, NondeterministicInstructionsByKindAndTheirResultRegister) {
  struct Case {
    const char *what;
    std::vector<uint8_t> bytes;
    kjit_nondet_kind kind;
    int reg;
  } cases[] = {
      {"rdtsc", {0x0f, 0x31}, KJIT_NONDET_REGISTERS, KJIT_REG_RAX},
      {"rdtscp", {0x0f, 0x01, 0xf9}, KJIT_NONDET_REGISTERS, KJIT_REG_RAX},
      {"cpuid", {0x0f, 0xa2}, KJIT_NONDET_REGISTERS, KJIT_REG_RAX},
      {"rdmsr", {0x0f, 0x32}, KJIT_NONDET_REGISTERS, KJIT_REG_RAX},
      {"rdpmc", {0x0f, 0x33}, KJIT_NONDET_REGISTERS, KJIT_REG_RAX},
      {"xgetbv", {0x0f, 0x01, 0xd0}, KJIT_NONDET_REGISTERS, KJIT_REG_RAX},
      {"rdpkru", {0x0f, 0x01, 0xee}, KJIT_NONDET_REGISTERS, KJIT_REG_RAX},
      {"in al, dx", {0xec}, KJIT_NONDET_REGISTERS, KJIT_REG_RAX},
      {"in eax, 0x40", {0xe5, 0x40}, KJIT_NONDET_REGISTERS, KJIT_REG_RAX},
      {"rdrand ecx", {0x0f, 0xc7, 0xf1}, KJIT_NONDET_REGISTERS, KJIT_REG_RCX},
      {"rdrand rbx", {0x48, 0x0f, 0xc7, 0xf3}, KJIT_NONDET_REGISTERS, KJIT_REG_RBX},
      {"rdseed r8", {0x49, 0x0f, 0xc7, 0xf8}, KJIT_NONDET_REGISTERS, KJIT_REG_R8},
      {"rdpid rdx", {0xf3, 0x0f, 0xc7, 0xfa}, KJIT_NONDET_REGISTERS, KJIT_REG_RDX},
      {"rdfsbase rax", {0xf3, 0x48, 0x0f, 0xae, 0xc0}, KJIT_NONDET_REGISTERS, KJIT_REG_RAX},
      {"rdgsbase r12", {0xf3, 0x49, 0x0f, 0xae, 0xcc}, KJIT_NONDET_REGISTERS, KJIT_REG_R12},
      {"lsl eax, ecx", {0x0f, 0x03, 0xc1}, KJIT_NONDET_REGISTERS, KJIT_REG_RAX},
      {"lar rsi, rdi", {0x48, 0x0f, 0x02, 0xf7}, KJIT_NONDET_REGISTERS, KJIT_REG_RSI},
      {"str eax", {0x0f, 0x00, 0xc8}, KJIT_NONDET_REGISTERS, KJIT_REG_RAX},
      {"sldt ecx", {0x0f, 0x00, 0xc1}, KJIT_NONDET_REGISTERS, KJIT_REG_RCX},
      {"smsw eax", {0x0f, 0x01, 0xe0}, KJIT_NONDET_REGISTERS, KJIT_REG_RAX},
      {"mov rax, cr3", {0x0f, 0x20, 0xd8}, KJIT_NONDET_REGISTERS, KJIT_REG_RAX},
      {"mov rdi, dr7", {0x0f, 0x21, 0xff}, KJIT_NONDET_REGISTERS, KJIT_REG_RDI},
      {"mov eax, ds", {0x8c, 0xd8}, KJIT_NONDET_REGISTERS, KJIT_REG_RAX},
      {"verr ax", {0x0f, 0x00, 0xe0}, KJIT_NONDET_FLAGS, KJIT_REG_RAX},
      {"verw [rdi]", {0x0f, 0x00, 0x2f}, KJIT_NONDET_FLAGS, KJIT_REG_RAX},
      {"sgdt [rdi]", {0x0f, 0x01, 0x07}, KJIT_NONDET_MEMORY, KJIT_REG_RAX},
      {"sidt [rdi]", {0x0f, 0x01, 0x0f}, KJIT_NONDET_MEMORY, KJIT_REG_RAX},
      {"str [rdi]", {0x0f, 0x00, 0x0f}, KJIT_NONDET_MEMORY, KJIT_REG_RAX},
      {"smsw [rdi]", {0x0f, 0x01, 0x27}, KJIT_NONDET_MEMORY, KJIT_REG_RAX},
      {"mov [rdi], ds", {0x8c, 0x1f}, KJIT_NONDET_MEMORY, KJIT_REG_RAX},
      {"xsave [rdi]", {0x0f, 0xae, 0x27}, KJIT_NONDET_MEMORY, KJIT_REG_RAX},
      {"xsaves64 [rdi]", {0x48, 0x0f, 0xc7, 0x2f}, KJIT_NONDET_MEMORY, KJIT_REG_RAX},
      {"fxsave [rdi]", {0x0f, 0xae, 0x07}, KJIT_NONDET_MEMORY, KJIT_REG_RAX},
      {"out dx, al", {0xee}, KJIT_NONDET_EFFECT, KJIT_REG_RAX},
      {"wrmsr", {0x0f, 0x30}, KJIT_NONDET_EFFECT, KJIT_REG_RAX},
      {"wrpkru", {0x0f, 0x01, 0xef}, KJIT_NONDET_EFFECT, KJIT_REG_RAX},
      {"xsetbv", {0x0f, 0x01, 0xd1}, KJIT_NONDET_EFFECT, KJIT_REG_RAX},
      {"xrstor [rdi]", {0x0f, 0xae, 0x2f}, KJIT_NONDET_EFFECT, KJIT_REG_RAX},
      {"mov cr3, rax", {0x0f, 0x22, 0xd8}, KJIT_NONDET_EFFECT, KJIT_REG_RAX},
      {"mov dr7, rax", {0x0f, 0x23, 0xf8}, KJIT_NONDET_EFFECT, KJIT_REG_RAX},
      {"mov ds, eax", {0x8e, 0xd8}, KJIT_NONDET_EFFECT, KJIT_REG_RAX},
      {"invlpg [rdi]", {0x0f, 0x01, 0x3f}, KJIT_NONDET_EFFECT, KJIT_REG_RAX},
      {"invpcid rax, [rdi]", {0x66, 0x0f, 0x38, 0x82, 0x07}, KJIT_NONDET_EFFECT, KJIT_REG_RAX},
      {"wbinvd", {0x0f, 0x09}, KJIT_NONDET_EFFECT, KJIT_REG_RAX},
      {"lgdt [rdi]", {0x0f, 0x01, 0x17}, KJIT_NONDET_EFFECT, KJIT_REG_RAX},
      {"ltr ax", {0x0f, 0x00, 0xd8}, KJIT_NONDET_EFFECT, KJIT_REG_RAX},
      {"lmsw ax", {0x0f, 0x01, 0xf0}, KJIT_NONDET_EFFECT, KJIT_REG_RAX},
      {"clts", {0x0f, 0x06}, KJIT_NONDET_EFFECT, KJIT_REG_RAX},
      {"mov rax, [rdi]", {0x48, 0x8b, 0x07}, KJIT_NONDET_NONE, -1},
      {"mov eax, ebx", {0x89, 0xd8}, KJIT_NONDET_NONE, -1},
      {"cmpxchg8b [rdi]", {0x0f, 0xc7, 0x0f}, KJIT_NONDET_NONE, -1},
      {"insb (a string instruction, logged as one)", {0x6c}, KJIT_NONDET_NONE, -1},
      {"wrfsbase rax", {0xf3, 0x48, 0x0f, 0xae, 0xd0}, KJIT_NONDET_EFFECT, KJIT_REG_RAX},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.what);
    kjit_insn in = decode(c.bytes);
    EXPECT_EQ(kjit_insn_length(&in), c.bytes.size());
    EXPECT_EQ(kjit_insn_nondet_kind(&in), c.kind);
    EXPECT_EQ(kjit_insn_nondeterministic_reg(&in), c.reg);
    // Every GPR it writes is in the NONDET record.
    const uint16_t logged = c.reg < 0 ? 0 : static_cast<uint16_t>((1u << c.reg) | 0xe);
    if (c.kind != KJIT_NONDET_NONE) {
      EXPECT_EQ(in.insn.regs_modified & ~logged, 0) << std::hex << in.insn.regs_modified;
    }
  }
}

TEST(InsnQuery, NopAndPrefetchOperandsAreOnlyHints) {
  kjit_insn nopl = decode({0x0f, 0x1f, 0x44, 0x00, 0x00});  // nopl 0(rax,rax,1)
  kjit_insn prefetcht0 = decode({0x0f, 0x18, 0x0f});       // prefetcht0 [rdi]
  kjit_insn prefetchw = decode({0x0f, 0x0d, 0x0f});        // prefetchw [rdi]
  kjit_insn invlpg = decode({0x0f, 0x01, 0x3f});            // invlpg [rdi]: a user page, maybe unmapped
  kjit_insn clflush = decode({0x0f, 0xae, 0x3f});           // clflush [rdi]
  kjit_insn load = decode({0x48, 0x8b, 0x07});
  EXPECT_TRUE(kjit_insn_is_memory_hint(&invlpg));
  EXPECT_TRUE(kjit_insn_is_memory_hint(&clflush));
  EXPECT_TRUE(kjit_insn_is_memory_hint(&nopl));
  EXPECT_TRUE(kjit_insn_is_memory_hint(&prefetcht0));
  EXPECT_TRUE(kjit_insn_is_memory_hint(&prefetchw));
  EXPECT_FALSE(kjit_insn_is_memory_hint(&load));
  EXPECT_TRUE(kjit_insn_reads_memory(&load));
}

// What a recorder logs after an atomic read-modify-write: the register
// that holds the value the instruction read.
TEST(InsnQuery, AtomicReadModifyWritesNameTheRegisterHoldingWhatTheyRead) {
  struct Case {
    std::vector<uint8_t> bytes;
    int reg;
  };
  const Case cases[] = {
      {{0xf0, 0x48, 0x0f, 0xb1, 0x11}, KJIT_REG_RAX},  // lock cmpxchg [rcx], rdx
      {{0xf0, 0x0f, 0xb1, 0x0f}, KJIT_REG_RAX},        // lock cmpxchg [rdi], ecx
      {{0x0f, 0xb0, 0x0f}, KJIT_REG_RAX},              // cmpxchg [rdi], cl
      {{0xf0, 0x0f, 0xc1, 0x07}, KJIT_REG_RAX},        // lock xadd [rdi], eax
      {{0xf0, 0x48, 0x0f, 0xc1, 0x1e}, KJIT_REG_RBX},  // lock xadd [rsi], rbx
      {{0x48, 0x87, 0x16}, KJIT_REG_RDX},              // xchg [rsi], rdx
      {{0x4c, 0x87, 0x07}, KJIT_REG_R8},               // xchg [rdi], r8
      {{0xf0, 0x48, 0x0f, 0xc7, 0x0f}, -1},            // lock cmpxchg16b [rdi]: two registers
      {{0xf0, 0xff, 0x07}, -1},                        // lock inc dword [rdi]: nothing holds it
      {{0x48, 0x87, 0xd0}, -1},                        // xchg rax, rdx: no memory
      {{0x48, 0x8b, 0x07}, -1},                        // mov rax, [rdi]
  };
  for (const Case &c : cases) {
    kjit_insn in = decode(c.bytes);
    EXPECT_EQ(kjit_insn_atomic_old_value_reg(&in), c.reg) << "first byte " << int(c.bytes[0]) << ", "
                                                          << c.bytes.size() << " bytes";
  }
}

// A load's value is logged from its destination register: exact even when
// another CPU writes the word between the load and the logging call.
TEST(InsnQuery, LoadsNameTheRegisterHoldingWhatTheyRead) {
  struct Case {
    std::vector<uint8_t> bytes;
    int reg;
  };
  const Case cases[] = {
      {{0x48, 0x8b, 0x0d, 0x32, 0x4c, 0x99, 0x01}, KJIT_REG_RCX},  // mov rcx, [rip+...]
      {{0x8b, 0x07}, KJIT_REG_RAX},                                // mov eax, [rdi]
      {{0x44, 0x8a, 0x46, 0x08}, KJIT_REG_R8},                     // mov r8b, [rsi+8]
      {{0x0f, 0xb6, 0x17}, KJIT_REG_RDX},                          // movzx edx, byte [rdi]
      {{0x48, 0x63, 0x47, 0x04}, KJIT_REG_RAX},                    // movsxd rax, dword [rdi+4]
      {{0x65, 0x8b, 0x05, 0x84, 0xe7, 0xfa, 0x7e}, KJIT_REG_RAX},  // mov eax, gs:[rip+...]
      {{0x8a, 0x27}, -1},                                          // mov ah, [rdi]: byte 1
      {{0x48, 0x89, 0x07}, -1},                                    // mov [rdi], rax: a store
      {{0x3b, 0x07}, -1},                                          // cmp eax, [rdi]
      {{0x48, 0x8d, 0x47, 0x08}, -1},                              // lea rax, [rdi+8]
  };
  for (const Case &c : cases) {
    kjit_insn in = decode(c.bytes);
    EXPECT_EQ(kjit_insn_loaded_value_reg(&in), c.reg) << "first byte " << int(c.bytes[0]) << ", "
                                                      << c.bytes.size() << " bytes";
  }
}

// A recorder logs the flags after a compare or read-modify-write of memory
// another CPU or an interrupt can change (os/linux/capture/capture.c): not
// after one of the task's own stack, nor after one that leaves the flags
// alone.
TEST(InsnQuery, StackOperandsAndArithmeticFlags) {
  struct Case {
    std::vector<uint8_t> bytes;
    int on_stack;
    int flags;
  };
  const Case cases[] = {
      {{0x48, 0x39, 0x88, 0x60, 0x09, 0x00, 0x00}, 0, 1},  // cmp [rax+0x960], rcx (idle_cpu)
      {{0xf6, 0x47, 0x10, 0x01}, 0, 1},                    // test byte [rdi+0x10], 1
      {{0x48, 0x83, 0x7c, 0x24, 0x08, 0x00}, 1, 1},        // cmp qword [rsp+8], 0
      {{0xf0, 0xff, 0x0f}, 0, 1},                          // lock dec dword [rdi]
      {{0x65, 0xff, 0x0d, 0x10, 0x00, 0x00, 0x00}, 0, 1},  // dec dword gs:[rip+0x10]
      {{0x48, 0x0f, 0x44, 0x07}, 0, 0},                    // cmove rax, [rdi]
      {{0xff, 0x74, 0x24, 0x08}, 1, 0},                    // push qword [rsp+8]
      {{0x48, 0x89, 0xc8}, 0, 0},                          // mov rax, rcx: no memory operand
  };
  for (const Case &c : cases) {
    kjit_insn in = decode(c.bytes);
    EXPECT_EQ(kjit_insn_mem_on_stack(&in), c.on_stack) << "first byte " << int(c.bytes[0]);
    EXPECT_EQ(kjit_insn_modifies_flags(&in), c.flags) << "first byte " << int(c.bytes[0]);
  }
}

// KCOV_TRACE_CMP takes cmp and test operands from this query.
TEST(InsnQuery, ComparisonsNameTheirOperands) {
  kjit_operand ops[2];
  uint32_t size = 0;
  kjit_insn cmp_reg_reg = decode({0x49, 0x39, 0xc6});  // cmp r14, rax
  ASSERT_EQ(kjit_insn_comparison(&cmp_reg_reg, ops, &size), KJIT_COMPARE_CMP);
  EXPECT_EQ(size, 8u);
  EXPECT_EQ(ops[0].kind, KJIT_OPERAND_REG);
  EXPECT_EQ(ops[0].reg, KJIT_REG_R14);
  EXPECT_EQ(ops[1].kind, KJIT_OPERAND_REG);
  EXPECT_EQ(ops[1].reg, KJIT_REG_RAX);
  kjit_insn cmp_imm = decode({0x83, 0xff, 0xfe});  // cmp edi, -2
  ASSERT_EQ(kjit_insn_comparison(&cmp_imm, ops, &size), KJIT_COMPARE_CMP);
  EXPECT_EQ(size, 4u);
  EXPECT_EQ(ops[1].kind, KJIT_OPERAND_IMM);
  EXPECT_EQ(ops[1].imm, -2);
  kjit_insn cmp_mem = decode({0x80, 0x7f, 0x08, 0x2f});  // cmp byte [rdi+8], 0x2f
  ASSERT_EQ(kjit_insn_comparison(&cmp_mem, ops, &size), KJIT_COMPARE_CMP);
  EXPECT_EQ(size, 1u);
  EXPECT_EQ(ops[0].kind, KJIT_OPERAND_MEM);
  EXPECT_EQ(ops[1].imm, 0x2f);
  kjit_insn test = decode({0x48, 0x85, 0xdb});  // test rbx, rbx
  ASSERT_EQ(kjit_insn_comparison(&test, ops, &size), KJIT_COMPARE_TEST);
  EXPECT_EQ(ops[0].reg, KJIT_REG_RBX);
  EXPECT_EQ(ops[1].reg, KJIT_REG_RBX);
  kjit_insn high_byte = decode({0x38, 0xe0});  // cmp al, ah: byte 1 of rax
  EXPECT_EQ(kjit_insn_comparison(&high_byte, ops, &size), 0);
  kjit_insn sub = decode({0x48, 0x29, 0xd8});  // sub rax, rbx: not a comparison
  EXPECT_EQ(kjit_insn_comparison(&sub, ops, &size), 0);
}

// bt [r8], rax reads the word at r8 + (rax >> 6) * 8: the recorder must
// know the register.
TEST(InsnQuery, BitTestsWithARegisterOffsetNameIt) {
  kjit_insn bt = decode({0x49, 0x0f, 0xa3, 0x00});          // bt [r8], rax
  kjit_insn bts = decode({0xf0, 0x48, 0x0f, 0xab, 0x0e});   // lock bts [rsi], rcx
  kjit_insn btr32 = decode({0x0f, 0xb3, 0x17});             // btr [rdi], edx
  kjit_insn bt_imm = decode({0x48, 0x0f, 0xba, 0x27, 0x05});  // bt qword [rdi], 5
  kjit_insn bt_reg = decode({0x48, 0x0f, 0xa3, 0xc8});      // bt rax, rcx: no memory
  EXPECT_EQ(kjit_insn_bit_offset_reg(&bt), KJIT_REG_RAX);
  EXPECT_EQ(kjit_insn_bit_offset_reg(&bts), KJIT_REG_RCX);
  EXPECT_EQ(kjit_insn_bit_offset_reg(&btr32), KJIT_REG_RDX);
  EXPECT_EQ(kjit_insn_bit_offset_reg(&bt_imm), -1);
  EXPECT_EQ(kjit_insn_bit_offset_reg(&bt_reg), -1);
}

// What a recorder may take a record across (the mfence inside
// load_gs_index's swapgs pair, nops): nothing it logs changes there.
TEST(InsnQuery, NopsAndFencesWriteNothing) {
  const std::vector<std::vector<uint8_t>> nothing = {
      {0x90}, {0x0f, 0xae, 0xf0}, {0x0f, 0xae, 0xe8}, {0x0f, 0xae, 0xf8}, {0xf3, 0x90}, {0x0f, 0x1f, 0x44, 0x00, 0x00}};
  const std::vector<std::vector<uint8_t>> something = {
      {0x0f, 0x01, 0xf8},        // swapgs
      {0x8e, 0xef},              // mov gs, edi
      {0x48, 0x89, 0x07},        // mov [rdi], rax
      {0x85, 0xc0},              // test eax, eax: flags
      {0x0f, 0x31},              // rdtsc
      {0xc3},                    // ret
  };
  for (const auto &b : nothing) {
    kjit_insn in = decode(b);
    EXPECT_TRUE(kjit_insn_writes_nothing(&in)) << "first byte " << int(b[0]) << ", " << b.size() << " bytes";
  }
  for (const auto &b : something) {
    kjit_insn in = decode(b);
    EXPECT_FALSE(kjit_insn_writes_nothing(&in)) << "first byte " << int(b[0]) << ", " << b.size() << " bytes";
  }
}

}  // namespace
