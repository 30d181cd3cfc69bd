/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * satfeed_uring.bpf.h - io_uring operations in a target's streams.
 *
 * What counts (satfeed_syscalls.h, SATFEED_URING_OPS): each completion (CQE)
 * of a SEND, SEND_ZC, SENDMSG, SENDMSG_ZC or WRITE/WRITEV-on-a-socket
 * request is a send event, of a RECV, RECVMSG or READ/READV-on-a-socket
 * request a recv event, at completion time; every CQE of a multishot RECV
 * or RECVMSG is one.  The same rule as the syscalls: a completion that
 * moved at least one byte is a sample, the others are counted apart
 * (errors, eagain, zero_bytes, not_socket).  A target's io_uring_enter(2)
 * with IORING_ENTER_GETEVENTS is a wait (poll stream), timed from entry to
 * exit like epoll_wait; it includes the submission the same call makes.
 *
 * Attribution: a completion belongs to the task that owns the request
 * (req->tctx->task from 6.13, req->task before: the task that submitted
 * it, the SQPOLL thread for an SQPOLL ring), never to the current task,
 * which may be an io-wq worker, the SQPOLL thread, or whichever thread runs
 * the ring's task work.  That task is matched to a target like a syscall's
 * caller: by tgid (pid_slot) or by its cgroup.
 *
 * Hooks (their programs are in satfeed.bpf.c, the code they run here), the
 * same in both attach modes (tp_btf on the io_uring tracepoints, which
 * 6.12, 6.18 and 7.x all have with CONFIG_IO_URING):
 *  - io_uring_complete: every CQE the kernel posts.  Its arguments changed
 *    in 6.15 (user_data, res, cflags became a pointer to the CQE);
 *    bpf_core_type_matches() picks the layout at load time.
 *  - io_uring_submit_req: every SQE submitted.  Needed for multishot: the
 *    kernel posts each CQE of a multishot request but the last through
 *    io_req_post_cqe() -> io_fill_cqe_aux(), whose tracepoint carries no
 *    request (req == NULL), only the ring and the CQE.  A target's
 *    multishot RECV is remembered at submission, keyed by (ring,
 *    user_data), in sf_uring_ms; those request-less CQEs are counted by
 *    that key, attributed to the owner the entry names.
 *  - io_uring_task_add: a poll wake-up queues the task work that runs a
 *    request again (__io_poll_execute(), 6.12 to 7.x; also the requeue a
 *    multishot receive asks for after MULTISHOT_MAX_RETRY rounds).  A
 *    multishot receive posts its CQEs from its submission (seen above) or
 *    from that task work (io-wq never runs one), so one armed before the
 *    engine or before its process was a target is remembered here, at its
 *    next wake-up, before the CQEs of the data that woke it.  Counting
 *    stays in io_uring_complete: a receive remembered twice counts once.
 *    The loader loads this program where the tracepoint and
 *    REQ_F_APOLL_MULTISHOT exist (sf_uring_ms_gap() words the rest).
 *  - the wait: tp_btf mode reuses sys_enter/sys_exit (io_uring_enter has a
 *    sc_index entry of its own, SATFEED_SC_INDEX_URING_ENTER, so unrelated
 *    syscalls pay nothing new); fentry mode attaches fentry/fexit to
 *    __<arch>_sys_io_uring_enter.
 *  - io_uring_cqring_wait: io_cqring_wait() fires it after it found fewer
 *    completions than asked for, just before it goes to sleep for them
 *    (6.12 io_uring/io_uring.c, 7.x io_uring/wait.c; (ctx, min_events) in
 *    both).  A call that finds them there returns without it.  Only a wait
 *    that reached it counts (sf_uring_sleep): past capacity an io_uring
 *    server finds completions at every io_uring_enter, which is then busy
 *    time, not slack, and no wait, as a sleepless epoll_wait is in effect
 *    (docs/validation.md).  Where the kernel lacks it, every
 *    io_uring_enter with GETEVENTS is a wait and load says so.
 *
 * Cost: a machine that makes no io_uring call runs none of this (the
 * tracepoints fire only inside io_uring).  A completion of a non-target
 * ring stops at the owner's pid_slot byte, whatever its opcode (discovery
 * counts every opcode of a target's rings): a few plain loads, no helper call
 * (with cgroup targets, one ancestor-cgroup lookup per level, as for a
 * syscall).  A request-less CQE stops at one load of sf_uring_ms_armed
 * while no target has a multishot receive in flight, else pays one hash
 * lookup.
 * A submission or a poll wake-up stops at its opcode unless it is a RECV
 * or RECVMSG, then at the multishot flag; a non-target's at the owner's
 * pid_slot byte, a target's pays one hash lookup (an insert the first
 * time).  Wake-ups come with data, so a target's multishot receive pays it
 * at most once per batch of CQEs, usually once per CQE.
 *
 * Not seen (docs/figures.md): CQEs that overflow the CQ ring (posted later
 * from the overflow list without the tracepoint), the CQEs a multishot
 * receive armed before the engine was loaded or replaced, or before its
 * process became a target or was discovered, posts before its next poll
 * wake-up (the rest of the batch the engine or the add came into),
 * IORING_OP_READ_MULTISHOT, SPLICE/TEE and registered-buffer READ_FIXED/
 * WRITE_FIXED (not members), and waits a target makes in other ways
 * (io_uring_enter without GETEVENTS, or spinning on the CQ ring in user
 * space, as SQPOLL rings may).  The io_uring programs have no understudies:
 * tracepoint probes run with preemption disabled, so the kernel skips one
 * of their runs only when it nests in another on the same CPU; such a skip
 * shows in the program's recursion_misses.
 */
#ifndef __SATFEED_URING_BPF_H
#define __SATFEED_URING_BPF_H

#include "satfeed_engine.bpf.h"

#define SF_IORING_CQE_F_MORE		(1U << 1)
#define SF_URING_OPCODES		64

/* REQ_F_APOLL_MULTISHOT on this kernel (an anonymous enum: no CO-RE),
 * looked up in its BTF by the loader; 0: multishot CQEs are not counted */
const volatile __u64 uring_ms_flag = 0;

/* opcode -> enum satfeed_uring_op + 1; 0: not a member */
#define SF_UR_OP_ENTRY(name, NAME, family, fd)				\
	[IORING_OP_##NAME] = SATFEED_URING_##NAME + 1,
const __u8 sf_uring_member[SF_URING_OPCODES] = {
	SATFEED_URING_IO_OPS(SF_UR_OP_ENTRY)
};
#undef SF_UR_OP_ENTRY

/*
 * Discovery (satfeedctl discover: a target with SATFEED_SC_DISCOVER in its
 * sc_mask, where the engine has it): every io_uring operation its rings
 * complete and every wait, whatever the member bits say, goes to
 * sf_discover_count() instead of the streams.  Sources: a member's
 * completions and its io_uring_enter waits at the member's sc_mask bit
 * (SATFEED_SC_URING_BIT), any other opcode N at SATFEED_SRC_URING_FIRST + N.
 * So a completion of any opcode goes on to its owner's pid_slot byte.
 */
#define SF_UR_DISCOVER(mask)		((mask) & SATFEED_SC_DISCOVER)

/* io_uring_complete's prototype from 6.15 on: the CQE, not its fields */
typedef void (*btf_trace_io_uring_complete___cqe)(void *,
		struct io_ring_ctx *, void *, struct io_uring_cqe *);

/* io_kiocb before 6.13: the owner task directly in the request */
struct io_kiocb___task {
	struct task_struct *task;
} __attribute__((preserve_access_index));

static __always_inline struct task_struct *
sf_uring_req_task(struct io_kiocb *req)
{
	if (bpf_core_field_exists(struct io_kiocb___task, task))
		return ((struct io_kiocb___task *)req)->task;
	return req->tctx->task;
}

/* One completion of a target's request: a sample or a counted failure. */
static __always_inline void sf_uring_event(__u32 slot, __u32 gen,
					   __u32 stream, __s32 res)
{
	if (res <= 0) {
		sf_count(slot, stream, gen, res);
		return;
	}
	sf_account(slot, stream, gen, bpf_ktime_get_ns(), true, 0, 0, NULL,
		   true);
}

/* A multishot receive ended: its entry goes, and with the last one the
 * hash lookup of every request-less CQE */
static __always_inline void sf_uring_ms_forget(struct sf_uring_ms_key *key)
{
	if (!bpf_map_delete_elem(&sf_uring_ms, key))
		__sync_fetch_and_sub(&sf_uring_ms_armed, 1);
}

/* A CQE without its request: a target's multishot receive, or nothing. */
static __always_inline int sf_uring_aux_cqe(__u64 ring, __u64 user_data,
					    __s32 res, __u32 cflags)
{
	struct sf_uring_ms_key key = { .ring = ring, .user_data = user_data };
	struct sf_uring_ms *ms;
	__u32 slot, gen, src;

	if (!READ_ONCE(sf_uring_ms_armed))
		return 0;
	ms = bpf_map_lookup_elem(&sf_uring_ms, &key);
	if (!ms)
		return 0;
	slot = ms->slot;
	gen = ms->gen;
	src = ms->discover_src;
	if (!(cflags & SF_IORING_CQE_F_MORE))
		sf_uring_ms_forget(&key);
	if (src) {
		sf_discover_count(slot, gen, src, res, false, 0);
		return 0;
	}
	sf_uring_event(slot, gen, SATFEED_STREAM_RECV, res);
	return 0;
}

static __always_inline int sf_uring_cqe(__u64 ring, void *reqp,
					__u64 user_data, __s32 res,
					__u32 cflags)
{
	struct satfeed_config *cfg;
	struct task_struct *task;
	struct io_kiocb *req;
	struct sf_hit hit;
	__u32 m, bit, stream;
	__u8 op;

	if (!reqp)
		return sf_uring_aux_cqe(ring, user_data, res, cflags);
	req = bpf_core_cast(reqp, struct io_kiocb);
	op = req->opcode;
	if (op >= SF_URING_OPCODES)
		return 0;
	m = sf_uring_member[op];
	cfg = sf_config_get();
	task = sf_uring_req_task(req);
	if (!cfg || !task || !sf_find_target_of(cfg, task, false, &hit))
		return 0;
	if (!m) {
		/* another operation: only discovery counts it */
		if (SF_UR_DISCOVER(hit.sc_mask))
			sf_discover_count(hit.slot, hit.gen,
					  SATFEED_SRC_URING_FIRST + op, res,
					  false, 0);
		return 0;
	}
	m--;
	bit = SATFEED_SC_URING_FIRST + m;
	if (bit >= SATFEED_SC_NR_BITS)
		return 0;
	if (!(hit.sc_mask & (1U << bit)) && !SF_UR_DISCOVER(hit.sc_mask))
		return 0;
	stream = m >= SATFEED_URING_RECV_FIRST ? SATFEED_STREAM_RECV :
						 SATFEED_STREAM_SEND;
	if (SATFEED_SC_URING_SOCKET_FD & (1U << bit)) {
		struct file *f = req->file;
		umode_t mode = f ? f->f_inode->i_mode : 0;

		if ((mode & SF_S_IFMT) != SF_S_IFSOCK) {
			struct satfeed_stream *s;

			if (SF_UR_DISCOVER(hit.sc_mask)) {
				sf_discover_count(hit.slot, hit.gen, bit, res,
						  true, 0);
				return 0;
			}

			s = sf_stream_of_gen(hit.slot, stream, hit.gen);
			if (s)
				__sync_fetch_and_add(&s->not_socket, 1);
			return 0;
		}
	}
	/* the last CQE of a multishot receive: forget it */
	if (uring_ms_flag && (req->flags & uring_ms_flag) &&
	    !(cflags & SF_IORING_CQE_F_MORE)) {
		struct sf_uring_ms_key key = { .ring = ring,
					       .user_data = user_data };

		sf_uring_ms_forget(&key);
	}
	if (SF_UR_DISCOVER(hit.sc_mask)) {
		sf_discover_count(hit.slot, hit.gen, bit, res, false, 0);
		return 0;
	}
	sf_uring_event(hit.slot, hit.gen, stream, res);
	return 0;
}

/*
 * A target's multishot RECV/RECVMSG, by its request: remember its ring and
 * tag for the CQEs that will come without the request.  One already
 * remembered for the same target (slot, gen and discovery alike) is left
 * as it is; one remembered for another (the process was removed and added
 * again, or discovered, then added) is overwritten.
 */
static __always_inline int sf_uring_ms_note(struct io_kiocb *req)
{
	struct sf_uring_ms_key key;
	struct sf_uring_ms ms, *old;
	struct satfeed_config *cfg;
	struct task_struct *task;
	struct sf_hit hit;
	__u8 op = req->opcode;
	__u32 bit;

	if (op != IORING_OP_RECV && op != IORING_OP_RECVMSG)
		return 0;
	if (!uring_ms_flag || !(req->flags & uring_ms_flag))
		return 0;
	cfg = sf_config_get();
	task = sf_uring_req_task(req);
	if (!cfg || !task || !sf_find_target_of(cfg, task, false, &hit))
		return 0;
	bit = op == IORING_OP_RECV ? SATFEED_SC_URING_BIT(RECV) :
				     SATFEED_SC_URING_BIT(RECVMSG);
	if (!(hit.sc_mask & (1U << bit)) && !SF_UR_DISCOVER(hit.sc_mask))
		return 0;
	key.ring = (__u64)req->ctx;
	key.user_data = req->cqe.user_data;
	ms.slot = hit.slot;
	ms.gen = hit.gen;
	ms.discover_src = SF_UR_DISCOVER(hit.sc_mask) ? bit : 0;
	ms.reserved = 0;
	old = bpf_map_lookup_elem(&sf_uring_ms, &key);
	if (old) {
		if (old->slot != ms.slot || old->gen != ms.gen ||
		    old->discover_src != ms.discover_src)
			bpf_map_update_elem(&sf_uring_ms, &key, &ms, BPF_EXIST);
		return 0;
	}
	/* a key already there (re-armed without its end seen) keeps its
	 * count: only a new one adds */
	if (!bpf_map_update_elem(&sf_uring_ms, &key, &ms, BPF_NOEXIST))
		__sync_fetch_and_add(&sf_uring_ms_armed, 1);
	return 0;
}

#endif /* __SATFEED_URING_BPF_H */
