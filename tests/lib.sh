# shellcheck shell=bash
# tests/lib.sh - the one shell harness of satfeed's host scripts.  Sourced,
# never run; every script under tests/ (and the VM pipeline's host side
# through tests/vm/lib.sh) starts with it:
#
#     . "$(dirname "$0")/../lib.sh"
#
# Its parts live in tests/lib/, each with its own header:
#   lock.sh     the machine-wide test lock (sf_take_test_lock)
#   host.sh     cleanup traps, bpffs and tracefs mounts, the /sys/fs/bpf
#               snapshot, pin roots left behind, the pinned engine's ABI
#               version (and a false one), kernel.bpf_stats_enabled, free
#               and listening ports
#   figures.sh  benchmark output: every figure present once and finite
#   check.sh    the suites' checks (ASSERT_*), processes, cgroups, and
#               sf_begin / sf_finish around a suite
#   traffic.sh  socket traffic on demand from a controllable process
#   workload.sh the bundled server on a port of its own, and the RPS
#               fidelity run against the bundled generator
# The Python they run sits beside them as .py files.
#
# Paths, overridable from the environment: SF_BUILD ($OUTPUT, as
# tests/run.sh uses it, default build/), LOADER, CTL, SFSERVER, SFLOAD.

SF_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SF_LIB=$SF_REPO/tests/lib
# the build directory: $OUTPUT as tests/run.sh uses it (relative to the repo)
SF_BUILD=${OUTPUT:-build}
case $SF_BUILD in /*) ;; *) SF_BUILD=$SF_REPO/$SF_BUILD ;; esac
LOADER=${LOADER:-$SF_BUILD/satfeed-loader}
CTL=${CTL:-$SF_BUILD/satfeedctl}
SFSERVER=${SFSERVER:-$SF_BUILD/sfserver}
SFLOAD=${SFLOAD:-$SF_BUILD/sfload}
SF_PIN_ROOT=/sys/fs/bpf/satfeed

. "$SF_LIB/lock.sh"
. "$SF_LIB/host.sh"
. "$SF_LIB/figures.sh"
. "$SF_LIB/check.sh"
. "$SF_LIB/traffic.sh"
. "$SF_LIB/workload.sh"
