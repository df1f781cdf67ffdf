// SPDX-License-Identifier: GPL-2.0
#include "program_generator.h"

#include <Zydis/Zydis.h>

#include <cstring>

namespace kjit::fuzz {
namespace {

// Registers the generated code computes with (hardware numbers).  r11/r14
// are jump-table scratch, r12/r13 loop counters; rsp/rbp/r15 untouched.
constexpr int kDataRegs[] = {0, 1, 2, 3, 6, 7, 8, 9, 10};
constexpr int kNumDataRegs = sizeof(kDataRegs) / sizeof(kDataRegs[0]);
constexpr int kScratchA = 11, kScratchB = 14;
constexpr int kLoopRegs[] = {12, 13};
constexpr int kLeaves = 3;
// Data region layout.
constexpr uint32_t kScalarArea = 0x000;  // 0x000-0x0ff: loads and stores
constexpr uint32_t kLockArea = 0x100;    // 0x100-0x13f: lock xadd/cmpxchg words
constexpr uint32_t kTableArea = 0x800;   // jump tables, 4 entries each
constexpr uint32_t kMaxTables = 32;

ZydisRegister r64(int n) { return static_cast<ZydisRegister>(ZYDIS_REGISTER_RAX + n); }
ZydisRegister r32(int n) { return static_cast<ZydisRegister>(ZYDIS_REGISTER_EAX + n); }
ZydisRegister r8(int n) {
  static const ZydisRegister k[] = {ZYDIS_REGISTER_AL,  ZYDIS_REGISTER_CL,   ZYDIS_REGISTER_DL,   ZYDIS_REGISTER_BL,
                                    ZYDIS_REGISTER_SPL, ZYDIS_REGISTER_BPL,  ZYDIS_REGISTER_SIL,  ZYDIS_REGISTER_DIL,
                                    ZYDIS_REGISTER_R8B, ZYDIS_REGISTER_R9B,  ZYDIS_REGISTER_R10B, ZYDIS_REGISTER_R11B,
                                    ZYDIS_REGISTER_R12B, ZYDIS_REGISTER_R13B, ZYDIS_REGISTER_R14B, ZYDIS_REGISTER_R15B};
  return k[n];
}

struct Stream {
  const uint8_t *p;
  size_t n, i = 0;
  uint8_t byte() { return i < n ? p[i++] : 0; }
  uint32_t below(uint32_t k) { return k ? byte() % k : 0; }
  uint64_t u64() {
    uint64_t v = 0;
    for (int b = 0; b < 8; b++) v |= static_cast<uint64_t>(byte()) << (8 * b);
    return v;
  }
  bool done() const { return i >= n; }
};

// One item of the program: an instruction (with symbolic references that
// are resolved at layout) or a label.
struct Item {
  ZydisEncoderRequest req;
  int label_def = -1;     // this item defines a label (no instruction)
  int branch_label = -1;  // operand 0 is the address of this label
  int mem_op = -1;        // operand index of a RIP-relative memory operand
  int mem_label = -1;     //   ... addressing a code label
  int64_t mem_data = -1;  //   ... or an offset in the data region
};

class Assembler {
 public:
  int new_label() {
    labels_.push_back(0);
    return static_cast<int>(labels_.size() - 1);
  }
  void bind(int label) {
    Item it;
    memset(&it.req, 0, sizeof it.req);
    it.label_def = label;
    items_.push_back(it);
  }
  ZydisEncoderRequest &insn(ZydisMnemonic m) {
    Item it;
    memset(&it.req, 0, sizeof it.req);
    it.req.machine_mode = ZYDIS_MACHINE_MODE_LONG_64;
    it.req.mnemonic = m;
    items_.push_back(it);
    return items_.back().req;
  }
  Item &last() { return items_.back(); }

  // Operand helpers on the last instruction.
  void reg(ZydisRegister r) {
    auto &op = next_op();
    op.type = ZYDIS_OPERAND_TYPE_REGISTER;
    op.reg.value = r;
  }
  void imm(int64_t v) {
    auto &op = next_op();
    op.type = ZYDIS_OPERAND_TYPE_IMMEDIATE;
    op.imm.s = v;
  }
  void mem(ZydisRegister base, ZydisRegister index, uint8_t scale, int64_t disp, uint16_t size) {
    auto &op = next_op();
    op.type = ZYDIS_OPERAND_TYPE_MEMORY;
    op.mem.base = base;
    op.mem.index = index;
    op.mem.scale = scale;
    op.mem.displacement = disp;
    op.mem.size = size;
  }
  void rip_data(uint32_t off, uint16_t size) {
    last().mem_op = last().req.operand_count;
    last().mem_data = off;
    mem(ZYDIS_REGISTER_RIP, ZYDIS_REGISTER_NONE, 0, 0, size);
  }
  void rip_label(int label, uint16_t size) {
    last().mem_op = last().req.operand_count;
    last().mem_label = label;
    mem(ZYDIS_REGISTER_RIP, ZYDIS_REGISTER_NONE, 0, 0, size);
  }
  void target(int label, ZydisBranchWidth width = ZYDIS_BRANCH_WIDTH_32) {
    last().branch_label = label;
    // jrcxz/loop only have rel8: let the encoder pick (the size is fixed).
    if (width != ZYDIS_BRANCH_WIDTH_8) {
      last().req.branch_type = ZYDIS_BRANCH_TYPE_NEAR;
      last().req.branch_width = width;
    }
    imm(0);
  }

  uint64_t label_address(int l) const { return labels_[l]; }

  // Two passes: sizes (branch widths are fixed, so they do not depend on
  // the targets), then the real encoding.
  std::string assemble(uint64_t base, std::vector<uint8_t> *out, size_t *count) {
    std::vector<uint8_t> sizes(items_.size(), 0);
    for (int pass = 0; pass < 2; pass++) {
      uint64_t pc = base;
      out->clear();
      *count = 0;
      for (size_t k = 0; k < items_.size(); k++) {
        Item &it = items_[k];
        if (it.label_def >= 0) {
          labels_[it.label_def] = pc;
          continue;
        }
        ZydisEncoderRequest req = it.req;
        if (it.branch_label >= 0) req.operands[0].imm.u = pass ? labels_[it.branch_label] : pc;
        if (it.mem_op >= 0)
          req.operands[it.mem_op].mem.displacement =
              static_cast<int64_t>(it.mem_label >= 0 ? (pass ? labels_[it.mem_label] : pc)
                                                     : kGenDataBase + static_cast<uint64_t>(it.mem_data));
        uint8_t buf[ZYDIS_MAX_INSTRUCTION_LENGTH];
        ZyanUSize len = sizeof buf;
        if (!ZYAN_SUCCESS(ZydisEncoderEncodeInstructionAbsolute(&req, buf, &len, pc)))
          return std::string("cannot encode ") + ZydisMnemonicGetString(req.mnemonic) + " (item " +
                 std::to_string(k) + ")";
        if (pass == 0) sizes[k] = static_cast<uint8_t>(len);
        else if (sizes[k] != len) return "size changed between passes";
        out->insert(out->end(), buf, buf + len);
        pc += len;
        ++*count;
      }
    }
    return "";
  }

 private:
  ZydisEncoderOperand &next_op() {
    ZydisEncoderRequest &r = items_.back().req;
    return r.operands[r.operand_count++];
  }
  std::vector<Item> items_;
  std::vector<uint64_t> labels_;
};

class Generator {
 public:
  Generator(const uint8_t *d, size_t n) : in_{d, n} {}

  std::string run(GeneratedProgram *out) {
    // Values (data words, registers, flags) come from a PRNG seeded by the
    // first bytes, so the whole input drives the program's structure.
    uint64_t seed = 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < 8; i++) seed = seed * 131 + in_.byte();
    auto next = [&seed] {
      uint64_t z = (seed += 0x9e3779b97f4a7c15ull);
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
      return z ^ (z >> 31);
    };
    out->data.assign(kGenDataSize, 0);
    for (uint32_t i = 0; i < 0x140; i += 8) {
      const uint64_t v = next(), w = (v & 3) == 0 ? v >> 2 & 7 : v;  // some small values, for equal compares
      memcpy(&out->data[i], &w, 8);
    }
    for (int r : kDataRegs) {
      const uint64_t v = next();
      out->regs[r] = (v & 3) == 0 ? (v >> 8) & 7 : (v & 3) == 1 ? ~0ull : v;
    }
    out->rflags = 0x2 | (next() & 0x8d5);
    for (int k = 0; k < kLeaves; k++) leaf_[k] = a_.new_label();

    // main
    const int nseg = 1 + in_.below(14);
    for (int s = 0; s < nseg; s++) segment(0, true);
    a_.insn(ZYDIS_MNEMONIC_RET);
    // leaves
    for (int k = 0; k < kLeaves; k++) {
      a_.bind(leaf_[k]);
      const int n = 1 + in_.below(4);
      for (int s = 0; s < n; s++) segment(2, false);
      a_.insn(ZYDIS_MNEMONIC_RET);
    }
    std::string err = a_.assemble(kGenCodeBase, &out->code, &out->insns);
    if (!err.empty()) return err;
    for (auto [off, label] : table_fixups_) {
      const uint64_t v = a_.label_address(label);
      memcpy(&out->data[off], &v, 8);
    }
    return "";
  }

 private:
  int data_reg() { return kDataRegs[in_.below(kNumDataRegs)]; }

  void arith() {
    const int d = data_reg(), s = data_reg();
    switch (in_.below(16)) {
      case 0: a_.insn(ZYDIS_MNEMONIC_ADD); a_.reg(r64(d)); a_.reg(r64(s)); break;
      case 1: a_.insn(ZYDIS_MNEMONIC_SUB); a_.reg(r64(d)); a_.reg(r64(s)); break;
      case 2: a_.insn(ZYDIS_MNEMONIC_XOR); a_.reg(r32(d)); a_.reg(r32(s)); break;
      case 3: a_.insn(ZYDIS_MNEMONIC_AND); a_.reg(r64(d)); a_.imm(static_cast<int8_t>(in_.byte())); break;
      case 4: a_.insn(ZYDIS_MNEMONIC_OR); a_.reg(r64(d)); a_.reg(r64(s)); break;
      case 5: a_.insn(ZYDIS_MNEMONIC_IMUL); a_.reg(r64(d)); a_.reg(r64(s)); break;
      case 6: a_.insn(ZYDIS_MNEMONIC_SHL); a_.reg(r64(d)); a_.imm(1 + in_.below(63)); break;
      case 7: a_.insn(ZYDIS_MNEMONIC_SAR); a_.reg(r64(d)); a_.imm(1 + in_.below(63)); break;
      case 8: a_.insn(ZYDIS_MNEMONIC_ROL); a_.reg(r32(d)); a_.imm(1 + in_.below(31)); break;
      case 9: a_.insn(ZYDIS_MNEMONIC_INC); a_.reg(r64(d)); break;
      case 10: a_.insn(ZYDIS_MNEMONIC_DEC); a_.reg(r32(d)); break;
      case 11: a_.insn(ZYDIS_MNEMONIC_NEG); a_.reg(r64(d)); break;
      case 12: a_.insn(ZYDIS_MNEMONIC_NOT); a_.reg(r64(d)); break;
      case 13: a_.insn(ZYDIS_MNEMONIC_MOV); a_.reg(r32(d)); a_.imm(in_.byte() | (in_.byte() << 8)); break;
      case 14:
        a_.insn(ZYDIS_MNEMONIC_LEA); a_.reg(r64(d));
        a_.mem(r64(s), r64(data_reg()), static_cast<uint8_t>(1u << in_.below(4)), static_cast<int8_t>(in_.byte()), 8);
        break;
      default: a_.insn(ZYDIS_MNEMONIC_ADD); a_.reg(r64(d)); a_.imm(static_cast<int8_t>(in_.byte())); break;
    }
  }

  // cmp/test, then something that reads the flags.
  void flag_code(int depth) {
    const int x = data_reg(), y = data_reg();
    if (in_.byte() & 1) {
      a_.insn(ZYDIS_MNEMONIC_CMP); a_.reg(r64(x));
      if (in_.byte() & 1) a_.reg(r64(y)); else a_.imm(static_cast<int8_t>(in_.byte() & 7));
    } else {
      a_.insn(ZYDIS_MNEMONIC_TEST); a_.reg(r32(x)); a_.imm(1u << in_.below(8));
    }
    static const ZydisMnemonic kSet[] = {ZYDIS_MNEMONIC_SETZ, ZYDIS_MNEMONIC_SETNZ, ZYDIS_MNEMONIC_SETB,
                                         ZYDIS_MNEMONIC_SETL, ZYDIS_MNEMONIC_SETNLE, ZYDIS_MNEMONIC_SETS};
    static const ZydisMnemonic kCmov[] = {ZYDIS_MNEMONIC_CMOVZ, ZYDIS_MNEMONIC_CMOVNZ, ZYDIS_MNEMONIC_CMOVB,
                                          ZYDIS_MNEMONIC_CMOVNBE, ZYDIS_MNEMONIC_CMOVL, ZYDIS_MNEMONIC_CMOVO};
    static const ZydisMnemonic kJcc[] = {ZYDIS_MNEMONIC_JZ,  ZYDIS_MNEMONIC_JNZ, ZYDIS_MNEMONIC_JB,
                                         ZYDIS_MNEMONIC_JNB, ZYDIS_MNEMONIC_JL,  ZYDIS_MNEMONIC_JNLE,
                                         ZYDIS_MNEMONIC_JS,  ZYDIS_MNEMONIC_JP,  ZYDIS_MNEMONIC_JBE};
    switch (in_.below(6)) {
      case 0: a_.insn(kSet[in_.below(6)]); a_.reg(r8(data_reg())); break;
      case 1: a_.insn(kCmov[in_.below(6)]); a_.reg(r64(data_reg())); a_.reg(r64(data_reg())); break;
      case 2: a_.insn(in_.byte() & 1 ? ZYDIS_MNEMONIC_ADC : ZYDIS_MNEMONIC_SBB); a_.reg(r64(data_reg())); a_.reg(r64(data_reg())); break;
      case 3: {  // jrcxz over one instruction (rel8 only)
        const int skip = a_.new_label();
        a_.insn(ZYDIS_MNEMONIC_JRCXZ);
        a_.target(skip, ZYDIS_BRANCH_WIDTH_8);
        arith();
        a_.bind(skip);
        break;
      }
      default: {  // if-then: jcc forward over a few instructions, maybe hinted
        const int skip = a_.new_label();
        ZydisEncoderRequest &r = a_.insn(kJcc[in_.below(9)]);
        const uint8_t hint = in_.byte() % 5;
        if (hint == 1) r.prefixes = ZYDIS_ATTRIB_HAS_BRANCH_TAKEN;
        if (hint == 2) r.prefixes = ZYDIS_ATTRIB_HAS_BRANCH_NOT_TAKEN;
        a_.target(skip);
        const int n = 1 + in_.below(3);
        for (int i = 0; i < n; i++) {
          if (depth < 2 && (in_.byte() & 3) == 0) memory_op(); else arith();
        }
        a_.bind(skip);
        break;
      }
    }
  }

  void memory_op() {
    const int r = data_reg();
    const uint32_t off = kScalarArea + 8 * in_.below(32);
    switch (in_.below(5)) {
      case 0: a_.insn(ZYDIS_MNEMONIC_MOV); a_.reg(r64(r)); a_.rip_data(off, 8); break;
      case 1: a_.insn(ZYDIS_MNEMONIC_ADD); a_.reg(r64(r)); a_.rip_data(off, 8); break;
      case 2: a_.insn(ZYDIS_MNEMONIC_MOV); a_.rip_data(off, 8); a_.reg(r64(r)); break;
      case 3: a_.insn(ZYDIS_MNEMONIC_MOV); a_.rip_data(off + 4, 4); a_.reg(r32(r)); break;
      default: a_.insn(ZYDIS_MNEMONIC_ADD); a_.rip_data(off, 8); a_.imm(static_cast<int8_t>(in_.byte())); break;
    }
  }

  void lock_op() {
    const uint32_t off = kLockArea + 8 * in_.below(8);
    int r = data_reg();
    if (in_.byte() & 1) {
      ZydisEncoderRequest &q = a_.insn(ZYDIS_MNEMONIC_XADD);
      q.prefixes = ZYDIS_ATTRIB_HAS_LOCK;
      a_.rip_data(off, 8);
      a_.reg(r64(r));
      return;
    }
    if (r == 0) r = 3;  // the new value must not be rax
    if (in_.byte() & 1) {  // load the expected value: the cmpxchg succeeds
      a_.insn(ZYDIS_MNEMONIC_MOV); a_.reg(ZYDIS_REGISTER_RAX); a_.rip_data(off, 8);
    }
    ZydisEncoderRequest &q = a_.insn(ZYDIS_MNEMONIC_CMPXCHG);
    q.prefixes = ZYDIS_ATTRIB_HAS_LOCK;
    a_.rip_data(off, 8);
    a_.reg(r64(r));
  }

  void push_pop() {
    const int a = data_reg(), b = data_reg();
    a_.insn(ZYDIS_MNEMONIC_PUSH); a_.reg(r64(a));
    a_.insn(ZYDIS_MNEMONIC_PUSH); a_.reg(r64(b));
    arith();
    a_.insn(ZYDIS_MNEMONIC_POP); a_.reg(r64(data_reg()));
    a_.insn(ZYDIS_MNEMONIC_POP); a_.reg(r64(data_reg()));
  }

  void call_leaf() {
    const int k = in_.below(kLeaves);
    if (in_.byte() & 1) {
      a_.insn(ZYDIS_MNEMONIC_CALL);
      a_.target(leaf_[k]);
    } else {  // indirect call through a register
      a_.insn(ZYDIS_MNEMONIC_LEA); a_.reg(r64(kScratchA)); a_.rip_label(leaf_[k], 8);
      a_.insn(ZYDIS_MNEMONIC_CALL); a_.reg(r64(kScratchA));
    }
  }

  void jump_table(int depth) {
    if (ntables_ >= kMaxTables) return arith();
    const uint32_t table = kTableArea + 32 * ntables_++;
    const int join = a_.new_label();
    int cases[4];
    for (int &c : cases) c = a_.new_label();
    a_.insn(ZYDIS_MNEMONIC_MOV); a_.reg(r32(kScratchA)); a_.reg(r32(data_reg()));
    a_.insn(ZYDIS_MNEMONIC_AND); a_.reg(r32(kScratchA)); a_.imm(3);
    a_.insn(ZYDIS_MNEMONIC_LEA); a_.reg(r64(kScratchB)); a_.rip_data(table, 8);
    a_.insn(ZYDIS_MNEMONIC_MOV); a_.reg(r64(kScratchA)); a_.mem(r64(kScratchB), r64(kScratchA), 8, 0, 8);
    a_.insn(ZYDIS_MNEMONIC_JMP); a_.reg(r64(kScratchA));
    for (int i = 0; i < 4; i++) {
      table_fixups_.push_back({table + 8 * i, cases[i]});
      a_.bind(cases[i]);
      const int n = 1 + in_.below(2);
      for (int j = 0; j < n; j++) arith();
      if (depth < 2 && (in_.byte() & 7) == 0) call_leaf();
      if (i != 3) {
        a_.insn(ZYDIS_MNEMONIC_JMP);
        a_.target(join);
      }
    }
    a_.bind(join);
  }

  void loop(int depth) {
    const int counter = kLoopRegs[depth];
    const int head = a_.new_label();
    a_.insn(ZYDIS_MNEMONIC_MOV); a_.reg(r32(counter)); a_.imm(1 + in_.below(5));
    a_.bind(head);
    const int n = 1 + in_.below(4);
    for (int i = 0; i < n; i++) segment(depth + 1, true);
    a_.insn(ZYDIS_MNEMONIC_DEC); a_.reg(r32(counter));
    a_.insn(ZYDIS_MNEMONIC_JNZ);
    a_.target(head);
  }

  // depth: loop nesting (0..2); main: may call leaves, loop, use tables.
  void segment(int depth, bool main) {
    switch (in_.below(10)) {
      case 0: case 1: arith(); arith(); break;
      case 2: case 3: flag_code(depth); break;
      case 4: if (main && depth < 2) loop(depth); else arith(); break;
      case 5: if (main) call_leaf(); else flag_code(depth); break;
      case 6: if (main && depth < 2) jump_table(depth); else arith(); break;
      case 7: memory_op(); break;
      case 8: lock_op(); break;
      default: push_pop(); break;
    }
  }

  Stream in_;
  Assembler a_;
  int leaf_[kLeaves] = {};
  uint32_t ntables_ = 0;
  std::vector<std::pair<uint32_t, int>> table_fixups_;
};

}  // namespace

std::string generate_program(const uint8_t *data, size_t size, GeneratedProgram *out) {
  Generator g(data, size);
  return g.run(out);
}

}  // namespace kjit::fuzz
