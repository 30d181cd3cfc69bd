/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sfload.h - what the parts of sfload share: the configuration, a
 * connection, the run's arrays and flags, the result, the random numbers,
 * and each part's entry points.  Internal to tools/workload/sfload/; main.c
 * describes the load generator.
 */
#ifndef SFLOAD_H
#define SFLOAD_H

#define _GNU_SOURCE
#include <arpa/inet.h>
#include <ctype.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "sf_proto.h"
#define SF_CLI_PROG "sfload"
#include "sf_cli.h"
#include "sf_loop.h"
#include "sfload_hist.h"

#define NSEC			1000000000ull
#define MAX_CONNECTIONS		1024
#define MAX_REQUESTS		50000000ull
#define MAX_RATE		1e8
#define MAX_VALUE_SIZE		(512 * 1024)
#define MC_MAX_LINE		512
#define CONNECT_TIMEOUT_NS	(2 * NSEC)
#define PRELOAD_BATCH		256
#define SEND_TIMEOUT_US		100000	/* sender re-checks its deadline */
#define SLEEP_CHUNK_NS		(NSEC / 10)
#define IDLE_POLL_NS		20000	/* --no-pipeline: all pending */
#define MAX_EVENTS		64
#define REQ_EXTRA		1024	/* request bytes beyond a value */
#define MAX_PATH_LEN		256	/* --path */
#define MAX_ZONE_LEN		200	/* --zone */

#define EXIT_RUNTIME		1
#define EXIT_BADARGS		2
#define EXIT_INTERRUPTED	130

enum proto {
	PROTO_SF,
	PROTO_MEMCACHED,
	PROTO_HTTP,		/* http.c */
	PROTO_DNS,		/* dns.c: UDP */
};

struct config {
	double rate;
	unsigned int connections;
	double duration;
	double warmup;
	double drain;
	enum proto proto;
	unsigned int work_us;
	unsigned int keys;
	double set_ratio;
	unsigned int value_size;
	const char *path;	/* http: the path every GET asks for */
	const char *zone;	/* dns: the names asked are q<i>.<zone> */
	bool poisson;
	bool no_pipeline;	/* at most one request pending per connection */
	uint64_t spin_ns;
	uint64_t seed;
	bool json;
	int progress;		/* -1: auto, 0: off, 1: on */
	bool allow_any;
	const char *allow_addr;
	const char *target;
	char host[256];
	char port[16];
};

struct conn {
	int fd;
	unsigned int index;
	bool send_dead;		/* sender only */
	atomic_bool pending;	/* --no-pipeline: set by the sender when it
				 * sends, cleared by the receiver at the reply */
	bool closed;		/* receiver only, as are the fields below */
	uint64_t nrecv;		/* replies seen (memcached matching) */
	size_t len;
	size_t size;
	unsigned char *buf;
};

struct run {
	uint64_t n;		/* scheduled requests */
	uint64_t *sched;	/* due time, ns after start */
	uint64_t *sent;		/* actual send time, 0 = not sent (sender) */
	uint64_t *rcv;		/* reply time, 0 = none (receiver) */
	uint8_t *err;		/* 1 = error reply (receiver) */
	uint64_t start;
	uint64_t sched_end;	/* warmup + duration, ns */
	uint64_t hard_deadline;
	struct conn *conns;
	int done_fd;
	/* Written by the sender, read after sender_done (acquire). */
	uint64_t stopped_at;	/* first request not attempted */
	uint64_t sender_end;
	bool aborted;
	bool send_failed;
	atomic_uint_least64_t nsent;
	atomic_bool sender_done;
	atomic_int stop;	/* 1: stop sending, 2: stop everything */
	/* Receiver only. */
	uint64_t nmatched;
	uint64_t bad_replies;
	uint64_t misses;
	unsigned int open_conns;
	bool lost_conn;
	bool interrupted;
};

struct result {
	double window_s;
	uint64_t requests;
	uint64_t sent;
	uint64_t replies;
	uint64_t errors;
	uint64_t error_replies;
	uint64_t unsent;
	uint64_t timeouts;
	uint64_t window_replies;
	double scheduled_rps;
	double sent_rps;
	double achieved_rps;
	double served_rps;
	struct hist lat;	/* from scheduled send time */
	struct hist lat_send;	/* from actual send time */
};

extern struct config cfg;
extern struct run run;

/* splitmix64 */
static inline uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Uniform in (0, 1]. */
static inline double rng_unit(uint64_t *s)
{
	return (double)((rng_next(s) >> 11) + 1) * 0x1p-53;
}

/* args.c */
void parse_args(int argc, char **argv);

/* conn.c */
int open_connections(void);
int send_all(int fd, const unsigned char *p, size_t len);

/* proto.c */
const char *proto_name(void);
int mc_parse(const unsigned char *p, size_t len, size_t *used, bool *is_err,
	     bool *miss);
size_t build_request(unsigned char *buf, uint64_t i, uint64_t t,
		     uint64_t *rng, const unsigned char *value);
int mc_preload(unsigned char *value);

/* http.c */
size_t http_build_request(unsigned char *buf, size_t cap);
int http_parse(const unsigned char *p, size_t len, size_t *used,
	       bool *is_err);

/* dns.c */
size_t dns_build_query(unsigned char *buf, size_t cap, uint64_t i);
int dns_parse(const unsigned char *p, size_t len, uint64_t *idx,
	      bool *is_err);

/* send.c */
void *sender_run(void *arg);

/* recv.c */
void receive_loop(int epfd, int sigfd);

/* schedule.c */
int build_schedule(void);
void analyse(struct result *r);

/* report.c */
void report_json(const struct result *r);
void report_text(const struct result *r);

#endif /* SFLOAD_H */
