/* SPDX-License-Identifier: GPL-2.0 */
// A generator of valid, terminating x86-64 programs from fuzzer bytes, for
// fuzz_differential.  The program is a `main` routine (entered by a call,
// returns with `ret`) built from segments: arithmetic on a few registers,
// flag-dependent code (cmp/test + jcc/setcc/cmovcc/adc/sbb, jrcxz, hinted
// jcc), bounded loops (r12/r13 counters with a small constant bound),
// direct and indirect calls to generated leaf routines, jump tables (an
// indirect jmp through a register loaded from a table in the data region),
// RIP-relative loads and stores on the data region, lock xadd / lock cmpxchg
// on data words, and balanced push/pop.  Instructions are encoded with the
// Zydis encoder.  Every program terminates: the only backward branches are
// loop back-edges on a counter that only the loop touches.
#ifndef KJIT_FUZZ_PROGRAM_GENERATOR_H
#define KJIT_FUZZ_PROGRAM_GENERATOR_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace kjit::fuzz {

constexpr uint64_t kGenCodeBase = 0xffffffff81000000ull;
constexpr uint64_t kGenDataBase = 0xffffffff82000000ull;
constexpr uint64_t kGenDataSize = 0x1000;
constexpr uint64_t kGenStackTop = 0xffffc90000100000ull;
constexpr uint64_t kGenStackSize = 0x4000;

struct GeneratedProgram {
  std::vector<uint8_t> code;   // at kGenCodeBase, entry at its start
  std::vector<uint8_t> data;   // at kGenDataBase
  uint64_t regs[16] = {};      // initial GPRs (rsp set by the caller)
  uint64_t rflags = 0x2;
  size_t insns = 0;            // static instruction count
};

// Returns "" on success, or why the generator gave up (input too short is
// not an error: it yields a tiny program).  A non-empty result other than
// that is a generator bug.
std::string generate_program(const uint8_t *data, size_t size, GeneratedProgram *out);

}  // namespace kjit::fuzz
#endif
