/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * sf_common.h - user-space helpers shared by satfeed-loader, satfeedctl and
 * the tests: the syscall table, attach mode names, exit codes.
 */
#ifndef __SF_COMMON_H
#define __SF_COMMON_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include "satfeed.h"

/* The release; SF_GIT (the Makefile's git describe) says which commit. */
#define SF_VERSION	"0.4"
#ifndef SF_GIT
#define SF_GIT		"unknown"
#endif

/* Exit codes of satfeed-loader and satfeedctl (documented in --help). */
enum sf_exit {
	SF_EXIT_OK = 0,
	SF_EXIT_ERROR = 1,	/* runtime failure */
	SF_EXIT_USAGE = 2,	/* bad argument */
	SF_EXIT_NOT_LOADED = 3,	/* no satfeed pins under the bpffs root */
	SF_EXIT_PERM = 4,	/* permission denied */
	SF_EXIT_ABI = 5,	/* pinned engine speaks another ABI version,
				 * or a pin's shape is not the contract's */
	SF_EXIT_TARGET = 6,	/* unknown or vanished target */
	SF_EXIT_FULL = 7,	/* no free target slot */
	SF_EXIT_EXISTS = 8,	/* already loaded / already watched */
};

/* nr of an io_uring member: not a syscall, present wherever io_uring is */
#define SF_NR_URING	(-2)

struct sf_syscall_desc {
	const char *name;	/* NULL: no member has this sc_mask bit */
	int family;		/* enum satfeed_stream_id */
	long nr;		/* this architecture's number, -1 if none,
				 * SF_NR_URING for an io_uring member */
};

/* Every sc_mask member by bit: the syscalls, then the io_uring members
 * from SATFEED_SC_URING_FIRST on ("io_uring_<name>"). */
extern const struct sf_syscall_desc sf_syscalls[SATFEED_SC_NR_BITS];
extern const char *const sf_stream_names[SATFEED_NR_STREAMS];
/*
 * The name of stream `stream` as the outputs print it: sf_stream_names[]
 * for send, recv and poll, "response" (SATFEED_STREAM_RESP) and "service"
 * (SATFEED_STREAM_SVC), "?" for another id.
 */
const char *sf_stream_name(__u32 stream);

const char *sf_attach_name(__u32 mode);
int sf_attach_parse(const char *s, __u32 *mode);

/*
 * Parse "a,b,c" into syscall bits of one family (or of any family when
 * family < 0).  "send"/"recv" are accepted as sendto/recvfrom.  On error
 * prints a one-line reason and returns -1.
 */
int sf_parse_syscalls(const char *prog, const char *list, int family,
		      __u32 *mask);
/* The syscalls of a family (any family when < 0) this arch has, "a,b,c". */
void sf_family_names(int family, char *buf, size_t len);
void sf_format_syscalls(__u32 mask, char *buf, size_t len);
/* room for every member's name, comma separated (all 32 bits used) */
#define SF_MASK_TEXT_LEN	640

/* Is path on a bpf filesystem?  1 yes, 0 no, -errno on error. */
int sf_is_bpffs(const char *path);

__u64 sf_now_mono_ns(void);

/*
 * Messages.  Every line a tool prints on stderr starts with its name, set
 * once in main() (sf_prog = "satfeedctl"), so the library's lines carry
 * the same prefix as the tool's own.  One line each, saying what to do.
 */
extern const char *sf_prog;

void sf_vmsg(const char *fmt, va_list ap);
void sf_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* sf_msg(), then return code (an enum sf_exit): return sf_fail(...) */
int sf_fail(int code, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* "PROG: warning: ..." */
void sf_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * The exact command that loads the engine at root, for "not loaded"
 * hints: "satfeed-loader load", with --bpffs ROOT when root is not the
 * default.
 */
const char *sf_load_hint(const char *root, char *buf, size_t len);

/* "PROG VERSION (ABI N, git X)" on stdout, for --version */
void sf_print_version(void);

#endif /* __SF_COMMON_H */
