/* SPDX-License-Identifier: GPL-2.0 */
// Capstone's view of an instruction in kjit_cf_class terms.  The reference
// runner counts blocks with it and fuzz_decoder_vs_capstone holds the
// engine's decoder to it: the classification stays independent of Zydis,
// and which classes end a counted block is kjit_cf_ends_block
// (include/kjit/plugin.h), the one definition the kernel tools use too.
#ifndef KJIT_SIM_CAPSTONE_CLASS_H
#define KJIT_SIM_CAPSTONE_CLASS_H

#include <capstone/capstone.h>

namespace kjit::sim {

bool cs_has_group(const cs_insn *in, uint8_t group);
// The class (enum kjit_cf_class) of a Capstone instruction decoded with
// detail; -1 for a transfer Capstone names that fits none of them.
int capstone_cf_class(const cs_insn *in);

}  // namespace kjit::sim
#endif
