/* SPDX-License-Identifier: GPL-2.0 */
// The code of a vmlinux (or of any ELF64 image) at its run-time addresses,
// read from the file when asked: a debug vmlinux is hundreds of megabytes.
// gdb reads code the invocation never ran (a function's prologue to find
// its frame, a disassembly around the pc); the capture holds only what
// ran.  These are the file's bytes, before the kernel patched its
// alternatives, static calls and ftrace sites at boot.
#ifndef KJIT_SIM_VMLINUX_TEXT_H
#define KJIT_SIM_VMLINUX_TEXT_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "capture_file.h"

namespace kjit::sim {

class VmlinuxText {
 public:
  VmlinuxText() = default;
  ~VmlinuxText();
  VmlinuxText(const VmlinuxText &) = delete;
  VmlinuxText &operator=(const VmlinuxText &) = delete;

  // Opens `path`; `offset` moves its link-time addresses to the run-time
  // ones (the capture's KASLR offset).  "" or an error.
  std::string open(const std::string &path, uint64_t offset);
  // Copies up to `len` bytes of executable sections from run-time address
  // `addr`; returns how many (0: not the image's code).
  size_t read(uint64_t addr, uint8_t *out, size_t len) const;
  const std::string &path() const { return path_; }

  // How many of the capture's code bytes the file holds the same: a
  // vmlinux of another kernel agrees on few; the kernel's own on all but
  // the sites it patched at boot.
  struct Agreement {
    uint64_t same = 0, compared = 0;
  };
  Agreement agreement(const Capture &cap) const;

 private:
  struct Section {
    uint64_t addr, size, file_offset;
  };
  int fd_ = -1;
  std::string path_;
  std::vector<Section> text_;
};

}  // namespace kjit::sim
#endif
