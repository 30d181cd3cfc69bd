// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * send_members.c - sendfile and splice count as sends when, and only when,
 * their output fd is a socket (sendfile's argument 0, splice's argument 2),
 * with the same rules as the other members (moved at least one byte;
 * zero, EAGAIN and errors apart), exactly, in each attach mode the kernel
 * allows; and a target in discovery counts every call per syscall in
 * sf_discover and feeds no stream.
 */
#include "test_kernel.h"
#include <fcntl.h>
#include <sys/sendfile.h>

/* What this process's send stream and discovery entry hold now. */
struct snap {
	struct satfeed_stream send;
	struct satfeed_discover disc;	/* zeroed without an entry */
	bool has_disc;	/* sf_discover holds an entry for the slot */
};

static bool snap_read(const struct sf_pins *p, int slot, struct snap *s)
{
	int err;

	if (read_stream(p, slot, SATFEED_STREAM_SEND, &s->send, true))
		return false;
	memset(&s->disc, 0, sizeof(s->disc));
	err = sf_discover_read(p, slot, &s->disc);
	s->has_disc = !err;
	return !err || err == -ENOENT;
}

struct fds {
	int sv[2];	/* a connected unix stream pair */
	int pp[2];	/* a pipe */
	int file;	/* a regular file holding "0123456789" */
	int out;	/* another regular file, to sendfile into */
};

static bool fds_open(struct fds *f)
{
	char tmpl[] = "/tmp/sf-sendmembers-XXXXXX";
	char tmpl2[] = "/tmp/sf-sendmembers-XXXXXX";

	f->file = mkstemp(tmpl);
	f->out = mkstemp(tmpl2);
	if (f->file >= 0)
		unlink(tmpl);
	if (f->out >= 0)
		unlink(tmpl2);
	return ASSERT_TRUE(f->file >= 0 && f->out >= 0, "mkstemp") &&
	       ASSERT_EQ(write(f->file, "0123456789", 10), 10, "fill file") &&
	       ASSERT_OK(socketpair(AF_UNIX, SOCK_STREAM, 0, f->sv),
			 "socketpair") &&
	       ASSERT_OK(pipe(f->pp), "pipe");
}

static void fds_close(struct fds *f)
{
	close(f->sv[0]);
	close(f->sv[1]);
	close(f->pp[0]);
	close(f->pp[1]);
	close(f->file);
	close(f->out);
}

/*
 * The calls, with nothing else traced in between (no output): on a socket,
 * 3 sendfile and 2 splice that move bytes, 1 sendfile of 0 bytes, 1 sendfile
 * from a bad fd, 1 splice that would block; not on a socket, 1 sendfile
 * into a regular file, 1 splice from the socket into the pipe (a receive:
 * its output is the pipe) and the write that fills the pipe first.
 */
struct results {
	long sf_sock[3], sf_zero, sf_bad, sf_file, sp_sock[2], sp_block,
		sp_to_pipe;
};

static void make_calls(struct fds *f, struct results *r)
{
	const long high = 1L << 32;	/* the kernel takes the low 32 bits */
	off_t off;

	for (int i = 0; i < 3; i++) {
		off = i;
		r->sf_sock[i] = sendfile(f->sv[0], f->file, &off, 2);
	}
	off = 0;
	r->sf_zero = sendfile(f->sv[0], f->file, &off, 0);
	off = 0;
	r->sf_bad = sendfile(f->sv[0], -1, &off, 1);
	off = 0;
	r->sf_file = sendfile(f->out, f->file, &off, 4);
	/* pipe -> socket, fd_out with high bits: the socket is argument 2 */
	if (write(f->pp[1], "abcdef", 6) != 6)
		r->sp_sock[0] = -1000;
	r->sp_sock[0] = syscall(SYS_splice, f->pp[0], NULL, f->sv[0] | high,
				NULL, 3L, 0L);
	r->sp_sock[1] = splice(f->pp[0], NULL, f->sv[0], NULL, 3, 0);
	/* the pipe is empty now: a non-blocking splice would block */
	r->sp_block = splice(f->pp[0], NULL, f->sv[0], NULL, 3,
			     SPLICE_F_NONBLOCK);
	/* socket -> pipe: argument 0 is the socket, the output a pipe */
	r->sp_to_pipe = splice(f->sv[1], NULL, f->pp[1], NULL, 4, 0);
}

static void check_results(const struct results *r)
{
	for (int i = 0; i < 3; i++)
		ASSERT_EQ(r->sf_sock[i], 2, "sendfile to the socket moved 2");
	ASSERT_EQ(r->sf_zero, 0, "sendfile of 0 bytes returned 0");
	ASSERT_EQ(r->sf_bad, -1, "sendfile from fd -1 failed");
	ASSERT_EQ(r->sf_file, 4, "sendfile into a regular file moved 4");
	ASSERT_EQ(r->sp_sock[0], 3, "splice(pipe, socket | 1 << 32) moved 3");
	ASSERT_EQ(r->sp_sock[1], 3, "splice(pipe, socket) moved 3");
	ASSERT_EQ(r->sp_block, -1, "splice from an empty pipe would block");
	ASSERT_EQ(r->sp_to_pipe, 4, "splice(socket, pipe) moved 4");
}

static int watch_self_mask(const struct sf_pins *p, __u32 mask, int *slot)
{
	struct sf_selector self = { .kind = SATFEED_TARGET_PID,
				    .id = getpid() };
	char why[512];
	int err = sf_target_add(p, &self, mask, slot, why, sizeof(why));

	if (err)
		fprintf(stderr, "watch self: %s\n", why);
	return err;
}

static void test_streams(__u32 mode)
{
	static struct snap before, after;
	const char *m = sf_attach_name(mode);
	struct satfeed_bpf *skel;
	struct results r;
	struct sf_pins p;
	struct fds f;
	bool refused;
	int slot;

	if (!fds_open(&f))
		return;
	skel = start_engine_mode(SATFEED_WINDOW_SHIFT, mode, false, &refused);
	if (refused) {
		printf("send_members: %s mode refused by this kernel (EPERM): tp_btf only\n",
		       m);
		goto close_fds;
	}
	if (!skel)
		goto close_fds;
	if (!engine_maps(skel, &p) ||
	    !ASSERT_OK(watch_self_mask(&p, SATFEED_SC_ALL, &slot), "watch") ||
	    !ASSERT_TRUE(snap_read(&p, slot, &before), "read"))
		goto destroy;
	/* sf_discover is sized by use: no entry (6 KiB) for this target */
	ASSERT_TRUE(!before.has_disc, "not in discovery: no sf_discover entry");
	make_calls(&f, &r);
	if (!ASSERT_TRUE(snap_read(&p, slot, &after), "read"))
		goto destroy;
	check_results(&r);
	printf("send_members: %s: send calls %llu, zero %llu, errors %llu, eagain %llu, not_socket %llu\n",
	       m, (unsigned long long)(after.send.calls - before.send.calls),
	       (unsigned long long)(after.send.zero_bytes -
				    before.send.zero_bytes),
	       (unsigned long long)(after.send.errors - before.send.errors),
	       (unsigned long long)(after.send.eagain - before.send.eagain),
	       (unsigned long long)(after.send.not_socket -
				    before.send.not_socket));
	/* 3 sendfile + 2 splice to the socket moved bytes */
	ASSERT_EQ(after.send.calls - before.send.calls, 5,
		  "sends counted (sendfile, splice to a socket)");
	ASSERT_EQ(after.send.zero_bytes - before.send.zero_bytes, 1,
		  "sendfile of 0 bytes in zero_bytes");
	ASSERT_EQ(after.send.errors - before.send.errors, 1,
		  "sendfile from a bad fd in errors");
	ASSERT_EQ(after.send.eagain - before.send.eagain, 1,
		  "non-blocking splice that would block in eagain");
	/* sendfile into the file, splice into the pipe, write to the pipe */
	ASSERT_EQ(after.send.not_socket - before.send.not_socket, 3,
		  "output not a socket in not_socket");
destroy:
	satfeed_bpf__destroy(skel);
close_fds:
	fds_close(&f);
}

static __u64 disc(const struct snap *a, const struct snap *b, __u32 sc,
		  size_t field)
{
	const __u64 *x = (const __u64 *)((const char *)&a->disc.src[sc] +
					 field);
	const __u64 *y = (const __u64 *)((const char *)&b->disc.src[sc] +
					 field);

	return *y - *x;
}

#define DISC(sc, f) disc(&before, &after, SATFEED_SC_##sc,		\
			 offsetof(struct satfeed_discover_count, f))

/* A target in discovery: per-syscall counts, no stream sample. */
static void test_discover(void)
{
	static struct snap before, after;
	struct satfeed_stream st[SATFEED_NR_STREAMS];
	struct pollfd pfd;
	struct satfeed_bpf *skel;
	struct results r;
	struct sf_pins p;
	struct fds f;
	bool refused;
	int slot;
	long sent, polled;

	if (!fds_open(&f))
		return;
	skel = start_engine_mode(SATFEED_WINDOW_SHIFT, SATFEED_ATTACH_TP_BTF,
				 false, &refused);
	if (!skel)
		goto close_fds;
	if (!engine_maps(skel, &p) ||
	    !ASSERT_OK(watch_self_mask(&p, SATFEED_SC_DISCOVER | SATFEED_SC_ALL,
				       &slot), "watch in discovery") ||
	    !ASSERT_TRUE(snap_read(&p, slot, &before), "read"))
		goto destroy;
	ASSERT_TRUE(before.has_disc, "in discovery: an sf_discover entry");
	ASSERT_EQ(before.disc.gen, before.send.gen,
		  "discovery entry reset for the target's generation");
	make_calls(&f, &r);
	sent = sendto(f.sv[0], "hello", 5, 0, NULL, 0);
	pfd = (struct pollfd){ .fd = f.pp[0], .events = POLLIN };
	polled = poll(&pfd, 1, 0);	/* the pipe holds 4 bytes: 1 ready */
	if (!ASSERT_TRUE(snap_read(&p, slot, &after), "read"))
		goto destroy;
	check_results(&r);
	ASSERT_EQ(sent, 5, "sendto moved 5");
	ASSERT_EQ(polled, 1, "poll found the pipe readable");
	ASSERT_EQ(DISC(SENDFILE, calls), 5, "discover: sendfile calls");
	ASSERT_EQ(DISC(SENDFILE, moved), 3, "discover: sendfile moved");
	ASSERT_EQ(DISC(SENDFILE, bytes), 6, "discover: sendfile bytes");
	ASSERT_EQ(DISC(SENDFILE, zero), 1, "discover: sendfile zero");
	ASSERT_EQ(DISC(SENDFILE, errors), 1, "discover: sendfile errors");
	ASSERT_EQ(DISC(SENDFILE, not_socket), 1,
		  "discover: sendfile into a file");
	ASSERT_EQ(DISC(SPLICE, calls), 3, "discover: splice calls");
	ASSERT_EQ(DISC(SPLICE, moved), 2, "discover: splice moved");
	ASSERT_EQ(DISC(SPLICE, bytes), 6, "discover: splice bytes");
	ASSERT_EQ(DISC(SPLICE, eagain), 1, "discover: splice eagain");
	ASSERT_EQ(DISC(SPLICE, not_socket), 1, "discover: splice to a pipe");
	ASSERT_EQ(DISC(SENDTO, calls), 1, "discover: sendto calls");
	ASSERT_EQ(DISC(SENDTO, bytes), 5, "discover: sendto bytes");
	/* the pipe write in make_calls() */
	ASSERT_EQ(DISC(WRITE, not_socket), 1, "discover: write to a pipe");
	ASSERT_EQ(DISC(WRITE, calls), 0, "discover: no write on a socket");
	ASSERT_EQ(DISC(POLL, calls), 1, "discover: poll calls");
	ASSERT_EQ(DISC(POLL, moved), 1, "discover: poll returned events");
	ASSERT_EQ(DISC(POLL, bytes), 1, "discover: poll ready fds");
	for (__u32 s = 0; s < SATFEED_NR_STREAMS; s++) {
		if (!ASSERT_OK(read_stream(&p, slot, s, &st[s], true), "read"))
			goto destroy;
		ASSERT_EQ(st[s].calls + st[s].errors + st[s].eagain +
				  st[s].zero_bytes + st[s].not_socket,
			  0, "a target in discovery feeds no stream");
	}
destroy:
	satfeed_bpf__destroy(skel);
close_fds:
	fds_close(&f);
}

void test_send_members(void)
{
	test_streams(SATFEED_ATTACH_TP_BTF);
	test_streams(SATFEED_ATTACH_FENTRY);
	test_discover();
}
