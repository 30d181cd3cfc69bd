// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * uring.c - io_uring operations of a watched process, counted exactly.
 *
 * The engine as the loader starts it (tp_btf mode, with the io_uring
 * programs), this process watched with the io_uring members only, so that
 * the plain syscalls the test makes to feed and drain its sockets count
 * nothing.  Each step makes a known set of operations and checks the
 * stream counters moved by exactly that:
 *  - SEND, SENDMSG and WRITE on a socket: one send sample per CQE, also
 *    when io-wq runs the request (IOSQE_ASYNC: the CQE is posted by an
 *    io-wq worker, not by this thread);
 *  - WRITE and READ on a pipe: not_socket, no sample;
 *  - RECV and READ on a socket: one recv sample each;
 *  - a multishot RECV: one recv sample per CQE the test reaps with data,
 *    its end at EOF counted as zero_bytes, and its entry in sf_uring_ms
 *    gone afterwards;
 *  - SEND on a socket whose peer is closed: errors;
 *  - io_uring_enter with IORING_ENTER_GETEVENTS: one poll sample per call
 *    that slept (a timeout's completion waited for), with the time it
 *    slept; one that found its completion there (a NOP's) adds no wait
 *    and no waited time (where the kernel has io_uring_cqring_wait; else
 *    one sample per call, the engine's behaviour there); without
 *    GETEVENTS, none;
 *  - a child process (another tgid, not watched) doing the same: nothing.
 */
#include "test_kernel.h"
#include <liburing.h>
#include <sys/mman.h>

#define UR_N		24	/* operations per step */
#define UR_BUFS		16
#define UR_BUF_SIZE	64
#define UR_SLEEPS	3		/* io_uring waits that sleep */
#define UR_SLEEP_NS	20000000	/* each, at least (a timeout) */

struct ur_counts {
	struct satfeed_stream s[SATFEED_NR_STREAMS];
};

static bool ur_read(const struct sf_pins *p, int slot, struct ur_counts *c)
{
	for (int i = 0; i < SATFEED_NR_STREAMS; i++)
		if (read_stream(p, slot, i, &c->s[i], true))
			return false;
	return true;
}

/* Submit what is queued without waiting (no GETEVENTS), then reap all. */
static int ur_reap(struct io_uring *r, int want, int *res, unsigned int *flags)
{
	struct io_uring_cqe *cqe;
	int got = 0;

	if (io_uring_submit(r) < 0)
		return -1;
	while (got < want) {
		/* peek first: the wait below may then make no syscall */
		if (io_uring_peek_cqe(r, &cqe)) {
			usleep(1000);
			continue;
		}
		if (res)
			res[got] = cqe->res;
		if (flags)
			flags[got] = cqe->flags;
		got++;
		io_uring_cqe_seen(r, cqe);
	}
	return got;
}

/* The same operations from a child: another tgid, not a target. */
static void ur_child(void)
{
	struct io_uring r;
	int sv[2];
	char b[8] = "abcdefg";

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) ||
	    io_uring_queue_init(64, &r, 0))
		_exit(1);
	for (int i = 0; i < UR_N; i++)
		io_uring_prep_send(io_uring_get_sqe(&r), sv[0], b, 8, 0);
	io_uring_submit_and_wait(&r, UR_N);
	_exit(0);
}

/* A multishot RECV and its provided buffers (group bgid). */
struct ur_ms {
	struct io_uring_buf_ring *br;
	char (*bufs)[UR_BUF_SIZE];
	int bgid;
};

/* Register ms's buffers on r and arm a multishot RECV on sock. */
static bool ur_ms_arm(struct io_uring *r, int sock, int bgid, struct ur_ms *ms)
{
	struct io_uring_buf_reg reg = { 0 };
	struct io_uring_sqe *sqe;
	int err;

	ms->bgid = bgid;
	ms->bufs = calloc(UR_BUFS, UR_BUF_SIZE);
	ms->br = mmap(NULL, UR_BUFS * sizeof(struct io_uring_buf),
		      PROT_READ | PROT_WRITE, MAP_ANONYMOUS | MAP_PRIVATE, -1,
		      0);
	if (!ASSERT_TRUE(ms->bufs && ms->br != MAP_FAILED,
			 "buffers for a multishot RECV")) {
		free(ms->bufs);
		ms->bufs = NULL;
		ms->br = MAP_FAILED;
		return false;
	}
	reg.ring_addr = (unsigned long)ms->br;
	reg.ring_entries = UR_BUFS;
	reg.bgid = bgid;
	err = io_uring_register_buf_ring(r, &reg, 0);
	if (!ASSERT_OK(err, "register a buffer ring (multishot RECV)")) {
		munmap(ms->br, UR_BUFS * sizeof(struct io_uring_buf));
		free(ms->bufs);
		ms->bufs = NULL;
		ms->br = MAP_FAILED;
		return false;
	}
	io_uring_buf_ring_init(ms->br);
	for (int i = 0; i < UR_BUFS; i++)
		io_uring_buf_ring_add(ms->br, ms->bufs[i], UR_BUF_SIZE, i,
				      io_uring_buf_ring_mask(UR_BUFS), i);
	io_uring_buf_ring_advance(ms->br, UR_BUFS);
	sqe = io_uring_get_sqe(r);
	io_uring_prep_recv_multishot(sqe, sock, NULL, 0, 0);
	sqe->flags |= IOSQE_BUFFER_SELECT;
	sqe->buf_group = bgid;
	io_uring_sqe_set_data64(sqe, bgid);
	return ASSERT_EQ(io_uring_submit(r), 1, "multishot RECV submitted");
}

/*
 * Write n chunks of 10 bytes to peer, one at a time, each reaped as its own
 * CQE on r; then, with eof, shut peer's writing side and reap the last CQE.
 * Returns the CQEs reaped with data, -1 on error; *end_flags and *end_res
 * get the last CQE's.
 */
static int ur_ms_feed(struct io_uring *r, struct ur_ms *ms, int peer, int n,
		      bool eof, unsigned int *end_flags, int *end_res)
{
	struct io_uring_cqe *cqe;
	int data = 0;

	for (int i = 0; i < n + eof; i++) {
		if (i < n) {
			if (write(peer, "0123456789", 10) != 10)
				return -1;
		} else {
			shutdown(peer, SHUT_WR);	/* EOF: the last CQE */
		}
		while (io_uring_peek_cqe(r, &cqe))
			usleep(500);
		if (cqe->res > 0) {
			unsigned int bid = cqe->flags >>
					   IORING_CQE_BUFFER_SHIFT;

			data++;
			io_uring_buf_ring_add(ms->br, ms->bufs[bid],
					      UR_BUF_SIZE, bid,
					      io_uring_buf_ring_mask(UR_BUFS),
					      0);
			io_uring_buf_ring_advance(ms->br, 1);
		}
		*end_flags = cqe->flags;
		*end_res = cqe->res;
		io_uring_cqe_seen(r, cqe);
		if (!(*end_flags & IORING_CQE_F_MORE))
			break;
	}
	return data;
}

static void ur_ms_release(struct io_uring *r, struct ur_ms *ms)
{
	if (!ms->bufs)
		return;
	io_uring_unregister_buf_ring(r, ms->bgid);
	munmap(ms->br, UR_BUFS * sizeof(struct io_uring_buf));
	free(ms->bufs);
	ms->bufs = NULL;
}

/* Entries in the engine's sf_uring_ms. */
static int ur_ms_entries(struct satfeed_bpf *skel)
{
	return map_entries(bpf_map__fd(skel->maps.sf_uring_ms));
}

/* A multishot RECV on sock, fed UR_N chunks then EOF: data CQEs, -1. */
static int ur_multishot(struct io_uring *r, int sock, int peer,
			unsigned int *end_flags, int *end_res)
{
	struct ur_ms ms;
	int data;

	if (!ur_ms_arm(r, sock, 7, &ms))
		return -1;
	data = ur_ms_feed(r, &ms, peer, UR_N, true, end_flags, end_res);
	ur_ms_release(r, &ms);
	return data;
}

void test_uring(void)
{
	struct ur_counts a, b;
	struct sf_selector self = { .kind = SATFEED_TARGET_PID,
				    .id = getpid() };
	struct satfeed_bpf *skel;
	struct sf_uring_support u;
	struct io_uring r;
	int sv[2], pp[2], slot, res[UR_N * 3], waits, data, end_res = 0;
	unsigned int end_flags = 0;
	char why[512], b8[8] = "abcdefg", rb[4096];
	struct iovec iov = { .iov_base = b8, .iov_len = 8 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct sf_pins p;
	pid_t child;
	int status;

	if (!ASSERT_OK(sf_uring_probe(&u, why, sizeof(why)), why))
		return;
	if (!ASSERT_TRUE(u.tracepoints, "this kernel has the io_uring tracepoints (CONFIG_IO_URING)") ||
	    !ASSERT_TRUE(u.ms_flag, "REQ_F_APOLL_MULTISHOT found in the kernel's BTF"))
		return;
	if (!ASSERT_OK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), "socketpair") ||
	    !ASSERT_OK(pipe(pp), "pipe"))
		return;
	if (!ASSERT_OK(io_uring_queue_init(64, &r, 0), "io_uring_queue_init"))
		goto close_fds;
	skel = start_engine(4, false);
	if (!skel)
		goto exit_ring;
	if (!engine_maps(skel, &p) ||
	    !ASSERT_OK(sf_target_add(&p, &self, SATFEED_SC_URING, &slot, why,
				     sizeof(why)), why))
		goto destroy;

	/* sends: SEND, SENDMSG, WRITE on a socket, and SEND through io-wq */
	ASSERT_TRUE(ur_read(&p, slot, &a), "read streams");
	for (int i = 0; i < UR_N; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&r);

		switch (i % 4) {
		case 0:
			io_uring_prep_send(sqe, sv[0], b8, 8, 0);
			break;
		case 1:
			io_uring_prep_sendmsg(sqe, sv[0], &msg, 0);
			break;
		case 2:
			io_uring_prep_write(sqe, sv[0], b8, 8, 0);
			break;
		default:
			io_uring_prep_send(sqe, sv[0], b8, 8, 0);
			sqe->flags |= IOSQE_ASYNC;	/* run by io-wq */
			break;
		}
	}
	ASSERT_EQ(ur_reap(&r, UR_N, res, NULL), UR_N, "send CQEs reaped");
	for (int i = 0; i < UR_N; i++)
		ASSERT_EQ(res[i], 8, "each send moved 8 bytes");
	ASSERT_TRUE(ur_read(&p, slot, &b), "read streams");
	ASSERT_EQ(b.s[0].calls - a.s[0].calls, UR_N,
		  "SEND, SENDMSG, WRITE on a socket, SEND by io-wq: one send sample each");
	ASSERT_EQ(b.s[1].calls - a.s[1].calls, 0, "no recv counted");
	ASSERT_EQ(b.s[2].calls - a.s[2].calls, 0,
		  "io_uring_enter without GETEVENTS: no wait counted");
	while (read(sv[1], rb, sizeof(rb)) == sizeof(rb))
		;

	/* receives: RECV and READ on a socket, fed by plain write(2) */
	if (!ASSERT_EQ(write(sv[1], rb, UR_N * 8), UR_N * 8, "feed the socket"))
		goto destroy;
	a = b;
	for (int i = 0; i < UR_N; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&r);

		if (i % 2)
			io_uring_prep_recv(sqe, sv[0], rb, 8, 0);
		else
			io_uring_prep_read(sqe, sv[0], rb, 8, 0);
		sqe->flags |= IOSQE_IO_LINK;	/* in order, 8 bytes each */
	}
	ASSERT_EQ(ur_reap(&r, UR_N, res, NULL), UR_N, "recv CQEs reaped");
	ASSERT_TRUE(ur_read(&p, slot, &b), "read streams");
	ASSERT_EQ(b.s[1].calls - a.s[1].calls, UR_N,
		  "RECV and READ on a socket: one recv sample each");
	ASSERT_EQ(b.s[0].calls - a.s[0].calls, 0, "no send counted");

	/* a pipe: WRITE and READ are not socket operations */
	a = b;
	for (int i = 0; i < UR_N; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&r);

		if (i % 2)
			io_uring_prep_read(sqe, pp[0], rb, 8, 0);
		else
			io_uring_prep_write(sqe, pp[1], b8, 8, 0);
		sqe->flags |= IOSQE_IO_LINK;
	}
	ASSERT_EQ(ur_reap(&r, UR_N, NULL, NULL), UR_N, "pipe CQEs reaped");
	ASSERT_TRUE(ur_read(&p, slot, &b), "read streams");
	ASSERT_EQ(b.s[0].calls - a.s[0].calls, 0, "WRITE on a pipe: no send");
	ASSERT_EQ(b.s[1].calls - a.s[1].calls, 0, "READ on a pipe: no recv");
	ASSERT_EQ(b.s[0].not_socket - a.s[0].not_socket, UR_N / 2,
		  "WRITE on a pipe: not_socket");
	ASSERT_EQ(b.s[1].not_socket - a.s[1].not_socket, UR_N / 2,
		  "READ on a pipe: not_socket");

	/* the wait: io_uring_enter with GETEVENTS.  A NOP completes while
	 * the call submits it, so the call finds its completion without
	 * sleeping: no wait, no waited time */
	a = b;
	waits = 0;
	for (int i = 0; i < UR_N; i++) {
		io_uring_prep_nop(io_uring_get_sqe(&r));
		if (io_uring_submit_and_wait(&r, 1) == 1)
			waits++;
		io_uring_cq_advance(&r, 1);
	}
	ASSERT_EQ(waits, UR_N, "io_uring_submit_and_wait calls");
	ASSERT_TRUE(ur_read(&p, slot, &b), "read streams");
	if (u.cqring_wait) {
		ASSERT_EQ(b.s[2].calls - a.s[2].calls, 0,
			  "io_uring_enter that did not sleep: no wait");
		ASSERT_EQ(b.s[2].wait_total_ns - a.s[2].wait_total_ns, 0,
			  "io_uring_enter that did not sleep: no waited time");
	} else {
		ASSERT_EQ(b.s[2].calls - a.s[2].calls, UR_N,
			  "no io_uring_cqring_wait: every io_uring_enter with GETEVENTS is a wait");
	}
	ASSERT_EQ(b.s[0].calls + b.s[1].calls - a.s[0].calls - a.s[1].calls,
		  0, "NOP: neither send nor recv");

	/* a timeout's completion is waited for: the call sleeps */
	a = b;
	waits = 0;
	for (int i = 0; i < UR_SLEEPS; i++) {
		struct __kernel_timespec ts = { .tv_nsec = UR_SLEEP_NS };

		io_uring_prep_timeout(io_uring_get_sqe(&r), &ts, 0, 0);
		if (io_uring_submit_and_wait(&r, 1) == 1)
			waits++;
		io_uring_cq_advance(&r, 1);
	}
	ASSERT_EQ(waits, UR_SLEEPS, "io_uring_submit_and_wait calls");
	ASSERT_TRUE(ur_read(&p, slot, &b), "read streams");
	ASSERT_EQ(b.s[2].calls - a.s[2].calls, UR_SLEEPS,
		  "io_uring_enter that slept: one wait each");
	ASSERT_TRUE(b.s[2].wait_total_ns - a.s[2].wait_total_ns >=
		    (__u64)UR_SLEEPS * UR_SLEEP_NS,
		    "io_uring waits that slept: waited %llu ns, want >= %llu",
		    (unsigned long long)(b.s[2].wait_total_ns -
					 a.s[2].wait_total_ns),
		    (unsigned long long)UR_SLEEPS * UR_SLEEP_NS);

	/* a child's ring: another process, not a target */
	a = b;
	child = fork();
	if (!child)
		ur_child();
	ASSERT_EQ(waitpid(child, &status, 0), child, "child reaped");
	ASSERT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status),
		    "the child's io_uring sends ran");
	ASSERT_TRUE(ur_read(&p, slot, &b), "read streams");
	ASSERT_EQ(b.s[0].calls - a.s[0].calls, 0,
		  "an unwatched process's ring: nothing counted");

	/* multishot RECV: every CQE with data, then EOF */
	a = b;
	data = ur_multishot(&r, sv[0], sv[1], &end_flags, &end_res);
	ASSERT_TRUE(data >= 1, "multishot RECV delivered data (%d CQEs)", data);
	ASSERT_EQ(end_res, 0, "multishot RECV ended at EOF");
	ASSERT_TRUE(ur_read(&p, slot, &b), "read streams");
	ASSERT_EQ(b.s[1].calls - a.s[1].calls, data,
		  "multishot RECV: one recv sample per CQE with data");
	ASSERT_EQ(b.s[1].zero_bytes - a.s[1].zero_bytes, 1,
		  "multishot RECV's end at EOF: zero_bytes");
	ASSERT_EQ(ur_ms_entries(skel), 0,
		  "the ended multishot RECV is forgotten");

	/* a failed send: the peer is gone */
	a = b;
	close(sv[1]);
	sv[1] = -1;
	io_uring_prep_send(io_uring_get_sqe(&r), sv[0], b8, 8, MSG_NOSIGNAL);
	ASSERT_EQ(ur_reap(&r, 1, res, NULL), 1, "failed send reaped");
	ASSERT_TRUE(res[0] < 0 && res[0] != -EAGAIN, "SEND to a closed peer failed (%d)",
		    res[0]);
	ASSERT_TRUE(ur_read(&p, slot, &b), "read streams");
	ASSERT_EQ(b.s[0].calls - a.s[0].calls, 0, "failed SEND: no sample");
	ASSERT_EQ(b.s[0].errors - a.s[0].errors, 1, "failed SEND: errors");
destroy:
	satfeed_bpf__destroy(skel);
exit_ring:
	io_uring_queue_exit(&r);
close_fds:
	close(sv[0]);
	if (sv[1] >= 0)
		close(sv[1]);
	close(pp[0]);
	close(pp[1]);
}

/*
 * Multishot RECVs armed before the engine saw their submission: ring A's
 * before the engine was loaded, ring B's while it ran but before this
 * process was a target; both have delivered data already (the receive
 * waits in its poll again).  Once the process is watched, every CQE with
 * data of both counts once, found at the receive's next poll wake-up
 * (io_uring_task_add); after remove and add (another gen), again; their
 * ends at EOF are zero_bytes and forget them.
 */
void test_uring_prearmed(void)
{
	struct sf_selector self = { .kind = SATFEED_TARGET_PID,
				    .id = getpid() };
	struct ur_ms ma = { .bufs = NULL }, mb = { .bufs = NULL };
	struct io_uring ra, rb;
	struct satfeed_bpf *skel = NULL;
	struct ur_counts a, b;
	struct sf_pins p;
	int sa[2] = { -1, -1 }, sb[2] = { -1, -1 }, slot, removed, n, res;
	unsigned int flags;
	char why[512];

	if (!ASSERT_OK(socketpair(AF_UNIX, SOCK_STREAM, 0, sa), "socketpair") ||
	    !ASSERT_OK(socketpair(AF_UNIX, SOCK_STREAM, 0, sb), "socketpair"))
		goto close_fds;
	if (!ASSERT_OK(io_uring_queue_init(16, &ra, 0), "io_uring_queue_init"))
		goto close_fds;
	if (!ASSERT_OK(io_uring_queue_init(16, &rb, 0), "io_uring_queue_init"))
		goto exit_ra;
	/* ring A: armed and used before the engine is there */
	if (!ur_ms_arm(&ra, sa[0], 3, &ma) ||
	    !ASSERT_EQ(ur_ms_feed(&ra, &ma, sa[1], 2, false, &flags, &res), 2,
		       "ring A's multishot RECV ran before the engine"))
		goto release;
	skel = start_engine(4, false);
	if (!skel || !engine_maps(skel, &p))
		goto release;
	/* ring B: armed and used while the engine runs, before the add */
	if (!ur_ms_arm(&rb, sb[0], 4, &mb) ||
	    !ASSERT_EQ(ur_ms_feed(&rb, &mb, sb[1], 2, false, &flags, &res), 2,
		       "ring B's multishot RECV ran before the add"))
		goto release;
	ASSERT_EQ(ur_ms_entries(skel), 0,
		  "no multishot RECV remembered before the add");
	if (!ASSERT_OK(sf_target_add(&p, &self, SATFEED_SC_URING, &slot, why,
				     sizeof(why)), why))
		goto release;

	ASSERT_TRUE(ur_read(&p, slot, &a), "read streams");
	n = ur_ms_feed(&ra, &ma, sa[1], UR_N, false, &flags, &res);
	ASSERT_EQ(n, UR_N, "ring A: a CQE with data per chunk");
	ASSERT_TRUE(ur_read(&p, slot, &b), "read streams");
	ASSERT_EQ(b.s[1].calls - a.s[1].calls, n,
		  "multishot RECV armed before the engine: one recv sample per CQE with data");
	a = b;
	n = ur_ms_feed(&rb, &mb, sb[1], UR_N, false, &flags, &res);
	ASSERT_EQ(n, UR_N, "ring B: a CQE with data per chunk");
	ASSERT_TRUE(ur_read(&p, slot, &b), "read streams");
	ASSERT_EQ(b.s[1].calls - a.s[1].calls, n,
		  "multishot RECV armed before the add: one recv sample per CQE with data");
	ASSERT_EQ(ur_ms_entries(skel), 2,
		  "both multishot RECVs remembered at their wake-ups");

	/* removed and added again: the same slot, another gen */
	if (!ASSERT_OK(sf_target_remove(&p, &self, &removed, why,
					sizeof(why)), why) ||
	    !ASSERT_OK(sf_target_add(&p, &self, SATFEED_SC_URING, &slot, why,
				     sizeof(why)), why))
		goto release;
	ASSERT_TRUE(ur_read(&p, slot, &a), "read streams");
	n = ur_ms_feed(&ra, &ma, sa[1], UR_N, false, &flags, &res);
	ASSERT_TRUE(ur_read(&p, slot, &b), "read streams");
	ASSERT_EQ(b.s[1].calls - a.s[1].calls, n,
		  "after remove and add: one recv sample per CQE with data");

	/* EOF ends both: zero_bytes, and nothing left remembered */
	a = b;
	n = ur_ms_feed(&ra, &ma, sa[1], 0, true, &flags, &res);
	ASSERT_TRUE(!n && !res && !(flags & IORING_CQE_F_MORE),
		    "ring A's multishot RECV ended at EOF");
	n = ur_ms_feed(&rb, &mb, sb[1], 0, true, &flags, &res);
	ASSERT_TRUE(!n && !res && !(flags & IORING_CQE_F_MORE),
		    "ring B's multishot RECV ended at EOF");
	ASSERT_TRUE(ur_read(&p, slot, &b), "read streams");
	ASSERT_EQ(b.s[1].calls - a.s[1].calls, 0, "EOF: no recv sample");
	ASSERT_EQ(b.s[1].zero_bytes - a.s[1].zero_bytes, 2,
		  "each end at EOF: zero_bytes");
	ASSERT_EQ(ur_ms_entries(skel), 0,
		  "the ended multishot RECVs are forgotten");
release:
	ur_ms_release(&ra, &ma);
	ur_ms_release(&rb, &mb);
	if (skel)
		satfeed_bpf__destroy(skel);
	io_uring_queue_exit(&rb);
exit_ra:
	io_uring_queue_exit(&ra);
close_fds:
	for (int i = 0; i < 2; i++) {
		if (sa[i] >= 0)
			close(sa[i]);
		if (sb[i] >= 0)
			close(sb[i]);
	}
}
