"""fidelity.py - what the sweep driver (sweep.py) and the report (report.py)
of tests/validate/validate.sh share: the columns of a sweep's CSV and the
log line."""
import sys

CSV_FIELDS = [
    "level", "offered_rps", "served_rps", "achieved_rps", "rps_obs",
    "send_windows", "var_send_ns2", "var_recv_ns2", "recv_windows",
    "poll_mean_ns", "poll_windows", "p50_us", "p99_us", "p999_us",
    "timeouts", "errors", "duration_s",
    # saturation (tests/validate/satrule.py): medians over the level's
    # windows, waits per send from the counters, the engine's verdict
    # (sf_verdict, the state seen most often) and the reference rule's
    "wait_permille", "idle_permille", "cv2_send_permille",
    "cv2_recv_permille", "waits_per_send_permille", "state", "rule_state",
    # the level as a share of the capacity, and the verdict satfeedctl
    # show --json published during it (satrule's numbers): the one read
    # most often and the worst (tests/validate/corpus.sh)
    "pct_capacity", "verdict", "verdict_worst",
    # queueing seen from outside satfeed (probe.py, corpus.sh only)
    "probe_backlog_max", "probe_rxq_max", "probe_udp_rxq_max",
    "probe_udp_drops", "probe_runq_permille", "probe_runq_share_permille",
    # the receive queue the engine saw (ABI 10, saturation.unread_max of
    # each reading): its median and its largest over the level, bytes
    "unread_median", "unread_top",
]


def log(*a):
    print("validate:", *a, file=sys.stderr, flush=True)
