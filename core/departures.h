/* SPDX-License-Identifier: GPL-2.0 */
// Counting how entries end (kjit_engine_departures in include/kjit/engine.h).
//
// Every way translated code hands a task to native code for the rest of an
// invocation goes through one of three places, and each counts:
//  - a block's own native exit (a call to code that is never translated, an
//    instruction that must run at its address): the count is emitted inline,
//    just before the jump;
//  - a link to a native target patched in later (a direct exit, a chain link,
//    an IBL entry): the link goes to a small per-epoch trampoline that counts
//    and jumps on, except a return site's link, which counts inline before
//    its `ret`;
//  - the dispatcher returning a native target: it counts in C.
// A return to a stop address is the completion of an entry and is counted
// the same way.  Counts are kept per (native target, reason) in a table in
// the data window (one cell per site, so translated code adds with one
// `lock inc [abs32]`, and only exits pay), with per-reason cells for what
// the table cannot hold; completions at the busiest stop addresses count in
// per-CPU cells.
#pragma once
#include "arch/arch.h"
#include "core/epoch.h"
#include "kjit/engine.h"

namespace kjit {

// Allocates the counts in the data window (engine init, under no lock: the
// engine is not running yet).  False when the window cannot hold them: then
// nothing is counted and kjit_engine_get_departures reads zeros.
bool departures_init();

// Why execution going to native `target` leaves the cache.
kjit_departure departure_for_native_target(uint64_t target);

// Emits `lock inc` of the count of (`target`, `why`), preserving RFLAGS when
// `keep_flags` (the exit may be anywhere in a function); nothing when the
// counts could not be allocated or are not abs32-addressable.  A completion
// whose code runs with the kernel's GS base (`kernel_gs`: a return link,
// made by the dispatcher that code reached) gets `inc gs:[disp32]` of a
// per-CPU cell instead, for the first kCompletionCells stop addresses,
// where the per-CPU window is disp32-addressable.  Under the engine lock
// (it may add a site).
void emit_departure_count(CodeWriter &w, uint64_t target, kjit_departure why, bool keep_flags,
                          bool kernel_gs = false);

// The dispatcher hands a task to native `target` for `why` (engine lock held).
void count_departure(uint64_t target, kjit_departure why);
// kjit_engine_enter let a task into the cache.
void count_entry();
// kjit_engine_enter sent a task to the original pc, for `why` (lock-free).
void count_entry_declined(kjit_departure why);

// A counting trampoline in `epoch` that jumps to native `target` (one per
// target, kind and flags handling per epoch); its exec address, or `target`
// itself when there is no room (the exit then goes uncounted).
uint64_t native_exit_trampoline(Epoch &epoch, uint64_t target, kjit_departure why,
                                bool keep_flags);

}  // namespace kjit
