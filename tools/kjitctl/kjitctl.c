/* kjitctl: user-space control of kjit.ko through /dev/kjit.
 *   kjitctl attach FUNC     redirect FUNC (e.g. __x64_sys_getppid) into kjit
 *   kjitctl detach FUNC|all
 *   kjitctl stats           engine + module counters, one "key value" a line
 *   kjitctl flush | icount-reset
 * Build: gcc -O2 -static -I os/linux tools/kjitctl/kjitctl.c -o kjitctl */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include "uapi/kjit_ioctl.h"

static int usage(void)
{
  fprintf(stderr, "usage: kjitctl attach FUNC | detach FUNC|all | stats | flush | icount-reset\n");
  return 2;
}

int main(int argc, char **argv)
{
  if (argc < 2) return usage();
  int fd = open("/dev/kjit", O_RDWR | O_CLOEXEC);
  if (fd < 0) { perror("kjitctl: /dev/kjit"); return 1; }
  const char *cmd = argv[1];
  if (!strcmp(cmd, "attach") || !strcmp(cmd, "detach")) {
    if (argc != 3) return usage();
    struct kjit_ioc_target t;
    memset(&t, 0, sizeof t);
    t.size = sizeof t;
    const char *name = strcmp(argv[2], "all") ? argv[2] : "*";
    if (strlen(name) >= sizeof t.name) { fprintf(stderr, "kjitctl: name too long\n"); return 2; }
    strcpy(t.name, name);
    int attach = !strcmp(cmd, "attach");
    if (ioctl(fd, attach ? KJIT_IOC_ATTACH : KJIT_IOC_DETACH, &t) < 0) {
      fprintf(stderr, "kjitctl: %s %s: %s\n", cmd, argv[2], strerror(errno));
      return 1;
    }
    if (attach) printf("attached %s at 0x%llx\n", t.name, (unsigned long long)t.addr);
    else printf("detached %s\n", argv[2]);
    return 0;
  }
  if (!strcmp(cmd, "stats")) {
    struct kjit_ioc_stats s;
    memset(&s, 0, sizeof s);
    s.size = sizeof s;
    if (ioctl(fd, KJIT_IOC_STATS, &s) < 0) { perror("kjitctl: stats"); return 1; }
#define P(f) printf("%-18s %llu\n", #f, (unsigned long long)s.f)
    P(nattached); P(blocks_built); P(insns_translated); P(fallbacks); P(direct_links);
    P(chain_links); P(dispatcher_exits); P(indirect_misses); P(flushes);
    P(cache_bytes_used); P(arena_bytes_used); P(inlined_calls); P(outlined_calls);
    P(entries); P(entry_declined); P(entry_skipped); P(gate_escapes); P(reclaims); P(icount);
    return 0;
  }
  if (!strcmp(cmd, "flush") || !strcmp(cmd, "icount-reset")) {
    if (ioctl(fd, !strcmp(cmd, "flush") ? KJIT_IOC_FLUSH : KJIT_IOC_ICOUNT_RESET, 0) < 0) {
      perror("kjitctl");
      return 1;
    }
    return 0;
  }
  return usage();
}
