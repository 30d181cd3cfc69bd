// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * sf_common.c - syscall table, pin opening and ABI check shared by the
 * loader, satfeedctl and the tests.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>
#include <linux/magic.h>
#include <bpf/bpf.h>
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

#define SF_SYSCALL_DESC(name, NAME, family, fd)				\
	[SATFEED_SC_##NAME] = { #name, SATFEED_STREAM_##family, SYS_##name },
const struct sf_syscall_desc sf_syscalls[SATFEED_NR_SYSCALLS] = {
	SATFEED_SYSCALLS(SF_SYSCALL_DESC)
};
#undef SF_SYSCALL_DESC

const char *const sf_stream_names[SATFEED_NR_STREAMS] = {
	"send", "recv", "poll"
};

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
		for (i = 0; i < SATFEED_NR_SYSCALLS; i++)
			if (!strcmp(sf_syscalls[i].name, name))
				break;
		if (i == SATFEED_NR_SYSCALLS) {
			fprintf(stderr, "%s: unknown syscall '%s'\n", prog,
				tok);
			err = -1;
			break;
		}
		if (family >= 0 && sf_syscalls[i].family != family) {
			fprintf(stderr, "%s: '%s' is a %s-family syscall, not %s\n",
				prog, tok, sf_stream_names[sf_syscalls[i].family],
				sf_stream_names[family]);
			err = -1;
			break;
		}
		if (sf_syscalls[i].nr < 0) {
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
	for (int i = 0; i < SATFEED_NR_SYSCALLS && off < len; i++) {
		if (!(mask & (1U << i)))
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

static int open_pin(struct sf_pins *p, const char *name, int *fd, char *why,
		    size_t len)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", p->root, name);
	*fd = bpf_obj_get(path);
	if (*fd >= 0)
		return SF_EXIT_OK;
	if (errno == EACCES || errno == EPERM) {
		snprintf(why, len, "permission denied opening %s (run as root)",
			 path);
		return SF_EXIT_PERM;
	}
	if (errno == ENOENT) {
		snprintf(why, len, "satfeed is not loaded (no %s; run 'satfeed-loader load')",
			 path);
		return SF_EXIT_NOT_LOADED;
	}
	snprintf(why, len, "cannot open %s: %s", path, strerror(errno));
	return SF_EXIT_ERROR;
}

int sf_pins_open(struct sf_pins *p, const char *root, char *why, size_t len)
{
	char parent[256], *slash;
	__u32 zero = 0;
	int err, fs;

	memset(p, 0, sizeof(*p));
	p->info_fd = p->config_fd = p->targets_fd = -1;
	p->streams_fd = p->pid_index_fd = p->cgrp_index_fd = -1;
	snprintf(p->root, sizeof(p->root), "%s", root);

	snprintf(parent, sizeof(parent), "%s", root);
	slash = strrchr(parent, '/');
	if (slash && slash != parent)
		*slash = '\0';
	fs = sf_is_bpffs(parent);
	if (fs == -EACCES || fs == -EPERM) {
		snprintf(why, len, "permission denied reading %s (run as root)",
			 parent);
		return SF_EXIT_PERM;
	}
	if (fs <= 0) {
		snprintf(why, len, "satfeed is not loaded (no bpffs mounted at %s)",
			 parent);
		return SF_EXIT_NOT_LOADED;
	}
	err = open_pin(p, SATFEED_PIN_INFO, &p->info_fd, why, len);
	if (err)
		goto close_pins;
	if (bpf_map_lookup_elem(p->info_fd, &zero, &p->info)) {
		snprintf(why, len, "cannot read %s/%s: %s", root,
			 SATFEED_PIN_INFO, strerror(errno));
		err = errno == EPERM ? SF_EXIT_PERM : SF_EXIT_ERROR;
		goto close_pins;
	}
	if (p->info.abi_version != SATFEED_ABI_VERSION) {
		snprintf(why, len, "ABI mismatch: the loaded engine speaks ABI %u, this tool ABI %u; use tools from the same build as the loader",
			 p->info.abi_version, SATFEED_ABI_VERSION);
		err = SF_EXIT_ABI;
		goto close_pins;
	}
	err = open_pin(p, SATFEED_PIN_CONFIG, &p->config_fd, why, len);
	if (!err)
		err = open_pin(p, SATFEED_PIN_TARGETS, &p->targets_fd, why, len);
	if (!err)
		err = open_pin(p, SATFEED_PIN_STREAMS, &p->streams_fd, why, len);
	if (!err)
		err = open_pin(p, SATFEED_PIN_PID_INDEX, &p->pid_index_fd, why,
			       len);
	if (!err)
		err = open_pin(p, SATFEED_PIN_CGRP_INDEX, &p->cgrp_index_fd,
			       why, len);
	if (!err)
		return SF_EXIT_OK;
close_pins:
	sf_pins_close(p);
	return err;
}

void sf_pins_close(struct sf_pins *p)
{
	int *fds[] = { &p->info_fd, &p->config_fd, &p->targets_fd,
		       &p->streams_fd, &p->pid_index_fd, &p->cgrp_index_fd };

	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++) {
		if (*fds[i] >= 0)
			close(*fds[i]);
		*fds[i] = -1;
	}
}
