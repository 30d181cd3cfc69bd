#!/usr/bin/env bash
# run.sh - every satfeed test, in dependency order; `make test` runs this.
#
#   bash tests/run.sh                      every suite
#   SATFEED_TESTS="test_kernel test_cli" bash tests/run.sh
#                                          only the suites whose command line
#                                          matches one of the words
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

case ${1:-} in
'') ;;
-h | --help)
	sed -n '2,/^set -uo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'
	exit 0
	;;
*)
	echo "tests/run.sh: unknown argument '$1' (suites are chosen with SATFEED_TESTS; see --help)" >&2
	exit 2
	;;
esac

B=${OUTPUT:-build}
suites=(
	"$B/test_window_math"
	"$B/test_sat_rules"
	"$B/test_escape"
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
# SATFEED_TESTS="test_kernel test_cli" runs only suites whose text matches.
only=${SATFEED_TESTS:-}

if [ "$(id -u)" -ne 0 ]; then
	echo "tests/run.sh: the kernel suites need root" >&2
	echo "0 passed, 1 failed"
	exit 1
fi
sf_bpffs_mount || { echo "tests/run.sh: cannot mount bpffs" >&2; exit 1; }

passed=0 failed=0
failed_names=()
for s in "${suites[@]}"; do
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
	if $s; then
		passed=$((passed + 1))
		echo "=== $s: ok ($(( $(date +%s) - start )) s)"
	else
		failed=$((failed + 1))
		failed_names+=("$s")
		echo "=== $s: FAILED ($(( $(date +%s) - start )) s)"
	fi
done
for n in "${failed_names[@]}"; do
	echo "failed suite: $n"
done
if [ -d /sys/fs/bpf/satfeed ]; then
	echo "tests left /sys/fs/bpf/satfeed behind"
	failed=$((failed + 1))
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
