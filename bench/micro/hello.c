// SPDX-License-Identifier: GPL-2.0
/* The tiny static program that lmb's fork+exec benchmark executes: no libc,
 * just exit(0).  Built -static -nostdlib (tests/guest/CMakeLists.txt). */
void _start(void)
{
	__asm__ volatile("mov $60, %%eax\n\txor %%edi, %%edi\n\tsyscall" ::: "memory");
	__builtin_unreachable();
}
