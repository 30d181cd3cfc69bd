// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * sfcompat32.c - a 32-bit (ia32) process making the calls that a table of
 * x86-64 syscall numbers misreads: built with gcc -m32.
 *
 *   sfcompat32 ROUNDS
 *
 * Waits for one byte (or EOF) on stdin, then makes ROUNDS rounds of brk
 * (ia32 45 = x86-64 recvfrom), getgid (ia32 47 = x86-64 recvmsg), a
 * send/recv pair and a write/read pair on a socketpair and a poll; prints
 * "done" and sleeps until killed.  ROUNDS 0: sleep at once (a target for
 * satfeedctl to refuse).
 */
#define _GNU_SOURCE
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 0;
	char buf[16] = "request", c;
	int sv[2];

	if (rounds > 0) {
		if (read(0, &c, 1) < 0 ||
		    socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
			return 1;
		for (long i = 0; i < rounds; i++) {
			syscall(SYS_brk, 0);
			syscall(SYS_getgid);
			if (send(sv[0], buf, 8, 0) != 8 ||
			    recv(sv[1], buf, 8, MSG_WAITALL) != 8 ||
			    write(sv[0], buf, 8) != 8 ||
			    read(sv[1], buf, 8) != 8)
				return 1;
			poll(NULL, 0, 0);
		}
		printf("done\n");
		fflush(stdout);
	}
	for (;;)
		pause();
}
