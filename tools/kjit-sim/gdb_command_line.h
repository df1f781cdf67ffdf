/* SPDX-License-Identifier: GPL-2.0 */
// The debug vmlinux of a capture's kernel and the gdb command line that
// loads it at the addresses the capture ran at, so that gdb shows the
// original kernel's source lines and local variables from the first stop.
#ifndef KJIT_SIM_GDB_COMMAND_LINE_H
#define KJIT_SIM_GDB_COMMAND_LINE_H

#include <cstdint>
#include <string>

#include "capture_file.h"

namespace kjit::sim {

struct DebugVmlinux {
  std::string path;  // "" when none was found
  std::string note;  // how it was found, or why none was
};

// `given` (--vmlinux) if not empty; else the capture's KERNEL section
// (release, build id) through kjit-report's search (tools/report/
// debug_find.h): ROOT/usr/lib/debug/boot/vmlinux-RELEASE with the same
// build id, the build-id tree, debuginfod when DEBUGINFOD_URLS is set
// (ROOT: KJIT_DEBUG_ROOT, else /).
DebugVmlinux find_debug_vmlinux(const Capture &cap, const std::string &given);

// gdb -q -ex 'symbol-file -o OFFSET VMLINUX' [-ex 'directory SOURCE']
//     -ex 'target remote HOST:PORT'
// shell-quoted; SOURCE: the kernel tree beside the vmlinux, where
// tools/lab/fetch-debug.sh puts it (linux-source/).  Without a vmlinux,
// only the target.
std::string gdb_command_line(const std::string &vmlinux, uint64_t kaslr_offset, const std::string &host,
                             uint16_t port);

}  // namespace kjit::sim
#endif
