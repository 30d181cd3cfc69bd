/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sfserver.h - what the parts of sfserver share: the configuration, a
 * connection and a worker, the event fds, and each part's entry points.
 * Internal to tools/workload/sfserver/; main.c describes the server.
 */
#ifndef SFSERVER_H
#define SFSERVER_H

#define _GNU_SOURCE
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "sf_proto.h"
#define SF_CLI_PROG "sfserver"
#include "sf_cli.h"
#include "sf_loop.h"

#define SF_MAX_THREADS		256
#define SF_DEFAULT_PORT		9700
#define CONN_BUF_SIZE		4096		/* 128 requests */
#define MAX_EVENTS		64
#define MAX_READS_PER_EVENT	16
/* out of file descriptors: stop accepting this long, then try again */
#define ACCEPT_BACKOFF_MS	100

#define EXIT_BADARGS		2

enum io_mode {
	IO_SENDTO,	/* recvfrom(2) / sendto(2) */
	IO_RW,		/* read(2) / write(2) */
	IO_MSG,		/* recvmsg(2) / sendmsg(2) */
	IO_SPLICE,	/* recvfrom(2) / splice(2) from a pipe */
	IO_SENDFILE,	/* recvfrom(2) / writev(2) of the first half and
			 * sendfile(2) of the second: two sends a response,
			 * as a web server sends headers and a file */
	IO_URING,	/* io_uring RECV / SEND (uring.c) */
	IO_URING_MS,	/* io_uring multishot RECV / SEND */
};

/* IO_SENDFILE: the bytes of a response that writev sends, the rest is the
 * "body" that sendfile sends from the connection's memfd */
#define SF_HEAD_SIZE		(SF_MSG_SIZE / 2)

/* Tags for epoll_event.data.ptr that are not connections. */
enum ev_kind {
	EV_LISTEN,
	EV_SIGNAL,
	EV_TIMER,
	EV_BACKOFF,
	EV_STOP,
	EV_CONN,
};

struct conn {
	enum ev_kind kind;	/* EV_CONN; must be first */
	int fd;
	struct worker *w;
	struct conn *prev, *next;
	size_t in_len;		/* bytes buffered in in[] */
	size_t in_off;		/* next unparsed byte in in[] */
	size_t out_len;		/* unsent bytes of one response in out[] */
	size_t out_off;
	int body_fd;		/* IO_SENDFILE: memfd holding the body */
	int pipe_fd[2];		/* IO_SPLICE: the response, spliced out */
	int backend_fd;		/* --proxy: this connection's own backend
				 * connection (blocking), -1 without */
	bool waiting;		/* received since the last response */
	unsigned long long recv_ns;	/* its first receive returned */
	unsigned char out[SF_MSG_SIZE];
	unsigned char in[CONN_BUF_SIZE];
};

struct worker {
	int id;
	int epfd;
	pthread_t thread;
	bool started;
	pthread_mutex_t lock;	/* protects conns (acceptor inserts) */
	struct conn *conns;
	unsigned long long served;
	unsigned long long accepted;
	/* service time: responses (a connection's first send after a
	 * receive) and the sum of their times from that first receive */
	unsigned long long svc_n;
	unsigned long long svc_ns;
};

struct config {
	const char *addr;
	unsigned int port;
	const char *port_file;
	unsigned int work_us;
	unsigned int threads;
	double duration;
	enum io_mode io;
	bool quiet;
	const char *proxy;		/* --proxy HOST:PORT, NULL: serve */
	struct sockaddr_storage ss;	/* --addr and --port, parsed */
	socklen_t sslen;
	struct sockaddr_storage proxy_ss;	/* --proxy, parsed */
	socklen_t proxy_sslen;
};

extern struct config cfg;

/* the event loops' fds and epoll tags (loop.c) */
extern enum ev_kind tag_listen, tag_signal, tag_timer, tag_backoff, tag_stop;
extern int stop_fd, listen_fd, signal_fd, timer_fd, backoff_fd;
extern struct worker *workers;

/* args.c */
void parse_args(int argc, char **argv);

/* conn.c */
void answer(const unsigned char *req, unsigned char *out);
void in_compact(unsigned char *in, size_t *len, size_t *off);
void conn_close(struct conn *c);
void conn_event(struct conn *c, unsigned int events);
int conn_add(int fd);

/* loop.c */
void request_stop(void);
void *worker_run(void *arg);

/* uring.c: the io_uring modes' loop, on the calling thread */
int uring_run(unsigned long long *served, unsigned long long *conns);

static inline bool io_is_uring(enum io_mode io)
{
	return io == IO_URING || io == IO_URING_MS;
}

/* proxy.c: --proxy's backend connections */
void parse_proxy(const char *arg);
int proxy_connect(void);
int proxy_forward(struct conn *c, const unsigned char *req,
		  unsigned char *out);

/* listen.c */
int write_port_file(const char *path, unsigned int port);
int open_listener(void);

#endif /* SFSERVER_H */
