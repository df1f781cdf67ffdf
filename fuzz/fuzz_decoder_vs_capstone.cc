// SPDX-License-Identifier: GPL-2.0
// fuzz_decoder_vs_capstone: the engine's decoder wrapper (Zydis 4, through
// kjit::x86::Decoder, no kernel facts) against Capstone 4 on the first
// instruction of arbitrary bytes.  They must agree on valid/invalid, length
// and control-flow class; every tolerated disagreement is one narrow filter
// below, documented in fuzz/EXCEPTIONS.md (same numbering).  Anything else
// is printed and aborts.
#include <capstone/capstone.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <Zydis/Zydis.h>

#include "arch/x86/decoder.h"
#include "capstone_class.h"

namespace {

constexpr uint64_t kPc = 0xffffffff81000000ull;

csh g_cs;  // Capstone, x86-64, with operand detail

const char *cf_name(int cf) {
  static const char *const kNames[] = {"NONE", "JCC", "JMP", "CALL", "RET", "JMP_INDIRECT",
                                       "CALL_INDIRECT", "FENTRY", "TRAP", "SYSTEM"};
  return cf >= 0 && cf <= KJIT_CF_SYSTEM ? kNames[cf] : "?";
}

using kjit::sim::capstone_cf_class;
using kjit::sim::cs_has_group;

struct Prefixes {
  bool opsize = false;   // 0x66
  bool rex_w = false;    // a REX.W before the opcode
  int legacy_count = 0;  // legacy prefix bytes before REX/opcode
  uint32_t opcode_at = 0;
  bool seen_lock_rep = false;
};

Prefixes scan_prefixes(const uint8_t *b, uint32_t n) {
  Prefixes p;
  uint32_t i = 0;
  for (; i < n; i++) {
    const uint8_t c = b[i];
    if ((c & 0xf0) == 0x40) {
      // REX: effective only right before the opcode (a legacy prefix after
      // it cancels it).
      p.rex_w = (c & 8) != 0;
      continue;
    }
    p.rex_w = false;
    if (c == 0x66) p.opsize = true;
    else if (c == 0xf0 || c == 0xf2 || c == 0xf3) p.seen_lock_rep = true;
    else if (c == 0x67 || c == 0x2e || c == 0x3e || c == 0x26 || c == 0x36 || c == 0x64 || c == 0x65) {
    } else
      break;
    p.legacy_count++;
  }
  if (i > 0 && (b[i - 1] & 0xf0) == 0x40) p.rex_w = (b[i - 1] & 8) != 0;
  p.opcode_at = i;
  return p;
}

// The ModRM reg field of a one-byte opcode at `op`, -1 if absent.
int modrm_reg(const uint8_t *b, uint32_t n, uint32_t op) { return op + 1 < n ? (b[op + 1] >> 3) & 7 : -1; }

struct Both {
  const uint8_t *bytes;
  uint32_t n;
  bool z_ok;
  kjit::x86::DecodeStatus z_status;
  const kjit::x86::Insn *z;
  const cs_insn *c;  // nullptr when Capstone rejects
  int c_cf;
  uint32_t z_raw_status;  // Zydis's own status for the same bytes
};

// ---- Exceptions (fuzz/EXCEPTIONS.md) -------------------------------------
// Each returns true when the disagreement is the documented one.

// E1: 0x66-prefixed near branches (jmp/jcc/call rel).  In 64-bit mode Intel
// CPUs ignore 0x66 on near branches (rel32 stays, Zydis follows Intel);
// Capstone 4 decodes a rel16 form (shorter length, often also a different
// class); AMD truncates RIP.  Only when a 0x66 prefix is present and Zydis
// saw a relative branch.
bool exc_opsize_branch(const Both &x, const Prefixes &p) {
  if (!p.opsize) return false;
  if (x.z_ok) {
    const int zc = x.z->cf;
    return (zc == KJIT_CF_JMP || zc == KJIT_CF_JCC || zc == KJIT_CF_CALL) && x.z->rel_size != 0;
  }
  // Zydis needs the rel32 (input too short, or longer than 15 bytes) where
  // Capstone stopped after a rel16.
  return (x.z_raw_status == ZYDIS_STATUS_NO_MORE_DATA || x.z_raw_status == ZYDIS_STATUS_INSTRUCTION_TOO_LONG) &&
         x.c && (x.c_cf == KJIT_CF_JMP || x.c_cf == KJIT_CF_JCC || x.c_cf == KJIT_CF_CALL);
}

// E2: 0x66 (or REX.W-less 16-bit forms) on ret/ret imm16 and on indirect
// near jmp/call: Intel ignores the operand size override in 64-bit mode
// (Zydis: 64-bit operation), Capstone 4 decodes retw / jmp word ptr, which
// can also change its length or operand view.  Only with 0x66 present and
// both decoders agreeing on the mnemonic family.
bool exc_opsize_ret_indirect(const Both &x, const Prefixes &p) {
  if (!p.opsize || !x.z_ok) return false;
  const int zc = x.z->cf;
  return (zc == KJIT_CF_RET || zc == KJIT_CF_JMP_INDIRECT || zc == KJIT_CF_CALL_INDIRECT) &&
         (!x.c || x.c->id == X86_INS_RET || x.c->id == X86_INS_JMP || x.c->id == X86_INS_CALL ||
          x.c->id == X86_INS_LJMP || x.c->id == X86_INS_LCALL);
}

// E3: ud0 (0f ff) and ud1 (0f b9).  Zydis 4 decodes them with a ModRM byte
// (the current SDM form); Capstone 4 decodes ud0 as 2 bytes without ModRM
// (or rejects it) and ud1 (its "ud2b") likewise; lengths differ, the class
// (trap) is the same when both decode.
bool exc_ud0_ud1(const Both &x, const Prefixes &p) {
  if (p.opcode_at + 1 >= x.n || x.bytes[p.opcode_at] != 0x0f) return false;
  const uint8_t op2 = x.bytes[p.opcode_at + 1];
  if (op2 != 0xff && op2 != 0xb9) return false;
  if (x.z_ok && x.z->cf != KJIT_CF_TRAP) return false;
  return !x.c || x.c_cf == KJIT_CF_TRAP;
}

// E4: far jmp/call through memory (ff /3, ff /5) with REX.W or 0x66: the
// m16:64 / m16:16 forms.  Zydis classifies by branch type FAR (SYSTEM)
// whatever the operand size; Capstone 4 mis-sizes some of these and may
// reject REX.W forms.  Both "SYSTEM or rejected" is accepted.
bool exc_far_indirect(const Both &x, const Prefixes &p) {
  if (p.opcode_at >= x.n || x.bytes[p.opcode_at] != 0xff) return false;
  const int reg = modrm_reg(x.bytes, x.n, p.opcode_at);
  if (reg != 3 && reg != 5) return false;
  const bool z_far = x.z_ok && x.z->cf == KJIT_CF_SYSTEM;
  const bool c_far = x.c && x.c_cf == KJIT_CF_SYSTEM;
  return (z_far || !x.z_ok) && (c_far || !x.c);
}

// Vector register number (xmm/ymm/zmm N -> N), or -1 for anything else.
int vector_reg_number(csh cs, x86_reg reg) {
  const char *name = reg == X86_REG_INVALID ? nullptr : cs_reg_name(cs, reg);
  if (!name || strlen(name) < 4 || (name[0] != 'x' && name[0] != 'y' && name[0] != 'z') || strncmp(name + 1, "mm", 2))
    return -1;
  return atoi(name + 3);
}

// A gather's destination, VSIB index and (VEX) mask register numbers, read
// from the encoding itself: Capstone 4 can lose the VSIB index (with a 0x67
// prefix it prints a plain base), so its operands cannot say whether they
// overlap.  Only VEX c4 (map 0F38) and EVEX (62) encode gathers.
bool gather_encoding_overlaps(const Both &x, const Prefixes &p) {
  const uint32_t o = p.opcode_at;
  if (o < x.n && x.bytes[o] == 0xc4 && o + 5 < x.n) {
    const uint8_t b1 = x.bytes[o + 1], b2 = x.bytes[o + 2], modrm = x.bytes[o + 4], sib = x.bytes[o + 5];
    const int dest = ((modrm >> 3) & 7) | (b1 & 0x80 ? 0 : 8);
    const int index = ((sib >> 3) & 7) | (b1 & 0x40 ? 0 : 8);
    const int mask = (~b2 >> 3) & 15;
    return dest == index || dest == mask || index == mask;
  }
  if (o < x.n && x.bytes[o] == 0x62 && o + 6 < x.n) {
    const uint8_t p0 = x.bytes[o + 1], p2 = x.bytes[o + 3], modrm = x.bytes[o + 5], sib = x.bytes[o + 6];
    const int dest = ((modrm >> 3) & 7) | (p0 & 0x80 ? 0 : 8) | (p0 & 0x10 ? 0 : 16);
    const int index = ((sib >> 3) & 7) | (p0 & 0x40 ? 0 : 8) | (p2 & 0x08 ? 0 : 16);
    return dest == index;  // the EVEX mask is a k register
  }
  return false;
}

// A gather whose destination, VSIB index and (VEX) mask registers are not
// pairwise distinct: the SDM makes that #UD.  Checked on Capstone's operands
// and, where Capstone shows no vector index, on the encoding.
bool gather_registers_overlap(const Both &x, const Prefixes &p) {
  const cs_insn *in = x.c;
  if (!strstr(in->mnemonic, "gather")) return false;
  int nums[4];
  int count = 0;
  bool index_seen = false;
  const cs_x86 &d = in->detail->x86;
  for (uint8_t i = 0; i < d.op_count && count < 4; i++) {
    const bool mem = d.operands[i].type == X86_OP_MEM;
    const int n = d.operands[i].type == X86_OP_REG ? vector_reg_number(g_cs, d.operands[i].reg)
                  : mem                            ? vector_reg_number(g_cs, d.operands[i].mem.index)
                                                   : -1;
    if (mem && n >= 0) index_seen = true;
    if (n >= 0) nums[count++] = n;
  }
  if (!index_seen) return gather_encoding_overlaps(x, p);
  for (int i = 0; i < count; i++)
    for (int j = i + 1; j < count; j++)
      if (nums[i] == nums[j]) return true;
  return false;
}

// E5: Zydis rejects with a precise architectural reason for #UD that
// Capstone 4 does not check: LOCK on a non-lockable instruction or a
// register destination, a move to CS / a segment register > GS, a legacy or
// REX prefix before VEX/EVEX.  The engine never translates an invalid
// instruction (native fallback), so this is the safe side.
bool exc_zydis_ud(const Both &x, const Prefixes &p) {
  if (x.z_ok || !x.c) return false;
  switch (x.z_raw_status) {
    case ZYDIS_STATUS_ILLEGAL_LOCK:
      return memchr(x.bytes, 0xf0, p.opcode_at) != nullptr;
    case ZYDIS_STATUS_BAD_REGISTER:
      // sreg moves (8c/8e); gathers whose registers overlap
      return x.c->id == X86_INS_MOV || gather_registers_overlap(x, p);
    case ZYDIS_STATUS_MALFORMED_EVEX:
    case ZYDIS_STATUS_INVALID_MASK:
      return p.opcode_at < x.n && x.bytes[p.opcode_at] == 0x62 && x.c_cf == KJIT_CF_NONE;
    case ZYDIS_STATUS_DECODING_ERROR: {
      // Reserved VEX/EVEX field values (vector length, broadcast, W) that
      // Capstone 4 does not check.
      const uint8_t op = p.opcode_at < x.n ? x.bytes[p.opcode_at] : 0;
      return (op == 0x62 || op == 0xc4 || op == 0xc5 || op == 0x8f) && x.c_cf == KJIT_CF_NONE;
    }
    case ZYDIS_STATUS_ILLEGAL_LEGACY_PFX:
    case ZYDIS_STATUS_ILLEGAL_REX: {
      const uint8_t op = p.opcode_at < x.n ? x.bytes[p.opcode_at] : 0;
      return op == 0xc4 || op == 0xc5 || op == 0x62 || op == 0x8f;
    }
    default:
      return false;
  }
}

// E6: a 66/F2/F3 byte (with or without a LOCK that is illegal anyway) that
// selects a different (undefined) opcode in the 0F maps (mandatory prefix): Zydis says invalid, Capstone 4 ignores the
// prefix.  Checked mechanically: Capstone decodes the bytes without those
// prefixes to the same instruction, shorter by exactly the removed bytes.
bool exc_ignored_mandatory_prefix(const Both &x, const Prefixes &p, csh cs) {
  if (x.z_ok || !x.c || x.z_raw_status != ZYDIS_STATUS_DECODING_ERROR) return false;
  if (p.opcode_at >= x.n || x.bytes[p.opcode_at] != 0x0f) return false;
  // Which prefix Capstone honoured is not known: try dropping each set of
  // mandatory-prefix candidates (LOCK always goes, it is #UD here anyway).
  static const uint8_t kSets[][4] = {{0x66, 0xf2, 0xf3, 0xf0}, {0xf2, 0xf3, 0xf0, 0xf0},
                                     {0x66, 0xf0, 0xf0, 0xf0}, {0x66, 0xf2, 0xf0, 0xf0},
                                     {0x66, 0xf3, 0xf0, 0xf0}};
  for (const auto &set : kSets) {
    // Removal, then replacement by a neutral DS override (keeps the length
    // and whether a REX is right before the opcode).
    for (int replace = 0; replace < 2; replace++) {
      uint8_t stripped[15];
      uint32_t m = 0, removed = 0;
      for (uint32_t i = 0; i < x.n; i++) {
        const uint8_t c = x.bytes[i];
        const bool dead_rex = !replace && (c & 0xf0) == 0x40 && i + 1 < p.opcode_at;
        if (i < p.opcode_at && (dead_rex || c == set[0] || c == set[1] || c == set[2] || c == set[3])) {
          removed++;
          if (replace) stripped[m++] = 0x3e;
          continue;
        }
        stripped[m++] = c;
      }
      if (!removed) continue;
      cs_insn *ci = nullptr;
      const size_t k = cs_disasm(cs, stripped, m, kPc, 1, &ci);
      const bool same = k && ci->id == x.c->id && ci->size + (replace ? 0 : removed) == x.c->size;
      if (ci) cs_free(ci, k);
      if (same) return true;
    }
  }
  return false;
}

// E7: instructions newer than Capstone 4 (explicit list), which Zydis 4
// knows; Capstone rejects them.  Never control flow except the system
// transfers listed, which the engine never translates.
bool exc_newer_than_capstone(const Both &x, const Prefixes &) {
  if (!x.z_ok || x.c) return false;
  switch (x.z->mnemonic) {
    case ZYDIS_MNEMONIC_SEAMCALL: case ZYDIS_MNEMONIC_SEAMRET: case ZYDIS_MNEMONIC_SEAMOPS:
    case ZYDIS_MNEMONIC_TDCALL: case ZYDIS_MNEMONIC_ENCLV: case ZYDIS_MNEMONIC_UIRET:
      return x.z->cf == KJIT_CF_SYSTEM;
    case ZYDIS_MNEMONIC_TLBSYNC: case ZYDIS_MNEMONIC_INVLPGB: case ZYDIS_MNEMONIC_PCONFIG:
    case ZYDIS_MNEMONIC_WRPKRU: case ZYDIS_MNEMONIC_RDPKRU: case ZYDIS_MNEMONIC_MWAITX:
    case ZYDIS_MNEMONIC_MONITORX: case ZYDIS_MNEMONIC_RDPRU: case ZYDIS_MNEMONIC_CLZERO:
    case ZYDIS_MNEMONIC_SERIALIZE: case ZYDIS_MNEMONIC_TPAUSE: case ZYDIS_MNEMONIC_UMWAIT:
    case ZYDIS_MNEMONIC_UMONITOR: case ZYDIS_MNEMONIC_PSMASH: case ZYDIS_MNEMONIC_PVALIDATE:
    case ZYDIS_MNEMONIC_RSTORSSP: case ZYDIS_MNEMONIC_RMPADJUST: case ZYDIS_MNEMONIC_RMPUPDATE:
    case ZYDIS_MNEMONIC_SETSSBSY: case ZYDIS_MNEMONIC_CLRSSBSY: case ZYDIS_MNEMONIC_SAVEPREVSSP:
    case ZYDIS_MNEMONIC_INCSSPD: case ZYDIS_MNEMONIC_INCSSPQ: case ZYDIS_MNEMONIC_RDSSPD:
    case ZYDIS_MNEMONIC_RDSSPQ: case ZYDIS_MNEMONIC_WRSSD: case ZYDIS_MNEMONIC_WRSSQ:
    case ZYDIS_MNEMONIC_WRUSSD: case ZYDIS_MNEMONIC_WRUSSQ: case ZYDIS_MNEMONIC_PREFETCHWT1:
    case ZYDIS_MNEMONIC_XRESLDTRK: case ZYDIS_MNEMONIC_XSUSLDTRK: case ZYDIS_MNEMONIC_CLUI:
    case ZYDIS_MNEMONIC_STUI: case ZYDIS_MNEMONIC_TESTUI: case ZYDIS_MNEMONIC_SENDUIPI:
    case ZYDIS_MNEMONIC_HRESET: case ZYDIS_MNEMONIC_ENQCMD: case ZYDIS_MNEMONIC_ENQCMDS:
    case ZYDIS_MNEMONIC_MOVDIRI: case ZYDIS_MNEMONIC_MOVDIR64B: case ZYDIS_MNEMONIC_CLDEMOTE:
    case ZYDIS_MNEMONIC_MCOMMIT: case ZYDIS_MNEMONIC_AESDECWIDE128KL: case ZYDIS_MNEMONIC_AESENCWIDE128KL:
    case ZYDIS_MNEMONIC_AESDECWIDE256KL: case ZYDIS_MNEMONIC_AESENCWIDE256KL: case ZYDIS_MNEMONIC_AESDEC128KL:
    case ZYDIS_MNEMONIC_AESENC128KL: case ZYDIS_MNEMONIC_AESDEC256KL: case ZYDIS_MNEMONIC_AESENC256KL:
    case ZYDIS_MNEMONIC_ENCODEKEY128: case ZYDIS_MNEMONIC_ENCODEKEY256: case ZYDIS_MNEMONIC_LOADIWKEY:
    case ZYDIS_MNEMONIC_PTWRITE: case ZYDIS_MNEMONIC_BNDMOV: case ZYDIS_MNEMONIC_RDPID:
    case ZYDIS_MNEMONIC_CLWB: case ZYDIS_MNEMONIC_ENDBR64: case ZYDIS_MNEMONIC_ENDBR32:
      return x.z->cf == KJIT_CF_NONE;
    default:
      return false;
  }
}

// E8: fences (0F AE E8-FF): the CPU ignores ModRM.rm for lfence/mfence/
// sfence; Capstone 4 only accepts rm = 0.  Also F2/F3/66 forms of 0F AE F0+
// that are newer (umonitor/umwait/tpause) are in E7.
bool exc_fence_rm(const Both &x, const Prefixes &p) {
  if (!x.z_ok || x.c || x.z->cf != KJIT_CF_NONE) return false;
  if (x.z->mnemonic != ZYDIS_MNEMONIC_LFENCE && x.z->mnemonic != ZYDIS_MNEMONIC_MFENCE &&
      x.z->mnemonic != ZYDIS_MNEMONIC_SFENCE)
    return false;
  return p.opcode_at + 2 < x.n && x.bytes[p.opcode_at] == 0x0f && x.bytes[p.opcode_at + 1] == 0xae;
}

// E9: the hint-NOP / prefetch space (0F 0D, 0F 18-0F 1F: prefetch*, nop,
// MPX bnd*, cldemote): Capstone 4 and Zydis 4 disagree on which ModRM/prefix
// combinations are defined.  Both sides must be non-control-flow.
bool exc_hint_nop_space(const Both &x, const Prefixes &p) {
  if (p.opcode_at + 1 >= x.n || x.bytes[p.opcode_at] != 0x0f) return false;
  const uint8_t op2 = x.bytes[p.opcode_at + 1];
  if (op2 != 0x0d && (op2 < 0x18 || op2 > 0x1f)) return false;
  if (x.z_ok && x.z->cf != KJIT_CF_NONE) return false;
  return !x.c || x.c_cf == KJIT_CF_NONE;
}

// E10: vector/mask instructions (Zydis ISA set MMX/SSE*/AVX*/AVX-512/KMASK/
// GFNI...) that Capstone 4 rejects: EVEX forms and prefix orders missing from
// its tables.  Zydis must see plain (non-control-flow) code.
bool exc_vector_unknown_to_capstone(const Both &x, const Prefixes &, const ZydisDecodedInstruction &raw) {
  if (!x.z_ok || x.c || x.z->cf != KJIT_CF_NONE) return false;
  if (raw.encoding != ZYDIS_INSTRUCTION_ENCODING_LEGACY) return true;  // VEX/EVEX/XOP/3DNow!/MVEX
  switch (raw.meta.isa_ext) {
    case ZYDIS_ISA_EXT_MMX: case ZYDIS_ISA_EXT_SSE: case ZYDIS_ISA_EXT_SSE2: case ZYDIS_ISA_EXT_SSE3:
    case ZYDIS_ISA_EXT_SSSE3: case ZYDIS_ISA_EXT_SSE4: case ZYDIS_ISA_EXT_SSE4A: case ZYDIS_ISA_EXT_AVX:
    case ZYDIS_ISA_EXT_AVX2: case ZYDIS_ISA_EXT_AVX2GATHER: case ZYDIS_ISA_EXT_AVX512EVEX:
    case ZYDIS_ISA_EXT_AVX512VEX: case ZYDIS_ISA_EXT_GFNI: case ZYDIS_ISA_EXT_VAES:
    case ZYDIS_ISA_EXT_VPCLMULQDQ: case ZYDIS_ISA_EXT_F16C: case ZYDIS_ISA_EXT_FMA:
    case ZYDIS_ISA_EXT_FMA4: case ZYDIS_ISA_EXT_XOP: case ZYDIS_ISA_EXT_AMD3DNOW:
    case ZYDIS_ISA_EXT_AVX_VNNI:
    case ZYDIS_ISA_EXT_AMX_BF16: case ZYDIS_ISA_EXT_AMX_INT8:
    case ZYDIS_ISA_EXT_AMX_TILE: case ZYDIS_ISA_EXT_AES: case ZYDIS_ISA_EXT_SHA: case ZYDIS_ISA_EXT_PCLMULQDQ:
      return true;
    default:
      return false;
  }
}

// E11: segment register moves (8C/8E) with REX.R or 0x66/REX.W: the CPU
// ignores REX.R for Sreg, Capstone 4 rejects the encoding.
bool exc_sreg_rex(const Both &x, const Prefixes &p) {
  if (!x.z_ok || x.c || x.z->cf != KJIT_CF_NONE || x.z->mnemonic != ZYDIS_MNEMONIC_MOV) return false;
  return p.opcode_at < x.n && (x.bytes[p.opcode_at] == 0x8c || x.bytes[p.opcode_at] == 0x8e);
}

// E12: push imm (68) with 0x66 and a F2/F3 byte: Capstone 4 sizes the
// immediate as 32-bit (or rejects it); the CPU (and Zydis) use imm16.
bool exc_push_imm_f2f3(const Both &x, const Prefixes &p) {
  if (!x.z_ok || x.z->mnemonic != ZYDIS_MNEMONIC_PUSH || !p.opsize || !p.seen_lock_rep) return false;
  return p.opcode_at < x.n && x.bytes[p.opcode_at] == 0x68 && (!x.c || x.c->id == X86_INS_PUSH);
}

// E13: 0F 78/0F 79 with F2/66: SSE4A extrq/insertq for Zydis (AMD), VMX
// vmread/vmwrite for Capstone 4, which ignores the prefix (and accepts
// extrq with ModRM.reg != 0, which Zydis rejects).  Both plain code.
bool exc_sse4a_vmx(const Both &x, const Prefixes &p) {
  if (p.opcode_at + 1 >= x.n || x.bytes[p.opcode_at] != 0x0f) return false;
  const uint8_t op2 = x.bytes[p.opcode_at + 1];
  if (op2 != 0x78 && op2 != 0x79) return false;
  const bool z = x.z_ok ? (x.z->mnemonic == ZYDIS_MNEMONIC_EXTRQ || x.z->mnemonic == ZYDIS_MNEMONIC_INSERTQ)
                        : (x.z_raw_status == ZYDIS_STATUS_NO_MORE_DATA || x.z_raw_status == ZYDIS_STATUS_DECODING_ERROR ||
                           x.z_raw_status == ZYDIS_STATUS_INSTRUCTION_TOO_LONG);
  const bool c = !x.c || x.c->id == X86_INS_VMREAD || x.c->id == X86_INS_VMWRITE || x.c->id == X86_INS_EXTRQ ||
                 x.c->id == X86_INS_INSERTQ;
  return z && c;
}

// E14: redundant prefixes Capstone 4 refuses in some orders (a segment
// override, 0x66 or a repeated prefix before F3-mandatory instructions such
// as rdfsbase/wrgsbase/adox/adcx): checked mechanically, Capstone decodes
// the bytes with the redundant segment (and then 0x66) prefixes removed to
// the same mnemonic as Zydis, shorter by exactly the removed bytes.  Only
// for non-control-flow instructions.
bool exc_redundant_prefix(const Both &x, const Prefixes &p, csh cs) {
  if (!x.z_ok || x.c || x.z->cf != KJIT_CF_NONE) return false;
  const char *zname = ZydisMnemonicGetString(static_cast<ZydisMnemonic>(x.z->mnemonic));
  // Passes: {seg}, {seg,66}, {seg,67}, {seg,66,67}, {seg,66,67,F2,F3}.
  for (int pass = 0; pass < 5; pass++) {
    uint8_t stripped[15];
    uint32_t m = 0, removed = 0;
    for (uint32_t i = 0; i < x.n; i++) {
      const uint8_t c = x.bytes[i];
      const bool seg = c == 0x26 || c == 0x2e || c == 0x36 || c == 0x3e || c == 0x64 || c == 0x65;
      const bool drop66 = c == 0x66 && (pass == 1 || pass >= 3);
      const bool drop67 = c == 0x67 && pass >= 2;
      const bool droprep = (c == 0xf2 || c == 0xf3) && pass == 4;
      const bool dead_rex = (c & 0xf0) == 0x40 && i + 1 < p.opcode_at;  // cancelled by a later prefix
      if (i < p.opcode_at && (seg || drop66 || drop67 || droprep || dead_rex)) {
        removed++;
        continue;
      }
      stripped[m++] = c;
    }
    if (!removed) continue;
    cs_insn *ci = nullptr;
    const size_t k = cs_disasm(cs, stripped, m, kPc, 1, &ci);
    const bool same = k && ci->size + removed == x.z->length && zname &&
                      (strcmp(ci->mnemonic, zname) == 0 || (strcmp(ci->mnemonic, "movabs") == 0 && strcmp(zname, "mov") == 0));
    if (ci) cs_free(ci, k);
    if (same) return true;
  }
  return false;
}

// E15: 0x67 (address size) on an instruction without a memory operand,
// usually with a REX: the CPU ignores it; Capstone 4 mis-sizes some of
// these (ret imm16, call rel32, vmread reg, reg) or rejects them.  The
// control-flow class must still agree when Capstone decodes.
bool exc_addr_size_no_mem(const Both &x, const Prefixes &p) {
  if (!memchr(x.bytes, 0x67, p.opcode_at)) return false;
  if (!x.z_ok)  // Zydis needs the rel32 Capstone did not read
    return (x.z_raw_status == ZYDIS_STATUS_NO_MORE_DATA || x.z_raw_status == ZYDIS_STATUS_INSTRUCTION_TOO_LONG) &&
           x.c && (x.c_cf == KJIT_CF_CALL || x.c_cf == KJIT_CF_JMP || x.c_cf == KJIT_CF_JCC);
  if (x.z->has_mem_operand) return false;
  return !x.c || x.c_cf == x.z->cf;
}

// E16: the 3DNow! map (0F 0F modrm imm8-suffix): Capstone 4 decodes
// undefined suffixes as some 3DNow!/femms instruction; Zydis rejects them.
// Only non-control-flow on Capstone's side.
bool exc_3dnow(const Both &x, const Prefixes &p) {
  if (p.opcode_at + 1 >= x.n || x.bytes[p.opcode_at] != 0x0f || x.bytes[p.opcode_at + 1] != 0x0f) return false;
  if (x.z_ok && x.z->cf != KJIT_CF_NONE) return false;
  return !x.c || x.c_cf == KJIT_CF_NONE;
}

// E17: VIA PadLock (0F A6 / 0F A7: montmul, xsha*, xcrypt*, xstore) and
// the withdrawn pcommit (66 0F AE F8): Capstone 4 has them, Zydis 4 does
// not (invalid: the engine never translates them).  Capstone must see plain
// code.
bool exc_padlock(const Both &x, const Prefixes &p) {
  if (x.z_ok || !x.c || x.c_cf != KJIT_CF_NONE || p.opcode_at + 1 >= x.n || x.bytes[p.opcode_at] != 0x0f)
    return false;
  if (x.c->id == X86_INS_PCOMMIT) return true;
  return x.bytes[p.opcode_at + 1] == 0xa6 || x.bytes[p.opcode_at + 1] == 0xa7;
}

// E18: EVEX register forms with embedded rounding (EVEX.b = 1, ModRM.mod =
// 3): Capstone 4 reads one byte too many for some of them.  Both plain code.
bool exc_evex_rounding(const Both &x, const Prefixes &p) {
  const uint32_t o = p.opcode_at;
  if (!x.z_ok || !x.c || o + 5 >= x.n || x.bytes[o] != 0x62) return false;
  return (x.bytes[o + 3] & 0x10) && (x.bytes[o + 5] >> 6) == 3 && x.z->cf == KJIT_CF_NONE &&
         x.c_cf == KJIT_CF_NONE;
}

bool is_null_segment_prefix(uint8_t b) { return b == 0x26 || b == 0x2e || b == 0x36 || b == 0x3e; }
// A legacy prefix byte that occurs again before the opcode (REX excluded).
bool repeated_prefix(const uint8_t *b, uint32_t opcode_at, uint32_t j) {
  if ((b[j] & 0xf0) == 0x40) return false;
  for (uint32_t i = 0; i < opcode_at; i++)
    if (i != j && b[i] == b[j]) return true;
  return false;
}

// E19: a missing mandatory 0x66 (0F 38 / 0F 3A SSE4 forms that only exist
// with 66, such as phminposuw): Zydis rejects, Capstone 4 decodes the 66
// form anyway.  Checked mechanically: with a 66 inserted in front, Capstone
// decodes the same instruction, one byte longer (at the 15-byte limit the
// 66 replaces a repeated segment prefix, and the length stays).
bool exc_missing_66(const Both &x, const Prefixes &p, csh cs) {
  if (x.z_ok || !x.c || x.c_cf != KJIT_CF_NONE || x.z_raw_status != ZYDIS_STATUS_DECODING_ERROR || p.opsize)
    return false;
  // Capstone decodes the first instruction only, so a 16-byte buffer is fine.
  uint8_t with66[16];
  with66[0] = 0x66;
  memcpy(with66 + 1, x.bytes, x.n);
  cs_insn *ci = nullptr;
  size_t k = cs_disasm(cs, with66, x.n + 1, kPc, 1, &ci);
  bool same = k && ci->id == x.c->id && ci->size == x.c->size + 1u;
  if (!same && x.c->size == 15) {
    // The 66 form would be 16 bytes: let the 66 take the place of a prefix
    // with no effect (ES/CS/SS/DS in 64-bit mode, or a repeated prefix).
    uint32_t j = 0;
    while (j < p.opcode_at && !is_null_segment_prefix(x.bytes[j]) &&
           !repeated_prefix(x.bytes, p.opcode_at, j))
      j++;
    if (j < p.opcode_at) {
      if (ci) cs_free(ci, k);
      ci = nullptr;
      memcpy(with66, x.bytes, x.n);
      with66[j] = 0x66;
      k = cs_disasm(cs, with66, x.n, kPc, 1, &ci);
      same = k && ci->id == x.c->id && ci->size == x.c->size;
    }
  }
  if (ci) cs_free(ci, k);
  return same;
}

// E20: EVEX forms under 0x67 (32-bit addressing): Capstone 4 decodes their
// ModRM as if there were no SIB and no displacement (67 62 02 7d 4c 66 4c
// 0e 47: binutils and Zydis read vpblendmb 0x11c0(%r14d,%r9d,1), 9 bytes,
// Capstone [r12 + 0x380], 8), so it reads them short, or whole where Zydis
// needs more bytes or more than 15, and it also accepts them after a REX,
// which the SDM makes #UD.  No control flow on either side.
bool exc_evex_addr32(const Both &x, const Prefixes &p) {
  const uint32_t o = p.opcode_at;
  if (!x.c || x.c_cf != KJIT_CF_NONE || o >= x.n || x.bytes[o] != 0x62 || !memchr(x.bytes, 0x67, o)) return false;
  if (x.z_ok) return x.z->cf == KJIT_CF_NONE && x.z->length > x.c->size;
  return x.z_raw_status == ZYDIS_STATUS_NO_MORE_DATA || x.z_raw_status == ZYDIS_STATUS_ILLEGAL_REX ||
         x.z_raw_status == ZYDIS_STATUS_INSTRUCTION_TOO_LONG;
}

void report(const Both &x, const char *what) {
  fprintf(stderr, "decoder disagreement (%s) on:", what);
  for (uint32_t i = 0; i < x.n; i++) fprintf(stderr, " %02x", x.bytes[i]);
  fprintf(stderr, "\n  zydis:    %s", x.z_ok ? "ok" : (x.z_status == kjit::x86::DecodeStatus::kTruncated ? "truncated" : "invalid"));
  if (x.z_ok)
    fprintf(stderr, " len=%u cf=%s %s", x.z->length, cf_name(x.z->cf),
            ZydisMnemonicGetString(static_cast<ZydisMnemonic>(x.z->mnemonic)));
  else
    fprintf(stderr, " status=0x%x", x.z_raw_status);
  fprintf(stderr, "\n  capstone: %s", x.c ? "ok" : "invalid");
  if (x.c) fprintf(stderr, " len=%u cf=%s %s %s", x.c->size, x.c_cf < 0 ? "UNMAPPED" : cf_name(x.c_cf), x.c->mnemonic, x.c->op_str);
  fprintf(stderr, "\n");
  // Triage mode (KJIT_FUZZ_REPORT_ONLY=1): list disagreements, do not stop.
  static const bool report_only = getenv("KJIT_FUZZ_REPORT_ONLY") != nullptr;
  if (!report_only) __builtin_trap();
}

kjit::x86::Decoder g_dec;
ZydisDecoder g_zydis;

bool setup() {
  if (cs_open(CS_ARCH_X86, CS_MODE_64, &g_cs) != CS_ERR_OK) return false;
  cs_option(g_cs, CS_OPT_DETAIL, CS_OPT_ON);
  g_dec.init(nullptr);
  ZydisDecoderInit(&g_zydis, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static bool ready = setup();
  if (!ready) __builtin_trap();
  if (size == 0) return 0;
  uint8_t bytes[15];
  const uint32_t n = size < 15 ? static_cast<uint32_t>(size) : 15;
  memcpy(bytes, data, n);

  kjit::x86::Insn zi;
  Both x{};
  x.bytes = bytes;
  x.n = n;
  x.z_status = g_dec.decode(kPc, bytes, n, &zi);
  x.z_ok = x.z_status == kjit::x86::DecodeStatus::kOk;
  x.z = &zi;
  ZydisDecodedInstruction raw{};
  x.z_raw_status = ZydisDecoderDecodeInstruction(&g_zydis, nullptr, bytes, n, &raw);
  cs_insn *ci = nullptr;
  const size_t count = cs_disasm(g_cs, bytes, n, kPc, 1, &ci);
  x.c = count ? ci : nullptr;
  x.c_cf = x.c ? capstone_cf_class(x.c) : 0;

  const Prefixes p = scan_prefixes(bytes, n);
  const char *problem = nullptr;
  if (x.z_ok != (x.c != nullptr)) problem = "valid/invalid";
  else if (x.z_ok && x.z->length != x.c->size) problem = "length";
  else if (x.z_ok && x.c_cf < 0) problem = "unmapped capstone control flow";
  else if (x.z_ok && x.z->cf != x.c_cf) problem = "control-flow class";
  if (x.z_ok && zi.length > n) problem = "zydis length beyond input";

  if (problem && !exc_opsize_branch(x, p) && !exc_opsize_ret_indirect(x, p) && !exc_ud0_ud1(x, p) &&
      !exc_far_indirect(x, p) && !exc_zydis_ud(x, p) && !exc_ignored_mandatory_prefix(x, p, g_cs) &&
      !exc_newer_than_capstone(x, p) && !exc_fence_rm(x, p) && !exc_hint_nop_space(x, p) &&
      !exc_vector_unknown_to_capstone(x, p, raw) && !exc_sreg_rex(x, p) && !exc_push_imm_f2f3(x, p) &&
      !exc_sse4a_vmx(x, p) && !exc_redundant_prefix(x, p, g_cs) && !exc_addr_size_no_mem(x, p) &&
      !exc_3dnow(x, p) && !exc_padlock(x, p) &&
      !exc_evex_rounding(x, p) && !exc_missing_66(x, p, g_cs) && !exc_evex_addr32(x, p))
    report(x, problem);
  if (ci) cs_free(ci, count);
  return 0;
}
