// SPDX-License-Identifier: MIT
/*
 * libdpcalls.so: a library for the call-counting tests to dlopen, so a
 * probe can wait for a library the target has not loaded yet.
 */
int dpcalls_hit(int x);

/* Exported, never inlined: its calls reach its own code, where a uprobe sits. */
__attribute__((visibility("default"), noinline)) int dpcalls_hit(int x)
{
	__asm__ volatile("" ::: "memory");
	return x + 1;
}
