/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The operations of each built-in source, for the table in sources.c.
 */
#ifndef _KRING_SOURCES_H
#define _KRING_SOURCES_H

#include "../source.h"

extern const struct kring_source_ops kring_synthetic_source;
extern const struct kring_source_ops kring_sched_source;
extern const struct kring_source_ops kring_timer_source;
extern const struct kring_source_ops kring_aux_tracer_source;
extern const struct kring_source_ops kring_event_source;

int kring_synth_module_init(void);
void kring_synth_module_exit(void);
int kring_event_module_init(void);
void kring_event_module_exit(void);

#endif /* _KRING_SOURCES_H */
