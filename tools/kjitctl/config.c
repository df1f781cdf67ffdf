// SPDX-License-Identifier: GPL-2.0
/* kjitctl config [--tool T] [--inline 0|1] [--liveness 0|1] [--cache-kb N]
 *                [--flush-every-entry 0|1] [--pid P] [--max-block-insns N]:
 * re-creates the engine (nothing may be attached); options not given keep
 * their current values. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include "kjitctl.h"

enum { OPT_TOOL = 256, OPT_INLINE, OPT_LIVENESS, OPT_CACHE_KB, OPT_FLUSH_EVERY_ENTRY, OPT_PID, OPT_MAX_BLOCK_INSNS };
const struct option config_options[] = {
  {"tool", required_argument, NULL, OPT_TOOL}, {"inline", required_argument, NULL, OPT_INLINE},
  {"liveness", required_argument, NULL, OPT_LIVENESS}, {"cache-kb", required_argument, NULL, OPT_CACHE_KB},
  {"flush-every-entry", required_argument, NULL, OPT_FLUSH_EVERY_ENTRY},
  {"pid", required_argument, NULL, OPT_PID}, {"max-block-insns", required_argument, NULL, OPT_MAX_BLOCK_INSNS},
  {NULL, 0, NULL, 0}};

int cmd_config(int argc, char **argv)
{
  struct kjit_ioc_stats s;
  if (get_stats(&s) < 0) { perror("kjitctl: stats"); return 1; }
  struct kjit_ioc_config c = {
    .size = sizeof c, .tool = s.tool, .inline_instrumentation = s.inline_instrumentation,
    .use_liveness = s.use_liveness, .flush_every_entry = s.flush_every_entry, .pid = s.pid,
  };
  int o, bad = 0;
  opterr = 0;
  optind = 1;
  while ((o = getopt_long(argc, argv, "+:", config_options, NULL)) != -1) {
    const char *v = optarg;
    switch (o) {
      case OPT_TOOL: {
        int t = tool_by_name(v);
        if (t < 0) { fprintf(stderr, "kjitctl: unknown tool %s\n", v); return 2; }
        c.tool = (uint32_t)t;
        break;
      }
      case OPT_INLINE: bad = option_uint("config", "--inline", v, 1, &c.inline_instrumentation); break;
      case OPT_LIVENESS: bad = option_uint("config", "--liveness", v, 1, &c.use_liveness); break;
      case OPT_CACHE_KB: bad = option_uint("config", "--cache-kb", v, UINT32_MAX, &c.cache_kb); break;
      case OPT_FLUSH_EVERY_ENTRY: bad = option_uint("config", "--flush-every-entry", v, 1, &c.flush_every_entry); break;
      case OPT_PID: bad = option_uint("config", "--pid", v, INT32_MAX, &c.pid); break;
      case OPT_MAX_BLOCK_INSNS: bad = option_uint("config", "--max-block-insns", v, UINT32_MAX, &c.max_block_insns); break;
      default: return usage();   /* check_arguments let nothing else through */
    }
    if (bad) return bad;
  }
  if (ioctl(kjit_fd, KJIT_IOC_CONFIG, &c) < 0) {
    /* The module logs which of these it was; a capture holds its plugin
     * until `kjitctl capture` has stopped it, even after its last
     * invocation. */
    fprintf(stderr, "kjitctl: config: %s%s\n", strerror(errno),
            errno == EBUSY ? " (detach everything, unload plugin modules and let any running"
                             " `kjitctl capture` finish first)" : "");
    return 1;
  }
  printf("configured: tool %s inline %u liveness %u cache_kb %u flush_every_entry %u pid %u\n",
         tool_name(c.tool), c.inline_instrumentation, c.use_liveness,
         c.cache_kb, c.flush_every_entry, c.pid);
  return 0;
}
