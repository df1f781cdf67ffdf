/* SPDX-License-Identifier: GPL-2.0 */
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
//
// A return site (a `ret`, or the return of a leaf called natively in place
// of a tail jump) leaves the return address where it is, and holds its
// first link itself:
//
//     push  rcx
//     mov   rcx, [rsp + 8]     ; the return address
//     lea   rcx, [rcx - T]     ; T = 0 (no target) until the first miss
//     jrcxz hit
//     jmp   next               ; the site's fallback until another link follows
//   hit:
//     pop   rcx
//     lea   rsp, [rsp + 8]     ; the return slot
//     jmp   translation(T)
//
// Its later links compare against the previous link's target P, since rcx
// still holds the return address less P (one instruction less per link
// passed than restoring it):
//
//     lea   rcx, [rcx + P - T]
//     jrcxz hit
//     jmp   next
//   hit: as above
//
// and the site's fallback loads the return address again.
//
// An ABI return site (site->abi_return) is the `ret` of a compiled C
// function, after which, by the SysV ABI, no caller reads rcx or the
// arithmetic flags (kjit_os_c_abi_return says which functions qualify).
// Its links compare the slot directly:
//
//     cmp   qword [rsp], T
//     je    hit
//     jmp   next
//   hit:
//     lea   rsp, [rsp + 8]
//     jmp   translation(T)
//
// 4 instructions on a hit in the site's own link instead of 7; a native
// hit counts without keeping the flags, and the fallback only loads the
// address into rcx.  Elsewhere no compare
// touches the flags, and nothing is locked: a chain is
// shared by every target of its site, so a `cmp` would clobber flags that a
// later target reads (one whose caller reads flags a callee returns, as
// this_cpu_cmpxchg16b_emu's callers read ZF), and `xchg rcx, [rsp]`, one
// instruction less, is an implicitly locked access that costs ten times as
// much as the two moves (bench/micro/return-link.sh).  When T runs
// natively (a stop address such as the entry function's return), the hit
// counts the completion and returns with a real `ret`, which the CPU's
// return-stack predictor pairs with the native call that entered.  The
// site's fallback moves rcx into the return slot (`pop qword [rsp]`) before
// the IBL or the miss stub, which take the target in rcx and the program's
// rcx at [rsp] as at every other site, after loading it into rcx.
#pragma once
#include "arch/arch.h"
#include "core/epoch.h"
#include "kjit/engine.h"

namespace kjit {

// What a return site's fallback starts with, as the IBL and the gate take
// the target: in rcx, with the program's rcx in the return slot.  A site's
// links leave the return address offset in rcx and its rcx pushed: it is
// reloaded and rcx moved into the slot (`pop qword [rsp]`).  An ABI return
// site's rcx is dead: it just loads the address.  0 bytes for other sites.
uint32_t return_fallback_size(const ChainSite &site);
void emit_return_fallback(CodeWriter &w, const ChainSite &site);

// A return whose target a trace knows: `pc`, the return address that the
// trace's own call pushed, where the return's block is reachable only along
// the trace (block_builder.cc).  Where pc does not read the flags:
//
//     cmp   qword [rsp], pc
//     je    hit
//     <a return site>          ; the return address was changed
//   hit:
//     lea   rsp, [rsp + 8]     ; then pc's translation, often laid out here
//
// where it reads them but not rcx, `mov rcx, [rsp]; lea rcx, [rcx - pc];
// jrcxz hit` instead: 3 or 4 instructions for 1, against 6 and a jump for
// a return site's link.  The return site behind the compare serves a return
// address that something else wrote (a return trampoline: kretprobe,
// rethook, function graph), with the flags or rcx clobbered: they are
// dead at pc, where such a trampoline returns to.  Writes the compare and
// returns the offset of its rel8 toward the hit, or -1 when pc reads both
// or cannot be encoded (nothing written).
int32_t emit_predicted_return(CodeWriter &w, uint64_t pc, bool flags_dead, bool rcx_dead);

// Emits a return site with `w`, which writes at code-region offset `at`:
// sets the site's tail_field (its jmp toward the fallback, which the caller
// points at the stubs it emits), inline_compare and inline_hit.
void emit_return_site(CodeWriter &w, uint32_t at, ChainSite *site);

// Appends a link for target `pc` whose hit jumps to `target`'s translation
// (noted in its incoming links), or when `target` is null to `dest`: `pc`
// itself or a trampoline that counts, when it runs natively (a stop address
// such as the entry function's return: the common exit then costs a
// compare, not a dispatcher round trip).  False if the chain is at its
// maximum length, the target cannot be encoded, or the cache is full (the
// miss path still works: the dispatcher serves it every time).
bool chain_append(Epoch &epoch, ChainSite *site, uint64_t pc, Block *target, uint64_t dest);

// A return site's link for target `pc`: to `target`'s translation, or,
// when that is null, the native return to pc counted as departure `why`.
// `flags_dead`: no flag is live at pc, so the native return's count need
// not keep them.  False as above.
bool return_link_append(Epoch &epoch, ChainSite *site, uint64_t pc, Block *target, kjit_departure why,
                        bool flags_dead);

// An empty chain starts at the gate, so that its first target becomes a
// link; when no link can be appended (a retired epoch, a target that is not
// native for good, no room), the site's misses go to the IBL routine
// instead, as the later links' do.
void chain_skip_to_ibl(Epoch &epoch, ChainSite *site);

}  // namespace kjit
