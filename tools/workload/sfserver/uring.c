// SPDX-License-Identifier: GPL-2.0
/*
 * uring.c - the io_uring modes (--io uring, --io uring-ms): the same
 * protocol and the same one-send-per-request rule, through one io_uring
 * ring on one thread (liburing).
 *
 * Every connection has at most one SEND in flight: a request's response is
 * sent with exactly one IORING_OP_SEND (a second one only for the rest of
 * a short send, like the epoll loop's EAGAIN case), and the next buffered
 * request is served when that SEND completes.  Receives:
 *  - uring: one IORING_OP_RECV into the connection's buffer at a time,
 *    armed again after its data is served;
 *  - uring-ms: one multishot RECV per connection (IORING_RECV_MULTISHOT)
 *    with buffers from a provided-buffer ring; every CQE carries one buffer
 *    of data, copied into the connection's buffer and given back.  The
 *    kernel ends a multishot receive when the ring runs out of buffers
 *    (-ENOBUFS) or on EOF; it is armed again in the first case.
 * Accept is an IORING_OP_ACCEPT re-armed after each connection; SIGINT,
 * SIGTERM and --duration come in as reads of the signalfd and timerfd.
 * The loop waits with io_uring_submit_and_wait(): one io_uring_enter(2)
 * with IORING_ENTER_GETEVENTS per round, which satfeed counts as a wait.
 */
#include "sfserver.h"
#include <liburing.h>

#define UR_ENTRIES	256
#define UR_BUFS		256		/* provided buffers (uring-ms) */
#define UR_BUF_SIZE	512
#define UR_BGID		1

enum ur_tag {		/* low 3 bits of user_data; the rest: a pointer */
	UR_ACCEPT = 1,
	UR_SIGNAL = 2,
	UR_TIMER = 3,
	UR_BACKOFF = 4,
	UR_RECV = 5,
	UR_SEND = 6,
};

struct ur_conn {
	int fd;
	bool recv_armed;	/* a RECV (or multishot RECV) in flight */
	bool send_armed;	/* a SEND in flight */
	bool closing;		/* EOF or error seen: close once idle */
	size_t in_len, in_off;
	size_t out_len, out_off;
	unsigned char out[SF_MSG_SIZE];
	unsigned char in[CONN_BUF_SIZE * 4];
};

static struct io_uring ring;
static struct io_uring_buf_ring *br;
static unsigned char *bufs;
static unsigned long long served, accepted;
static bool stopping;
static unsigned long long sigbuf[16], timerbuf;

static struct io_uring_sqe *ur_sqe(void)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);

	if (!sqe) {		/* full: hand the queue to the kernel */
		io_uring_submit(&ring);
		sqe = io_uring_get_sqe(&ring);
	}
	return sqe;
}

static void ur_set(struct io_uring_sqe *sqe, void *p, enum ur_tag tag)
{
	io_uring_sqe_set_data64(sqe, (__u64)(uintptr_t)p | tag);
}

static void arm_accept(void)
{
	struct io_uring_sqe *sqe = ur_sqe();

	io_uring_prep_accept(sqe, listen_fd, NULL, NULL, SOCK_CLOEXEC);
	ur_set(sqe, NULL, UR_ACCEPT);
}

static void arm_read(int fd, void *buf, size_t len, enum ur_tag tag)
{
	struct io_uring_sqe *sqe = ur_sqe();

	io_uring_prep_read(sqe, fd, buf, len, 0);
	ur_set(sqe, NULL, tag);
}

static void arm_recv(struct ur_conn *c)
{
	struct io_uring_sqe *sqe = ur_sqe();

	if (cfg.io == IO_URING_MS) {
		io_uring_prep_recv_multishot(sqe, c->fd, NULL, 0, 0);
		sqe->flags |= IOSQE_BUFFER_SELECT;
		sqe->buf_group = UR_BGID;
	} else {
		io_uring_prep_recv(sqe, c->fd, c->in + c->in_len,
				   sizeof(c->in) - c->in_len, 0);
	}
	ur_set(sqe, c, UR_RECV);
	c->recv_armed = true;
}

static void arm_send(struct ur_conn *c)
{
	struct io_uring_sqe *sqe = ur_sqe();

	io_uring_prep_send(sqe, c->fd, c->out + c->out_off,
			   c->out_len - c->out_off, MSG_NOSIGNAL);
	ur_set(sqe, c, UR_SEND);
	c->send_armed = true;
}

static void conn_done(struct ur_conn *c)
{
	if (c->recv_armed || c->send_armed)
		return;		/* its last CQE will come back here */
	close(c->fd);
	free(c);
}

/*
 * Serve the next complete request buffered in c, if any: spin, send.  When
 * none is left, keep the partial one at the front and receive again.
 */
static void conn_next(struct ur_conn *c)
{
	if (c->closing || stopping) {
		conn_done(c);
		return;
	}
	if (c->in_len - c->in_off >= SF_MSG_SIZE) {
		answer(c->in + c->in_off, c->out);
		c->out_len = SF_MSG_SIZE;
		c->out_off = 0;
		c->in_off += SF_MSG_SIZE;
		served++;
		arm_send(c);
		return;
	}
	in_compact(c->in, &c->in_len, &c->in_off);
	if (cfg.io != IO_URING_MS && !c->recv_armed)
		arm_recv(c);
}

static void on_accept(int res)
{
	struct ur_conn *c;
	int one = 1;

	if (stopping)
		return;
	if (res < 0) {
		if (res == -EMFILE || res == -ENFILE || res == -ENOBUFS ||
		    res == -ENOMEM) {
			/* out of fds: wait, then accept again */
			static struct __kernel_timespec ts = {
				.tv_nsec = ACCEPT_BACKOFF_MS * 1000000L,
			};
			struct io_uring_sqe *sqe = ur_sqe();

			io_uring_prep_timeout(sqe, &ts, 0, 0);
			ur_set(sqe, NULL, UR_BACKOFF);
			return;
		}
		arm_accept();
		return;
	}
	arm_accept();
	c = calloc(1, sizeof(*c));
	if (!c) {
		close(res);
		return;
	}
	c->fd = res;
	accepted++;
	setsockopt(res, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	arm_recv(c);
}

static void ms_give_back(unsigned int bid)
{
	io_uring_buf_ring_add(br, bufs + (size_t)bid * UR_BUF_SIZE,
			      UR_BUF_SIZE, bid,
			      io_uring_buf_ring_mask(UR_BUFS), 0);
	io_uring_buf_ring_advance(br, 1);
}

static void on_recv(struct ur_conn *c, int res, unsigned int flags)
{
	bool more = flags & IORING_CQE_F_MORE;

	if (!more)
		c->recv_armed = false;
	if (res > 0 && cfg.io == IO_URING_MS) {
		unsigned int bid = flags >> IORING_CQE_BUFFER_SHIFT;
		size_t room = sizeof(c->in) - c->in_len;

		if ((size_t)res > room) {	/* client far ahead: drop it */
			c->closing = true;
		} else {
			memcpy(c->in + c->in_len,
			       bufs + (size_t)bid * UR_BUF_SIZE, res);
			c->in_len += res;
		}
		ms_give_back(bid);
		if (!more && !c->closing && !stopping)
			arm_recv(c);	/* ended early: re-arm */
	} else if (res > 0) {
		c->in_len += res;
	} else if (res == -ENOBUFS && cfg.io == IO_URING_MS) {
		if (!stopping)
			arm_recv(c);	/* the buffers ran out: re-arm */
		return;
	} else if (res != -EINTR && res != -EAGAIN) {
		c->closing = true;	/* EOF or error */
	} else if (!more) {
		arm_recv(c);
		return;
	}
	if (!c->send_armed)
		conn_next(c);
}

static void on_send(struct ur_conn *c, int res)
{
	c->send_armed = false;
	if (res < 0) {
		c->closing = true;
	} else {
		c->out_off += res;
		if (c->out_off < c->out_len && !stopping) {
			arm_send(c);	/* short send: the rest */
			return;
		}
	}
	conn_next(c);
}

static int setup_buffers(void)
{
	struct io_uring_buf_reg reg = { 0 };
	size_t ring_size = UR_BUFS * sizeof(struct io_uring_buf);

	br = mmap(NULL, ring_size, PROT_READ | PROT_WRITE,
		  MAP_ANONYMOUS | MAP_PRIVATE, -1, 0);
	bufs = malloc((size_t)UR_BUFS * UR_BUF_SIZE);
	if (br == MAP_FAILED || !bufs)
		return -ENOMEM;
	reg.ring_addr = (unsigned long)br;
	reg.ring_entries = UR_BUFS;
	reg.bgid = UR_BGID;
	if (io_uring_register_buf_ring(&ring, &reg, 0))
		return -errno ? -errno : -EINVAL;
	io_uring_buf_ring_init(br);
	for (unsigned int i = 0; i < UR_BUFS; i++)
		io_uring_buf_ring_add(br, bufs + (size_t)i * UR_BUF_SIZE,
				      UR_BUF_SIZE, i,
				      io_uring_buf_ring_mask(UR_BUFS), i);
	io_uring_buf_ring_advance(br, UR_BUFS);
	return 0;
}

int uring_run(unsigned long long *served_out, unsigned long long *conns_out)
{
	struct io_uring_params p = { .flags = 0 };
	int err;

	p.cq_entries = UR_ENTRIES * 16;
	p.flags |= IORING_SETUP_CQSIZE;
	err = io_uring_queue_init_params(UR_ENTRIES, &ring, &p);
	if (err) {
		fprintf(stderr, "sfserver: io_uring_setup: %s\n",
			strerror(-err));
		return -1;
	}
	if (cfg.io == IO_URING_MS) {
		err = setup_buffers();
		if (err) {
			fprintf(stderr, "sfserver: cannot register the provided buffers (multishot receive needs Linux 6.0): %s\n",
				strerror(-err));
			io_uring_queue_exit(&ring);
			return -1;
		}
	}
	arm_accept();
	arm_read(signal_fd, sigbuf, sizeof(sigbuf), UR_SIGNAL);
	if (cfg.duration > 0)
		arm_read(timer_fd, &timerbuf, sizeof(timerbuf), UR_TIMER);

	while (!stopping) {
		struct io_uring_cqe *cqe;
		unsigned int head, n = 0;

		err = io_uring_submit_and_wait(&ring, 1);
		if (err < 0 && err != -EINTR && err != -EAGAIN &&
		    err != -EBUSY) {
			fprintf(stderr, "sfserver: io_uring_enter: %s\n",
				strerror(-err));
			break;
		}
		io_uring_for_each_cqe(&ring, head, cqe) {
			__u64 ud = cqe->user_data;
			void *ptr = (void *)(uintptr_t)(ud & ~7ULL);

			n++;
			switch (ud & 7) {
			case UR_ACCEPT:
				on_accept(cqe->res);
				break;
			case UR_BACKOFF:
				if (!stopping)
					arm_accept();
				break;
			case UR_SIGNAL:
			case UR_TIMER:
				stopping = true;
				break;
			case UR_RECV:
				on_recv(ptr, cqe->res, cqe->flags);
				break;
			case UR_SEND:
				on_send(ptr, cqe->res);
				break;
			}
		}
		io_uring_cq_advance(&ring, n);
	}
	/* connections still open are closed with the ring */
	io_uring_queue_exit(&ring);
	*served_out = served;
	*conns_out = accepted;
	return 0;
}
