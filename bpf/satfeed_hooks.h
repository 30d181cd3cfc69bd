/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * satfeed_hooks.h - the old spelling of the fentry mode's hook lists, kept
 * only because tests/sfbench.c still includes it: X(name, SC) for every
 * traced syscall (SATFEED_FEXIT_HOOKS) and for the waits
 * (SATFEED_FENTRY_HOOKS).  Both come from satfeed_syscalls.h; new code uses
 * SATFEED_SYSCALLS / SATFEED_WAIT_SYSCALLS there.  Remove this file when
 * sfbench does.
 */
#ifndef SATFEED_HOOKS_H
#define SATFEED_HOOKS_H

#include "satfeed_syscalls.h"

#define SATFEED_HOOK_NAME_SC(X, name, NAME, family, fd)		\
	X(name, SATFEED_SC_##NAME)
#define SATFEED_HOOK_WAIT_NAME_SC(X, name, NAME, family, fd)		\
	SATFEED_SC_IF_WAIT_##family(SATFEED_HOOK_NAME_SC, X, name, NAME, \
				    family, fd)

#define SATFEED_FEXIT_HOOKS(X)						\
	SATFEED_SYSCALL_TABLE(SATFEED_HOOK_NAME_SC, X)
#define SATFEED_FENTRY_HOOKS(X)						\
	SATFEED_SYSCALL_TABLE(SATFEED_HOOK_WAIT_NAME_SC, X)

#endif /* SATFEED_HOOKS_H */
