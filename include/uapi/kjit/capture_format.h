/* SPDX-License-Identifier: GPL-2.0 */
/* The capture format, in one place for its three users: kjit.ko's capture
 * plugin (kernel C, os/linux/capture/) writes the RECORDS below into its
 * event and code buffers; kjitctl (user C, tools/kjitctl/capture_file.c)
 * reads them and writes capture FILES; the simulator (C++,
 * os/userspace-sim/capture_file.cc, tools/kjit-sim/replay_log.cc) reads and
 * writes the files.
 * docs/capture-format.md is the prose; this header is the definition.
 *
 * Every integer is little-endian.  The structs have no padding (u64 fields
 * first, u32 pairs after), so their sizes are the on-disk sizes. */
#ifndef KJIT_UAPI_CAPTURE_H
#define KJIT_UAPI_CAPTURE_H

#ifdef __KERNEL__
#include <linux/types.h>
#else
#include <stddef.h>
#include <stdint.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- records of kjit.ko's capture buffers (KJIT_IOC_CAPTURE_READ) ------ */

/* Every record starts with this header; len is the whole record in bytes, a
 * multiple of 8. */
struct kjit_cap_rec { uint32_t type, len; };
enum kjit_cap_rec_type {
  KJIT_CAP_BEGIN = 1,   /* struct kjit_cap_begin                             */
  KJIT_CAP_STACK = 2,   /* struct kjit_cap_stack, bytes [from, base+size)    */
  KJIT_CAP_BLOCK = 3,   /* struct kjit_cap_block                             */
  KJIT_CAP_READ = 4,    /* struct kjit_cap_read, bytes[size]                 */
  KJIT_CAP_NONDET = 5,  /* struct kjit_cap_nondet                            */
  KJIT_CAP_END = 6,     /* struct kjit_cap_end                               */
  KJIT_CAP_CODE = 7,    /* struct kjit_cap_code, bytes[len] (code buffer)    */
  KJIT_CAP_RESUME = 8,  /* struct kjit_cap_resume                            */
  KJIT_CAP_TARGET = 9,  /* struct kjit_cap_target (written at STOP)          */
};
struct kjit_cap_begin {
  struct kjit_cap_rec h;
  uint64_t entry_pc, gpr[16], rflags, gs_base, fs_base, icount;
  uint32_t pid, cpu;
};
struct kjit_cap_stack { struct kjit_cap_rec h; uint64_t base, size, from; };
struct kjit_cap_block {
  struct kjit_cap_rec h;
  uint64_t pc;
  uint32_t ninsns, flags;         /* KJIT_CAPF_BLOCK_ENDS_IN_CALL, _CUT */
};
struct kjit_cap_read {
  struct kjit_cap_rec h;
  uint64_t pc, addr, ea;
  uint32_t size, flags;           /* KJIT_CAP_RD_* | segment */
};
/* dest_reg and len are 0: the registers are enough for a replay. */
struct kjit_cap_nondet {
  struct kjit_cap_rec h;
  uint64_t pc, dest, rcx, rdx, rbx, rflags;
  uint32_t dest_reg, len;
};
struct kjit_cap_end { struct kjit_cap_rec h; uint32_t reason, pad; uint64_t icount; };
struct kjit_cap_code { struct kjit_cap_rec h; uint64_t pc; uint32_t len, pad; };
/* The owner continues at `ret` after its call at `pc` into the scheduler
 * funnel `target` (__schedule), or into a function the cache runs natively
 * (__do_softirq): the registers and the GS base as it has them at `ret`, on
 * CPU `cpu` (it may have migrated while asleep). */
struct kjit_cap_resume {
  struct kjit_cap_rec h;
  uint64_t pc, target, ret, gpr[16], rflags, gs_base;
  uint32_t cpu, pad;
};

/* After the last END, written when the capture stops, one per target as
 * far as the event buffer holds them.  `entries`: entries of the target by the
 * captured tasks while the capture was armed and the target not done (an
 * entry the engine declined ran natively and is not one); `busy`: those refused because another
 * task's invocation was being recorded, the last of them while the
 * invocation of `holder_pc` (an entry pc, 0 when not known yet) by task
 * `holder_pid` was.  Counted without a lock: exact unless they race. */
struct kjit_cap_target {
  struct kjit_cap_rec h;
  uint64_t entry_pc;
  uint32_t entries, busy;
  uint64_t holder_pc;
  uint32_t holder_pid, pad;
};

/* READ flags (also MEMREAD's in the file): bits 0-3 the segment (0 none,
 * 4 FS, 5 GS: enum kjit_segment), then: */
#define KJIT_CAP_RD_SEG_MASK 0xfu
#define KJIT_CAP_RD_FAILED 0x10u    /* the read faulted (value is zeros)  */
#define KJIT_CAP_RD_USER 0x20u      /* user address                       */
#define KJIT_CAP_RD_STRING 0x40u    /* source of a string instruction     */
#define KJIT_CAP_RD_FLAGS_MASK 0x7fu
/* END reasons (also KRESULT's end_reason in the file) */
enum kjit_cap_end_reason {
  KJIT_CAP_END_RETURNED = 1, KJIT_CAP_END_OVERFLOW = 2, KJIT_CAP_END_LEFT_CACHE = 3,
  KJIT_CAP_END_STOPPED = 4,
  /* returned in the cache after sleeping in the scheduler: the capture
   * holds the whole invocation and, since RESUME records exist, replays it
   * through its sleeps (an older capture without them does not) */
  KJIT_CAP_END_SLEPT = 5,
  /* a read larger than KJIT_CAPF_READ_MAX: the invocation is not recorded
   * whole (KJIT_CAPTURE_EACH_ATTACHED; a capture of one function ends as
   * OVERFLOW there) */
  KJIT_CAP_END_READ_TOO_LARGE = 6,
};
/* Capture flags (KJIT_IOC_CAPTURE_READ's flags, KRESULT's capture_flags) */
#define KJIT_CAP_F_OVERFLOW 1u      /* a buffer filled up: capture ended early */
#define KJIT_CAP_F_CODE_OVERFLOW 2u /* code buffer full: some blocks lack bytes */

/* ---- capture files ----------------------------------------------------- */

#define KJIT_CAPF_MAGIC "KJITCAP"   /* 8 bytes with its NUL */
#define KJIT_CAPF_VERSION 2u        /* adds the replay sections (0x100..) */
#define KJIT_CAPF_MIN_VERSION 1u
/* File header: magic[8], u32 version, u32 section count, u32 flags (0),
 * u32 reserved (0).  Section header: u32 type, u64 length, u32 crc32 over
 * type, length and payload (kjit_capf_section_crc). */
#define KJIT_CAPF_HEADER_SIZE 24u
#define KJIT_CAPF_SECTION_HEADER_SIZE 16u

enum kjit_capf_section {
  KJIT_CAPF_REGIONS = 1,        /* required */
  KJIT_CAPF_REGS = 2,           /* required, KJIT_CAPF_REGS_SIZE bytes */
  KJIT_CAPF_ENTRY = 3,          /* required, KJIT_CAPF_ENTRY_SIZE bytes */
  KJIT_CAPF_NAME = 4,           /* optional */
  KJIT_CAPF_KASLR = 5,          /* optional: u64 kaslr_offset, image_lo,
                                   image_hi.  A capture replays at the
                                   addresses it ran at (its memory holds
                                   run-time pointers); an address in the
                                   running kernel image [image_lo, image_hi)
                                   minus kaslr_offset is the vmlinux's
                                   (canonical) address of the same code */
  KJIT_CAPF_KERNEL = 6,         /* optional: u32 length, the kernel's release
                                   (uname -r), u32 length, its GNU build id
                                   in hex: which debug vmlinux is its own */
  KJIT_CAPF_MEMREAD = 0x100,    /* replay sections (version 2) */
  KJIT_CAPF_NONDET = 0x101,
  KJIT_CAPF_BLOCKS = 0x102,
  KJIT_CAPF_KRESULT = 0x103,
  KJIT_CAPF_SYMBOLS = 0x104,
  KJIT_CAPF_RESUME = 0x105,     /* optional: where a sleep continued */
};
#define KJIT_CAPF_FIRST_REPLAY KJIT_CAPF_MEMREAD
#define KJIT_CAPF_LAST_REPLAY KJIT_CAPF_RESUME

/* REGIONS: u32 count, then per region this header and size bytes. */
struct kjit_capf_region { uint64_t addr, size; uint32_t perms, reserved; };
#define KJIT_CAPF_PERM_R 1u
#define KJIT_CAPF_PERM_W 2u
#define KJIT_CAPF_PERM_X 4u
#define KJIT_CAPF_PERM_MASK 7u
/* REGS: 16 GPRs (hardware order), rip, rflags, gs_base, fs_base. */
struct kjit_capf_regs { uint64_t gpr[16], rip, rflags, gs_base, fs_base; };
#define KJIT_CAPF_REGS_SIZE 160u
/* ENTRY */
struct kjit_capf_entry { uint64_t entry_pc, sentinel; };
#define KJIT_CAPF_ENTRY_SIZE 16u
#define KJIT_CAPF_NAME_MAX 4096u
/* MEMREAD: u32 count, then per read this header and size bytes. */
struct kjit_capf_read { uint64_t pc, addr, ea; uint32_t size, flags; };
#define KJIT_CAPF_READ_MAX (1u << 20)
/* NONDET: u32 count, then these. */
struct kjit_capf_nondet { uint64_t pc, dest, rcx, rdx, rbx, rflags; };
/* BLOCKS: u32 count, then these. */
struct kjit_capf_block { uint64_t pc; uint32_t ninsns, flags; };
#define KJIT_CAPF_BLOCK_ENDS_IN_CALL 1u
/* The block ends without a control transfer (the engine's size limit cut
 * it): the next block continues it, and a block count leaves it out, as
 * the bbcount tool does. */
#define KJIT_CAPF_BLOCK_CUT 2u
#define KJIT_CAPF_BLOCK_FLAGS_MASK 3u
#define KJIT_CAPF_BLOCK_MAX_INSNS 4096u
/* RESUME: u32 count, then these (the module's kjit_cap_resume without its
 * header; reserved is 0). */
struct kjit_capf_resume {
  uint64_t pc, target, ret, gpr[16], rflags, gs_base;
  uint32_t cpu, reserved;
};
#define KJIT_CAPF_CALL_MAX_LEN 15u  /* ret - pc: the call's length */
/* KRESULT */
struct kjit_capf_kresult {
  uint32_t end_reason, capture_flags;   /* KJIT_CAP_END_*, KJIT_CAP_F_* */
  uint64_t icount_begin, icount_end;
  uint32_t pid, cpu;
};
/* KERNEL: each string at most this long. */
#define KJIT_CAPF_KERNEL_STRING_MAX 256u
/* SYMBOLS: u32 count, then per symbol u64 addr, u32 len, name[len]. */
#define KJIT_CAPF_SYMBOL_MAX 256u

#ifndef __KERNEL__
/* IEEE 802.3 CRC-32 (zlib's), continued over several buffers:
 * kjit_crc32_update(kjit_crc32_update(0, a), b) is the CRC of a ++ b.
 * Four bits a step with a 16-entry table: no initialisation, no state. */
static inline uint32_t kjit_crc32_update(uint32_t crc, const void *data, size_t n)
{
  static const uint32_t t[16] = {
    0x00000000u, 0x1db71064u, 0x3b6e20c8u, 0x26d930acu, 0x76dc4190u, 0x6b6b51f4u,
    0x4db26158u, 0x5005713cu, 0xedb88320u, 0xf00f9344u, 0xd6d6a3e8u, 0xcb61b38cu,
    0x9b64c2b0u, 0x86d3d2d4u, 0xa00ae278u, 0xbdbdf21cu,
  };
  const unsigned char *p = (const unsigned char *)data;
  uint32_t c = ~crc;
  size_t i;
  for (i = 0; i < n; i++) {
    c ^= p[i];
    c = t[c & 15] ^ (c >> 4);
    c = t[c & 15] ^ (c >> 4);
  }
  return ~c;
}

/* A section's stored CRC: over its type (u32 LE), length (u64 LE) and
 * payload (little-endian host). */
static inline uint32_t kjit_capf_section_crc(uint32_t type, const void *payload, uint64_t len)
{
  unsigned char head[12];
  int i;
  for (i = 0; i < 4; i++) head[i] = (unsigned char)(type >> (8 * i));
  for (i = 0; i < 8; i++) head[4 + i] = (unsigned char)(len >> (8 * i));
  return kjit_crc32_update(kjit_crc32_update(0, head, sizeof head), payload, (size_t)len);
}
#endif

#ifdef __cplusplus
}
#endif

#ifdef __cplusplus
#define KJIT_CAPF_ASSERT static_assert
#else
#define KJIT_CAPF_ASSERT _Static_assert
#endif
KJIT_CAPF_ASSERT(sizeof(struct kjit_capf_regs) == KJIT_CAPF_REGS_SIZE, "REGS size");
KJIT_CAPF_ASSERT(sizeof(struct kjit_capf_entry) == KJIT_CAPF_ENTRY_SIZE, "ENTRY size");
KJIT_CAPF_ASSERT(sizeof(struct kjit_capf_read) == 32, "MEMREAD record header");
KJIT_CAPF_ASSERT(sizeof(struct kjit_capf_nondet) == 48, "NONDET record");
KJIT_CAPF_ASSERT(sizeof(struct kjit_capf_block) == 16, "BLOCKS record");
KJIT_CAPF_ASSERT(sizeof(struct kjit_capf_kresult) == 32, "KRESULT");
KJIT_CAPF_ASSERT(sizeof(struct kjit_cap_begin) == 184, "BEGIN record");
KJIT_CAPF_ASSERT(sizeof(struct kjit_capf_resume) == 176, "RESUME record");
KJIT_CAPF_ASSERT(sizeof(struct kjit_cap_resume) == 184, "RESUME event");
KJIT_CAPF_ASSERT(sizeof(struct kjit_cap_target) == 40, "TARGET event");
#undef KJIT_CAPF_ASSERT

#endif
