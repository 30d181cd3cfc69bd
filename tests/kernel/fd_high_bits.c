// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * fd_high_bits.c - read/write with bits above 31 set in the fd are
 * classified by the file the kernel uses (the low 32 bits).
 */
#include "test_kernel.h"

/* Send and recv stream counters of slot, locked. */
static bool read_send_recv(const struct sf_pins *p, int slot,
			   struct satfeed_stream *st)
{
	return !read_stream(p, slot, SATFEED_STREAM_SEND, &st[0], true) &&
	       !read_stream(p, slot, SATFEED_STREAM_RECV, &st[1], true);
}

/*
 * read/write take the fd's low 32 bits (unsigned int fd): a call with high
 * bits set reaches the same file, and the engine must classify that file.
 */
void test_fd_high_bits(void)
{
	static const char *const progs[] = { "sf_sys_enter", "sf_sys_exit",
					     NULL };
	static struct satfeed_stream before[2], after[2];
	const long high = 1L << 32;
	long wsock, rsock, wpipe;
	struct satfeed_bpf *skel;
	int sv[2], pp[2], slot;
	struct sf_pins p;
	char buf[8];

	if (!ASSERT_OK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), "socketpair") ||
	    !ASSERT_OK(pipe(pp), "pipe"))
		return;
	skel = open_engine(SATFEED_WINDOW_SHIFT, progs);
	if (!skel)
		goto close_fds;
	if (!engine_maps(skel, &p) ||
	    !ASSERT_OK(watch_self(&p, &slot), "watch self") ||
	    !ASSERT_TRUE(read_send_recv(&p, slot, before), "read streams"))
		goto destroy;
	/* nothing but these three traced calls until the second read */
	wsock = syscall(SYS_write, sv[0] | high, "x", 1);
	rsock = syscall(SYS_read, sv[1] | high, buf, 1);
	wpipe = syscall(SYS_write, pp[1] | high, "x", 1);
	if (!ASSERT_TRUE(read_send_recv(&p, slot, after), "read streams"))
		goto destroy;
	ASSERT_EQ(wsock, 1, "write(socket | 1 << 32) wrote to the socket");
	ASSERT_EQ(rsock, 1, "read(socket | 1 << 32) read from the socket");
	ASSERT_EQ(wpipe, 1, "write(pipe | 1 << 32) wrote to the pipe");
	ASSERT_EQ(after[0].calls - before[0].calls, 1,
		  "write(socket | 1 << 32) counted as a send");
	ASSERT_EQ(after[1].calls - before[1].calls, 1,
		  "read(socket | 1 << 32) counted as a recv");
	ASSERT_EQ(after[0].not_socket - before[0].not_socket, 1,
		  "write(pipe | 1 << 32) counted as not a socket");
	ASSERT_EQ(after[1].not_socket - before[1].not_socket, 0,
		  "read(socket | 1 << 32) not counted as not a socket");
destroy:
	satfeed_bpf__destroy(skel);
close_fds:
	close(sv[0]);
	close(sv[1]);
	close(pp[0]);
	close(pp[1]);
}
