// SPDX-License-Identifier: GPL-2.0
/*
 * The built-in sources by id: the one place that names them all. The
 * channel layer looks a source up here at configure time and from then on
 * asks its operations and capabilities (source.h).
 */
#include "../compat.h"
#include "../source.h"
#include "sources.h"

const struct kring_source_ops *const kring_sources[KRING_SOURCE_MAX] = {
	[KRING_SOURCE_SYNTHETIC] = &kring_synthetic_source,
	[KRING_SOURCE_SCHED] = &kring_sched_source,
	[KRING_SOURCE_TIMER] = &kring_timer_source,
	[KRING_SOURCE_AUX_TRACER] = &kring_aux_tracer_source,
	[KRING_SOURCE_EVENT] = &kring_event_source,
};
EXPORT_SYMBOL_IF_KUNIT(kring_sources);
