/* SPDX-License-Identifier: GPL-2.0 */
// Where the recorded kernel's vmlinux with DWARF is, when kjit-report is
// not told (--vmlinux): from the recording's META kernel_release and
// build_id, the places Debian and elfutils put it, in this order:
//   1. ROOT/usr/lib/debug/boot/vmlinux-RELEASE (linux-image-RELEASE-dbg),
//      used only if its build id is the recording's;
//   2. ROOT/usr/lib/debug/.build-id/xx/rest.debug (the build-id tree);
//   3. debuginfod, through elfutils' client (libdebuginfod.so.1, loaded
//      when needed), only when DEBUGINFOD_URLS is set.
// ROOT is "" (the system's), or KJIT_DEBUG_ROOT for tests.
#pragma once
#include <string>

namespace kjit::report {

// The GNU build id of an ELF file as lowercase hex; "" when it has none or
// is not ELF.
std::string elf_build_id(const std::string &path);

// Looks for the vmlinux of (release, build_id).  True with its path in
// `path`; false with `error` naming every place tried and the Debian
// package that holds it.
bool find_vmlinux(const std::string &release, const std::string &build_id, std::string &path,
                  std::string &error);

}  // namespace kjit::report
