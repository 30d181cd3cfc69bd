// SPDX-License-Identifier: GPL-2.0
/*
 * args.c - sfserver's command line: the defaults, --help, and the options
 * parsed into cfg (bad ones exit 2).
 */
#include "sfserver.h"

struct config cfg = {
	.addr = "127.0.0.1",
	.port = SF_DEFAULT_PORT,
	.threads = 1,
	.io = IO_SENDTO,
};

static void usage(FILE *f)
{
	fprintf(f,
"Usage: sfserver [OPTIONS]\n"
"\n"
"The epoll request/response server bundled with satfeed.  It answers every\n"
"complete request with exactly one send-family system call, so that the\n"
"number of sends equals the number of requests served (--io sendfile: one\n"
"writev and one sendfile; --proxy: one more, the request sent on to the\n"
"backend).\n"
"\n"
"Protocol \"sf\": 32-byte requests {le64 id, le64 send_time_ns, le32 work_us,\n"
"le32 flags, le64 reserved}; each is answered by a 32-byte response echoing\n"
"id and send_time_ns.  Requests may arrive coalesced or split over reads.\n"
"\n"
"Options:\n"
"  -a, --addr ADDR       numeric IPv4 or IPv6 address to listen on\n"
"                        (default 127.0.0.1)\n"
"  -p, --port PORT       TCP port; 0 picks an ephemeral port (default %d)\n"
"  -P, --port-file PATH  after listen(2), write the bound port number and a\n"
"                        newline to PATH (a new file beside it, renamed)\n"
"  -w, --work-us N       busy-spin N microseconds per request to simulate\n"
"                        service time (default 0, at most %u).  A request\n"
"                        whose own work_us field is non-zero spins that long\n"
"                        instead, at most %u us too\n"
"  -t, --threads N       worker threads, each with its own epoll instance;\n"
"                        thread 0 accepts and hands connections out\n"
"                        round-robin (default 1, at most %d)\n"
"  -i, --io MODE         system calls used on connections (default sendto):\n"
"                          sendto  recvfrom(2) and sendto(2)\n"
"                          rw      read(2) and write(2)\n"
"                          msg     recvmsg(2) and sendmsg(2)\n"
"                          splice  recvfrom(2); the response is written to\n"
"                                  a pipe and splice(2)d to the socket\n"
"                          sendfile recvfrom(2); TWO sends per response,\n"
"                                  as a web server's headers and file: its\n"
"                                  first 16 bytes by writev(2), the other\n"
"                                  16 by sendfile(2) from a memfd\n"
"                          uring   io_uring: one RECV and one SEND per\n"
"                                  request, waits in io_uring_enter(2)\n"
"                          uring-ms  io_uring with a multishot RECV per\n"
"                                  connection (provided buffers, Linux 6.0)\n"
"                        The io_uring modes run one thread (--threads 1)\n"
"  -x, --proxy ADDR:PORT be a reverse proxy to the sf server at ADDR:PORT\n"
"                        (numeric IPv4, or [IPv6]): each accepted connection\n"
"                        gets its own connection to it, each request is sent\n"
"                        on there (send(2)), its answer read back (recv(2))\n"
"                        and returned to the client as --io says; --work-us\n"
"                        is the backend's business.  Not with the io_uring\n"
"                        modes\n"
"  -d, --duration SECS   exit after SECS seconds (decimals allowed; default\n"
"                        0: run until SIGINT or SIGTERM)\n"
"  -q, --quiet           do not print the \"listening on\" line\n"
"  -h, --help            show this help and exit\n"
"\n"
"Output (stdout): \"listening on ADDR:PORT\" once listening, and on exit the\n"
"summary line \"sfserver: served N requests on C connections in T s\",\n"
"then (not in the io_uring modes) \"sfserver: service time: R responses,\n"
"mean M ns, sum S ns\": on each connection, from the return of the first\n"
"receive after the previous response to the return of the first send after\n"
"it (the response), as satfeed's service-time stream measures it in the\n"
"kernel; requests that came in one receive with an earlier one are no\n"
"response of their own (R <= N)\n"
"\n"
"Exit status:\n"
"  0  normal exit (SIGINT, SIGTERM or --duration elapsed)\n"
"  1  runtime error (cannot listen, out of memory, ...)\n"
"  2  bad command line\n"
"\n"
"Examples:\n"
"  sfserver --port 0 --port-file /tmp/sf.port\n"
"  sfserver --port 9700 --threads 2 --work-us 20 --io rw\n"
"  sfserver --duration 30 & sfload --rate 10000 127.0.0.1:9700\n"
"  sfserver --port 9701 & sfserver --port 9700 --proxy 127.0.0.1:9701\n",
		SF_DEFAULT_PORT, SF_MAX_WORK_US, SF_MAX_WORK_US,
		SF_MAX_THREADS);
}

static void parse_addr(void)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)&cfg.ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&cfg.ss;

	if (inet_pton(AF_INET, cfg.addr, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons(cfg.port);
		cfg.sslen = sizeof(*sin);
	} else if (inet_pton(AF_INET6, cfg.addr, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(cfg.port);
		cfg.sslen = sizeof(*sin6);
	} else {
		sf_die_usage("invalid --addr '%s': expected a numeric IPv4 or IPv6 address",
			     cfg.addr);
	}
}

void parse_args(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "addr",	required_argument, NULL, 'a' },
		{ "port",	required_argument, NULL, 'p' },
		{ "port-file",	required_argument, NULL, 'P' },
		{ "work-us",	required_argument, NULL, 'w' },
		{ "threads",	required_argument, NULL, 't' },
		{ "io",		required_argument, NULL, 'i' },
		{ "duration",	required_argument, NULL, 'd' },
		{ "quiet",	no_argument,	   NULL, 'q' },
		{ "proxy",	required_argument, NULL, 'x' },
		{ "help",	no_argument,	   NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	static const char *const io_names[] = {
		[IO_SENDTO] = "sendto",
		[IO_RW] = "rw",
		[IO_MSG] = "msg",
		[IO_SPLICE] = "splice",
		[IO_SENDFILE] = "sendfile",
		[IO_URING] = "uring",
		[IO_URING_MS] = "uring-ms",
		NULL
	};
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":a:p:P:w:t:i:d:qx:h", opts,
				NULL)) != -1) {
		switch (c) {
		case 'a':
			cfg.addr = optarg;
			break;
		case 'p':
			cfg.port = sf_parse_ull("--port", optarg, 0, 65535);
			break;
		case 'P':
			cfg.port_file = optarg;
			break;
		case 'w':
			cfg.work_us = sf_parse_ull("--work-us", optarg, 0,
						   SF_MAX_WORK_US);
			break;
		case 't':
			cfg.threads = sf_parse_ull("--threads", optarg, 1,
						   SF_MAX_THREADS);
			break;
		case 'i':
			cfg.io = sf_parse_choice(optarg, io_names,
						 "invalid --io '%s': expected sendto, rw, msg, splice, sendfile, uring or uring-ms");
			break;
		case 'd':
			cfg.duration = sf_parse_double("--duration", optarg, 0,
						       false, 1e7);
			break;
		case 'q':
			cfg.quiet = true;
			break;
		case 'x':
			parse_proxy(optarg);
			break;
		default:
			sf_cli_help_or_die(c, argv, usage);
		}
	}
	if (optind < argc)
		sf_die_usage("unexpected argument '%s'", argv[optind]);
	if (io_is_uring(cfg.io) && cfg.threads != 1)
		sf_die_usage("--io %s runs one thread: --threads must be 1",
			     io_names[cfg.io]);
	if (io_is_uring(cfg.io) && cfg.proxy)
		sf_die_usage("--io %s cannot --proxy: the epoll modes can",
			     io_names[cfg.io]);
	parse_addr();
}
