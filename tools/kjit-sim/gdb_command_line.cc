// SPDX-License-Identifier: GPL-2.0
#include "gdb_command_line.h"

#include <unistd.h>

#include "debug_find.h"

namespace kjit::sim {
namespace {

std::string shell_quote(const std::string &s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string directory_of(const std::string &path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace

DebugVmlinux find_debug_vmlinux(const Capture &cap, const std::string &given) {
  const CaptureKernel k = capture_kernel(cap);
  DebugVmlinux d;
  if (!given.empty()) {
    d.path = given;
    d.note = "given with --vmlinux";
    if (!k.build_id.empty()) {
      const std::string id = report::elf_build_id(given);
      if (id != k.build_id)
        d.note += "; its build id is " + (id.empty() ? std::string("none") : id) + ", the capture's kernel's " +
                  k.build_id + ": another kernel's, lines and variables may be wrong";
    }
    return d;
  }
  if (k.release.empty()) {
    d.note = "the capture does not name its kernel (no KERNEL section: a kjitctl before it); give --vmlinux";
    return d;
  }
  std::string path, error;
  if (report::find_vmlinux(k.release, k.build_id, path, error)) {
    d.path = path;
    d.note = "found by the capture's kernel " + k.release + " (build id " + k.build_id + ")";
  } else {
    d.note = error;
  }
  return d;
}

std::string gdb_command_line(const std::string &vmlinux, uint64_t kaslr_offset, const std::string &host,
                             uint16_t port) {
  std::string cmd = "gdb -q";
  if (!vmlinux.empty()) {
    char off[32];
    snprintf(off, sizeof off, "0x%llx", static_cast<unsigned long long>(kaslr_offset));
    cmd += " -ex " + shell_quote("symbol-file -o " + std::string(off) + " " + vmlinux);
    const std::string src = directory_of(vmlinux) + "/linux-source";
    if (access((src + "/Makefile").c_str(), R_OK) == 0) cmd += " -ex " + shell_quote("directory " + src);
  }
  const std::string where = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  return cmd + " -ex " + shell_quote("target remote " + where + ":" + std::to_string(port));
}

}  // namespace kjit::sim
