/* SPDX-License-Identifier: GPL-2.0 */
// Hand-assembled test programs shared by the simulator tests.  Each byte
// sequence is annotated with its assembly so expected counts can be derived
// by reading it.
#ifndef KJIT_TESTS_SIM_TEST_CODE_H
#define KJIT_TESTS_SIM_TEST_CODE_H

#include <cstdint>
#include <vector>

#include "capture_builder.h"

namespace kjit::sim::test {

constexpr uint64_t kCode = 0x400000, kData = 0x600000, kStackTop = 0x800000;

// store(rdi=ptr, rsi=v): [rdi] = v; [rdi+8] = (u32)(v+1); return 2*(v+1).
inline std::vector<uint8_t> store_code() {
  return {
      0x48, 0x89, 0x37,        // 400000 mov [rdi], rsi
      0x48, 0x83, 0xc6, 0x01,  // 400003 add rsi, 1
      0x89, 0x77, 0x08,        // 400007 mov [rdi+8], esi
      0x48, 0x8d, 0x04, 0x36,  // 40000a lea rax, [rsi+rsi]
      0xc3,                    // 40000e ret
  };
}

// A loop of 5, a call, a failing lock cmpxchg.  See reference_runner_test.
inline std::vector<uint8_t> loop_code() {
  std::vector<uint8_t> c = {
      0x31, 0xc0,                          // 400000 xor eax, eax
      0xb9, 0x05, 0x00, 0x00, 0x00,        // 400002 mov ecx, 5
      0x48, 0x01, 0xc8,                    // 400007 add rax, rcx
      0xff, 0xc9,                          // 40000a dec ecx
      0x75, 0xf9,                          // 40000c jnz 400007
      0xe8, 0x0d, 0x00, 0x00, 0x00,        // 40000e call 400020
      0xf0, 0x48, 0x0f, 0xb1, 0x17,        // 400013 lock cmpxchg [rdi], rdx
      0xc3,                                // 400018 ret
  };
  c.resize(0x20, 0xcc);                    // 400019..40001f int3 padding
  c.insert(c.end(), {
      0x48, 0x83, 0xc0, 0x64,              // 400020 add rax, 100
      0xc3,                                // 400024 ret
  });
  return c;
}

// A capture of `code` at kCode, a data page at kData, a stack, rdi = kData.
inline Capture make_capture(const std::vector<uint8_t> &code, uint64_t rsi = 0,
                            std::vector<uint8_t> data = std::vector<uint8_t>(4096, 0)) {
  CaptureBuilder b;
  b.add_region(kCode, code, kPermR | kPermX)
      .add_region(kData, std::move(data), kPermR | kPermW)
      .add_stack(kStackTop, 0x10000)
      .set_arg(0, kData)
      .set_arg(1, rsi)
      .set_entry(kCode)
      .set_name("test");
  Capture cap;
  b.build(&cap);
  return cap;
}

}  // namespace kjit::sim::test
#endif
