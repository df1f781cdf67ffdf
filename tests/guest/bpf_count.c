// SPDX-License-Identifier: GPL-2.0
/* Guest program for tests/guest/neighbours.sh: BPF fentry and fexit
 * programs on kernel functions, counting this process's calls, with raw
 * bpf() system calls (the guest has no libbpf).
 * Usage: bpf_count N CMD FUNC...
 *   For each FUNC: finds its BTF id in /sys/kernel/btf/vmlinux, loads a
 *   BPF_TRACE_FENTRY and a BPF_TRACE_FEXIT program that add 1 to their slot
 *   of an ARRAY map when the calling process is this one, and attaches
 *   them (a BPF trampoline on the function).  Then runs CMD with /bin/sh -c
 *   (e.g. attaching kjit: the trampolines exist before kjit translates),
 *   makes N openat("/dev/null") + close calls, prints one line per FUNC:
 *     FUNC fentry HITS fexit HITS        or        FUNC error WHAT
 *   and closes everything, which frees the trampolines.
 *   Exit 1 when the map or CMD fails; a FUNC that does not load or attach
 *   is its "error" line (the verifier's log goes to stderr). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/btf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MAX_FUNCS 8

static long sys_bpf(int cmd, union bpf_attr *attr) { return syscall(SYS_bpf, cmd, attr, sizeof *attr); }

static char *slurp(const char *path, size_t *len) {
  int fd = open(path, O_RDONLY);
  size_t cap = 1 << 20, got = 0;
  char *buf = malloc(cap);
  ssize_t n;
  if (fd < 0 || !buf) return NULL;
  while ((n = read(fd, buf + got, cap - got)) > 0) {
    got += n;
    if (got == cap && !(buf = realloc(buf, cap *= 2))) return NULL;
  }
  close(fd);
  *len = got;
  return n < 0 ? NULL : buf;
}

/* Bytes that follow a struct btf_type of this kind (uapi/linux/btf.h). */
static size_t btf_extra(const struct btf_type *t) {
  size_t vlen = BTF_INFO_VLEN(t->info);
  switch (BTF_INFO_KIND(t->info)) {
    case BTF_KIND_INT: case BTF_KIND_VAR: case BTF_KIND_DECL_TAG: return 4;
    case BTF_KIND_ARRAY: return sizeof(struct btf_array);
    case BTF_KIND_STRUCT: case BTF_KIND_UNION: return vlen * sizeof(struct btf_member);
    case BTF_KIND_ENUM: return vlen * sizeof(struct btf_enum);
    case BTF_KIND_FUNC_PROTO: return vlen * sizeof(struct btf_param);
    case BTF_KIND_DATASEC: return vlen * sizeof(struct btf_var_secinfo);
    case BTF_KIND_ENUM64: return vlen * 12;
    default: return 0;   /* PTR, FWD, TYPEDEF, qualifiers, FUNC, FLOAT, TYPE_TAG */
  }
}

/* The BTF id of FUNC name in the kernel's BTF, or -1. */
static int btf_func_id(const char *btf, size_t len, const char *name) {
  const struct btf_header *h = (const void *)btf;
  if (len < sizeof *h || h->magic != BTF_MAGIC) return -1;
  const char *types = btf + h->hdr_len + h->type_off, *end = types + h->type_len;
  const char *strs = btf + h->hdr_len + h->str_off;
  int id = 1;
  for (const char *p = types; p + sizeof(struct btf_type) <= end; id++) {
    const struct btf_type *t = (const void *)p;
    if (BTF_INFO_KIND(t->info) == BTF_KIND_FUNC && t->name_off < h->str_len && !strcmp(strs + t->name_off, name))
      return id;
    p += sizeof *t + btf_extra(t);
  }
  return -1;
}

#define INSN(c, d, s, o, i) ((struct bpf_insn){.code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i)})

/* if (pid of current == pid) map[slot] += 1 (atomically); return 0 */
static int load(int map_fd, int slot, int pid, int btf_id, int fexit, const char *func) {
  struct bpf_insn prog[] = {
    INSN(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_get_current_pid_tgid),
    INSN(BPF_ALU64 | BPF_RSH | BPF_K, BPF_REG_0, 0, 0, 32),               /* tgid */
    INSN(BPF_JMP | BPF_JNE | BPF_K, BPF_REG_0, 0, 9, pid),                /* -> out */
    INSN(BPF_ST | BPF_MEM | BPF_W, BPF_REG_10, 0, -4, slot),              /* key */
    INSN(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_2, BPF_REG_10, 0, 0),
    INSN(BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_2, 0, 0, -4),
    INSN(BPF_LD | BPF_DW | BPF_IMM, BPF_REG_1, BPF_PSEUDO_MAP_FD, 0, map_fd),
    INSN(0, 0, 0, 0, 0),
    INSN(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_map_lookup_elem),
    INSN(BPF_JMP | BPF_JEQ | BPF_K, BPF_REG_0, 0, 2, 0),                  /* -> out */
    INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_1, 0, 0, 1),
    INSN(BPF_STX | BPF_ATOMIC | BPF_DW, BPF_REG_0, BPF_REG_1, 0, BPF_ADD),
    INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 0),                /* out: */
    INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
  };
  static char log[256 * 1024];
  union bpf_attr a;
  memset(&a, 0, sizeof a);
  a.prog_type = BPF_PROG_TYPE_TRACING;
  a.expected_attach_type = fexit ? BPF_TRACE_FEXIT : BPF_TRACE_FENTRY;
  a.insns = (uintptr_t)prog;
  a.insn_cnt = sizeof prog / sizeof *prog;
  a.license = (uintptr_t) "GPL";
  a.attach_btf_id = btf_id;
  int fd = sys_bpf(BPF_PROG_LOAD, &a);
  if (fd >= 0) return fd;
  int err = errno;
  a.log_buf = (uintptr_t)log;   /* again, for the verifier's reasons */
  a.log_size = sizeof log;
  a.log_level = 1;
  log[0] = 0;
  if ((fd = sys_bpf(BPF_PROG_LOAD, &a)) >= 0) return fd;
  fprintf(stderr, "bpf_count: %s %s: BPF_PROG_LOAD: %s; verifier log:\n%s\n", func, fexit ? "fexit" : "fentry",
          strerror(err), log);
  errno = err;
  return -1;
}

static int attach(int prog_fd) {
  union bpf_attr a;
  memset(&a, 0, sizeof a);
  a.raw_tracepoint.prog_fd = prog_fd;   /* name NULL: the program's own attach target */
  return sys_bpf(BPF_RAW_TRACEPOINT_OPEN, &a);
}

static int lookup(int map_fd, uint32_t key, uint64_t *value) {
  union bpf_attr a;
  memset(&a, 0, sizeof a);
  a.map_fd = map_fd;
  a.key = (uintptr_t)&key;
  a.value = (uintptr_t)value;
  return sys_bpf(BPF_MAP_LOOKUP_ELEM, &a);
}

int main(int argc, char **argv) {
  long n;
  if (argc < 4 || argc - 3 > MAX_FUNCS || (n = atol(argv[1])) <= 0) {
    fprintf(stderr, "usage: bpf_count N CMD FUNC... (at most %d)\n", MAX_FUNCS);
    return 2;
  }
  int nf = argc - 3;
  char **func = argv + 3;
  size_t len;
  char *btf = slurp("/sys/kernel/btf/vmlinux", &len);
  if (!btf) return perror("bpf_count: /sys/kernel/btf/vmlinux"), 1;
  union bpf_attr m;
  memset(&m, 0, sizeof m);
  m.map_type = BPF_MAP_TYPE_ARRAY;
  m.key_size = 4;
  m.value_size = 8;
  m.max_entries = 2 * MAX_FUNCS;
  int map_fd = sys_bpf(BPF_MAP_CREATE, &m);
  if (map_fd < 0) return perror("bpf_count: BPF_MAP_CREATE"), 1;

  int fds[MAX_FUNCS][4];   /* fentry prog, fentry link, fexit prog, fexit link */
  char error[MAX_FUNCS][160] = {{0}};
  for (int f = 0; f < nf; f++) {
    int id = btf_func_id(btf, len, func[f]);
    for (int k = 0; k < 4; k++) fds[f][k] = -1;
    if (id < 0) {
      snprintf(error[f], sizeof error[f], "no BTF FUNC %s in /sys/kernel/btf/vmlinux", func[f]);
      continue;
    }
    for (int x = 0; x < 2 && !error[f][0]; x++) {
      int *p = fds[f] + 2 * x;
      const char *kind = x ? "fexit" : "fentry";
      if ((p[0] = load(map_fd, 2 * f + x, getpid(), id, x, func[f])) < 0)
        snprintf(error[f], sizeof error[f], "%s load: %s", kind, strerror(errno));
      else if ((p[1] = attach(p[0])) < 0)
        snprintf(error[f], sizeof error[f], "%s attach: %s", kind, strerror(errno));
    }
  }
  fflush(stdout);
  int rc = system(argv[2]);
  if (rc != 0) {
    fprintf(stderr, "bpf_count: '%s' failed (status %d)\n", argv[2], rc);
    return 1;
  }
  uint64_t before[2 * MAX_FUNCS] = {0}, after[2 * MAX_FUNCS] = {0};
  for (int k = 0; k < 2 * nf; k++)
    if (lookup(map_fd, k, &before[k]) != 0) return perror("bpf_count: BPF_MAP_LOOKUP_ELEM"), 1;
  for (long i = 0; i < n; i++) {
    int fd = openat(AT_FDCWD, "/dev/null", O_RDONLY);
    if (fd < 0 || close(fd) != 0) return perror("bpf_count: openat /dev/null"), 1;
  }
  for (int k = 0; k < 2 * nf; k++)
    if (lookup(map_fd, k, &after[k]) != 0) return perror("bpf_count: BPF_MAP_LOOKUP_ELEM"), 1;
  for (int f = 0; f < nf; f++) {
    if (error[f][0]) printf("%s error %s\n", func[f], error[f]);
    else printf("%s fentry %llu fexit %llu\n", func[f], (unsigned long long)(after[2 * f] - before[2 * f]),
                (unsigned long long)(after[2 * f + 1] - before[2 * f + 1]));
    for (int k = 0; k < 4; k++)
      if (fds[f][k] >= 0) close(fds[f][k]);
  }
  close(map_fd);
  return 0;
}
