/* SPDX-License-Identifier: GPL-2.0 */
// The per-CPU data window (os_shim.h, kjit_os_memory.percpu_*): plugin data
// with one copy per CPU, which translated code addresses gs-relative.
#pragma once
#include "kjit/types.h"

namespace kjit {

// When the host pointer `p` (as kjit_alloc_percpu returned it, plus an
// offset) lies in the per-CPU window: its gs-relative address, that is the
// window's percpu_offset plus the offset of `p` in it.
bool percpu_gs_address(uint64_t p, uint64_t *gs_address);

// `size` zeroed bytes of every CPU's copy, on a cache line of their own:
// CPU 0's host view, or null (no window, or no room).  Engine lock held.
void *percpu_alloc_locked(uint64_t size);

}  // namespace kjit
