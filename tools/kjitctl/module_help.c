// SPDX-License-Identifier: GPL-2.0
/* Why /dev/kjit is missing, from what the machine's files say about kjit.ko
 * for the running kernel: installed but not loaded, DKMS without that
 * kernel's headers, a kernel DKMS does not build for (dkms.conf's
 * BUILD_EXCLUSIVE_CONFIG, and the thunk option the build checks), a build
 * that failed, or no kjit-dkms at all.  Paths go through kernel_path(), so
 * the host test gives it machines of its own making. */
#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "kjitctl.h"

static int exists(const char *path) { return access(kernel_path(path), F_OK) == 0; }

/* The running kernel's release, "" when unknown. */
static void running_release(char *rel, size_t len)
{
  FILE *f = fopen(kernel_path("/proc/sys/kernel/osrelease"), "r");
  rel[0] = 0;
  if (!f) return;
  if (fgets(rel, (int)len, f)) rel[strcspn(rel, "\n")] = 0;
  fclose(f);
}

/* Whether the kernel config at `cfg` sets `opt` (=y). */
static int config_has(const char *cfg, const char *opt)
{
  char line[256], want[128];
  int found = 0;
  FILE *f = fopen(kernel_path(cfg), "r");
  if (!f) return -1;
  snprintf(want, sizeof want, "%s=y\n", opt);
  while (!found && fgets(line, sizeof line, f)) found = !strcmp(line, want);
  fclose(f);
  return found;
}

/* The options kjit needs that `cfg` lacks, space-separated, into `out`;
 * 0 when the config cannot be read. */
static int missing_options(const char *cfg, char *out, size_t len)
{
  static const char *const need[] = {"CONFIG_DYNAMIC_FTRACE_WITH_REGS", "CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS",
                                     "CONFIG_KPROBES", "CONFIG_KALLSYMS"};
  out[0] = 0;
  if (config_has(cfg, "CONFIG_KALLSYMS") < 0) return 0;
  for (unsigned i = 0; i < sizeof need / sizeof *need; i++)
    if (config_has(cfg, need[i]) != 1) snprintf(out + strlen(out), len - strlen(out), " %s", need[i]);
  if (config_has(cfg, "CONFIG_RETPOLINE") != 1 && config_has(cfg, "CONFIG_MITIGATION_RETPOLINE") != 1)
    snprintf(out + strlen(out), len - strlen(out), " CONFIG_RETPOLINE (or CONFIG_MITIGATION_RETPOLINE)");
  return 1;
}

/* The first make.log of DKMS's kjit builds, into `out`; 0 if none. */
static int dkms_make_log(char *out, size_t len)
{
  DIR *d = opendir(kernel_path("/var/lib/dkms/kjit"));
  struct dirent *e;
  int found = 0;
  if (!d) return 0;
  while (!found && (e = readdir(d))) {
    if (e->d_name[0] == '.' || !strcmp(e->d_name, "source")) continue;
    snprintf(out, len, "/var/lib/dkms/kjit/%s/build/make.log", e->d_name);
    found = exists(out);
  }
  closedir(d);
  return found;
}

void explain_missing_module(void)
{
  static const char *const installed[] = {"updates/dkms/kjit.ko", "updates/dkms/kjit.ko.xz",
                                          "updates/dkms/kjit.ko.zst", "updates/dkms/kjit.ko.gz",
                                          "extra/kjit.ko"};
  char rel[128], path[512], missing[512], log[512];
  running_release(rel, sizeof rel);
  if (!rel[0]) return;
  for (unsigned i = 0; i < sizeof installed / sizeof *installed; i++) {
    snprintf(path, sizeof path, "/lib/modules/%s/%s", rel, installed[i]);
    if (exists(path)) {
      fprintf(stderr, "kjitctl: %s is installed for %s: modprobe kjit\n", path, rel);
      return;
    }
  }
  if (!exists("/var/lib/dkms/kjit")) {
    fprintf(stderr, "kjitctl: no kjit.ko for %s: kjit-dkms is not installed (apt-get install"
                    " ./kjit-dkms_*.deb), or insmod a kjit.ko built for this kernel\n", rel);
    return;
  }
  snprintf(path, sizeof path, "/boot/config-%s", rel);
  if (missing_options(path, missing, sizeof missing) && missing[0]) {
    fprintf(stderr, "kjitctl: DKMS does not build kjit for %s: the kernel lacks%s (%s); kjit runs on"
                    " Debian 12's 6.1 and 6.12 kernels and Debian 13's (cloud, generic, rt)\n",
            rel, missing, path);
    return;
  }
  snprintf(path, sizeof path, "/lib/modules/%s/build", rel);
  if (!exists(path)) {
    fprintf(stderr, "kjitctl: DKMS has no headers for %s (%s is missing): apt-get install"
                    " linux-headers-%s, or the flavour's metapackage (linux-headers-cloud-amd64,"
                    " -amd64, -rt-amd64), which follows kernel upgrades; then dkms autoinstall\n",
            rel, path, rel);
    return;
  }
  if (dkms_make_log(log, sizeof log))
    fprintf(stderr, "kjitctl: DKMS's build of kjit for %s did not install a module: see %s"
                    " (dkms status kjit; dkms autoinstall -k %s)\n", rel, log, rel);
  else
    fprintf(stderr, "kjitctl: DKMS has not built kjit for %s: dkms autoinstall -k %s\n", rel, rel);
}
