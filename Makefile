# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# satfeed build.  Out of tree in $(OUTPUT) (default build/), quiet unless V=1.
#   make            build build/satfeed-loader and build/satfeedctl, the
#                   workload tools, and kmod-example's user space and BPF
#                   (build/kmod-example/: sfconsumer, test_policy, and
#                   scx/scx_satfeed where a sched_ext BTF is at hand; the
#                   module itself: make -C kmod-example module)
#   make run        install deps, build, run the built-in demo (PID=<pid> to
#                   watch that process instead)
#   make test       install deps, build, run every test (the CI run)
#   make check      install deps, build, run the host suites only: unit,
#                   kernel and end to end on this kernel, and the paths the
#                   docs name; no QEMU guest, benchmark or sweep (~9 min)
#   make format     clang-format the C sources in place; make check-format
#                   fails when one is not formatted (changes nothing)
#   make bench      overhead benchmarks (printed, never asserted): the host's,
#                   against the paper's method, and both in the 6.12 guest
#                   (fentry mode); then make bench-scx
#   make bench-scx  scx_satfeed against the default scheduler in the 7.x
#                   guest: server p99, served rate and antagonists' progress
#                   at 20/60/90% of capacity (docs/sched_ext.md)
#   make check-fresh  clone HEAD into a fresh debootstrapped bookworm and run
#                   `make run` and `make test` there (downloads a distribution)
#   make install    PREFIX=/usr/local DESTDIR= (binaries in $(PREFIX)/sbin,
#                   systemd units in $(SYSTEMDUNITDIR))

OUTPUT ?= build
PREFIX ?= /usr/local
DESTDIR ?=
# systemd reads units from /usr/local/lib/systemd/system too (systemd.unit(5))
SYSTEMDUNITDIR ?= $(PREFIX)/lib/systemd/system
UNITS := satfeed-loader.service satfeed-exporter.service
CLANG ?= clang-19
LLVM_STRIP ?= llvm-strip-19
BPFTOOL ?= bpftool
CC ?= gcc
ARCH := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')

CFLAGS ?= -O2 -g
CFLAGS += -Wall -Wextra -Wno-unused-parameter -Wno-format-truncation -Werror -std=gnu11 \
	  -I$(OUTPUT) -Ibpf -Itools -Itools/lib -MMD -MP
# -mcpu=v3: atomic fetch-add with its result used (BPF_ADD | BPF_FETCH),
# which clang emits only from v3 on (at v1 it fails "Invalid usage of the
# XADD return value"); every kernel >= 5.1 runs v3
BPF_CFLAGS := -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_$(ARCH) -Wall \
	      -Werror -I$(OUTPUT) -Ibpf -Itools -MMD -MP
LDLIBS_BPF := -lbpf -lelf -lz

ifeq ($(V),1)
Q =
msg =
else
Q = @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

.DELETE_ON_ERROR:
.SECONDARY:
.PHONY: all kmod-example deps run test check vm-test vm-scx validate bench bench-scx check-fresh install uninstall \
	clean format check-format

PROGS := $(OUTPUT)/satfeed-loader $(OUTPUT)/satfeedctl \
	 $(OUTPUT)/sfserver $(OUTPUT)/sfload
TEST_PROGS := $(OUTPUT)/test_window_math $(OUTPUT)/test_sat_rules \
	      $(OUTPUT)/test_kernel \
	      $(OUTPUT)/sfbench $(OUTPUT)/test_escape $(OUTPUT)/test_reading \
	      $(OUTPUT)/sf_recursion.bpf.o \
	      $(OUTPUT)/sfcompat32

# libsatfeed: the user-space side of the consumer contract, an archive
# linked into every tool and test that opens satfeed's maps (its sources:
# tools/lib/lib.mk)
SF_LIB_DIR := tools/lib
include $(SF_LIB_DIR)/lib.mk
LIB_OBJ := $(patsubst %.c,$(OUTPUT)/%.o,$(SF_LIB_SRCS))
LIBSATFEED := $(OUTPUT)/libsatfeed.a
# the engine's program selection and attach order, and the understudy
# decision: linked into what loads the engine itself (loader, kernel tests)
ENGINE_OBJ := $(patsubst %.c,$(OUTPUT)/%.o,$(SF_ENGINE_SRCS))

all: $(PROGS) kmod-example

# kmod-example's sfconsumer (with its BPF skeletons), the policy's unit
# test and scx_satfeed (where a sched_ext BTF is at hand), by its own
# Makefile, which builds them with libsatfeed's sources (tools/lib/lib.mk);
# the module needs a kernel build tree (KDIR) and is
# built by the guest pipelines (tests/vm/run.sh)
kmod-example:
	$(call msg,MAKE,kmod-example)
	$(Q)$(MAKE) --no-print-directory $(if $(Q),-s) -C kmod-example user \
		KMOD_OUT=$(abspath $(OUTPUT))/kmod-example CC=$(CC) \
		CLANG=$(CLANG) LLVM_STRIP=$(LLVM_STRIP) BPFTOOL=$(BPFTOOL)

# --version names the commit it was built from (when built from git)
GIT_DESC := $(shell git describe --always --dirty 2>/dev/null || echo unknown)
$(OUTPUT)/sf_common.o: CFLAGS += -DSF_GIT='"$(GIT_DESC)"'

$(OUTPUT):
	$(Q)mkdir -p $@

$(OUTPUT)/vmlinux.h: | $(OUTPUT)
	$(call msg,GEN,$@)
	$(Q)$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@

# BPF objects: the engine in bpf/, the benchmark's floor in tests/bench/progs/
$(OUTPUT)/%.bpf.o: bpf/%.bpf.c $(OUTPUT)/vmlinux.h | $(OUTPUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@
	$(Q)$(LLVM_STRIP) -g $@ 2>/dev/null || true

# test-only BPF objects (the selftests' progs/ layout)
$(OUTPUT)/%.bpf.o: tests/kernel/progs/%.bpf.c $(OUTPUT)/vmlinux.h | $(OUTPUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@
	$(Q)$(LLVM_STRIP) -g $@ 2>/dev/null || true

$(OUTPUT)/%.bpf.o: tests/bench/progs/%.bpf.c $(OUTPUT)/vmlinux.h | $(OUTPUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@
	$(Q)$(LLVM_STRIP) -g $@ 2>/dev/null || true

$(OUTPUT)/%.skel.h: $(OUTPUT)/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $*_bpf > $@

$(OUTPUT)/%.o: tools/lib/%.c | $(OUTPUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

# sf_test.h, the selftests-style checks, lives with the kernel tests and
# serves the unit test too
$(OUTPUT)/%.o: tests/unit/%.c | $(OUTPUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -Itests/kernel -c $< -o $@

# test_kernel, one file per topic (sfcompat32.c is the 32-bit target it
# runs, built apart); its objects in a folder of their own
TEST_KERNEL_SRCS := $(filter-out tests/kernel/sfcompat32.c,$(wildcard tests/kernel/*.c))
TEST_KERNEL_OBJS := $(patsubst tests/kernel/%.c,$(OUTPUT)/test_kernel-objs/%.o,$(TEST_KERNEL_SRCS))

$(OUTPUT)/test_kernel-objs:
	$(Q)mkdir -p $@

$(OUTPUT)/test_kernel-objs/%.o: tests/kernel/%.c | $(OUTPUT)/test_kernel-objs
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -pthread -c $< -o $@

# sfbench, one file per concern; its objects in a folder of their own
SFBENCH_SRCS := $(wildcard tests/bench/sfbench/*.c)
SFBENCH_OBJS := $(patsubst tests/bench/sfbench/%.c,$(OUTPUT)/sfbench-objs/%.o,$(SFBENCH_SRCS))

$(OUTPUT)/sfbench-objs:
	$(Q)mkdir -p $@

$(OUTPUT)/sfbench-objs/%.o: tests/bench/sfbench/%.c | $(OUTPUT)/sfbench-objs
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -pthread -c $< -o $@

# satfeed-loader, one file per command and concern (loader/loader.h); its
# objects in a folder of their own
LOADER_SRCS := $(wildcard loader/*.c)
LOADER_OBJS := $(patsubst loader/%.c,$(OUTPUT)/loader-objs/%.o,$(LOADER_SRCS))

$(OUTPUT)/loader-objs:
	$(Q)mkdir -p $@

$(OUTPUT)/loader-objs/%.o: loader/%.c | $(OUTPUT)/loader-objs
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

# satfeedctl, one file per concern, its exporter among them (export*.c,
# metrics*.c); its objects in a folder of their own
SATFEEDCTL_SRCS := $(wildcard tools/satfeedctl/*.c)
SATFEEDCTL_OBJS := $(patsubst tools/satfeedctl/%.c,$(OUTPUT)/satfeedctl-objs/%.o,$(SATFEEDCTL_SRCS))

$(OUTPUT)/satfeedctl-objs:
	$(Q)mkdir -p $@

$(OUTPUT)/satfeedctl-objs/%.o: tools/satfeedctl/%.c | $(OUTPUT)/satfeedctl-objs
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -pthread -c $< -o $@

# sfserver and sfload, one file per concern in tools/workload/<tool>/, with
# the headers they share in tools/workload/; each tool's objects in a folder
# of their own
SFSERVER_SRCS := $(wildcard tools/workload/sfserver/*.c)
SFSERVER_OBJS := $(patsubst tools/workload/sfserver/%.c,$(OUTPUT)/sfserver-objs/%.o,$(SFSERVER_SRCS))
SFLOAD_SRCS := $(wildcard tools/workload/sfload/*.c)
SFLOAD_OBJS := $(patsubst tools/workload/sfload/%.c,$(OUTPUT)/sfload-objs/%.o,$(SFLOAD_SRCS))

$(OUTPUT)/sfserver-objs $(OUTPUT)/sfload-objs:
	$(Q)mkdir -p $@

$(OUTPUT)/sfserver-objs/%.o: tools/workload/sfserver/%.c | $(OUTPUT)/sfserver-objs
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -Itools/workload -pthread -c $< -o $@

$(OUTPUT)/sfload-objs/%.o: tools/workload/sfload/%.c | $(OUTPUT)/sfload-objs
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -Itools/workload -pthread -c $< -o $@

# Objects that include the skeleton need it generated first.
$(LOADER_OBJS) $(OUTPUT)/sf_engine.o: $(OUTPUT)/satfeed.skel.h
$(TEST_KERNEL_OBJS): $(OUTPUT)/satfeed.skel.h $(OUTPUT)/satfeed_test.skel.h
$(SFBENCH_OBJS): $(OUTPUT)/satfeed.skel.h $(OUTPUT)/sfbench_empty.skel.h

$(LIBSATFEED): $(LIB_OBJ)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && $(AR) rcs $@ $^

$(OUTPUT)/satfeed-loader: $(LOADER_OBJS) $(ENGINE_OBJ) $(LIBSATFEED)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $^ $(LDLIBS_BPF) -o $@

$(OUTPUT)/satfeedctl: $(SATFEEDCTL_OBJS) $(LIBSATFEED)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $^ -lbpf -lm -o $@

$(OUTPUT)/sfserver: $(SFSERVER_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) -pthread $^ -luring -o $@

$(OUTPUT)/sfload: $(SFLOAD_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) -pthread $^ -lm -o $@

$(OUTPUT)/test_window_math: $(OUTPUT)/test_window_math.o
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $^ -o $@

$(OUTPUT)/test_sat_rules: $(OUTPUT)/test_sat_rules.o
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $^ -o $@

$(OUTPUT)/test_escape: $(OUTPUT)/test_escape.o $(LIBSATFEED)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $^ -o $@

$(OUTPUT)/test_reading: $(OUTPUT)/test_reading.o $(LIBSATFEED)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $^ $(LDLIBS_BPF) -o $@

# test_kernel runs it (and test_cli.sh, and the guest): a 32-bit target,
# static so that the guest needs no 32-bit libraries (gcc-multilib)
$(OUTPUT)/test_kernel: $(TEST_KERNEL_OBJS) $(ENGINE_OBJ) $(LIBSATFEED) | \
		       $(OUTPUT)/sfcompat32
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) -pthread $^ $(LDLIBS_BPF) -luring -o $@

$(OUTPUT)/sfcompat32: tests/kernel/sfcompat32.c | $(OUTPUT)
	$(call msg,CC-M32,$@)
	$(Q)$(CC) -m32 -static -O2 -Wall -Wextra -Werror -std=gnu11 $< -o $@

$(OUTPUT)/sfbench: $(SFBENCH_OBJS) $(LIBSATFEED)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) -pthread $^ $(LDLIBS_BPF) -luring -o $@

# The package groups each goal needs (tools/install-deps.sh --help); a goal
# asks for all of its groups at once so apt resolves one consistent set.
deps:
	$(Q)bash tools/install-deps.sh $(DEPS)

run: DEPS = build run
test: DEPS = build test bench validate vm
check: DEPS = build test
vm-test: DEPS = build test vm
validate: DEPS = build validate vm
bench: DEPS = build bench vm
bench-scx: DEPS = build bench vm
check-fresh: DEPS = fresh

# make run: the demo (or PID=<pid>)
run: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)bash tools/demo.sh $(if $(PID),--pid $(PID))

test: deps
	$(Q)$(MAKE) --no-print-directory all $(TEST_PROGS)
	$(Q)bash tests/run.sh

# the developer's loop: every suite tests/run.sh tags `check`
check: deps
	$(Q)$(MAKE) --no-print-directory all $(TEST_PROGS)
	$(Q)bash tests/run.sh --check

# the Debian 6.12 guest: kmod-example, fentry mode, the engine on a 2nd kernel;
# VM_KERNEL=trixie7 for Debian's 7.x kernel instead (tests/vm/lib.sh)
vm-test: deps
	$(Q)$(MAKE) --no-print-directory all $(OUTPUT)/test_kernel
	$(Q)bash tests/vm/run.sh

# scx_satfeed, the sched_ext scheduler, in the 7.x guest with 4 CPUs and
# -icount, alone (it is also part of `make test`)
vm-scx: DEPS = build test vm
vm-scx: deps
	$(Q)$(MAKE) --no-print-directory all $(OUTPUT)/test_kernel
	$(Q)bash tests/vm/scx.sh

# fidelity: memcached and sfserver sweeps, R^2, plots, then the memcached
# sweep again with 10 ms delay and 1% loss (netem) in the 6.12 guest
# (docs/validation.md)
validate: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)bash tests/validate/validate.sh
	$(Q)bash tests/validate/corpus.sh
	$(Q)bash tests/vm/netem.sh

bench: deps
	$(Q)$(MAKE) --no-print-directory all $(OUTPUT)/sfbench
	$(Q)bash tests/bench/bench.sh
	$(Q)bash tests/bench/bench_paper.sh
	$(Q)bash tests/vm/bench.sh
	$(Q)bash tests/vm/scx-bench.sh

# the table and plot of docs/sched_ext.md (build/vm/scx-bench/)
bench-scx: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)bash tests/vm/scx-bench.sh

# a fresh bookworm (debootstrap, cached) runs the README's two commands on a
# clone of this tree's HEAD: what CI and a new user's machine will see
check-fresh: deps
	$(Q)bash tests/fresh/check-fresh.sh

install: $(OUTPUT)/satfeed-loader $(OUTPUT)/satfeedctl
	$(call msg,INSTALL,$(DESTDIR)$(PREFIX)/sbin)
	$(Q)install -d $(DESTDIR)$(PREFIX)/sbin
	$(Q)install -m 0755 $^ $(DESTDIR)$(PREFIX)/sbin/
	$(call msg,INSTALL,$(DESTDIR)$(SYSTEMDUNITDIR))
	$(Q)install -d $(DESTDIR)$(SYSTEMDUNITDIR)
	$(Q)for u in $(UNITS); do \
		sed 's|@SBINDIR@|$(PREFIX)/sbin|g' tools/systemd/$$u.in \
			> $(DESTDIR)$(SYSTEMDUNITDIR)/$$u && \
		chmod 0644 $(DESTDIR)$(SYSTEMDUNITDIR)/$$u || exit 1; \
	done

uninstall:
	$(Q)rm -f $(DESTDIR)$(PREFIX)/sbin/satfeed-loader \
		  $(DESTDIR)$(PREFIX)/sbin/satfeedctl \
		  $(addprefix $(DESTDIR)$(SYSTEMDUNITDIR)/,$(UNITS))

# the C sources `format` rewrites and `check-format` checks
FORMAT_SRCS = $(wildcard bpf/*.[ch] loader/*.[ch] tools/lib/*.[ch] \
		tools/satfeedctl/*.[ch] tools/workload/*.[ch] \
		tools/workload/*/*.[ch] tests/*/*.[ch] tests/*/progs/*.[ch])

format:
	$(Q)clang-format -i $(FORMAT_SRCS)

check-format:
	$(Q)clang-format --dry-run -Werror $(FORMAT_SRCS)

clean:
	$(call msg,CLEAN,$(OUTPUT))
	$(Q)rm -rf $(OUTPUT)

-include $(wildcard $(OUTPUT)/*.d $(OUTPUT)/sfbench-objs/*.d \
	$(OUTPUT)/loader-objs/*.d \
	$(OUTPUT)/satfeedctl-objs/*.d $(OUTPUT)/sfserver-objs/*.d \
	$(OUTPUT)/sfload-objs/*.d $(OUTPUT)/test_kernel-objs/*.d)
