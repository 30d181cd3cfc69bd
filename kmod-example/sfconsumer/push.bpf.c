// SPDX-License-Identifier: GPL-2.0
/*
 * push.bpf.c - the push side of kmod-example: forward every window that
 * satfeed closes to the module's kfunc satfeed_consumer_push().
 *
 * What: satfeed calls its global no-op satfeed_window_closed(slot, stream, w)
 * right after a window closes, outside any lock.  sfconsumer loads one of the
 * two programs below per engine program that contains that function and
 * attaches it there (bpf_program__set_attach_target with the pinned engine
 * program's fd), so the module hears of each window synchronously.
 *
 * Why two: an freplace (BPF_PROG_TYPE_EXT) program replaces the function
 * outright and resolves to the target's program type, so it may call a kfunc
 * registered for TRACING; but the kernel refuses to extend fentry/fexit
 * programs ("Cannot extend fentry/fexit"), and only one freplace may sit on
 * a function.  An fentry program on the BPF function works on every engine
 * program type (tp_btf and fentry/fexit, one level of tracing-on-tracing is
 * allowed since 6.9) and several consumers can attach side by side.  The
 * engine stays untouched either way and runs the same when nothing is
 * attached.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "satfeed.h"
#include "satfeed_consumer.h"

char LICENSE[] SEC("license") = "GPL";

extern int satfeed_consumer_push(__u32 slot, __u32 stream,
				 struct satfeed_window *w) __ksym;

/*
 * Replaces satfeed_window_closed(): same prototype, same return value.  The
 * module takes the three streams of sf_streams; since ABI 4 the engine also
 * closes the response and service-time windows (streams 3 and 4) through
 * this hook, and they are not the module's to take.
 */
SEC("freplace/satfeed_window_closed")
int sfc_push_freplace(__u32 slot, __u32 stream, struct satfeed_window *w)
{
	if (w && stream < SATFEED_NR_STREAMS)
		satfeed_consumer_push(slot, stream, w);
	return 0;
}

/*
 * Runs on entry to satfeed_window_closed().  The verifier lets a tracing
 * program on a BPF function read only scalar arguments through the context
 * (a pointer argument is not a kernel type it can check), so the three
 * arguments come from bpf_get_func_arg() and the window, which lives on the
 * engine program's stack, is copied with bpf_probe_read_kernel().
 */
SEC("fentry/satfeed_window_closed")
int sfc_push_fentry(__u64 *ctx)
{
	struct satfeed_window copy;
	__u64 slot, stream, w;

	if (bpf_get_func_arg(ctx, 0, &slot) ||
	    bpf_get_func_arg(ctx, 1, &stream) ||
	    bpf_get_func_arg(ctx, 2, &w) || !w ||
	    stream >= SATFEED_NR_STREAMS)
		return 0;
	if (bpf_probe_read_kernel(&copy, sizeof(copy), (void *)w))
		return 0;
	satfeed_consumer_push(slot, stream, &copy);
	return 0;
}
