/* The tiny static program that lmb's fork+exec benchmark executes: no libc,
 * just exit(0).  Build: gcc -O2 -static -nostdlib -o lmb-hello hello.c */
void _start(void)
{
	__asm__ volatile("mov $60, %%eax\n\txor %%edi, %%edi\n\tsyscall" ::: "memory");
	__builtin_unreachable();
}
