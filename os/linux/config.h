/* SPDX-License-Identifier: GPL-2.0 */
/* config.c: the active configuration (built-in tool, engine options,
 * cache size, entry policy) and the results of its tool.  Drives the
 * engine host, the built-in tools and the entry layer; called by control.c
 * and module.c. */
#ifndef KJIT_CONFIG_H
#define KJIT_CONFIG_H

#include <linux/types.h>
#include "uapi/kjit/ioctl.h"

int kjit_config_init(void);
void kjit_config_exit(void);
/* KJIT_IOC_CONFIG: -EBUSY while something is attached or a plugin module
 * uses kjit; on failure the previous configuration is restored. */
int kjit_configure(const struct kjit_ioc_config *c);
/* KJIT_IOC_ATTACH / ATTACH_MANY (entry_attach.h), serialised with
 * kjit_configure. */
int kjit_config_attach(const char *name, u64 *addr_out);
int kjit_config_attach_many(const char __user *names, s32 __user *results, u32 count);
void kjit_config_get(struct kjit_ioc_config *c);
/* A session's close: no pid filter any more (the tool is kept). */
void kjit_config_clear_pid(void);
u32 kjit_config_tool(void);
void kjit_config_reset_results(void);
int kjit_config_results(struct kjit_ioc_results *res);

#endif
