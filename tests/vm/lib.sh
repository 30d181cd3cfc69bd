# SPDX-License-Identifier: GPL-2.0
# tests/vm/lib.sh - helpers shared by the guest-pipeline scripts.  Sourced,
# not run; sources the host harness, tests/lib.sh.  Sets ROOT (repository
# root), VM_DIR (cache and outputs, default build/vm; override with the
# VM_DIR environment variable) and BUILD (the engine's build directory,
# default build/).

ROOT=${ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
VM_DIR=${VM_DIR:-$ROOT/build/vm}
BUILD=${BUILD:-$ROOT/build}
. "$ROOT/tests/lib.sh"
export DEBIAN_FRONTEND=noninteractive

vm_log() { printf 'vm: %s\n' "$*" >&2; }
vm_die() { printf 'vm: error: %s\n' "$*" >&2; exit 1; }

vm_need_root() {
	[ "$(id -u)" = 0 ] || vm_die "must run as root (apt-get, qemu image build)"
}

# Take the satfeed tests' lock (SF_LOCK) on fd 9 for the rest of the
# script: a guest takes a whole CPU for minutes, not beside another test's
# timings.
vm_take_test_lock() {
	sf_take_test_lock || vm_die "cannot take the test lock"
}

# The Debian mirror URI the system's apt sources use (not the security one).
vm_mirror_uri() {
	local uri
	uri=$(awk '/^URIs:/ && $2 !~ /security/ { print $2; exit }' \
		/etc/apt/sources.list.d/debian.sources 2>/dev/null)
	[ -n "$uri" ] || uri=$(awk '/^deb / && $3 !~ /security/ { print $2; exit }' \
		/etc/apt/sources.list 2>/dev/null)
	[ -n "$uri" ] || vm_die "cannot find the Debian mirror URI in the apt sources"
	echo "$uri"
}

# vm_help: the calling script's header comment, from its third line to
# `set -e...`, as its --help.
vm_help() { sed -n '3,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; }

# vm_begin: how every script that boots a guest starts, once its arguments
# are read: root, the test lock for the rest of the script, the guest
# kernel (setup-kernel.sh, cached) and its settings (KVER, KREL, KDIR,
# VMLINUZ); VM_START is when it began.
vm_begin() {
	VM_START=$(date +%s)
	vm_need_root
	vm_take_test_lock
	"$ROOT/tests/vm/setup-kernel.sh"
	vm_kernel_env
}

# apt-get update at most once per hour unless the backports lists are missing.
vm_apt_update() {
	local stamp=$VM_DIR/.apt-updated force=${1:-}
	mkdir -p "$VM_DIR"
	if [ -z "$force" ] && [ -f "$stamp" ] &&
	   [ -n "$(find "$stamp" -mmin -60 2>/dev/null)" ] &&
	   ls /var/lib/apt/lists/*bookworm-backports*Packages >/dev/null 2>&1; then
		return 0
	fi
	vm_log "apt-get update"
	apt-get update -qq >/dev/null || vm_die "apt-get update failed"
	touch "$stamp"
}

# vm_deps: the guest pipeline's host packages, through the project's one
# installer (tools/install-deps.sh, group vm).
vm_deps() {
	bash "$ROOT/tools/install-deps.sh" vm ||
		vm_die "tools/install-deps.sh vm failed"
}

# ---- the guest kernel ----
# VM_KERNEL selects it (tests/vm/setup-kernel.sh fetches it):
#   bpo612   Debian bookworm-backports' kernel (6.12; the default)
#   trixie7  Debian trixie-backports' kernel (7.x: PREEMPT_LAZY, sched_ext),
#            fetched with a private apt state (tests/vm/kernel-trixie7.sh)
# Each has its own cache, VM_KERNEL_DIR, holding its kernel.env.
vm_select_kernel() {
	case $1 in
	bpo612|trixie7) ;;
	*) vm_die "unknown guest kernel '$1' (VM_KERNEL: bpo612 or trixie7)" ;;
	esac
	VM_KERNEL=$1
	VM_KERNEL_DIR=$VM_DIR/kernel-$VM_KERNEL
	export VM_KERNEL
}
vm_select_kernel "${VM_KERNEL:-bpo612}"

# vm_kernel_env: load the selected kernel's kernel.env (KREL KVER KDIR
# VMLINUZ VMLINUX KMAKE_ARGS).
vm_kernel_env() {
	[ -f "$VM_KERNEL_DIR/kernel.env" ] ||
		vm_die "no $VM_KERNEL_DIR/kernel.env: run VM_KERNEL=$VM_KERNEL tests/vm/setup-kernel.sh"
	. "$VM_KERNEL_DIR/kernel.env"
}

# ---- one guest run ----
# The drivers (run.sh, scx.sh, bench.sh, scx-bench.sh, netem.sh) boot a
# guest one way: their options (vm_args), the engine's binaries in the image
# (vm_bins), scx_satfeed for the 7.x guest (vm_build_scx), the image and the
# boot (vm_boot).

# Guest time from the instruction count (1 ns per guest instruction), not
# from the host's clock: the same run gives the same figures whatever else
# the host is doing.  Without it, TCG rounds come in two speeds a factor of
# about 1.8 apart, with host load.
VM_ICOUNT="-icount shift=0,sleep=on"

vm_usage() {
	printf '%s: %s (see --help)\n' "$(basename "$0")" "$*" >&2
	exit 2
}

# vm_args 'quick wallclock' "$@": a driver's options.  Always -G SECONDS
# (GUEST_LIMIT: the guest's own budget in guest seconds; the driver sets
# its default), -T SECONDS (TIMEOUT: the wall-clock limit outright instead
# of the budget scaled by the host's measured speed; see boot.sh), -a
# 'KEY=val ...' (APPEND, the guest's settings) and -h/--help; with "quick"
# in the first word --quick (QUICK=1), with "wallclock" the
# instruction-count clock (ICOUNT, VM_ICOUNT) unless --wallclock.  Anything
# else: exit 2.
vm_args() {
	local opts=" $1 "
	shift
	QUICK=0
	APPEND=
	ICOUNT=
	[[ $opts == *" wallclock "* ]] && ICOUNT=$VM_ICOUNT
	while [ $# -gt 0 ]; do
		case $1 in
		--quick)
			[[ $opts == *" quick "* ]] || vm_usage "unknown argument '$1'"
			QUICK=1 ;;
		--wallclock)
			[[ $opts == *" wallclock "* ]] || vm_usage "unknown argument '$1'"
			ICOUNT= ;;
		-G|-T|-a)
			[ $# -ge 2 ] || vm_usage "$1 needs a value"
			case $1 in
			-G) GUEST_LIMIT=$2 ;;
			-T) TIMEOUT=$2 ;;
			*) APPEND=$2 ;;
			esac
			shift ;;
		-h|--help) vm_help; exit 0 ;;
		*) vm_usage "unknown argument '$1'" ;;
		esac
		shift
	done
}

# vm_bins NAME...: the engine's binaries NAME from $BUILD, appended to BINS
# as mkinitramfs.sh options; a missing one ends the run.
vm_bins() {
	local b
	for b; do
		[ -x "$BUILD/$b" ] || vm_die "$BUILD/$b missing (make all ${BUILD#"$ROOT"/}/$b)"
		BINS+=(-b "$BUILD/$b")
	done
}

# vm_build_scx: scx_satfeed (kmod-example/scx) against the guest kernel's
# BTF, in SCX_OUT, one output tree per guest kernel.
vm_build_scx() {
	SCX_OUT=$BUILD/kmod-example-$VM_KERNEL
	make -s -C "$ROOT/kmod-example" KMOD_OUT="$SCX_OUT" \
		SCX_VMLINUX_BTF="$VMLINUX" scx >/dev/null
}

# ---- the host's speed ----
# Every wall-clock limit of a guest run is scaled from this host's speed,
# measured in the same run (nothing is cached: a figure from another host,
# or from this one under another load, would be wrong).  vm_calibrate boots
# busybox alone with guest/calib.sh as /test.sh under the run's QEMU
# options, CPUs and memory, always with -icount (about 20 s here), and
# times a fixed piece of guest work, on one CPU and then on every CPU at
# once, against the host's wall clock.  Under -icount the guest's clock
# counts instructions, so the ratio wall seconds / guest seconds is how
# slow this host runs the guest: VM_HOST_FACTOR, the larger of the two
# phases.  boot.sh scales its limits by it (see its header): the guest's
# own budget (-G, guest seconds under -icount) needs no scaling under
# -icount, and is scaled too on a run on the host's clock.  VM_HOST_FACTOR set in the environment is used as it is
# (e.g. measured once by a caller that boots several guests).
# Figures: VM_CALIB (one line), also in $VM_DIR/calib-KERNEL-Ncpu.txt.
vm_calibrate() {
	local cpus=$1 mem=$2 dir=$VM_DIR/calib log t0 tag
	if [ -n "${VM_HOST_FACTOR:-}" ]; then
		VM_CALIB="host factor $VM_HOST_FACTOR (from the environment)"
		vm_log "$VM_CALIB"
		return 0
	fi
	# CPUS is -smp's value: "4", or "4,sockets=1,cores=2,threads=2"
	tag=${cpus//[,=]/-}
	log=$VM_DIR/calib-console-$VM_KERNEL-${tag}cpu.log
	VM_DIR=$dir "$ROOT/tests/vm/mkinitramfs.sh" -o "$dir/initrd.gz" \
		-t "$ROOT/tests/vm/guest/calib.sh" 2>/dev/null ||
		vm_die "calibration: cannot build its initramfs"
	t0=$EPOCHREALTIME
	# its own limit cannot come from itself: VM_CALIB_TIMEOUT, 600 s;
	# single-threaded TCG whatever the run uses: QEMU refuses -icount
	# with multi-threaded TCG
	VM_TCG_THREAD=single VM_DIR=$dir VM_QUIET=1 \
		VM_QEMU_OPTS="${VM_QEMU_OPTS:-} $VM_ICOUNT" \
		"$ROOT/tests/vm/boot.sh" -k "$VMLINUZ" -i "$dir/initrd.gz" \
		-l "$log" -c "$cpus" -m "$mem" -T "${VM_CALIB_TIMEOUT:-600}" \
		>/dev/null 2>&1 ||
		vm_die "calibration boot failed (console: $log)"
	VM_CALIB=$(awk -v t0="$t0" -v cpus="$cpus" '
		{ l = $0; w = $1; sub(/.* t=/, ""); t = $1 + 0 }
		l ~ /SATFEED-VM: init up/ { bw = w - t0; bt = t }
		l ~ /SATFEED-CALIB: begin (one|all)/ { w1 = w; t1 = t }
		l ~ /SATFEED-CALIB: end one/ { fo = (w - w1) / (t - t1); so = w - w1; go = t - t1 }
		l ~ /SATFEED-CALIB: end all/ { fa = (w - w1) / (t - t1); sa = w - w1; ga = t - t1 }
		END {
			if (!fo || !fa) exit 1
			f = fo > fa ? fo : fa
			printf "factor %.2f: boot to /init %.1f s wall (guest %.2f s); 1 CPU busy %.2f s wall for %.2f guest s (%.2f); %d CPUs busy %.2f s wall for %.2f guest s (%.2f)\n",
				f, bw, bt, so, go, fo, cpus, sa, ga, fa
		}' "$log.times") || vm_die "calibration: no figures in $log"
	VM_HOST_FACTOR=${VM_CALIB#factor }
	VM_HOST_FACTOR=${VM_HOST_FACTOR%%:*}
	export VM_HOST_FACTOR
	echo "$VM_KERNEL guest, $cpus CPUs, QEMU TCG $VM_ICOUNT: $VM_CALIB" \
		> "$VM_DIR/calib-$VM_KERNEL-${tag}cpu.txt"
	vm_log "host speed: $VM_CALIB"
}

# vm_boot INITRD GUEST LOG [boot.sh options]: build INITRD (mkinitramfs.sh)
# from the options in BINS and FILES (-b and -f, arrays) with GUEST as its
# /test.sh, and boot it (boot.sh) on the guest kernel with the console in
# LOG, QEMU's instruction-count clock when ICOUNT is set (with any
# VM_QEMU_OPTS of the caller's), the driver's GUEST_LIMIT (-G) and TIMEOUT
# (-T) when set, and the boot.sh options given (-a, -c, -m; 2048 MiB by
# default: the 7.x verifier took over 800 MiB of slab to load the ABI 4
# engine, and 1024 MiB guests were OOM-killed there), after
# measuring the host's speed (vm_calibrate) with the same CPUs and memory.  INITRD's folder is the run's own VM_DIR (its initramfs
# tree and console.bad): a driver whose runs may meet another's there gives
# it a folder of its own.  Sets VM_RC, boot.sh's verdict (0 passed: the
# caller reads LOG either way), and VM_SECS, the seconds since vm_begin.
vm_boot() {
	local initrd=$1 guest=$2 log=$3 dir cpus=2 mem=2048 a i
	shift 3
	dir=$(dirname "$initrd")
	a=("$@")
	for ((i = 0; i < ${#a[@]} - 1; i++)); do
		case ${a[i]} in
		-c) cpus=${a[i + 1]} ;;
		-m) mem=${a[i + 1]} ;;
		esac
	done
	vm_calibrate "$cpus" "$mem"
	VM_DIR=$dir "$ROOT/tests/vm/mkinitramfs.sh" -o "$initrd" -t "$guest" \
		${BINS[@]+"${BINS[@]}"} ${FILES[@]+"${FILES[@]}"}
	VM_RC=0
	VM_DIR=$dir VM_QEMU_OPTS="${VM_QEMU_OPTS:-}${ICOUNT:+ $ICOUNT}" \
		"$ROOT/tests/vm/boot.sh" -k "$VMLINUZ" -i "$initrd" \
		-l "$log" ${GUEST_LIMIT:+-G "$GUEST_LIMIT"} \
		${TIMEOUT:+-T "$TIMEOUT"} "$@" || VM_RC=$?
	VM_SECS=$(( $(date +%s) - VM_START ))
}
