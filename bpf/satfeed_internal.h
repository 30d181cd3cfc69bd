/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * satfeed_internal.h - empty: the engine's skeleton names no private type
 * any more (the test hook moved to tests/kernel/progs/).  Kept only because
 * tests/sfbench.c still includes it; remove both together.
 */
#ifndef __SATFEED_INTERNAL_H
#define __SATFEED_INTERNAL_H
#endif /* __SATFEED_INTERNAL_H */
