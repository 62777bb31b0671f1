// SPDX-License-Identifier: GPL-2.0
/* The shim's few globals (see kring_host_shim.h). */
#include "kring_host_shim.h"

unsigned long kring_host_warnings;
__thread int kring_host_cpu;
void (*kring_host_irq_hook)(struct kring_ring *rb);
