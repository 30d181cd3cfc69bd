#!/usr/bin/env bash
# run.sh - every satfeed test, in dependency order; `make test` runs this.
#
#   bash tests/run.sh                      every suite (`make test`)
#   bash tests/run.sh --check              the host suites only (`make check`):
#                                          unit, kernel and end to end on this
#                                          kernel; no QEMU guest, benchmark or
#                                          fidelity sweep
#   SATFEED_TESTS="test_kernel test_cli" bash tests/run.sh
#                                          only the suites whose command line
#                                          matches one of the words
#
# Every suite is listed once, in this script; --check runs those outside
# tests/bench, tests/validate and tests/vm.  The last lines give the checks
# the suites counted and the time, then the suites: "N passed, M failed".
#
# Each suite is a program or script that prints "N passed, M failed" and
# exits non-zero on failure.  Privileged suites need root: under CI=true a
# suite that cannot run is a failure, never a skip.  Every suite that loads
# BPF programs holds the machine-wide test lock (tests/lib/lock.sh) while it
# runs: the scripts take it themselves, the C suites are run under it here.
# Exit status: 0 all passed, 1 a suite failed, 2 bad usage.
set -uo pipefail
cd "$(dirname "$0")/.."
. tests/lib.sh

quick=0
case ${1:-} in
'') ;;
--check) quick=1 ;;
-h | --help)
	sed -n '2,/^set -uo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'
	exit 0
	;;
*)
	echo "tests/run.sh: unknown argument '$1' (--check or none; suites are chosen with SATFEED_TESTS; see --help)" >&2
	exit 2
	;;
esac

B=${OUTPUT:-build}
suites=(
	"bash tests/unit/test_paths.sh"
	"$B/test_window_math"
	"$B/test_sat_rules"
	"$B/test_escape"
	"$B/test_reading"
	"sf_run_locked $B/test_kernel"
	"bash tests/e2e/test_tools.sh"
	"bash tests/e2e/test_cli.sh"
	"bash tests/e2e/test_cli_edges.sh"
	"bash tests/e2e/test_discover.sh"
	"bash tests/e2e/test_hardening.sh"
	"bash tests/e2e/test_report.sh"
	"bash tests/e2e/test_export.sh"
	"bash tests/e2e/test_faults.sh"
	"bash tests/e2e/test_e2e.sh"
	"bash tests/e2e/test_uring.sh"
	"bash tests/e2e/test_signal.sh"
	"bash tests/bench/bench.sh --quick"
	"bash tests/bench/bench_paper.sh --quick"
	"bash tests/validate/validate.sh --quick"
	"bash tests/vm/run.sh"
	"bash tests/vm/run.sh --kernel trixie7"
	"bash tests/vm/scx.sh"
	"bash tests/vm/bench.sh --quick"
)
# --check leaves out the suites in these folders: the benchmarks, the
# fidelity sweeps and the QEMU guests.
FULL_ONLY='tests/(bench|validate|vm)/'
# SATFEED_TESTS="test_kernel test_cli" runs only suites whose text matches.
only=${SATFEED_TESTS:-}

if [ "$(id -u)" -ne 0 ]; then
	echo "tests/run.sh: the kernel suites need root" >&2
	echo "0 passed, 1 failed"
	exit 1
fi
sf_bpffs_mount || { echo "tests/run.sh: cannot mount bpffs" >&2; exit 1; }

passed=0 failed=0 checks_ok=0 checks_bad=0 waited=0 t0=$(date +%s)
failed_names=() failed_checks=()
log=$(mktemp /tmp/satfeed-run.XXXXXX)
trap 'rm -f "$log"' EXIT
for s in "${suites[@]}"; do
	[ "$quick" = 1 ] && [[ $s =~ $FULL_ONLY ]] && continue
	if [ -n "$only" ] && ! grep -qE "$(echo "$only" | tr ' ' '|')" <<<"$s"; then
		continue
	fi
	file=${s#sf_run_locked }
	file=${file#bash }
	file=${file%% *}
	if [ ! -e "$file" ]; then
		echo "=== $s: MISSING"
		failed=$((failed + 1))
		failed_names+=("$s (missing)")
		continue
	fi
	echo "=== $s"
	start=$(date +%s)
	if $s 2>&1 | tee "$log"; then
		passed=$((passed + 1))
		echo "=== $s: ok ($(( $(date +%s) - start )) s)"
	else
		failed=$((failed + 1))
		failed_names+=("$s")
		echo "=== $s: FAILED ($(( $(date +%s) - start )) s)"
		# the failed checks' names again, for the summary: a CI log is
		# read from its tail, and a long suite's FAIL lines are far up
		while IFS= read -r l; do
			failed_checks+=("${file##*/}: $l")
		done < <(sed -nE 's/^(FAIL|not ok [0-9]+) - (.*)$/\2/p' "$log" |
			head -20)
	fi
	read -r ok bad < <(sed -nE 's/^(.*: )?([0-9]+) passed, ([0-9]+) failed$/\2 \3/p' "$log" | tail -1)
	checks_ok=$((checks_ok + ${ok:-0}))
	checks_bad=$((checks_bad + ${bad:-0}))
	w=$(sed -nE 's/^# .*: waited ([0-9]+) s for the test lock$/\1/p' "$log" |
		awk '{ t += $1 } END { print t + 0 }')
	waited=$((waited + w))
done
for n in "${failed_names[@]}"; do
	echo "failed suite: $n"
done
for n in "${failed_checks[@]}"; do
	echo "failed check: $n"
done
if [ -d /sys/fs/bpf/satfeed ]; then
	echo "tests left /sys/fs/bpf/satfeed behind"
	failed=$((failed + 1))
fi
echo "checks: $checks_ok passed, $checks_bad failed, in $(( $(date +%s) - t0 )) s ($waited s of it waiting for other tests' lock)"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
