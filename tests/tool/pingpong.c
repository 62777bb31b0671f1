/*
 * pingpong ROUNDS [OUT]: two processes exchange a byte over two pipes
 * ROUNDS times (default 2000). The parent counts its own context switches
 * over the exchange as tests/vm/capture_sched_test.cpp does: getrusage()
 * (RUSAGE_THREAD, voluntary + involuntary) read between two clock reads
 * on each side, so that a switch counted in the difference has its record
 * in [t0_out, t1_out] and a record in [t0, t1] is one counted there. It
 * writes one line to OUT (default stdout):
 *	pingpong tid=T rounds=N switches=S t0_out=.. t0=.. t1=.. t1_out=..
 * (CLOCK_MONOTONIC ns, kring record's default clock). A recording of it
 * must hold between the switches out of T in [t0, t1] and those in
 * [t0_out, t1_out] exactly S: tests/tool/perf_check.py counts them in
 * perf script's output.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

static long switches(void)
{
	struct rusage ru;

	getrusage(RUSAGE_THREAD, &ru);
	return ru.ru_nvcsw + ru.ru_nivcsw;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 2000;
	int to_child[2], to_parent[2], status = 0;
	unsigned long long t0_out, t0, t1, t1_out;
	long sw0, sw1;
	char b = 'x';
	pid_t child;
	FILE *out = stdout;

	if (rounds <= 0 || pipe(to_child) || pipe(to_parent))
		return 2;
	child = fork();
	if (child < 0)
		return 1;
	if (child == 0) {
		for (int i = 0; i < rounds; i++)
			if (read(to_child[0], &b, 1) != 1 || write(to_parent[1], &b, 1) != 1)
				_exit(1);
		_exit(0);
	}
	t0_out = now_ns();
	sw0 = switches();
	t0 = now_ns();
	for (int i = 0; i < rounds; i++)
		if (write(to_child[1], &b, 1) != 1 || read(to_parent[0], &b, 1) != 1)
			return 1;
	t1 = now_ns();
	sw1 = switches();
	t1_out = now_ns();
	waitpid(child, &status, 0);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return 1;
	if (argc > 2 && !(out = fopen(argv[2], "w")))
		return 1;
	fprintf(out, "pingpong tid=%ld rounds=%d switches=%ld t0_out=%llu t0=%llu t1=%llu t1_out=%llu\n",
		(long)syscall(SYS_gettid), rounds, sw1 - sw0, t0_out, t0, t1, t1_out);
	return fclose(out) ? 1 : 0;
}
