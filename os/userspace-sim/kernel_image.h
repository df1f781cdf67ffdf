/* SPDX-License-Identifier: GPL-2.0 */
// The kernel image the simulator's kernel commands work on: vmlinux's
// sections plus its kallsyms list (the image is stripped).
#ifndef KJIT_SIM_KERNEL_IMAGE_H
#define KJIT_SIM_KERNEL_IMAGE_H

#include <string>

#include "capture_builder.h"
#include "elf_loader.h"
#include "sim_symbols.h"

namespace kjit::sim {

struct KernelImage {
  ElfImage elf;
  SymbolTable symbols;
  // Loads both; "" or an error.
  std::string load(const std::string &vmlinux, const std::string &kallsyms);
  // Adds the image's code and data sections to a capture.
  std::string add_to(CaptureBuilder &b) const;
  const ElfSection *text() const;
};

}  // namespace kjit::sim
#endif
