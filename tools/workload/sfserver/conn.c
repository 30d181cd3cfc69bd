// SPDX-License-Identifier: GPL-2.0
/*
 * conn.c - one connection: read the requests, spin their service time and
 * answer each with exactly one send, back off to EPOLLOUT when a send would
 * block; and hand new connections to the workers round-robin.  The answer
 * itself (answer(), in_compact()) serves the io_uring loop too.
 *
 * Service time, as satfeed's engine defines it (satfeed.h,
 * SATFEED_STREAM_SVC): on each connection, from the return of the first
 * receive that moved bytes after the previous response to the return of
 * the first send that moves bytes after it (that send is the response).
 * Requests that arrived in the same receive as an earlier one are answered
 * by sends that are no response in that sense, and are not counted either.
 */
#include "sfserver.h"

static unsigned int next_worker;

/* Busy-spin: clock_gettime() is a vDSO call, so this makes no system call. */
static void spin_us(unsigned int us)
{
	unsigned long long end = sf_now_ns() + us * 1000ull;

	while (sf_now_ns() < end)
			 ;
}

/*
 * Serve the request at req into out (SF_MSG_SIZE bytes): spin its service
 * time (its own, else --work-us; at most SF_MAX_WORK_US) and write the
 * response.  Both loops, epoll's and io_uring's (uring.c), answer here, so
 * the two serve alike.
 */
void answer(const unsigned char *req, unsigned char *out)
{
	unsigned int work = sf_msg_work_us(req);

	if (!work)
		work = cfg.work_us;
	if (work > SF_MAX_WORK_US)
		work = SF_MAX_WORK_US;
	if (work)
		spin_us(work);
	sf_msg_put(out, sf_msg_id(req), sf_msg_send_time(req), work);
}

/*
 * Drop the served bytes of an input buffer: the partial request, if any,
 * moves to its start.  *len bytes are buffered, *off of them served.
 */
void in_compact(unsigned char *in, size_t *len, size_t *off)
{
	if (!*off)
		return;
	memmove(in, in + *off, *len - *off);
	*len -= *off;
	*off = 0;
}

static ssize_t conn_recv(int fd, void *buf, size_t len)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };

	switch (cfg.io) {
	case IO_RW:
		return read(fd, buf, len);
	case IO_MSG:
		return recvmsg(fd, &msg, 0);
	default:
		return recvfrom(fd, buf, len, 0, NULL, NULL);
	}
}

/*
 * Send more of c's response, from byte c->out_off on: one system call.
 * The bytes of the response are c->out[] (IO_SPLICE: also in c's pipe;
 * IO_SENDFILE: the body also in c's memfd).
 */
static ssize_t conn_send(struct conn *c)
{
	const void *buf = c->out + c->out_off;
	size_t len = c->out_len - c->out_off;
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	int fd = c->fd;
	off_t pos;

	switch (cfg.io) {
	case IO_SPLICE:
		return splice(c->pipe_fd[0], NULL, fd, NULL, len,
			      SPLICE_F_NONBLOCK | SPLICE_F_MOVE);
	case IO_SENDFILE:
		if (c->out_off < SF_HEAD_SIZE) {
			iov.iov_len = SF_HEAD_SIZE - c->out_off;
			return writev(fd, &iov, 1);
		}
		pos = c->out_off - SF_HEAD_SIZE;
		return sendfile(fd, c->body_fd, &pos, len);
	default:
		break;
	}
	switch (cfg.io) {
	case IO_RW:
		return write(fd, buf, len);	/* SIGPIPE is ignored */
	case IO_MSG:
		return sendmsg(fd, &msg, MSG_NOSIGNAL);
	default:
		return sendto(fd, buf, len, MSG_NOSIGNAL, NULL, 0);
	}
}

static int conn_set_events(struct conn *c, unsigned int events)
{
	struct epoll_event ev = { .events = events, .data.ptr = c };

	return epoll_ctl(c->w->epfd, EPOLL_CTL_MOD, c->fd, &ev);
}

void conn_close(struct conn *c)
{
	struct worker *w = c->w;

	pthread_mutex_lock(&w->lock);
	if (c->prev)
		c->prev->next = c->next;
	else
		w->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	pthread_mutex_unlock(&w->lock);
	close(c->fd);
	if (c->backend_fd >= 0)
		close(c->backend_fd);
	if (c->body_fd >= 0)
		close(c->body_fd);
	if (c->pipe_fd[0] >= 0) {
		close(c->pipe_fd[0]);
		close(c->pipe_fd[1]);
	}
	free(c);
}

/*
 * After a recv or send that failed with other than EINTR: 0 when the socket
 * would only have blocked, -1 on an error.
 */
static int would_block_or_error(void)
{
	return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
}

/*
 * Send what is left of the current response.  Returns 1 when it is all out,
 * 0 when the socket is full (the rest stays in c->out), -1 on error.
 */
static int conn_flush(struct conn *c)
{
	ssize_t n;

	while (c->out_off < c->out_len) {
		n = conn_send(c);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return would_block_or_error();
		}
		if (n > 0 && c->waiting) {
			/* the response: its service time */
			c->waiting = false;
			c->w->svc_n++;
			c->w->svc_ns += sf_now_ns() - c->recv_ns;
		}
		c->out_off += n;
	}
	c->out_len = 0;
	c->out_off = 0;
	return 1;
}

/*
 * Put the response in c->out where conn_send() takes it from: the pipe
 * (IO_SPLICE) or the memfd (IO_SENDFILE's body).  Neither write is on a
 * socket, so satfeed does not count it.  0 or -1.
 */
static int conn_stage(struct conn *c)
{
	if (cfg.io == IO_SPLICE)
		return write(c->pipe_fd[1], c->out, c->out_len) ==
		       (ssize_t)c->out_len ? 0 : -1;
	if (cfg.io == IO_SENDFILE)
		return pwrite(c->body_fd, c->out + SF_HEAD_SIZE,
			      c->out_len - SF_HEAD_SIZE, 0) ==
		       (ssize_t)(c->out_len - SF_HEAD_SIZE) ? 0 : -1;
	return 0;
}

/*
 * Serve every complete request buffered in c->in, one send per request.
 * Returns 1 when all were answered, 0 when a send would block, -1 on error.
 */
static int conn_serve(struct conn *c)
{
	int ret;

	while (c->in_len - c->in_off >= SF_MSG_SIZE) {
		if (!cfg.proxy)
			answer(c->in + c->in_off, c->out);
		else if (proxy_forward(c, c->in + c->in_off, c->out))
			return -1;
		c->out_len = SF_MSG_SIZE;
		c->out_off = 0;
		if (conn_stage(c))
			return -1;
		c->in_off += SF_MSG_SIZE;
		c->w->served++;

		ret = conn_flush(c);
		if (ret <= 0)
			return ret;
	}
	in_compact(c->in, &c->in_len, &c->in_off);
	return 1;
}

/* Returns -1 when the connection must be closed. */
static int conn_readable(struct conn *c)
{
	unsigned int reads;
	ssize_t n;
	int ret;

	for (reads = 0; reads < MAX_READS_PER_EVENT; reads++) {
		n = conn_recv(c->fd, c->in + c->in_len,
			      sizeof(c->in) - c->in_len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return would_block_or_error();
		}
		if (n == 0)
			return -1;	/* peer closed */
		if (!c->waiting) {
			/* a request's first receive */
			c->recv_ns = sf_now_ns();
			c->waiting = true;
		}
		c->in_len += n;
		ret = conn_serve(c);
		if (ret < 0)
			return -1;
		if (ret == 0)
			/* Blocked on send: stop reading until it drains. */
			return conn_set_events(c, EPOLLOUT);
	}
	return 0;
}

static int conn_writable(struct conn *c)
{
	int ret;

	ret = conn_flush(c);
	if (ret <= 0)
		return ret;
	ret = conn_serve(c);
	if (ret <= 0)
		return ret;
	return conn_set_events(c, EPOLLIN);
}

void conn_event(struct conn *c, unsigned int events)
{
	int ret;

	if (c->out_len)
		ret = (events & (EPOLLOUT | EPOLLERR | EPOLLHUP)) ?
		      conn_writable(c) : 0;
	else
		ret = conn_readable(c);
	if (ret < 0)
		conn_close(c);
}

/*
 * Hand a new connection to the next worker, round-robin (--proxy: with its
 * own backend connection).  -1 when it could not be: fd is closed and the
 * reason printed.
 */
int conn_add(int fd)
{
	struct epoll_event ev = { .events = EPOLLIN };
	struct worker *w = &workers[next_worker];
	struct conn *c;
	int one = 1;

	next_worker = (next_worker + 1) % cfg.threads;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	c = calloc(1, sizeof(*c));
	if (!c) {
		fprintf(stderr, "sfserver: out of memory\n");
		close(fd);
		return -1;
	}
	c->kind = EV_CONN;
	c->fd = fd;
	c->w = w;
	c->body_fd = c->pipe_fd[0] = c->pipe_fd[1] = c->backend_fd = -1;
	if (cfg.proxy && (c->backend_fd = proxy_connect()) < 0) {
		close(fd);
		free(c);
		return -1;
	}
	if ((cfg.io == IO_SENDFILE &&
	     (c->body_fd = memfd_create("sfserver-body", MFD_CLOEXEC)) < 0) ||
	    (cfg.io == IO_SPLICE && pipe2(c->pipe_fd, O_CLOEXEC))) {
		fprintf(stderr, "sfserver: %s: %s\n",
			cfg.io == IO_SPLICE ? "pipe2" : "memfd_create",
			strerror(errno));
		c->pipe_fd[0] = c->pipe_fd[1] = -1;
		if (c->backend_fd >= 0)
			close(c->backend_fd);
		close(fd);
		free(c);
		return -1;
	}

	pthread_mutex_lock(&w->lock);
	c->next = w->conns;
	if (w->conns)
		w->conns->prev = c;
	w->conns = c;
	w->accepted++;
	pthread_mutex_unlock(&w->lock);

	ev.data.ptr = c;
	if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, fd, &ev)) {
		fprintf(stderr, "sfserver: epoll_ctl: %s\n", strerror(errno));
		conn_close(c);
	}
	return 0;
}
