// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * common.c - the setup every topic of test_kernel shares: the engine opened
 * from its skeleton with the programs a topic needs, or as the loader would
 * start it; its maps as libsatfeed sees pins; this process watched as a
 * target; a loopback TCP listener and client.
 */
#include "test_kernel.h"
#include <netinet/in.h>

__u64 test_max_age_ns;

/* The engine opened with the loader's settings (sf_engine_configure). */
static struct satfeed_bpf *open_configured(__u32 shift, bool understudies)
{
	struct satfeed_bpf *skel = satfeed_bpf__open();
	char why[256] = "";

	if (!ASSERT_TRUE(skel, "open: %s", strerror(errno)))
		return NULL;
	if (!ASSERT_OK(sf_engine_configure(skel, shift, test_max_age_ns,
					   understudies, true, why,
					   sizeof(why)),
		       why)) {
		satfeed_bpf__destroy(skel);
		return NULL;
	}
	return skel;
}

/* Open the engine with only the named programs loaded. */
struct satfeed_bpf *open_engine(__u32 shift, const char *const *progs)
{
	struct satfeed_bpf *skel;
	struct bpf_program *prog;
	int err;

	skel = open_configured(shift, false);
	if (!skel)
		return NULL;
	bpf_object__for_each_program(prog, skel->obj) {
		bool on = false;

		for (int i = 0; progs[i]; i++)
			on |= !strcmp(bpf_program__name(prog), progs[i]);
		bpf_program__set_autoload(prog, on);
	}
	err = satfeed_bpf__load(skel);
	if (!ASSERT_OK(err, "load"))
		goto destroy;
	err = satfeed_bpf__attach(skel);
	if (!ASSERT_OK(err, "attach"))
		goto destroy;
	return skel;
destroy:
	satfeed_bpf__destroy(skel);
	return NULL;
}

/*
 * The engine in attach mode `mode`, through the loader's own settings,
 * selection and attach order.  A kernel that refuses fentry programs
 * (EPERM: the guests test that mode) sets *refused, when given, and
 * fails no check; NULL then and on any failure.
 */
struct satfeed_bpf *start_engine_mode(__u32 shift, __u32 mode,
				      bool understudies, bool *refused)
{
	struct satfeed_bpf *skel = open_configured(shift, understudies);
	bool fentry = mode == SATFEED_ATTACH_FENTRY;
	char why[512] = "";
	int err;

	if (refused)
		*refused = false;
	if (!skel)
		return NULL;
	err = sf_engine_select(skel->obj, mode, understudies, why,
			       sizeof(why));
	if (!ASSERT_OK(err, why))
		goto destroy;
	if (fentry && refused) {
		/* quiet: a refusal is expected on some kernels */
		libbpf_print_fn_t old = libbpf_set_print(NULL);

		err = satfeed_bpf__load(skel);
		libbpf_set_print(old);
		if (err == -EPERM) {
			*refused = true;
			goto destroy;
		}
	} else {
		err = satfeed_bpf__load(skel);
	}
	if (!ASSERT_OK(err, "load"))
		goto destroy;
	err = sf_engine_attach(skel->skeleton, mode, why, sizeof(why));
	if (!ASSERT_OK(err, why))
		goto destroy;
	err = sf_engine_start_age(skel->maps.sf_age, why, sizeof(why));
	if (!ASSERT_OK(err, why))
		goto destroy;
	return skel;
destroy:
	satfeed_bpf__destroy(skel);
	return NULL;
}

/* The engine's tp_btf mode, as the loader starts it. */
struct satfeed_bpf *start_engine(__u32 shift, bool understudies)
{
	return start_engine_mode(shift, SATFEED_ATTACH_TP_BTF, understudies,
				 NULL);
}

/* The engine's maps as libsatfeed sees pins. */
bool engine_maps(struct satfeed_bpf *skel, struct sf_pins *p)
{
	char why[256];
	int err = sf_pins_from_object(p, skel->obj, why, sizeof(why));

	return ASSERT_TRUE(!err, "engine maps: %s", why);
}

/* Locked through libsatfeed, or a lockless copy (the seq/seq_end check). */
int read_stream(const struct sf_pins *p, __u32 slot, __u32 stream,
		struct satfeed_stream *st, bool locked)
{
	__u32 key = satfeed_stream_key(slot, stream);

	if (locked)
		return sf_stream_read(p, slot, stream, st);
	return bpf_map_lookup_elem(p->streams_fd, &key, st) ? -errno : 0;
}

/* Watch this process through the same protocol as satfeedctl add. */
int watch_self(const struct sf_pins *p, int *slot)
{
	struct sf_selector self = { .kind = SATFEED_TARGET_PID,
				    .id = getpid() };
	char why[512];
	int err;

	err = sf_target_add(p, &self, SATFEED_SC_ALL, slot, why, sizeof(why));
	if (err)
		fprintf(stderr, "watch self: %s\n", why);
	return err;
}

/* A TCP socket listening on a free loopback port, its address in *a. */
int listen_tcp(struct sockaddr_in *a)
{
	socklen_t l = sizeof(*a);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	*a = (struct sockaddr_in){ .sin_family = AF_INET,
				   .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	if (fd < 0 || bind(fd, (struct sockaddr *)a, sizeof(*a)) ||
	    listen(fd, 4) || getsockname(fd, (struct sockaddr *)a, &l)) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/* A TCP connection to a. */
int connect_tcp(const struct sockaddr_in *a)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd >= 0 && connect(fd, (const struct sockaddr *)a, sizeof(*a))) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * A UDP socket bound to a free loopback port (*srv, with a receive buffer
 * of rcvbuf bytes unless 0: the kernel rounds it up to its least) and a
 * client connected to it (*cli); 0, or -1 with neither left open.
 */
int udp_pair(int rcvbuf, int *srv, int *cli)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t l = sizeof(a);
	int s, c = -1;

	s = socket(AF_INET, SOCK_DGRAM, 0);
	if (s < 0 ||
	    (rcvbuf && setsockopt(s, SOL_SOCKET, SO_RCVBUF, &rcvbuf,
				  sizeof(rcvbuf))) ||
	    bind(s, (struct sockaddr *)&a, sizeof(a)) ||
	    getsockname(s, (struct sockaddr *)&a, &l))
		goto close_sockets;
	c = socket(AF_INET, SOCK_DGRAM, 0);
	if (c < 0 || connect(c, (struct sockaddr *)&a, sizeof(a)))
		goto close_sockets;
	*srv = s;
	*cli = c;
	return 0;
close_sockets:
	if (c >= 0)
		close(c);
	if (s >= 0)
		close(s);
	return -1;
}

bool tcp_accepted(int *lfd, int *cli, int *srv)
{
	struct sockaddr_in a = { 0 };

	*cli = *srv = -1;
	*lfd = listen_tcp(&a);
	if (*lfd < 0)
		return false;
	*cli = connect_tcp(&a);
	*srv = accept(*lfd, NULL, NULL);
	return *cli >= 0 && *srv >= 0;
}

void tcp_close(int lfd, int cli, int srv)
{
	if (cli >= 0)
		close(cli);
	if (srv >= 0)
		close(srv);
	if (lfd >= 0)
		close(lfd);
}

void with_self_watched(__u64 max_age_ns,
		       void (*check)(const struct sf_pins *p, int slot))
{
	struct satfeed_bpf *skel;
	struct sf_pins p;
	int slot;

	test_max_age_ns = max_age_ns;
	skel = start_engine(SATFEED_WINDOW_SHIFT, false);
	test_max_age_ns = 0;
	if (!skel)
		return;
	if (engine_maps(skel, &p) &&
	    ASSERT_OK(watch_self(&p, &slot), "watch self"))
		check(&p, slot);
	satfeed_bpf__destroy(skel);
}

__u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

bool next_tick(const struct sf_pins *p, int slot, __u64 period_ns,
	       struct satfeed_verdict *v)
{
	__u64 first = 0, deadline = now_ns() + 5 * period_ns;

	while (now_ns() < deadline) {
		if (sf_verdict_read(p, slot, v))
			return false;
		if (!first)
			first = v->tick_ns ?: 1;
		else if (v->tick_ns != first && v->tick_ns)
			return true;
		usleep(1000);
	}
	return false;
}

long map_entries(int fd)
{
	char key[64], next[64];
	void *prev = NULL;
	long n = 0;

	while (n < 100000 && !bpf_map_get_next_key(fd, prev, next)) {
		memcpy(key, next, sizeof(key));
		prev = key;
		n++;
	}
	return errno == ENOENT || n == 0 ? n : -1;
}
