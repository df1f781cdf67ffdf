// SPDX-License-Identifier: GPL-2.0
#include "vmlinux_text.h"

#include <elf.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace kjit::sim {

VmlinuxText::~VmlinuxText() {
  if (fd_ >= 0) close(fd_);
}

std::string VmlinuxText::open(const std::string &path, uint64_t offset) {
  path_ = path;
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) return path + ": " + strerror(errno);
  Elf64_Ehdr eh;
  if (pread(fd_, &eh, sizeof eh, 0) != static_cast<ssize_t>(sizeof eh) || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
      eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB || eh.e_shentsize != sizeof(Elf64_Shdr))
    return path + ": not a little-endian ELF64 file";
  if (eh.e_shnum == 0 || eh.e_shnum > 65000) return path + ": no section headers";
  std::vector<Elf64_Shdr> sh(eh.e_shnum);
  const ssize_t want = static_cast<ssize_t>(sh.size() * sizeof(Elf64_Shdr));
  if (pread(fd_, sh.data(), want, static_cast<off_t>(eh.e_shoff)) != want) return path + ": section headers cut short";
  for (const Elf64_Shdr &s : sh)
    if (s.sh_type == SHT_PROGBITS && (s.sh_flags & SHF_ALLOC) && (s.sh_flags & SHF_EXECINSTR) && s.sh_addr && s.sh_size)
      text_.push_back(Section{s.sh_addr + offset, s.sh_size, s.sh_offset});
  if (text_.empty()) return path + ": no code sections";
  std::sort(text_.begin(), text_.end(), [](const Section &a, const Section &b) { return a.addr < b.addr; });
  return "";
}

size_t VmlinuxText::read(uint64_t addr, uint8_t *out, size_t len) const {
  for (const Section &s : text_) {
    if (addr < s.addr || addr - s.addr >= s.size) continue;
    const size_t n = static_cast<size_t>(std::min<uint64_t>(len, s.size - (addr - s.addr)));
    const ssize_t got = pread(fd_, out, n, static_cast<off_t>(s.file_offset + (addr - s.addr)));
    return got > 0 ? static_cast<size_t>(got) : 0;
  }
  return 0;
}

VmlinuxText::Agreement VmlinuxText::agreement(const Capture &cap) const {
  Agreement a;
  std::vector<uint8_t> file;
  for (const Region &r : cap.regions) {
    if (!(r.perms & kPermX)) continue;
    file.resize(r.bytes.size());
    const size_t n = read(r.addr, file.data(), file.size());
    for (size_t i = 0; i < n; i++) a.same += file[i] == r.bytes[i];
    a.compared += n;
  }
  return a;
}

}  // namespace kjit::sim
