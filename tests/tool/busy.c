/*
 * busy MS: spin in one hot function for MS milliseconds of its own CPU
 * time (default 2000), for `kring record -e timer -- busy`: perf report
 * must name busy_hot first, and with -g show the chain main -> busy_worker
 * -> busy_hot. CPU time, not wall time: the samples a timer takes of it do
 * not depend on who else wants the CPU meanwhile. Built -O1 -g
 * -fno-omit-frame-pointer, static.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static unsigned long long cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

/* Called once per busy_hot call, so that busy_hot is not a leaf. */
__attribute__((noinline)) unsigned long busy_note(unsigned long x)
{
	__asm__ volatile("" : "+r"(x));
	return x;
}

/*
 * The hot function: a few million dependent steps per call. Not a leaf:
 * where a leaf keeps its return address in a register (arm64), a frame
 * pointer walk from inside it would miss its caller.
 */
__attribute__((noinline)) unsigned long busy_hot(unsigned long x, unsigned long n)
{
	for (unsigned long i = 0; i < n; i++) {
		x = x * 6364136223846793005ul + 1442695040888963407ul;
		__asm__ volatile("" : "+r"(x));
	}
	return busy_note(x);
}

/* Its caller, a frame of its own between main and busy_hot. */
__attribute__((noinline)) unsigned long busy_worker(unsigned long x)
{
	x = busy_hot(x, 200000);
	__asm__ volatile("" : "+r"(x));
	return x;
}

int main(int argc, char **argv)
{
	unsigned long ms = argc > 1 ? strtoul(argv[1], NULL, 10) : 2000;
	unsigned long long end = cpu_ns() + ms * 1000000ull;
	unsigned long x = 1, calls = 0;

	while (cpu_ns() < end) {
		x = busy_worker(x);
		calls++;
	}
	printf("busy: %lu calls of busy_hot in %lu ms (%lx)\n", calls, ms, x & 0xff);
	return 0;
}
