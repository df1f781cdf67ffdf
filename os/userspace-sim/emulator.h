/* SPDX-License-Identifier: GPL-2.0 */
// An emulated x86-64 CPU (Unicorn) that runs captured kernel code.
//
// Both the reference run (original code) and the translated run (engine's
// code cache) use it.  It records every memory write in program order, so
// the two runs can be compared, and it always terminates: at the sentinel,
// on a fault, or when the instruction budget is spent.
#ifndef KJIT_SIM_EMULATOR_H
#define KJIT_SIM_EMULATOR_H

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "capture_file.h"

struct uc_struct;
struct uc_context;

namespace kjit::sim {

constexpr uint64_t kPageSize = 4096;
inline uint64_t page_down(uint64_t a) { return a & ~(kPageSize - 1); }
inline uint64_t page_up(uint64_t a) { return (a + kPageSize - 1) & ~(kPageSize - 1); }

// One store, as the CPU performed it.
struct MemWrite {
  uint64_t pc;     // address of the storing instruction
  uint64_t addr;
  uint32_t size;   // 1, 2, 4 or 8 (wider stores arrive split)
  uint64_t value;  // zero-extended
  // Made by the engine/host protocol (a stub's call into a gate, a chain's
  // saved rcx), not by the program: see Emulator::mark_protocol_write.
  bool protocol = false;
  // The pc as the writer's mapper saw it when the write happened (the code
  // cache is reused after flushes, so mapping later would be wrong).
  uint64_t mapped_pc = 0;
};

enum class StopReason {
  kSentinel,  // reached the sentinel: normal end
  kBudget,    // instruction budget exhausted (a likely endless loop)
  kFault,     // unmapped/protected access, invalid instruction, interrupt
  kStopped,   // a hook asked to stop (stop())
  kError,     // Unicorn refused to run (bad state)
};
const char *stop_reason_name(StopReason r);

struct RunResult {
  StopReason reason = StopReason::kError;
  uint64_t pc = 0;          // pc when the run ended (faulting pc for faults)
  uint64_t fault_addr = 0;  // data address for memory faults
  uint64_t insns = 0;       // instructions executed (hook invocations)
  std::string message;      // human-readable detail
};

// The whole CPU state Unicorn keeps (every register, the flags in their
// lazy form, segment bases, vector registers), saved to be restored later
// (Emulator::save_cpu): a checkpoint's registers.  Move-only.
class CpuState {
 public:
  CpuState() = default;
  ~CpuState();
  CpuState(CpuState &&o) noexcept : ctx_(o.ctx_) { o.ctx_ = nullptr; }
  CpuState &operator=(CpuState &&o) noexcept;
  CpuState(const CpuState &) = delete;
  CpuState &operator=(const CpuState &) = delete;
  bool valid() const { return ctx_ != nullptr; }

 private:
  friend class Emulator;
  uc_context *ctx_ = nullptr;
};

// A run of mapped pages with one set of permissions.
struct MappedRange {
  uint64_t begin, end;  // [begin, end)
  uint32_t perms;       // kPerm* bits
};

class Emulator {
 public:
  // Called before the instruction at `pc` (of `size` bytes) executes.  A
  // hook may change registers, including RIP (Unicorn 2 then resumes at the
  // new RIP without executing this instruction), or call stop().
  using CodeHook = std::function<void(Emulator &emu, uint64_t pc, uint32_t size)>;
  // Maps the pc of each write as it is recorded (MemWrite::mapped_pc).
  void set_write_pc_mapper(std::function<uint64_t(uint64_t)> f) { write_pc_mapper_ = std::move(f); }

  Emulator();
  ~Emulator();
  Emulator(const Emulator &) = delete;
  Emulator &operator=(const Emulator &) = delete;

  // Unicorn failed to open: every other call then fails.
  bool ok() const { return uc_ != nullptr; }

  // Maps every capture region (page-rounded; pages shared by two regions get
  // the union of their permissions) and copies its bytes in, then loads the
  // capture's registers.  Returns "" or an error.
  std::string load_capture(const Capture &cap);
  // Maps [addr, addr+size) page-rounded, zero-filled, with kPerm* bits.
  std::string map(uint64_t addr, uint64_t size, uint32_t perms);
  // Shows host memory `host` (page-aligned, size a page multiple) at `addr`:
  // the CPU and the host then share the bytes.
  std::string map_host(uint64_t addr, void *host, uint64_t size, uint32_t perms);
  bool is_mapped(uint64_t addr) const;
  // A stack of `size` bytes ending at `top`, unless already mapped.
  std::string map_stack(uint64_t top, uint64_t size);

  bool read(uint64_t addr, void *out, uint64_t len) const;
  bool write(uint64_t addr, const void *in, uint64_t len);  // not recorded
  bool read_u64(uint64_t addr, uint64_t *v) const { return read(addr, v, 8); }

  // Registers; `reg` is a KJIT_REG_* GPR number (hardware order).
  uint64_t gpr(int reg) const;
  void set_gpr(int reg, uint64_t v);
  uint64_t rip() const;
  void set_rip(uint64_t v);
  uint64_t rflags() const;
  void set_rflags(uint64_t v);
  // From a code hook: runs the instruction the hook is at again, from
  // registers the hook just set (Unicorn computes flags lazily within a
  // translation block, so a write to rflags reaches the next instruction
  // only through a new block).  The instruction is counted once, and the
  // hooks before this one do not see it again.
  void rerun_instruction();
  void set_regs(const Regs &regs);
  Regs regs() const;
  // Saves and restores every register (not memory); between runs only:
  // a restored CPU is between two instructions (no rerun_instruction
  // pending).
  CpuState save_cpu() const;
  bool restore_cpu(const CpuState &s);
  // What is mapped, in address order.
  std::vector<MappedRange> mapped() const;
  // Stack helpers used by gates and the runner (writes are not recorded,
  // they are the host's, not the program's).
  bool push(uint64_t v);
  bool pop(uint64_t *v);

  // Hook for pcs in [begin, end] inclusive.  Hooks run in registration
  // order, after the built-in sentinel/budget bookkeeping.
  void add_code_hook(uint64_t begin, uint64_t end, CodeHook hook);

  // Drops Unicorn's translated blocks for [addr, addr+len): needed after the
  // host writes code through a host-mapped view.
  void invalidate(uint64_t addr, uint64_t len);

  // Runs from `start` until RIP reaches `sentinel` (which must be mapped by
  // then: see map_sentinel), a fault, stop(), or `budget` instructions.
  RunResult run(uint64_t start, uint64_t sentinel, uint64_t budget);
  // Maps the sentinel's page filled with int3, so that a wrong hook setup
  // shows as a fault rather than as a run past the end.
  std::string map_sentinel(uint64_t sentinel);
  void stop();
  // Stops the run as a fault (used by hooks that detect a broken protocol).
  void fail(uint64_t pc, const std::string &why);

  // Writes in program order, since construction or clear_writes().
  const std::vector<MemWrite> &writes() const { return writes_; }
  void clear_writes() { writes_.clear(); }
  // Forgets the writes after the first `n` (going back to a checkpoint).
  void truncate_writes(size_t n) {
    if (n < writes_.size()) writes_.resize(n);
  }
  // Flags the most recent write to `addr` (among the last few) as part of
  // the gate protocol; gates call it for the stack slots their stub wrote.
  void mark_protocol_write(uint64_t addr);
  // The same where that write is the engine's own code's (its pc mapped to
  // no original instruction); a program write there is left alone: an ABI
  // return site leaves the program's return address in the slot that other
  // sites write rcx into.
  void mark_engine_protocol_write(uint64_t addr);
  uint64_t insns() const { return insns_; }

 private:
  struct RangeHook {
    uint64_t begin, end;
    CodeHook fn;
  };
  static void on_code(uc_struct *uc, uint64_t pc, uint32_t size, void *self);
  // Executes the instruction at pc itself when Unicorn cannot (popcnt and
  // pclmulqdq: invalid in Unicorn 2.0.1 on every CPU model, and the kernel
  // patches them in: hweight, crc32c); true when it did and moved rip past it.
  bool emulate_missing(uint64_t pc);
  bool emulate_pclmulqdq(uint64_t pc, const uint8_t *b, uint32_t n);
  bool emulate_popcnt(uint64_t pc, const uint8_t *b, uint32_t n);
  static void on_write(uc_struct *uc, int type, uint64_t addr, int size, int64_t value, void *self);
  static bool on_invalid(uc_struct *uc, int type, uint64_t addr, int size, int64_t value, void *self);
  static void on_interrupt(uc_struct *uc, uint32_t intno, void *self);
  static bool on_invalid_insn(uc_struct *uc, void *self);

  uc_struct *uc_ = nullptr;
  std::vector<RangeHook> hooks_;
  std::vector<MemWrite> writes_;
  std::function<uint64_t(uint64_t)> write_pc_mapper_;
  uint64_t insns_ = 0;
  uint64_t budget_ = 0;
  uint64_t sentinel_ = 0;
  uint64_t last_pc_ = 0;
  // Set by hooks during a run; read by run() to decide why it ended.
  bool hit_sentinel_ = false;
  bool budget_spent_ = false;
  bool stop_requested_ = false;
  bool faulted_ = false;
  bool rip_changed_ = false;  // set_rip() during the current hook
  size_t hook_index_ = 0;     // the hook running now
  bool rerun_ = false;        // rerun_instruction(): the next visit of rerun_pc_
  uint64_t rerun_pc_ = 0;
  size_t rerun_hook_ = 0;     // resumes at this hook
  RunResult fault_;
};

}  // namespace kjit::sim
#endif
