// SPDX-License-Identifier: GPL-2.0
#include "kernel_image.h"

namespace kjit::sim {

std::string KernelImage::load(const std::string &vmlinux, const std::string &kallsyms) {
  std::string err = load_elf_file(vmlinux, &elf);
  if (!err.empty()) return "vmlinux: " + err;
  err = symbols.load_kallsyms(kallsyms);
  if (!err.empty()) return "kallsyms: " + err;
  if (!text()) return "vmlinux has no .text section";
  return "";
}

const ElfSection *KernelImage::text() const {
  for (const ElfSection &s : elf.sections)
    if (s.name == ".text") return &s;
  return nullptr;
}

std::string KernelImage::add_to(CaptureBuilder &b) const {
  std::vector<std::string> names;
  for (const char *n : {".text", ".rodata", ".data"})
    for (const ElfSection &s : elf.sections)
      if (s.name == n) names.push_back(n);
  return b.add_elf_sections(elf, names);
}

}  // namespace kjit::sim
