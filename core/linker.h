/* SPDX-License-Identifier: GPL-2.0 */
// The linker: direct exits jump straight to their target's translation once
// it exists; exits built before their target wait in the target's table
// slot and are back-patched when it is built.  A flush drops a whole epoch
// (epoch.h), links and all; a block retired on its own has its incoming
// links undone (unlink_incoming).
#pragma once
#include "core/epoch.h"
#include "kjit/engine.h"

namespace kjit {

// Points `exit` at `target`'s translation.
bool link_exit(Epoch &epoch, Exit *exit, Block *target);
// Points `exit` at original code, through a trampoline that counts the
// departure `why`: the target is never translated.  False, and the exit
// left on its stub, when the epoch has no room for the trampoline.
bool link_exit_native(Epoch &epoch, Exit *exit, kjit_departure why);
// Links every exit that was waiting for `block` to be built.
void link_waiting(Epoch &epoch, TableSlot *slot, Block *block);
// Nothing in the cache jumps to `block` afterwards: each exit linked to it
// goes back to its own stub, each chain hit to `forward` (the block's
// forwarder, which the dispatcher links to its new translation).  False
// when a field could not be patched (the caller must retire everything).
bool unlink_incoming(Epoch &epoch, Block *block, uint64_t forward);

}  // namespace kjit
