/* SPDX-License-Identifier: GPL-2.0 */
// Real, self-contained functions of the kernel image (string, memory,
// checksum/CRC, bitmap, find-bit, hash, parsing, math), each with an input
// generator, for differential runs of original against translated code.
#ifndef KJIT_SIM_KERNEL_CASES_H
#define KJIT_SIM_KERNEL_CASES_H

#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace kjit::sim {

// Where a case's inputs live in the emulated address space (a vmalloc-like
// address, inside neither the image nor the simulator's own areas).
constexpr uint64_t kScratchBase = 0xffffc90000000000ull;
constexpr uint64_t kScratchSize = 64 * 1024;

// A case fills the scratch buffer and the six argument registers.
struct CaseInput {
  std::vector<uint8_t> scratch = std::vector<uint8_t>(kScratchSize, 0);
  uint64_t args[6] = {0, 0, 0, 0, 0, 0};
  // Puts bytes at an offset of the scratch area and returns their address.
  uint64_t put(uint64_t offset, const void *p, size_t n);
  uint64_t put_string(uint64_t offset, const std::string &s);
  static uint64_t at(uint64_t offset) { return kScratchBase + offset; }
};

struct KernelCase {
  const char *function;
  // Fills `in` for variant `variant` (0..) using `rng`.
  std::function<void(CaseInput &in, std::mt19937_64 &rng, int variant)> make;
};

const std::vector<KernelCase> &kernel_cases();

}  // namespace kjit::sim
#endif
