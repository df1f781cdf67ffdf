/* SPDX-License-Identifier: GPL-2.0 */
/* Fixed-width integer types for the C-ABI headers.  Kernel C glue gets them
 * from <linux/types.h>; everything else (host code and the freestanding C++
 * core, which may use the compiler's own freestanding <stdint.h>) from
 * <stdint.h>.  The widths are identical, so the C ABI is too. */
#ifndef KJIT_TYPES_H
#define KJIT_TYPES_H
#if defined(__KERNEL__)
#include <linux/types.h>
#else
#include <stdint.h>
#endif
#endif
