// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * sf_common.c - syscall table and attach mode names shared by the loader,
 * satfeedctl and the tests.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>
#include <linux/magic.h>
#include "sf_common.h"

#ifndef SYS_select
#define SYS_select -1
#endif
#ifndef SYS_poll
#define SYS_poll -1
#endif
#ifndef SYS_epoll_wait
#define SYS_epoll_wait -1
#endif
#ifndef SYS_epoll_pwait2
#define SYS_epoll_pwait2 441
#endif

#define SF_SYSCALL_DESC(name, NAME, family, fd, fn)			\
	[SATFEED_SC_##NAME] = { #name, SATFEED_STREAM_##family, SYS_##name },
#define SF_URING_DESC(name, NAME, family, fd)				\
	[SATFEED_SC_URING_BIT(NAME)] = { "io_uring_" #name,		\
					 SATFEED_STREAM_##family,	\
					 SF_NR_URING },
const struct sf_syscall_desc sf_syscalls[SATFEED_SC_NR_BITS] = {
	SATFEED_SYSCALLS(SF_SYSCALL_DESC)
	SATFEED_URING_OPS(SF_URING_DESC)
};
#undef SF_SYSCALL_DESC
#undef SF_URING_DESC

const char *const sf_stream_names[SATFEED_NR_STREAMS] = {
	"send", "recv", "poll"
};

const char *sf_stream_name(__u32 stream)
{
	if (stream < SATFEED_NR_STREAMS)
		return sf_stream_names[stream];
	if (stream == SATFEED_STREAM_RESP)
		return "response";
	return stream == SATFEED_STREAM_SVC ? "service" : "?";
}

static const char *const attach_names[] = {
	[SATFEED_ATTACH_NONE] = "none",
	[SATFEED_ATTACH_FENTRY] = "fentry",
	[SATFEED_ATTACH_TP_BTF] = "tp_btf",
};

const char *sf_attach_name(__u32 mode)
{
	if (mode < sizeof(attach_names) / sizeof(attach_names[0]))
		return attach_names[mode];
	return "unknown";
}

int sf_attach_parse(const char *s, __u32 *mode)
{
	if (!strcmp(s, "auto")) {
		*mode = SATFEED_ATTACH_NONE;
		return 0;
	}
	for (__u32 i = 1; i < sizeof(attach_names) / sizeof(attach_names[0]);
	     i++) {
		if (!strcmp(s, attach_names[i])) {
			*mode = i;
			return 0;
		}
	}
	return -1;
}

void sf_family_names(int family, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (int i = 0; i < SATFEED_SC_NR_BITS && off < len; i++)
		if (sf_syscalls[i].name &&
		    (family < 0 || sf_syscalls[i].family == family) &&
		    sf_syscalls[i].nr != -1)
			off += snprintf(buf + off, len - off, "%s%s",
					off ? "," : "", sf_syscalls[i].name);
}

int sf_parse_syscalls(const char *prog, const char *list, int family,
		      __u32 *mask)
{
	char *copy, *tok, *save = NULL;
	int err = 0;

	copy = strdup(list);
	if (!copy)
		return -1;
	*mask = 0;
	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		const char *name = tok;
		int i;

		if (!strcmp(name, "send"))
			name = "sendto";
		else if (!strcmp(name, "recv"))
			name = "recvfrom";
		for (i = 0; i < SATFEED_SC_NR_BITS; i++)
			if (sf_syscalls[i].name &&
			    !strcmp(sf_syscalls[i].name, name))
				break;
		if (i == SATFEED_SC_NR_BITS) {
			char names[512];

			sf_family_names(family, names, sizeof(names));
			fprintf(stderr, "%s: unknown syscall '%s'; %s%s%s: %s\n",
				prog, tok, family >= 0 ? "the " : "",
				family >= 0 ? sf_stream_names[family] : "valid names",
				family >= 0 ? " family is" : "", names);
			err = -1;
			break;
		}
		if (family >= 0 && sf_syscalls[i].family != family) {
			char names[512];

			sf_family_names(family, names, sizeof(names));
			fprintf(stderr, "%s: '%s' is a %s-family syscall, not %s; the %s family is: %s\n",
				prog, tok, sf_stream_names[sf_syscalls[i].family],
				sf_stream_names[family], sf_stream_names[family],
				names);
			err = -1;
			break;
		}
		if (sf_syscalls[i].nr == -1) {
			fprintf(stderr, "%s: '%s' does not exist on this architecture\n",
				prog, tok);
			err = -1;
			break;
		}
		*mask |= 1U << i;
	}
	if (!err && !*mask) {
		fprintf(stderr, "%s: empty syscall list\n", prog);
		err = -1;
	}
	free(copy);
	return err;
}

void sf_format_syscalls(__u32 mask, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (int i = 0; i < SATFEED_SC_NR_BITS && off < len; i++) {
		if (!(mask & (1U << i)) || !sf_syscalls[i].name)
			continue;
		off += snprintf(buf + off, len - off, "%s%s", off ? "," : "",
				sf_syscalls[i].name);
	}
}

int sf_is_bpffs(const char *path)
{
	struct statfs st;

	if (statfs(path, &st))
		return -errno;
	return st.f_type == BPF_FS_MAGIC;
}

__u64 sf_now_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

const char *sf_prog = "satfeed";

void sf_vmsg(const char *fmt, va_list ap)
{
	/* one write per line where stderr is unbuffered: no interleaving */
	char line[1024];
	int n;

	n = vsnprintf(line, sizeof(line), fmt, ap);
	if (n < 0)
		return;
	fprintf(stderr, "%s: %s\n", sf_prog, line);
}

void sf_msg(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	sf_vmsg(fmt, ap);
	va_end(ap);
}

int sf_fail(int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	sf_vmsg(fmt, ap);
	va_end(ap);
	return code;
}

void sf_warn(const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	sf_msg("warning: %s", line);
}

const char *sf_load_hint(const char *root, char *buf, size_t len)
{
	if (!strcmp(root, SATFEED_DEFAULT_ROOT))
		snprintf(buf, len, "satfeed-loader load");
	else
		snprintf(buf, len, "satfeed-loader --bpffs %s load", root);
	return buf;
}

void sf_print_version(void)
{
	printf("%s %s (ABI %d, git %s)\n", sf_prog, SF_VERSION,
	       SATFEED_ABI_VERSION, SF_GIT);
}
