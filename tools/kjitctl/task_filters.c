// SPDX-License-Identifier: GPL-2.0
/* The filters by task that `record` and `top` share, with perf's spellings:
 * -a (every task), --tid TID, --comm NAME, --cgroup PATH, -C/--cpu LIST.
 * They fill struct kjit_ioc_config's tid, comm, cgroup_fd and cpus; the
 * module evaluates them for each task at its switch-in (task_filter.c). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>
#include "kjitctl.h"

#define CGROUP2_SUPER_MAGIC 0x63677270
#define CGROUP2_ROOT "/sys/fs/cgroup"

/* perf's CPU list: "0,2-3".  0, or -1 after a message. */
static int parse_cpus(const char *list, uint64_t cpus[4])
{
  long ncpus = sysconf(_SC_NPROCESSORS_CONF);
  const char *s = list;
  memset(cpus, 0, 4 * sizeof *cpus);
  for (;;) {
    char *end;
    long lo = strtol(s, &end, 10), hi = lo;
    if (end == s || lo < 0) break;
    s = end;
    if (*s == '-') {
      hi = strtol(s + 1, &end, 10);
      if (end == s + 1 || hi < lo) break;
      s = end;
    }
    if (hi >= KJIT_CONFIG_CPUS_MAX || hi >= ncpus) {
      fprintf(stderr, "kjitctl: --cpu %s: CPU %ld does not exist (%ld CPUs)\n", list, hi, ncpus);
      return -1;
    }
    for (long c = lo; c <= hi; c++) cpus[c / 64] |= 1ull << (c % 64);
    if (!*s) return 0;
    if (*s++ != ',') break;
  }
  fprintf(stderr, "kjitctl: --cpu %s: not a CPU list (perf's syntax: 0,2-3)\n", list);
  return -1;
}

/* A cgroup v2 directory given as its path under /sys/fs/cgroup or in full,
 * opened for the module (cgroup_get_from_fd).  The fd, or -1 after a
 * message. */
static int open_cgroup(const char *path)
{
  char full[4096];
  struct statfs fs;
  if (!strncmp(path, CGROUP2_ROOT "/", sizeof CGROUP2_ROOT) || !strcmp(path, CGROUP2_ROOT))
    snprintf(full, sizeof full, "%s", path);
  else
    snprintf(full, sizeof full, CGROUP2_ROOT "/%s", path[0] == '/' ? path + 1 : path);
  int fd = open(full, O_RDONLY | O_DIRECTORY);
  if (fd < 0) {
    fprintf(stderr, "kjitctl: --cgroup %s: %s: %s\n", path, full, strerror(errno));
    return -1;
  }
  if (fstatfs(fd, &fs) || fs.f_type != CGROUP2_SUPER_MAGIC) {
    fprintf(stderr, "kjitctl: --cgroup %s: %s is not a cgroup v2 directory (mount -t cgroup2 none %s)\n",
            path, full, CGROUP2_ROOT);
    close(fd);
    return -1;
  }
  return fd;
}

int task_filters_option(int opt, const char *arg, struct task_filters *f)
{
  char *end;
  switch (opt) {
    case 'a': f->all = 1; return 1;
    case OPT_TID:
      f->tid = (pid_t)strtol(arg, &end, 10);
      if (*end || f->tid <= 0) { fprintf(stderr, "kjitctl: bad thread id %s\n", arg); return -1; }
      return 1;
    case OPT_COMM:
      if (!*arg) { fprintf(stderr, "kjitctl: --comm needs a name\n"); return -1; }
      f->comm = arg;
      return 1;
    case OPT_CGROUP: f->cgroup = arg; return 1;
    case 'C':
      if (parse_cpus(arg, f->cpus)) return -1;
      f->cpu_list = arg;
      return 1;
    default: return 0;
  }
}

int task_filters_narrow(const struct task_filters *f)
{
  return f->tid || f->comm || f->cgroup || f->cpu_list;
}

int task_filters_apply(const struct task_filters *f, struct kjit_ioc_config *cf)
{
  if (f->tid) {
    char p[64];
    snprintf(p, sizeof p, "/proc/%d/status", (int)f->tid);   /* threads too */
    if (access(p, F_OK)) { fprintf(stderr, "kjitctl: no thread %d\n", (int)f->tid); return -1; }
    cf->tid = (uint32_t)f->tid;
  }
  /* the kernel keeps TASK_COMM_LEN - 1 bytes of a name: compare those */
  if (f->comm) snprintf(cf->comm, sizeof cf->comm, "%s", f->comm);
  if (f->cgroup) {
    cf->cgroup_fd = open_cgroup(f->cgroup);
    if (cf->cgroup_fd < 0) return -1;
    cf->flags |= KJIT_CONFIG_CGROUP;
  }
  if (f->cpu_list) {
    memcpy(cf->cpus, f->cpus, sizeof cf->cpus);
    cf->flags |= KJIT_CONFIG_CPUS;
  }
  return 0;
}

void task_filters_describe(const struct task_filters *f, pid_t pid, char *out, size_t len)
{
  size_t k = 0;
  out[0] = 0;
#define ADD(...) (k += (size_t)snprintf(out + k, k < len ? len - k : 0, __VA_ARGS__))
  if (pid) ADD("pid %d and its children", (int)pid);
  else ADD("every task");
  if (f->tid) ADD(", thread %d", (int)f->tid);
  if (f->comm) ADD(", comm %.15s", f->comm);
  if (f->cgroup) ADD(", cgroup %s", f->cgroup);
  if (f->cpu_list) ADD(", CPUs %s", f->cpu_list);
#undef ADD
}
