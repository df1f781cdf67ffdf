/* SPDX-License-Identifier: GPL-2.0 */
/* kjit.data: what `kjitctl record` writes and `kjitctl report` reads
 * (docs/data-format.md).  Little-endian, 8-byte aligned records:
 *
 *   header   magic "KJITDATA", u32 version, u32 nsections, u64 reserved (0)
 *   section  u32 type, u32 crc (kjit_capf_section_crc of type+len+payload),
 *            u64 len, payload of len bytes, padded with zeros to 8 bytes
 *
 * Sections (each at most once; unknown types are skipped by readers, so
 * a newer writer may add some without changing the version):
 *   META     "key=value\n" text: kernel release, build id, _stext, tool,
 *            targets, command, exit status, times (docs list every key)
 *   STATS    "key=value\n" text: how entries ended (completion) and the
 *            tool's scalars
 *   BLOCKS   struct kjit_data_block[]      (bbcount, branches)
 *   EVENTS   struct kjit_data_event[]      (callstack), oldest first
 *            (version 1 files: struct kjit_data_event_v1[])
 *   CALLS    struct kjit_data_call[]       (entry_count, calltrace)
 *   SYMBOLS  struct kjit_data_symbol records, each followed by its name
 *            and zero padding to 8 bytes: the kernel's text symbols (from
 *            /proc/kallsyms) that hold an address of the other sections,
 *            with the distance to the next symbol as size
 *   TARGETS  "name status\n" text: every target asked for and what kjit
 *            answered (attached, or the refusal)
 *   BRANCHES struct kjit_data_branch[]     (branches)
 *   MODULES  "name base size build_id\n" text: every loaded module, its
 *            core's run-time base and size in hex and decimal (/proc/modules)
 *            and the hex GNU build id of its file ("-": none)
 * Addresses are canonical: one in the kernel image is its link-time address
 * (the running one minus META's kaslr_offset; META's stext is the
 * link-time _stext, so it equals a matching vmlinux's), so recordings of
 * two boots or machines line up; module addresses are the running ones:
 * an address inside a module's [base, base + size) is that module's code,
 * named module-relative.
 * Files written before kaslr_offset existed hold running addresses and
 * the running stext: the slide against a vmlinux's _stext maps both. */
#ifndef KJIT_UAPI_DATA_FORMAT_H
#define KJIT_UAPI_DATA_FORMAT_H

#include <stdint.h>

#define KJIT_DATA_MAGIC "KJITDATA"
/* 2: EVENTS carry instruction and context-switch counts (48-byte events);
 * readers still read version 1 (32-byte events without them). */
#define KJIT_DATA_VERSION 2u
#define KJIT_DATA_HEADER_SIZE 24u
#define KJIT_DATA_SECTION_HEADER_SIZE 16u
/* Readers refuse bigger sections and files (nothing real comes close). */
#define KJIT_DATA_MAX_SECTION (1ull << 31)

enum kjit_data_section {
  KJIT_DATA_META = 1,
  KJIT_DATA_STATS = 2,
  KJIT_DATA_BLOCKS = 3,
  KJIT_DATA_EVENTS = 4,
  KJIT_DATA_CALLS = 5,
  KJIT_DATA_SYMBOLS = 6,
  KJIT_DATA_TARGETS = 7,
  KJIT_DATA_BRANCHES = 8,
  KJIT_DATA_MODULES = 9,
};

/* flags */
#define KJIT_DATA_BLOCK_FRAGMENT 1u   /* cut by the engine: goes on at addr + len */

struct kjit_data_block {
  uint64_t addr;     /* first instruction */
  uint64_t count;    /* executions, summed over CPUs */
  uint32_t len;      /* bytes of original code */
  uint16_t ninsn;    /* instructions */
  uint16_t flags;    /* KJIT_DATA_BLOCK_* */
};

enum { KJIT_DATA_EV_ENTRY = 1, KJIT_DATA_EV_CALL = 2, KJIT_DATA_EV_RETURN = 3 };
/* flags */
#define KJIT_DATA_EV_INSNS 1u  /* insns and switches hold counts */
/* A call's instructions are its return's insns minus its entry or call's,
 * when both have KJIT_DATA_EV_INSNS and the same switches (the thread
 * stayed on its CPU, and no other thread ran there, in between); else the
 * call was not measured.  Instructions are those executed in translated
 * code on that CPU, interrupts included. */
struct kjit_data_event {
  uint64_t pc;       /* entry / call: the function; return: the ret's address */
  uint64_t sp;       /* entry / call: rsp before the call; return: rsp at the ret */
  uint64_t ns;       /* CLOCK_MONOTONIC (ktime_get_mono_fast_ns) */
  uint32_t pid;      /* thread id */
  uint16_t cpu;
  uint8_t type;      /* KJIT_DATA_EV_* */
  uint8_t flags;     /* KJIT_DATA_EV_INSNS (version 1: pad, 0) */
  uint64_t insns;    /* the CPU's instructions run in translated code so far */
  uint32_t switches; /* the thread's context switches so far, mod 2^32 */
  uint32_t pad;
};
/* Version 1's event: the first 32 bytes of kjit_data_event. */
struct kjit_data_event_v1 {
  uint64_t pc, sp, ns;
  uint32_t pid;
  uint16_t cpu;
  uint8_t type, pad;
};

struct kjit_data_call {
  uint64_t addr;     /* the called function */
  uint64_t count;
};

/* One conditional branch.  The layout predicts a forward branch (target
 * above addr) not taken and a backward one taken. */
struct kjit_data_branch {
  uint64_t addr;      /* the branch instruction */
  uint64_t target;    /* where it goes when taken */
  uint64_t taken;     /* times taken, summed over CPUs */
  uint64_t not_taken; /* times it fell through */
};

struct kjit_data_symbol {
  uint64_t addr;
  uint32_t size;     /* to the next text symbol */
  uint16_t name_len; /* bytes of the name that follows (no NUL) */
  uint8_t type;      /* kallsyms type letter: t, T, w, W */
  uint8_t pad;
};

#endif
