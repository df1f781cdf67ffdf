// SPDX-License-Identifier: GPL-2.0
#include "core/ibl.h"

#include "arch/x86/code_writer.h"
#include "core/engine_state.h"

namespace kjit {
namespace {

constexpr uint32_t kMinCodeForIbl = 16 * 1024;

// Multiplicative hashing: the high half of pc * kHashMul, masked.  Return
// addresses and branch targets crowd into a few pages of text; the product
// spreads every bit of pc over the index.
constexpr uint64_t kHashMul = 0x9e3779b97f4a7c15ull;
uint32_t hash_index(uint64_t pc, uint32_t mask) { return static_cast<uint32_t>((pc * kHashMul) >> 32) & mask; }

// The offset changes when the epoch renews (ibl_renew), under lock-free
// readers: the new table is complete and empty before it is published, and
// the old one stays intact for the code that still uses it.
IblEntry *table_of(const Epoch &e) {
  return reinterpret_cast<IblEntry *>(e.write_at(__atomic_load_n(&e.ibl_table_offset, __ATOMIC_ACQUIRE)));
}

uint32_t table_bytes(uint32_t mask) { return (mask + 1 + kIblProbes) * sizeof(IblEntry); }

// The shared routine.  On entry: rcx = original target, [rsp] = the site's
// miss stub, [rsp+8] = the program's rcx (the chain protocol).  A hit
// restores everything and `ret`s into the translation; a miss restores
// everything and `ret`s into the site's miss stub, which calls the gate.
void emit_routine(x86::CodeWriter &w, uint64_t table_exec, uint32_t mask) {
  static const uint8_t kPrologue[] = {
      0x50,              // push rax
      0x9c,              // pushfq
      0x52,              // push rdx
      0x48, 0x89, 0xc8,  // mov rax, rcx
      0x48, 0xba,        // movabs rdx, kHashMul
  };
  w.bytes(kPrologue, sizeof(kPrologue));
  w.u64(kHashMul);
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
  // Probe: cmp rcx, [rax]; je hit; add rax, 16 (x kIblProbes)
  int32_t hit_jumps[kIblProbes];
  for (uint32_t i = 0; i < kIblProbes; i++) {
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
  for (int32_t f : hit_jumps)
    if (f >= 0) w.patch_rel32(static_cast<uint32_t>(f), hit);
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

// A zeroed table and its routine at `at` (64-aligned) of `e`'s code region;
// the routine's offset, or 0 when they do not fit.
uint32_t place_table(Epoch &e, uint32_t at, uint32_t mask) {
  uint32_t bytes = table_bytes(mask);
  uint64_t table_exec = e.exec_at(at);
  if (at + bytes > e.code_size || !x86::fits_simm32(table_exec) || !x86::fits_simm32(table_exec + bytes)) return 0;
  __builtin_memset(e.write_at(at), 0, bytes);
  uint32_t start = (at + bytes + 63) & ~63u;
  if (start >= e.code_size) return 0;
  x86::CodeWriter w(e.write_at(start), e.exec_at(start), e.code_size - start);
  emit_routine(w, table_exec, mask);
  if (w.overflowed()) return 0;
  e.code_used = start + w.size();
  return start;
}

}  // namespace

void ibl_setup(Epoch &e) {
  e.ibl_routine = 0;
  if (e.code_size < kMinCodeForIbl) return;
  uint32_t entries = 64;
  while (entries * 2 <= e.code_size / 256) entries *= 2;
  e.ibl_mask = entries - 1;
  e.ibl_table_offset = 0;
  e.ibl_routine = place_table(e, 0, e.ibl_mask);
  if (!e.ibl_routine) e.code_used = 0;
}

bool ibl_renew(Epoch &e) {
  if (!e.ibl_routine) return true;  // no IBL in this epoch: nothing to renew
  // The same size: a reader may pair the new offset with the mask it read.
  uint32_t used = e.code_used;
  uint32_t at = (e.code_used + 63) & ~63u;
  uint32_t routine = place_table(e, at, e.ibl_mask);
  if (!routine) {
    e.code_used = used;
    return false;
  }
  __atomic_store_n(&e.ibl_table_offset, at, __ATOMIC_RELEASE);
  e.ibl_routine = routine;
  return true;
}

void ibl_insert(Epoch &e, uint64_t pc, uint64_t dest) {
  if (!e.ibl_routine || pc == 0) return;
  IblEntry *t = table_of(e);
  uint32_t i = hash_index(pc, e.ibl_mask);
  for (uint32_t p = 0; p < kIblProbes; p++) {
    IblEntry &slot = t[i + p];
    if (slot.pc == pc) {
      // A retired translation's entry leads to its forwarder until the new
      // one replaces it (ibl_redirect); readers see one or the other.
      if (slot.dest != dest) __atomic_store_n(&slot.dest, dest, __ATOMIC_RELEASE);
      return;
    }
    if (slot.pc == 0) {
      slot.dest = dest;
      // Publish the translation before the key (readers load pc, then dest).
      __atomic_store_n(&slot.pc, pc, __ATOMIC_RELEASE);
      return;
    }
  }
  // All probe slots taken: this target keeps using the dispatcher.
  g_engine.stats.ibl_full++;
}

bool ibl_redirect(Epoch &e, uint64_t pc, uint64_t from, uint64_t to) {
  if (!e.ibl_routine) return false;
  IblEntry *t = table_of(e);
  uint32_t i = hash_index(pc, e.ibl_mask);
  for (uint32_t p = 0; p < kIblProbes; p++) {
    IblEntry &slot = t[i + p];
    if (slot.pc != pc) continue;
    if (slot.dest != from) return false;
    __atomic_store_n(&slot.dest, to, __ATOMIC_RELEASE);
    return true;
  }
  return false;
}

uint32_t ibl_home(const Epoch &e, uint64_t pc) { return hash_index(pc, e.ibl_mask); }

uint64_t ibl_lookup(const Epoch &e, uint64_t pc) {
  if (!e.ibl_routine) return 0;
  const IblEntry *t = table_of(e);
  uint32_t i = hash_index(pc, e.ibl_mask);
  for (uint32_t p = 0; p < kIblProbes; p++)
    if (__atomic_load_n(&t[i + p].pc, __ATOMIC_ACQUIRE) == pc) return t[i + p].dest;
  return 0;
}

}  // namespace kjit
