/* SPDX-License-Identifier: GPL-2.0 */
// Mnemonic ids: Insn::mnemonic (and the plugin API's kjit_insn_mnemonic) is
// a Zydis mnemonic id.  Code outside arch/x86 that compares against one
// names it through this header, never through <Zydis/...>; the engine
// itself asks arch/arch.h instead.
#pragma once
#include <Zydis/Mnemonic.h>
