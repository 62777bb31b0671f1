// SPDX-License-Identifier: GPL-2.0
/* The shim's few globals (see kring_host_shim.h). */
#include "kring_host_shim.h"

#include <time.h>

unsigned long kring_host_warnings;
__thread int kring_host_cpu;
void (*kring_host_irq_hook)(struct kring_ring *rb);

u64 ktime_get_mono_fast_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (u64)ts.tv_sec * 1000000000ULL + (u64)ts.tv_nsec;
}
