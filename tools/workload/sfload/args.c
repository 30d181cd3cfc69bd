// SPDX-License-Identifier: GPL-2.0
/*
 * args.c - sfload's command line: the defaults, --help, the target and the
 * options parsed into cfg (bad ones exit 2).
 */
#include "sfload.h"

struct config cfg = {
	.connections = 1,
	.duration = 5.0,
	.warmup = 0.5,
	.drain = 1.0,
	.proto = PROTO_SF,
	.keys = 100,
	.set_ratio = 0.1,
	.value_size = 32,
	.path = "/",
	.zone = "corpus.test",
	.seed = 1,
	.progress = -1,
};

static void usage(FILE *f)
{
	fprintf(f,
"Usage: sfload --rate R [OPTIONS] HOST:PORT\n"
"\n"
"Open-loop load generator: sends requests to HOST:PORT on a precomputed\n"
"schedule, whether or not earlier requests were answered, and measures the\n"
"rate the server really answered at and the latency of every request from\n"
"the time it was scheduled to be sent (so a stalled server cannot hide its\n"
"latency by slowing the client down: no coordinated omission).\n"
"\n"
"HOST:PORT is a numeric address or a name, e.g. 127.0.0.1:9700,\n"
"[::1]:11211, localhost:9700.  Only loopback targets (127.0.0.0/8, ::1) are\n"
"accepted unless --allow-addr is given.\n"
"\n"
"Options:\n"
"  -r, --rate R          offered load, requests per second over all\n"
"                        connections (required; decimals allowed)\n"
"  -c, --connections C   connections (UDP sockets with --proto dns);\n"
"                        request i goes to connection\n"
"                        i mod C (but see --no-pipeline; default 1, at\n"
"                        most %d)\n"
"  -d, --duration S      measured interval in seconds (default 5)\n"
"  -W, --warmup S        seconds of load sent before the measured interval\n"
"                        and not counted (default 0.5)\n"
"  -D, --drain S         after the last send, wait at most S seconds for\n"
"                        replies; still unanswered requests are timeouts\n"
"                        (default 1)\n"
"  -p, --proto P         sf (sfserver protocol, default), memcached (text\n"
"                        protocol: get, and set with --set-ratio), http\n"
"                        (HTTP/1.1 keep-alive GET of --path; responses\n"
"                        need a Content-Length) or dns (UDP: one A query\n"
"                        per datagram for q<request index>.<zone>, each\n"
"                        \"connection\" a UDP socket; a lost datagram is a\n"
"                        timeout)\n"
"  -P, --path P          http: the path every GET asks for (default /)\n"
"  -z, --zone Z          dns: the zone the names are asked in (default\n"
"                        corpus.test)\n"
"  -w, --work-us N       sf: service time the server should spin per\n"
"                        request, sent in each request (default 0: the\n"
"                        server's --work-us; at most %u)\n"
"  -k, --keys K          memcached: size of the fixed key set\n"
"                        sfload:0 .. sfload:K-1, all set before the run and\n"
"                        then chosen uniformly at random (default 100)\n"
"  -s, --set-ratio F     memcached: fraction of requests that are sets,\n"
"                        0..1 (default 0.1)\n"
"  -V, --value-size N    memcached: bytes per value (default 32, at most\n"
"                        %d)\n"
"  -x, --poisson         exponential inter-arrival times with mean 1/R\n"
"                        instead of a fixed interval\n"
"  -n, --no-pipeline     sf: at most one request pending on a\n"
"                        connection, as a client without pipelining keeps\n"
"                        it.  Request i goes to the first connection from\n"
"                        i mod C on with no reply pending; when every one\n"
"                        has a reply pending it waits for one, sent late\n"
"                        (its latency still counts from its scheduled\n"
"                        time).  Without it a server that falls behind\n"
"                        finds several requests in one receive\n"
"  -S, --seed N          seed for key choice and --poisson (default 1)\n"
"  -b, --spin-us N       sleep until N microseconds before each send time,\n"
"                        then busy-wait to it: sharper send times at the\n"
"                        cost of a busier sender CPU (default 0: sleep\n"
"                        only; timer wake-ups in a VM are often 50-200 us\n"
"                        late, which shows as latency from scheduled send)\n"
"  -j, --json            print the report as one JSON object on stdout\n"
"  -g, --progress        print a progress line on stderr every second (on by\n"
"                        default when stderr is a terminal and S >= 5)\n"
"  -G, --no-progress     never print progress lines\n"
"  -A, --allow-addr[=ADDR]\n"
"                        also accept a non-loopback target: ADDR only, or\n"
"                        any address when ADDR is omitted (for test hosts in\n"
"                        a network namespace)\n"
"  -h, --help            show this help and exit\n"
"\n"
"Report (text, or with --json these keys): offered_rps (R), scheduled_rps\n"
"(measured requests / duration; differs from R with --poisson), sent_rps\n"
"(measured requests sent, over the span of their actual send times),\n"
"achieved_rps (successful replies to measured requests / interval length;\n"
"exact while the server keeps up), served_rps (replies to any request\n"
"received within the measured interval / its length: the rate the server\n"
"really answered at, the figure to use past saturation), requests\n"
"(scheduled in the measured interval), sent, replies (successful), errors\n"
"(error replies + unsent requests + unmatched replies), unsent, timeouts\n"
"(sent, unanswered at the end of the drain), misses (memcached get misses),\n"
"min_us p50_us p90_us p99_us p999_us max_us mean_us (latency from the\n"
"scheduled send time), send_p50_us .. send_max_us (from the actual send\n"
"time), duration_s, warmup_s, connections, proto, poisson, no_pipeline,\n"
"interrupted.\n"
"Percentiles come from a log-linear histogram: never below the true value\n"
"and at most 0.79%% above it; min, max and mean are exact.\n"
"\n"
"Exit status:\n"
"  0    the run completed and the report was printed (even with timeouts)\n"
"  1    runtime error: target unreachable within 2 s, memcached preload\n"
"       failed, or a connection lost during the run (the report is still\n"
"       printed then)\n"
"  2    bad command line, or a target that is not allowed\n"
"  130  interrupted by SIGINT/SIGTERM (a report of the part run is printed)\n"
"\n"
"Examples:\n"
"  sfload --rate 10000 127.0.0.1:9700\n"
"  sfload --rate 50000 --connections 4 --duration 10 --json 127.0.0.1:9700\n"
"  sfload --proto memcached --rate 20000 --keys 1000 --poisson\n"
"         localhost:11211\n"
"  sfload --proto http --path /index.html --rate 5000 -c 8 127.0.0.1:8080\n"
"  sfload --proto dns --zone corpus.test --rate 20000 127.0.0.1:5353\n",
		MAX_CONNECTIONS, SF_MAX_WORK_US, MAX_VALUE_SIZE);
}

/* Split HOST:PORT or [HOST]:PORT into cfg.host and cfg.port. */
static void parse_target(const char *t)
{
	const char *colon, *host = t, *end;
	size_t hlen;

	if (*t == '[') {
		host = t + 1;
		end = strchr(host, ']');
		if (!end || end[1] != ':')
			sf_die_usage("invalid target '%s': expected [HOST]:PORT", t);
		colon = end + 1;
	} else {
		colon = strrchr(t, ':');
		if (!colon)
			sf_die_usage("invalid target '%s': expected HOST:PORT", t);
		end = colon;
		if (memchr(t, ':', colon - t))
			sf_die_usage("invalid target '%s': write IPv6 as [ADDR]:PORT",
				     t);
	}
	hlen = end - host;
	if (!hlen || hlen >= sizeof(cfg.host))
		sf_die_usage("invalid target '%s': bad host", t);
	memcpy(cfg.host, host, hlen);
	cfg.host[hlen] = '\0';
	sf_parse_ull("port", colon + 1, 1, 65535);
	snprintf(cfg.port, sizeof(cfg.port), "%s", colon + 1);
}

/* --path: absolute, printable, no space (it goes in a request line). */
static const char *check_path(const char *p)
{
	const char *s;

	if (p[0] != '/' || strlen(p) > MAX_PATH_LEN)
		sf_die_usage("invalid --path '%s': expected /PATH of at most 256 characters",
			     p);
	for (s = p; *s; s++)
		if ((unsigned char)*s <= ' ' || *s == 0x7f)
			sf_die_usage("invalid --path '%s': no spaces or control characters",
				     p);
	return p;
}

/* --zone: dotted labels of 1-63 letters, digits or '-'. */
static const char *check_zone(const char *z)
{
	size_t l = 0;
	const char *s;

	if (!*z || strlen(z) > MAX_ZONE_LEN)
		sf_die_usage("invalid --zone '%s': expected a name of 1 to 200 characters",
			     z);
	for (s = z; ; s++) {
		if (!*s || *s == '.') {
			if (!l || l > 63)
				sf_die_usage("invalid --zone '%s': empty or over-long label",
					     z);
			if (!*s)
				break;
			l = 0;
			continue;
		}
		if (!isalnum((unsigned char)*s) && *s != '-')
			sf_die_usage("invalid --zone '%s': letters, digits, '-' and '.' only",
				     z);
		l++;
	}
	return z;
}

void parse_args(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "rate",	 required_argument, NULL, 'r' },
		{ "connections", required_argument, NULL, 'c' },
		{ "duration",	 required_argument, NULL, 'd' },
		{ "warmup",	 required_argument, NULL, 'W' },
		{ "drain",	 required_argument, NULL, 'D' },
		{ "proto",	 required_argument, NULL, 'p' },
		{ "work-us",	 required_argument, NULL, 'w' },
		{ "keys",	 required_argument, NULL, 'k' },
		{ "set-ratio",	 required_argument, NULL, 's' },
		{ "value-size",	 required_argument, NULL, 'V' },
		{ "path",	 required_argument, NULL, 'P' },
		{ "zone",	 required_argument, NULL, 'z' },
		{ "poisson",	 no_argument,	    NULL, 'x' },
		{ "no-pipeline", no_argument,	    NULL, 'n' },
		{ "seed",	 required_argument, NULL, 'S' },
		{ "spin-us",	 required_argument, NULL, 'b' },
		{ "json",	 no_argument,	    NULL, 'j' },
		{ "progress",	 no_argument,	    NULL, 'g' },
		{ "no-progress", no_argument,	    NULL, 'G' },
		{ "allow-addr",	 optional_argument, NULL, 'A' },
		{ "help",	 no_argument,	    NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	static const char *const proto_names[] = {
		[PROTO_SF] = "sf",
		[PROTO_MEMCACHED] = "memcached",
		[PROTO_HTTP] = "http",
		[PROTO_DNS] = "dns",
		NULL
	};
	double total;
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv,
				":r:c:d:W:D:p:w:k:s:V:P:z:xnS:b:jgGA::h",
				opts, NULL)) != -1) {
		switch (c) {
		case 'r':
			cfg.rate = sf_parse_double("--rate", optarg, 0, true,
						   MAX_RATE);
			break;
		case 'c':
			cfg.connections = sf_parse_ull("--connections", optarg,
						       1, MAX_CONNECTIONS);
			break;
		case 'd':
			cfg.duration = sf_parse_double("--duration", optarg, 0,
						       true, 1e6);
			break;
		case 'W':
			cfg.warmup = sf_parse_double("--warmup", optarg, 0,
						     false, 1e6);
			break;
		case 'D':
			cfg.drain = sf_parse_double("--drain", optarg, 0, false,
						    3600);
			break;
		case 'p':
			cfg.proto = sf_parse_choice(optarg, proto_names,
						    "invalid --proto '%s': expected sf, memcached, http or dns");
			break;
		case 'w':
			cfg.work_us = sf_parse_ull("--work-us", optarg, 0,
						   SF_MAX_WORK_US);
			break;
		case 'k':
			cfg.keys = sf_parse_ull("--keys", optarg, 1, 100000000);
			break;
		case 's':
			cfg.set_ratio = sf_parse_double("--set-ratio", optarg, 0,
							false, 1);
			break;
		case 'V':
			cfg.value_size = sf_parse_ull("--value-size", optarg, 1,
						      MAX_VALUE_SIZE);
			break;
		case 'P':
			cfg.path = check_path(optarg);
			break;
		case 'z':
			cfg.zone = check_zone(optarg);
			break;
		case 'x':
			cfg.poisson = true;
			break;
		case 'n':
			cfg.no_pipeline = true;
			break;
		case 'S':
			cfg.seed = sf_parse_ull("--seed", optarg, 0, UINT64_MAX);
			break;
		case 'b':
			cfg.spin_ns = sf_parse_ull("--spin-us", optarg, 0,
						   100000) * 1000;
			break;
		case 'j':
			cfg.json = true;
			break;
		case 'g':
			cfg.progress = 1;
			break;
		case 'G':
			cfg.progress = 0;
			break;
		case 'A':
			cfg.allow_any = !optarg;
			cfg.allow_addr = optarg;
			break;
		default:
			sf_cli_help_or_die(c, argv, usage);
		}
	}
	if (optind >= argc)
		sf_die_usage("%s", "missing HOST:PORT");
	if (optind + 1 < argc)
		sf_die_usage("unexpected argument '%s'", argv[optind + 1]);
	if (cfg.rate <= 0)
		sf_die_usage("%s", "--rate is required");
	/*
	 * Only sf replies name their request: memcached's and http's are
	 * matched by their order on connection i mod C, and a lost dns
	 * datagram would leave its socket pending for good.
	 */
	if (cfg.no_pipeline && cfg.proto != PROTO_SF)
		sf_die_usage("%s", "--no-pipeline needs --proto sf (memcached and http replies are matched by their order on connection i mod C; a lost dns answer would hold its socket)");
	cfg.target = argv[optind];
	parse_target(cfg.target);

	total = cfg.rate * (cfg.warmup + cfg.duration);
	if (total > (double)MAX_REQUESTS) {
		fprintf(stderr,
			"sfload: rate x (warmup + duration) = %.0f requests, more than the %llu a run can hold; shorten the run\n",
			total, MAX_REQUESTS);
		exit(EXIT_BADARGS);
	}
	if (cfg.progress < 0)
		cfg.progress = isatty(STDERR_FILENO) && cfg.duration >= 5;
}
