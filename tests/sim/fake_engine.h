/* SPDX-License-Identifier: GPL-2.0 */
// Controls for the test-only fake engine (fake_engine.cc).
#ifndef KJIT_TESTS_SIM_FAKE_ENGINE_H
#define KJIT_TESTS_SIM_FAKE_ENGINE_H

#include <cstdint>

enum class FakeEngineMode {
  kDecline,       // kjit_engine_enter returns the original pc
  kDirectExit,    // entry stub: call gate_direct; .long id
  kIndirectMiss,  // entry stub: push rcx; mov rcx, pc; call gate_indirect; .long id
};
void fake_engine_set_mode(FakeEngineMode mode);
// Host function the entry stub calls (through a host-call gate) with the
// exec address of the data window's first word, translated by the shim.
void fake_engine_set_entry_hook(uint64_t (*fn)(uint64_t *counter));

#endif
