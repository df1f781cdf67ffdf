// SPDX-License-Identifier: GPL-2.0
// The in-cache indirect lookup's shared routine (arch/emit.h; core/ibl.h
// keeps the table).
#include "arch/emit.h"

namespace kjit::arch {
namespace {
constexpr uint32_t kMaxProbes = 8;
}  // namespace

// The shared routine.  On entry: rcx = original target, [rsp] = the site's
// miss stub, [rsp+8] = the program's rcx (the chain protocol).  A hit
// restores everything and `ret`s into the translation; a miss restores
// everything and `ret`s into the site's miss stub, which calls the gate.
void emit_ibl_routine(CodeWriter &w, uint64_t table_exec, uint32_t mask, uint64_t hash_mul, uint32_t probes) {
  static const uint8_t kPrologue[] = {
      0x50,              // push rax
      0x9c,              // pushfq
      0x52,              // push rdx
      0x48, 0x89, 0xc8,  // mov rax, rcx
      0x48, 0xba,        // movabs rdx, hash_mul
  };
  w.bytes(kPrologue, sizeof(kPrologue));
  w.u64(hash_mul);
  static const uint8_t kHash[] = {
      0x48, 0x0f, 0xaf, 0xc2,  // imul rax, rdx
      0x48, 0xc1, 0xe8, 0x20,  // shr rax, 32
  };
  w.bytes(kHash, sizeof(kHash));
  w.byte(0x48);  // and rax, imm32
  w.byte(0x25);
  w.u32(mask);
  static const uint8_t kScale[] = {0x48, 0xc1, 0xe0, 0x04};  // shl rax, 4
  w.bytes(kScale, sizeof(kScale));
  w.byte(0x48);  // add rax, simm32 (the table's exec address)
  w.byte(0x05);
  w.u32(static_cast<uint32_t>(table_exec));
  // Probe: cmp rcx, [rax]; je hit; add rax, 16 (x probes)
  int32_t hit_jumps[kMaxProbes];
  if (probes > kMaxProbes) probes = kMaxProbes;
  for (uint32_t i = 0; i < probes; i++) {
    static const uint8_t kCmp[] = {0x48, 0x3b, 0x08};  // cmp rcx, [rax]
    w.bytes(kCmp, sizeof(kCmp));
    hit_jumps[i] = w.jcc(0x4, w.here());  // je hit (patched below)
    static const uint8_t kNext[] = {0x48, 0x83, 0xc0, 0x10};  // add rax, 16
    w.bytes(kNext, sizeof(kNext));
  }
  // Miss: restore, return into the site's miss stub.
  static const uint8_t kMiss[] = {0x5a, 0x9d, 0x58, 0xc3};  // pop rdx; popfq; pop rax; ret
  w.bytes(kMiss, sizeof(kMiss));
  uint64_t hit = w.here();
  for (uint32_t i = 0; i < probes; i++)
    if (const int32_t f = hit_jumps[i]; f >= 0) w.patch_rel32(static_cast<uint32_t>(f), hit);
  static const uint8_t kHit[] = {
      0x48, 0x8b, 0x40, 0x08,        // mov rax, [rax+8]     translation
      0x48, 0x8b, 0x4c, 0x24, 0x20,  // mov rcx, [rsp+32]    the program's rcx
      0x48, 0x89, 0x44, 0x24, 0x20,  // mov [rsp+32], rax    becomes the return target
      0x5a, 0x9d, 0x58,              // pop rdx; popfq; pop rax
      0x48, 0x8d, 0x64, 0x24, 0x08,  // lea rsp, [rsp+8]     drop the miss-stub slot
      0xc3,                          // ret                  into the translation
  };
  w.bytes(kHit, sizeof(kHit));
}

}  // namespace kjit::arch
