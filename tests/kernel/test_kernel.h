/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * test_kernel.h - what the parts of test_kernel share: the engine's setup
 * (common.c) and each topic's entry point.  Internal to tests/kernel/;
 * main.c describes the test.
 */
#ifndef __TEST_KERNEL_H
#define __TEST_KERNEL_H

#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <poll.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "sf_common.h"
#include "sf_pins.h"
#include "sf_target.h"
#include "sf_progstats.h"
#include "sf_engine.h"
#include "sf_preempt.h"
#include "satfeed.skel.h"
#include "satfeed_test.skel.h"
#include "window_math.h"
#include "sf_test.h"

/* the age bound the next engine opened gets; 0: the engine's default */
extern __u64 test_max_age_ns;

struct satfeed_bpf *open_engine(__u32 shift, const char *const *progs);
struct satfeed_bpf *start_engine(__u32 shift, bool understudies);
struct satfeed_bpf *start_engine_mode(__u32 shift, __u32 mode,
				      bool understudies, bool *refused);
bool engine_maps(struct satfeed_bpf *skel, struct sf_pins *p);
int read_stream(const struct sf_pins *p, __u32 slot, __u32 stream,
		struct satfeed_stream *st, bool locked);
int watch_self(const struct sf_pins *p, int *slot);
struct sockaddr_in;
int listen_tcp(struct sockaddr_in *a);
int connect_tcp(const struct sockaddr_in *a);
int udp_pair(int rcvbuf, int *srv, int *cli);
/* A loopback TCP listener (*lfd), a client connected to it (*cli) and the
 * server's side accepted (*srv), each -1 when not made; true when all
 * three were.  The caller closes those >= 0. */
bool tcp_accepted(int *lfd, int *cli, int *srv);
/* Close those of tcp_accepted()'s fds that are open (>= 0). */
void tcp_close(int lfd, int cli, int srv);
/* An engine whose age bound is max_age_ns (ticks every half of it), this
 * process watched, check() run on it, the engine destroyed. */
void with_self_watched(__u64 max_age_ns,
		       void (*check)(const struct sf_pins *p, int slot));
/* CLOCK_MONOTONIC, ns: the engine's clock (bpf_ktime_get_ns()) */
__u64 now_ns(void);
/* Read slot's verdict right after its next tick (ticks every period_ns / 2);
 * false when none came within 5 periods or the read failed. */
bool next_tick(const struct sf_pins *p, int slot, __u64 period_ns,
	       struct satfeed_verdict *v);
/* Entries of the hash map fd (keys up to 64 bytes, at most 100000), -1
 * when it cannot be read. */
long map_entries(int fd);

void test_window_feed(__u32 shift);
void test_concurrency(bool understudies);
void test_stale_wait(void);
void test_run_delay(void);
void test_fd_high_bits(void);
void test_compat(void);
void test_proc_exit(void);
void test_uring(void);
void test_uring_prearmed(void);
void test_send_members(void);
void test_age(void);
void test_responses(void);
void test_verdict_tick(void);
void test_udp_drops(void);
void test_unread(void);

#endif /* __TEST_KERNEL_H */
