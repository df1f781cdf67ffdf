// SPDX-License-Identifier: GPL-2.0
// Unicorn wrapper.  One global UC_HOOK_CODE does the bookkeeping (sentinel,
// budget, last pc for write attribution) and then dispatches to range hooks:
// a single hook keeps their order well defined.
#include "emulator.h"
#include "hex_text.h"

#include "missing_insns.h"

#include <unicorn/unicorn.h>

#include <algorithm>
#include <map>

namespace kjit::sim {
namespace {

// KJIT_REG_* (hardware order) to Unicorn register ids.
constexpr int kUcGpr[16] = {
    UC_X86_REG_RAX, UC_X86_REG_RCX, UC_X86_REG_RDX, UC_X86_REG_RBX,
    UC_X86_REG_RSP, UC_X86_REG_RBP, UC_X86_REG_RSI, UC_X86_REG_RDI,
    UC_X86_REG_R8,  UC_X86_REG_R9,  UC_X86_REG_R10, UC_X86_REG_R11,
    UC_X86_REG_R12, UC_X86_REG_R13, UC_X86_REG_R14, UC_X86_REG_R15,
};

uint32_t uc_perms(uint32_t p) {
  uint32_t r = 0;
  if (p & kPermR) r |= UC_PROT_READ;
  if (p & kPermW) r |= UC_PROT_WRITE;
  if (p & kPermX) r |= UC_PROT_EXEC;
  return r;
}

const char *access_name(int type) {
  switch (type) {
    case UC_MEM_READ_UNMAPPED: return "read from unmapped";
    case UC_MEM_WRITE_UNMAPPED: return "write to unmapped";
    case UC_MEM_FETCH_UNMAPPED: return "fetch from unmapped";
    case UC_MEM_READ_PROT: return "read from protected";
    case UC_MEM_WRITE_PROT: return "write to read-only";
    case UC_MEM_FETCH_PROT: return "fetch from non-executable";
    default: return "invalid access to";
  }
}

}  // namespace

const char *stop_reason_name(StopReason r) {
  switch (r) {
    case StopReason::kSentinel: return "sentinel";
    case StopReason::kBudget: return "budget exhausted";
    case StopReason::kFault: return "fault";
    case StopReason::kStopped: return "stopped";
    case StopReason::kError: return "error";
  }
  return "?";
}

Emulator::Emulator() {
  uc_engine *uc = nullptr;
  if (uc_open(UC_ARCH_X86, UC_MODE_64, &uc) != UC_ERR_OK) return;
  uc_ = uc;
  uc_hook h;
  uc_hook_add(uc_, &h, UC_HOOK_CODE, reinterpret_cast<void *>(&Emulator::on_code), this, 1, 0);
  uc_hook_add(uc_, &h, UC_HOOK_MEM_WRITE, reinterpret_cast<void *>(&Emulator::on_write), this, 1, 0);
  uc_hook_add(uc_, &h, UC_HOOK_MEM_INVALID, reinterpret_cast<void *>(&Emulator::on_invalid), this, 1, 0);
  uc_hook_add(uc_, &h, UC_HOOK_INTR, reinterpret_cast<void *>(&Emulator::on_interrupt), this, 1, 0);
  uc_hook_add(uc_, &h, UC_HOOK_INSN_INVALID, reinterpret_cast<void *>(&Emulator::on_invalid_insn), this, 1, 0);
}

Emulator::~Emulator() {
  if (uc_) uc_close(uc_);
}

std::string Emulator::load_capture(const Capture &cap) {
  if (!uc_) return "unicorn failed to open";
  // Page -> union of permissions of the regions touching it; then map runs
  // of consecutive pages with equal permissions in one call each.
  std::map<uint64_t, uint32_t> pages;
  for (const Region &r : cap.regions)
    for (uint64_t p = page_down(r.addr); p <= page_down(r.end() - 1); p += kPageSize) {
      pages[p] |= r.perms;
      if (p + kPageSize == 0) break;  // last page of the address space
    }
  for (auto it = pages.begin(); it != pages.end();) {
    uint64_t start = it->first, perms = it->second, size = 0;
    while (it != pages.end() && it->first == start + size && it->second == perms) {
      size += kPageSize;
      ++it;
    }
    uc_err e = uc_mem_map(uc_, start, size, uc_perms(static_cast<uint32_t>(perms)));
    if (e != UC_ERR_OK) return "cannot map " + hex(start) + "+" + hex(size) + ": " + uc_strerror(e);
  }
  for (const Region &r : cap.regions)
    if (uc_mem_write(uc_, r.addr, r.bytes.data(), r.bytes.size()) != UC_ERR_OK)
      return "cannot fill region at " + hex(r.addr);
  set_regs(cap.regs);
  return "";
}

std::string Emulator::map(uint64_t addr, uint64_t size, uint32_t perms) {
  if (!uc_) return "unicorn failed to open";
  const uint64_t start = page_down(addr), len = page_up(addr + size) - start;
  uc_err e = uc_mem_map(uc_, start, len, uc_perms(perms));
  return e == UC_ERR_OK ? "" : "cannot map " + hex(start) + "+" + hex(len) + ": " + uc_strerror(e);
}

std::string Emulator::map_host(uint64_t addr, void *host, uint64_t size, uint32_t perms) {
  if (!uc_) return "unicorn failed to open";
  if ((addr | size) & (kPageSize - 1)) return "host mapping at " + hex(addr) + " is not page-aligned";
  uc_err e = uc_mem_map_ptr(uc_, addr, size, uc_perms(perms), host);
  return e == UC_ERR_OK ? "" : "cannot map host memory at " + hex(addr) + ": " + uc_strerror(e);
}

bool Emulator::is_mapped(uint64_t addr) const {
  uint8_t b;
  return uc_ && uc_mem_read(uc_, addr, &b, 1) == UC_ERR_OK;
}

std::string Emulator::map_stack(uint64_t top, uint64_t size) {
  if (is_mapped(top - 8)) return "";
  return map(top - size, size, kPermR | kPermW);
}

std::string Emulator::map_sentinel(uint64_t sentinel) {
  if (is_mapped(sentinel)) return "sentinel " + hex(sentinel) + " is inside mapped memory";
  std::string err = map(page_down(sentinel), kPageSize, kPermR | kPermX);
  if (!err.empty()) return err;
  std::vector<uint8_t> int3(kPageSize, 0xcc);
  write(page_down(sentinel), int3.data(), int3.size());
  return "";
}

bool Emulator::read(uint64_t addr, void *out, uint64_t len) const {
  return uc_ && uc_mem_read(uc_, addr, out, len) == UC_ERR_OK;
}

bool Emulator::write(uint64_t addr, const void *in, uint64_t len) {
  return uc_ && uc_mem_write(uc_, addr, in, len) == UC_ERR_OK;
}

uint64_t Emulator::gpr(int reg) const {
  uint64_t v = 0;
  if (uc_ && reg >= 0 && reg < 16) uc_reg_read(uc_, kUcGpr[reg], &v);
  return v;
}

void Emulator::set_gpr(int reg, uint64_t v) {
  if (uc_ && reg >= 0 && reg < 16) uc_reg_write(uc_, kUcGpr[reg], &v);
}

uint64_t Emulator::rip() const {
  uint64_t v = 0;
  if (uc_) uc_reg_read(uc_, UC_X86_REG_RIP, &v);
  return v;
}

void Emulator::set_rip(uint64_t v) {
  if (!uc_) return;
  uc_reg_write(uc_, UC_X86_REG_RIP, &v);
  rip_changed_ = true;
}

void Emulator::rerun_instruction() {
  if (!uc_) return;
  rerun_pc_ = last_pc_;
  rerun_hook_ = hook_index_;
  rerun_ = true;
  set_rip(last_pc_);
}

uint64_t Emulator::rflags() const {
  uint64_t v = 0;
  if (uc_) uc_reg_read(uc_, UC_X86_REG_RFLAGS, &v);
  return v;
}

void Emulator::set_rflags(uint64_t v) {
  if (uc_) uc_reg_write(uc_, UC_X86_REG_RFLAGS, &v);
}

void Emulator::set_regs(const Regs &regs) {
  for (int i = 0; i < 16; i++) set_gpr(i, regs.gpr[i]);
  if (!uc_) return;
  uint64_t v = regs.rip;
  uc_reg_write(uc_, UC_X86_REG_RIP, &v);
  set_rflags(regs.rflags);
  v = regs.gs_base;
  uc_reg_write(uc_, UC_X86_REG_GS_BASE, &v);
  v = regs.fs_base;
  uc_reg_write(uc_, UC_X86_REG_FS_BASE, &v);
}

CpuState::~CpuState() {
  if (ctx_) uc_context_free(ctx_);
}

CpuState &CpuState::operator=(CpuState &&o) noexcept {
  if (this != &o) {
    if (ctx_) uc_context_free(ctx_);
    ctx_ = o.ctx_;
    o.ctx_ = nullptr;
  }
  return *this;
}

CpuState Emulator::save_cpu() const {
  CpuState s;
  if (!uc_ || uc_context_alloc(uc_, &s.ctx_) != UC_ERR_OK) return CpuState{};
  if (uc_context_save(uc_, s.ctx_) != UC_ERR_OK) return CpuState{};
  return s;
}

bool Emulator::restore_cpu(const CpuState &s) {
  rerun_ = false;  // the state is one between two instructions
  return uc_ && s.ctx_ && uc_context_restore(uc_, s.ctx_) == UC_ERR_OK;
}

std::vector<MappedRange> Emulator::mapped() const {
  std::vector<MappedRange> out;
  uc_mem_region *regions = nullptr;
  uint32_t n = 0;
  if (!uc_ || uc_mem_regions(uc_, &regions, &n) != UC_ERR_OK) return out;
  for (uint32_t i = 0; i < n; i++) {
    uint32_t p = 0;
    if (regions[i].perms & UC_PROT_READ) p |= kPermR;
    if (regions[i].perms & UC_PROT_WRITE) p |= kPermW;
    if (regions[i].perms & UC_PROT_EXEC) p |= kPermX;
    out.push_back(MappedRange{regions[i].begin, regions[i].end + 1, p});
  }
  uc_free(regions);
  std::sort(out.begin(), out.end(), [](const MappedRange &a, const MappedRange &b) { return a.begin < b.begin; });
  return out;
}

Regs Emulator::regs() const {
  Regs r;
  for (int i = 0; i < 16; i++) r.gpr[i] = gpr(i);
  r.rip = rip();
  r.rflags = rflags();
  if (uc_) {
    uc_reg_read(uc_, UC_X86_REG_GS_BASE, &r.gs_base);
    uc_reg_read(uc_, UC_X86_REG_FS_BASE, &r.fs_base);
  }
  return r;
}

bool Emulator::push(uint64_t v) {
  const uint64_t sp = gpr(4) - 8;
  if (!write(sp, &v, 8)) return false;
  set_gpr(4, sp);
  return true;
}

bool Emulator::pop(uint64_t *v) {
  const uint64_t sp = gpr(4);
  if (!read(sp, v, 8)) return false;
  set_gpr(4, sp + 8);
  return true;
}

void Emulator::add_code_hook(uint64_t begin, uint64_t end, CodeHook hook) {
  hooks_.push_back(RangeHook{begin, end, std::move(hook)});
}

void Emulator::invalidate(uint64_t addr, uint64_t len) {
  if (uc_ && len) uc_ctl_remove_cache(uc_, addr, addr + len);
}

void Emulator::mark_protocol_write(uint64_t addr) {
  // The stub's writes are the last ones before the gate; a short window is
  // enough and keeps this O(1).
  for (size_t i = writes_.size(), seen = 0; i > 0 && seen < 8; i--, seen++)
    if (writes_[i - 1].addr == addr && !writes_[i - 1].protocol) {
      writes_[i - 1].protocol = true;
      return;
    }
}

void Emulator::mark_engine_protocol_write(uint64_t addr) {
  for (size_t i = writes_.size(), seen = 0; i > 0 && seen < 8; i--, seen++)
    if (writes_[i - 1].addr == addr && !writes_[i - 1].protocol) {
      if (writes_[i - 1].mapped_pc == 0) writes_[i - 1].protocol = true;
      return;
    }
}

void Emulator::stop() {
  stop_requested_ = true;
  if (uc_) uc_emu_stop(uc_);
}

void Emulator::fail(uint64_t pc, const std::string &why) {
  if (!faulted_) {
    faulted_ = true;
    fault_ = RunResult{StopReason::kFault, pc, 0, insns_, why};
  }
  if (uc_) uc_emu_stop(uc_);
}

RunResult Emulator::run(uint64_t start, uint64_t sentinel, uint64_t budget) {
  if (!uc_) return RunResult{StopReason::kError, start, 0, 0, "unicorn failed to open"};
  sentinel_ = sentinel;
  budget_ = budget;
  insns_ = 0;
  last_pc_ = start;
  hit_sentinel_ = budget_spent_ = stop_requested_ = faulted_ = false;
  // `until` = sentinel stops Unicorn before it executes the sentinel; the
  // code hook catches the case where it is reached some other way.
  uc_err e = uc_emu_start(uc_, start, sentinel, 0, 0);
  RunResult r;
  r.insns = insns_;
  r.pc = rip();
  if (faulted_) {
    r = fault_;
    r.insns = insns_;
  } else if (hit_sentinel_ || (e == UC_ERR_OK && r.pc == sentinel)) {
    r.reason = StopReason::kSentinel;
  } else if (budget_spent_) {
    r.reason = StopReason::kBudget;
    r.pc = last_pc_;
    r.message = "instruction budget of " + std::to_string(budget) + " exhausted at " + hex(last_pc_);
  } else if (e != UC_ERR_OK) {
    r.reason = StopReason::kFault;
    r.pc = last_pc_;
    r.message = std::string(uc_strerror(e)) + " at " + hex(last_pc_);
  } else if (stop_requested_) {
    r.reason = StopReason::kStopped;
  } else {
    // Unicorn returned on its own: hlt, or a stop we did not ask for.
    r.reason = StopReason::kFault;
    r.pc = last_pc_;
    r.message = "emulation ended at " + hex(last_pc_) + " (hlt?)";
  }
  return r;
}

void Emulator::on_code(uc_struct *uc, uint64_t pc, uint32_t size, void *p) {
  auto *self = static_cast<Emulator *>(p);
  self->last_pc_ = pc;
  if (pc == self->sentinel_) {
    self->hit_sentinel_ = true;
    uc_emu_stop(uc);
    return;
  }
  if (self->insns_ >= self->budget_) {
    self->budget_spent_ = true;
    uc_emu_stop(uc);
    return;
  }
  size_t first_hook = 0;
  if (self->rerun_ && pc == self->rerun_pc_) {
    first_hook = self->rerun_hook_;  // counted, and seen by the hooks before, on the first visit
  } else {
    self->insns_++;
  }
  self->rerun_ = false;
  self->rip_changed_ = false;
  for (size_t i = first_hook; i < self->hooks_.size(); i++) {
    RangeHook &h = self->hooks_[i];
    if (pc < h.begin || pc > h.end) continue;
    self->hook_index_ = i;
    h.fn(*self, pc, size);
    // A redirected or stopped instruction is not seen by later hooks.
    if (self->rip_changed_ || self->stop_requested_ || self->faulted_) break;
  }
  if (!self->rip_changed_ && !self->stop_requested_ && !self->faulted_) self->emulate_missing(pc);
}

bool Emulator::emulate_missing(uint64_t pc) {
  uint8_t b[8];
  uint32_t n = 0;
  while (n < sizeof b && read(pc + n, b + n, 1)) n++;
  return emulate_pclmulqdq(pc, b, n) || emulate_popcnt(pc, b, n);
}

// pclmulqdq xmm, xmm, imm8: 66 [REX] 0f 3a 44 /r ib with a register source
// (crc32c's three-way path; a memory source is left to fail loudly).
bool Emulator::emulate_pclmulqdq(uint64_t pc, const uint8_t *b, uint32_t n) {
  uint32_t i = 0;
  if (i >= n || b[i] != 0x66) return false;
  i++;
  uint8_t rex = 0;
  if (i < n && (b[i] & 0xf0) == 0x40) rex = b[i++];
  if (i + 4 >= n || b[i] != 0x0f || b[i + 1] != 0x3a || b[i + 2] != 0x44 || (b[i + 3] >> 6) != 3) return false;
  const uint8_t modrm = b[i + 3], imm = b[i + 4];
  const int dst = ((modrm >> 3) & 7) | ((rex & 4) ? 8 : 0), src = (modrm & 7) | ((rex & 1) ? 8 : 0);
  uint64_t d[2], s[2], r[2];
  if (uc_reg_read(uc_, UC_X86_REG_XMM0 + dst, d) != UC_ERR_OK || uc_reg_read(uc_, UC_X86_REG_XMM0 + src, s) != UC_ERR_OK)
    return false;
  clmul64(d[imm & 1], s[(imm >> 4) & 1], &r[0], &r[1]);
  if (uc_reg_write(uc_, UC_X86_REG_XMM0 + dst, r) != UC_ERR_OK) return false;
  set_rip(pc + i + 5);
  return true;
}

bool Emulator::emulate_popcnt(uint64_t pc, const uint8_t *b, uint32_t n) {
  // popcnt r, r: [66] f3 [REX] 0f b8 /r with a register source.
  uint32_t i = 0;
  bool opsize = false;
  if (i < n && b[i] == 0x66) opsize = true, i++;
  if (i >= n || b[i] != 0xf3) return false;
  i++;
  uint8_t rex = 0;
  if (i < n && (b[i] & 0xf0) == 0x40) rex = b[i++];
  if (i + 2 >= n || b[i] != 0x0f || b[i + 1] != 0xb8 || (b[i + 2] >> 6) != 3) return false;
  const uint8_t modrm = b[i + 2];
  const int dst = ((modrm >> 3) & 7) | ((rex & 4) ? 8 : 0), src = (modrm & 7) | ((rex & 1) ? 8 : 0);
  const unsigned width = (rex & 8) ? 64 : opsize ? 16 : 32;
  uint64_t v = gpr(src);
  if (width < 64) v &= (uint64_t{1} << width) - 1;
  const uint64_t count = static_cast<uint64_t>(__builtin_popcountll(v));
  // A 16-bit destination keeps its upper bits; 32-bit writes zero-extend.
  set_gpr(dst, width == 16 ? (gpr(dst) & ~uint64_t{0xffff}) | count : count);
  constexpr uint64_t kArith = 0x8d5;  // CF PF AF ZF SF OF
  set_rflags((rflags() & ~kArith) | (v == 0 ? 0x40 : 0));
  set_rip(pc + i + 3);
  return true;
}

void Emulator::on_write(uc_struct *, int, uint64_t addr, int size, int64_t value, void *p) {
  auto *self = static_cast<Emulator *>(p);
  uint64_t v = static_cast<uint64_t>(value);
  if (size < 8) v &= (uint64_t{1} << (8 * size)) - 1;
  self->writes_.push_back(MemWrite{self->last_pc_, addr, static_cast<uint32_t>(size), v, false,
                                   self->write_pc_mapper_ ? self->write_pc_mapper_(self->last_pc_)
                                                          : self->last_pc_});
}

bool Emulator::on_invalid(uc_struct *, int type, uint64_t addr, int size, int64_t, void *p) {
  auto *self = static_cast<Emulator *>(p);
  if (!self->faulted_) {
    self->faulted_ = true;
    self->fault_ = RunResult{StopReason::kFault, self->last_pc_, addr, self->insns_,
                             std::string(access_name(type)) + " " + hex(addr) + " (" +
                                 std::to_string(size) + " bytes) at pc " + hex(self->last_pc_)};
  }
  return false;  // do not retry: the run ends with an error
}

void Emulator::on_interrupt(uc_struct *uc, uint32_t intno, void *p) {
  auto *self = static_cast<Emulator *>(p);
  self->fail(self->last_pc_, "interrupt " + std::to_string(intno) + " at pc " + hex(self->last_pc_));
  uc_emu_stop(uc);
}

bool Emulator::on_invalid_insn(uc_struct *, void *p) {
  auto *self = static_cast<Emulator *>(p);
  self->fail(self->last_pc_, "invalid instruction at pc " + hex(self->last_pc_));
  return false;
}

}  // namespace kjit::sim
