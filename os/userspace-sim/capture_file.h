/* SPDX-License-Identifier: GPL-2.0 */
// The capture: everything needed to re-run one kernel function outside the
// kernel (memory regions, registers, entry point), and its binary file
// format (docs/capture-format.md).  Loading is strict and never throws or
// crashes on bad input: a fuzzer is pointed at parse_capture().
#ifndef KJIT_SIM_CAPTURE_FILE_H
#define KJIT_SIM_CAPTURE_FILE_H

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "uapi/kjit/capture_format.h"  // the format's one definition

namespace kjit::sim {

// Region permission bits (file format values).
enum : uint32_t {
  kPermR = KJIT_CAPF_PERM_R,
  kPermW = KJIT_CAPF_PERM_W,
  kPermX = KJIT_CAPF_PERM_X,
  kPermMask = KJIT_CAPF_PERM_MASK,
};

// Section types this loader interprets; the replay sections (0x100..) are
// kept as RawSection and parsed by kjit-sim (replay_log.h).  Loaders skip sections they
// do not understand (after checking their CRC) and writers keep them
// verbatim.
enum class SectionType : uint32_t {
  kRegions = KJIT_CAPF_REGIONS,
  kRegs = KJIT_CAPF_REGS,
  kEntry = KJIT_CAPF_ENTRY,
  kName = KJIT_CAPF_NAME,
};

struct Region {
  uint64_t addr = 0;
  uint32_t perms = 0;  // kPerm* bits
  std::vector<uint8_t> bytes;  // size == bytes.size()
  uint64_t end() const { return addr + bytes.size(); }
  bool contains(uint64_t a) const { return a >= addr && a - addr < bytes.size(); }
};

// GPRs in hardware encoding order (rax, rcx, rdx, rbx, rsp, rbp, rsi, rdi,
// r8..r15), the same order as enum kjit_reg.  The state is the one just
// before `call entry`: the host pushes the sentinel as return address.
struct Regs {
  std::array<uint64_t, 16> gpr{};
  uint64_t rip = 0;
  uint64_t rflags = 0x2;  // bit 1 is always set on x86
  uint64_t gs_base = 0;
  uint64_t fs_base = 0;
};

// A section the loader does not interpret, kept so that a rewrite keeps it.
struct RawSection {
  uint32_t type = 0;
  std::vector<uint8_t> payload;
};

struct Capture {
  std::vector<Region> regions;  // sorted by address, non-overlapping
  Regs regs;
  uint64_t entry_pc = 0;
  uint64_t sentinel = 0;  // return address pushed by the host; run ends there
  std::string name;
  std::vector<RawSection> extra;  // unknown/reserved sections, in file order

  // The region containing `addr`, or nullptr.
  const Region *find_region(uint64_t addr) const;

 private:
  // The index of the region find_region last returned: the engine asks
  // about the same code region two or three times per instruction it
  // decodes.  Checked before use, so edits of `regions` cannot make it
  // lie.  The simulator runs on one thread.
  mutable size_t last_found_ = 0;
};

// The optional KASLR section: the boot's offset and kernel image, which
// relate the capture's addresses to a vmlinux's (and its symbol list's).
struct CaptureKaslr {
  uint64_t offset = 0, image_lo = 0, image_hi = 0;
  // `addr` as the vmlinux has it: the offset taken off inside the image.
  uint64_t to_link(uint64_t addr) const { return addr >= image_lo && addr < image_hi ? addr - offset : addr; }
};
// The capture's KASLR section, or all zeros (addresses as they are).
CaptureKaslr capture_kaslr(const Capture &cap);

// The optional KERNEL section: the release and build id of the kernel the
// capture ran on, which name its debug vmlinux.  Empty when absent or
// malformed (a reader that cannot use it goes on without it).
struct CaptureKernel {
  std::string release, build_id;  // build id in lowercase hex
};
CaptureKernel capture_kernel(const Capture &cap);

// Version 2 adds the replay sections (MEMREAD, NONDET, BLOCKS, KRESULT,
// SYMBOLS: tools/kjit-sim/replay_log.h); version 1 files still load.
constexpr uint32_t kCaptureVersion = KJIT_CAPF_VERSION;
constexpr uint32_t kMinCaptureVersion = KJIT_CAPF_MIN_VERSION;
constexpr char kCaptureMagic[8] = KJIT_CAPF_MAGIC;
constexpr uint64_t kMaxNameLength = KJIT_CAPF_NAME_MAX;

// Checks the invariants a loaded capture must satisfy (also used by the
// writer so it never produces a file the loader rejects).  "" when valid.
std::string validate_capture(const Capture &cap);

// Parses `size` bytes.  Returns "" and fills *out on success, else a
// human-readable error (and *out is unspecified).
std::string parse_capture(const uint8_t *data, size_t size, Capture *out);
std::string load_capture_file(const std::string &path, Capture *out);

// Serialises a valid capture.  Returns "" on success, else the validation
// error (and *out is untouched).
std::string serialize_capture(const Capture &cap, std::vector<uint8_t> *out);
std::string save_capture_file(const std::string &path, const Capture &cap);

// IEEE 802.3 CRC-32 (the zlib/PNG one); crc32_update continues a CRC
// (crc32_update(crc32(a), b) == crc32(a ++ b)).  kjit_crc32_update and
// kjit_capf_section_crc (include/uapi/kjit/capture_format.h, shared with kjitctl) do it.
uint32_t crc32(const uint8_t *data, size_t size);
uint32_t crc32_update(uint32_t crc, const uint8_t *data, size_t size);
// A section's stored CRC: over type (u32 LE), length (u64 LE) and payload.
uint32_t section_crc(uint32_t type, const uint8_t *payload, uint64_t len);

}  // namespace kjit::sim
#endif
