/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * satfeed_maps.bpf.h - BPF declarations of satfeed's pinned read-side maps.
 *
 * The engine defines its maps with these, and a BPF consumer (kmod-example,
 * a sched_ext scheduler, a governor prototype) includes the same file and
 * swaps the pins in before load (bpf_map__reuse_fd on the map of the same
 * name, from bpf_obj_get(SATFEED_DEFAULT_ROOT "/" SATFEED_PIN_*)), so both
 * sides agree on type, key, value and size by construction.
 */
#ifndef __SATFEED_MAPS_BPF_H
#define __SATFEED_MAPS_BPF_H

#include "satfeed.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct satfeed_info);
} sf_info SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SATFEED_MAX_TARGETS);
	__type(key, __u32);
	__type(value, struct satfeed_target);
} sf_targets SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SATFEED_MAX_TARGETS * SATFEED_NR_STREAMS);
	__type(key, __u32);
	__type(value, struct satfeed_stream);
} sf_streams SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SATFEED_MAX_TARGETS);
	__type(key, __u32);
	__type(value, struct satfeed_verdict);
} sf_verdict SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SATFEED_MAX_TARGETS);
	__type(key, __u32);
	__type(value, struct satfeed_stream);
} sf_responses SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SATFEED_MAX_TARGETS);
	__type(key, __u32);
	__type(value, struct satfeed_stream);
} sf_service SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SATFEED_MAX_TARGETS);
	__type(key, __u32);
	__type(value, struct satfeed_svc_hist);
} sf_svc_hist SEC(".maps");

#endif /* __SATFEED_MAPS_BPF_H */
