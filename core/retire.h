/* SPDX-License-Identifier: GPL-2.0 */
// Retiring single traces (kjit_engine_retire_range): those of the active
// generation whose build read a changed range (core/source_deps.h).  A
// retired trace stays in place for the tasks inside it; nothing else
// reaches it: its table slots are forgotten, the exits linked to its blocks
// go back to their stubs, and chain hits and IBL entries that led to them
// lead to a forwarder per block, a jump on its own stub that the dispatcher
// links to the block's next translation (Exit::forwards).
#pragma once
#include "core/epoch.h"

namespace kjit {

// Under the engine lock.  The number of traces retired, or -1 when they
// cannot all be (the epoch's index is incomplete, no room for a
// forwarder, a jump that could not be patched): the caller then retires
// the whole generation.
int retire_readers_locked(Epoch &e, uint64_t addr, uint64_t len);

}  // namespace kjit
