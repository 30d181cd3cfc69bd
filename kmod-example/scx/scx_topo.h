/* SPDX-License-Identifier: GPL-2.0 */
/*
 * scx_topo.h - scx_satfeed's reservation order and sizes from the CPU
 * topology in sysfs (scx_topo.c): plain C, no BPF, so that test_topo.c
 * can run it on made-up sysfs trees.
 */
#ifndef __SCX_TOPO_H
#define __SCX_TOPO_H

#include <stddef.h>
#include <linux/types.h>

#define SCX_TOPO_SYSFS	"/sys/devices/system/cpu"

/* The first line of a file, without its newline; 0 or -errno. */
int scx_read_line(const char *path, char *buf, size_t len);

/*
 * From the topology under cpu_dir (cpuN/topology/thread_siblings_list,
 * cpuN/cache/indexI/{level,shared_cpu_list}; a file missing: every CPU its
 * own core and cache), for CPUs 0..nr_cpus-1 (nr_cpus <= 64):
 * rank[cpu]: the reservation order, whole cores of one last-level cache
 * together, from the highest-numbered CPUs down;
 * whole[n], n = 0..nr_cpus: a reservation of n CPUs rounded up to whole
 * cores, or down when up passes max_reserved (n itself when down leaves
 * none: a part of a core beats nothing);
 * less[n]: a reservation of n CPUs one core smaller (n - 1 rounded down to
 * whole cores; n - 1 when that leaves none).
 */
void scx_topo_rank(const char *cpu_dir, __u32 nr_cpus, __u32 max_reserved,
		   __u8 *rank, __u8 *whole, __u8 *less);

#endif /* __SCX_TOPO_H */
