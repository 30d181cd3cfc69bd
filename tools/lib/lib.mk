# tools/lib/lib.mk - what libsatfeed is built from, for every Makefile that
# builds it (the top-level one and kmod-example's).  SF_LIB_DIR is tools/lib.
#
# libsatfeed.a is every source here but the engine's loading side; a
# program links the archive and gets only the objects it calls (sfconsumer
# no target table writer).  The sources go by concept (README.md's layout):
# reading (sf_pins, sf_reading, sf_progstats), targets (sf_target,
# sf_table), selector (sf_selector, sf_proc), root (sf_root,
# sf_root_unpin), engine (sf_engine, sf_preempt) and what they share
# (sf_common, sf_escape, sf_consumer).  The engine's
# sources include the engine's skeleton, so they are linked apart, by what
# loads the engine itself (the loader, the kernel tests).
SF_ENGINE_SRCS := sf_engine.c sf_preempt.c
SF_LIB_SRCS := $(filter-out $(SF_ENGINE_SRCS),\
		$(sort $(notdir $(wildcard $(SF_LIB_DIR)/*.c))))
