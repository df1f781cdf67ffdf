// SPDX-License-Identifier: GPL-2.0
/* /dev/kjit: opening it (with the version handshake), and the ioctls and
 * names several commands share. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include "kjitctl.h"

int kjit_fd = -1;

static const char *tool_names[] = {"none", "icount", "bbcount", "calltrace", "branch_hints",
                                   "lock_contention", "entry_count", "callstack", "branches", "kcov"};

/* "none, icount, ...": every name tool_by_name takes. */
const char *tool_names_list(void)
{
  static char list[160];
  if (!list[0])
    for (unsigned i = 0; i < sizeof tool_names / sizeof *tool_names; i++)
      snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "", tool_names[i]);
  return list;
}

const char *tool_name(uint32_t t)
{
  return t < sizeof tool_names / sizeof *tool_names ? tool_names[t] : "?";
}

int tool_by_name(const char *n)
{
  for (unsigned i = 0; i < sizeof tool_names / sizeof *tool_names; i++)
    if (!strcmp(n, tool_names[i])) return (int)i;
  return -1;
}

/* The lockdown LSM's mode when it is on ("integrity", "confidentiality"),
 * from the bracketed word of e.g. "none [integrity] confidentiality"; 0
 * when it is off or the kernel has no lockdown LSM. */
int kernel_lockdown(char *mode, size_t len)
{
  char buf[128] = "", *lb, *rb;
  FILE *f = fopen(kernel_path("/sys/kernel/security/lockdown"), "r");
  if (!f) return 0;
  if (!fgets(buf, sizeof buf, f)) buf[0] = 0;
  fclose(f);
  if (!(lb = strchr(buf, '[')) || !(rb = strchr(lb, ']')) || !strncmp(lb, "[none]", 6)) return 0;
  *rb = 0;
  snprintf(mode, len, "%s", lb + 1);
  return 1;
}

/* Why kjit.ko may be missing on a locked-down kernel (Secure Boot). */
static void explain_lockdown(void)
{
  char mode[64];
  if (!kernel_lockdown(mode, sizeof mode)) return;
  fprintf(stderr, "kjitctl: kernel lockdown is on (%s): the kernel loads only modules signed by a key it"
                  " trusts; DKMS signed kjit.ko with /var/lib/dkms/mok.pub: enroll it (mokutil --import"
                  " /var/lib/dkms/mok.pub, reboot, confirm in the MOK manager) or boot without lockdown\n",
          mode);
}

int kjit_dev_errno;

/* Opens /dev/kjit and checks that the module speaks this kjitctl's ABI;
 * every failure says what to do about it, except, when `optional`, that
 * the module is not loaded or kjitctl is not root (1, kjit_dev_errno). */
static int open_dev_as(int optional)
{
  kjit_fd = open(kernel_path("/dev/kjit"), O_RDWR | O_CLOEXEC);
  if (kjit_fd < 0) {
    int e = errno;
    kjit_dev_errno = e;
    if (optional && (e == ENOENT || e == EACCES || e == EPERM)) return 1;
    if (e == ENOENT) {
      fprintf(stderr, "kjitctl: /dev/kjit does not exist: kjit.ko is not loaded\n");
      explain_missing_module();
      explain_lockdown();
    }
    else if (e == EACCES || e == EPERM) fprintf(stderr, "kjitctl: /dev/kjit: %s: kjitctl needs root (CAP_SYS_ADMIN)\n", strerror(e));
    else fprintf(stderr, "kjitctl: /dev/kjit: %s\n", strerror(e));
    return -1;
  }
  struct kjit_ioc_version v = {.size = sizeof v};
  int answered = ioctl(kjit_fd, KJIT_IOC_VERSION, &v) == 0, e = errno;
  if (!answered || v.abi != KJITCTL_ABI) {
    if (!answered && (e == ENOTTY || e == EINVAL))
      fprintf(stderr, "kjitctl: kjit.ko is older than kjitctl %s (ABI %u): it has no version handshake;"
                      " build both from one tree\n", KJIT_VERSION, KJITCTL_ABI);
    else if (!answered)
      fprintf(stderr, "kjitctl: /dev/kjit: version handshake: %s\n", strerror(e));
    else
      fprintf(stderr, "kjitctl: version mismatch: kjitctl %s speaks ABI %u, kjit.ko %.32s speaks ABI %u;"
                      " after a package upgrade, load the new module (rmmod kjit && modprobe kjit);"
                      " else build both from one tree\n", KJIT_VERSION, KJITCTL_ABI, v.version, v.abi);
    close(kjit_fd);
    kjit_fd = -1;
    return -1;
  }
  kjit_kaslr_offset = v.kaslr_offset;
  return 0;
}

int open_dev(void) { return open_dev_as(0); }
int open_dev_optional(void) { return open_dev_as(1); }

int get_stats(struct kjit_ioc_stats *s)
{
  memset(s, 0, sizeof *s);
  s->size = sizeof *s;
  return ioctl(kjit_fd, KJIT_IOC_STATS, s);
}

struct kjit_ioc_rec *get_results(struct kjit_ioc_results *r)
{
  static struct kjit_ioc_rec *recs;
  uint64_t cap = 1 << 16;
  for (;;) {
    free(recs);
    recs = calloc(cap, sizeof *recs);
    memset(r, 0, sizeof *r);
    r->size = sizeof *r;
    r->nrec = cap;
    r->rec_ptr = (uint64_t)(uintptr_t)recs;
    if (ioctl(kjit_fd, KJIT_IOC_RESULTS, r) < 0) { perror("kjitctl: results"); exit(1); }
    if (r->nrec <= cap) return recs;
    cap = r->nrec;
  }
}
