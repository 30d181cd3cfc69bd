# tools/lib/lib.mk - what libsatfeed is built from, for every Makefile that
# builds it (the top-level one and kmod-example's).  SF_LIB_DIR is tools/lib.
#
# libsatfeed.a is every source here but the engine's loading side; a
# program links the archive and gets only the objects it calls (the loader
# no Prometheus code, sfconsumer no target table writer).  The engine's
# sources include the engine's skeleton, so they are linked apart, by what
# loads the engine itself (the loader, the kernel tests).
SF_ENGINE_SRCS := sf_engine.c sf_preempt.c
SF_LIB_SRCS := $(filter-out $(SF_ENGINE_SRCS),\
		$(sort $(notdir $(wildcard $(SF_LIB_DIR)/*.c))))
