/* SPDX-License-Identifier: GPL-2.0 */
// The linker: direct exits jump straight to their target's translation once
// it exists; exits built before their target wait in the target's table
// slot and are back-patched when it is built.  Links are never undone: a
// flush drops a whole epoch (epoch.h), links and all.
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

}  // namespace kjit
