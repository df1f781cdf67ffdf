// Predicated indirect-branch chains.  At an indirect site the original
// target is in rcx and the program's rcx is at [rsp].  Each link is
//
//     lea   rcx, [rcx - T]     ; no flags touched
//     jrcxz hit
//     lea   rcx, [rcx + T]
//     jmp   next               ; the miss stub until another link follows
//   hit:
//     pop   rcx                ; restores rcx and drops the slot
//     jmp   translation(T)
//
// so the chain compares targets without touching the flags.  A miss reaches
// the dispatcher, which appends a link until the chain's maximum length.
#pragma once
#include "core/epoch.h"

namespace kjit {

// Appends a link for target `pc` whose hit jumps to `dest`: its translation,
// or `pc` itself when it runs natively (a stop address such as the entry
// function's return: the common exit then costs a compare, not a dispatcher
// round trip).  False if the chain is at its maximum length, the target
// cannot be encoded, or the cache is full (the miss path still works: the
// dispatcher serves it every time).
bool chain_append(Epoch &epoch, ChainSite *site, uint64_t pc, uint64_t dest);

// An empty chain starts at the gate, so that its first target becomes a
// link; when no link can be appended (a retired epoch, a target that is not
// native for good, no room), the site's misses go to the IBL routine
// instead, as the later links' do.
void chain_skip_to_ibl(Epoch &epoch, ChainSite *site);

}  // namespace kjit
