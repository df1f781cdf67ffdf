/* SPDX-License-Identifier: GPL-2.0 */
// What a replay maps besides the capture, and the symbols it knows.  Every
// logged read gets a zero rw- page, filled just before the instruction
// that read it; a write to memory nobody read maps a scratch page, found
// by running: the write faults, the page is added and the run starts
// again (replay is cheap).
#ifndef KJIT_SIM_REPLAY_MEMORY_H
#define KJIT_SIM_REPLAY_MEMORY_H

#include <cstdint>
#include <set>
#include <string>

#include "capture_file.h"
#include "emulator.h"
#include "replay_log.h"
#include "sim_symbols.h"

namespace kjit::sim {

// The pages of every logged read that did not fault, where the replay
// places them (read_address).  "" or why the log cannot be replayed.
std::string logged_read_pages(const Capture &cap, const ReplayLog &log, std::set<uint64_t> *pages);

// The capture plus zero rw- pages at `pages`, outside its regions.
std::string augment(const Capture &cap, const std::set<uint64_t> &pages, Capture *out);

// Whether a run ended writing to unmapped memory, and the page.
bool write_fault(const RunResult &r, uint64_t *page);

// The capture's own symbols, plus `kallsyms` (link-time addresses, may be
// null) moved by the capture's KASLR offset when inside its image
// (modules' symbols are where they were loaded).
SymbolTable replay_symbols(const Capture &cap, const ReplayLog &log, const SymbolTable *kallsyms);

}  // namespace kjit::sim
#endif
