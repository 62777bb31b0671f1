// libkring: everything, for applications that want one include.
//
// The headers, by layer, lowest first (docs/ARCHITECTURE.md, "User space:
// layers"; docs/LIBKRING.md):
//	result.hpp     errors as values (kring::result<T>, kring::error)
//	cpus.hpp       CPU lists ("0-3,6")
//	barrier.hpp    the memory-ordering helpers of the ring protocols
//	fd.hpp         owners: unique_fd, unique_mapping
//	ring.hpp       views of a mapped data ring and AUX area, loss counters
//	record.hpp     records, the header rule, the record parsers
//	reader.hpp     reader (forward rings), overwrite_reader
//	aux.hpp        aux_reader: the AUX area's bytes
//	device.hpp     device::open(), the ABI and its feature bits
//	channel.hpp    channel_options, channel
//	perf.hpp       perf_ring: a perf_event_open buffer as a ring_view
//	poller.hpp     poller: one epoll over many rings
//	merger.hpp     merger: per-CPU rings into one stream ordered by time
#pragma once

#include "kring/result.hpp"
#include "kring/cpus.hpp"
#include "kring/barrier.hpp"
#include "kring/fd.hpp"
#include "kring/ring.hpp"
#include "kring/record.hpp"
#include "kring/reader.hpp"
#include "kring/aux.hpp"
#include "kring/device.hpp"
#include "kring/channel.hpp"
#include "kring/perf.hpp"
#include "kring/poller.hpp"
#include "kring/merger.hpp"
