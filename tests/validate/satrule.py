"""satrule.py - the engine's saturation rule (bpf/sat_rules.h, ABI 10),
recomputed in Python from what satfeedctl shows, so that the sweeps
(tests/validate/sweep.py, corpus.sh) can check the engine's verdict against
an independent implementation, and both against the knee.

The default rules (docs/validation.md, "Corpus", has the runs that chose
them): saturation is queueing, seen two ways that do not depend on the
server's event-loop shape.

  idle     the idle share of the threads that woke in the engine's last
           tick (show --json: saturation.idle_permille, once seen has
           SEEN_IDLE); low: the threads are busy or wait for a CPU
  svc_avg  from the service windows this reference sees: each new newest
           window with at least SVC_MIN_SAMPLES samples moves it, the
           first one's mean, then a lower mean at once, a higher one
           (svc_avg + mean) >> 1; svc_base the lowest such mean; svc = floor(1000 * svc_avg / svc_base)
  drops    the share of the datagrams that reached the target's datagram
           sockets in the engine's last tick that were dropped
           (saturation.drop_permille, once seen has SEEN_DROPS)
  cpu      the share of the CPUs they may use that the target's threads
           used in the engine's last tick (saturation.cpu_permille, once
           seen has SEEN_CPU; ABI 9 judges by it)
  unread   the most bytes a receive on one of the target's accepted TCP
           connections left unread in the engine's last tick
           (saturation.unread_max, once seen has SEEN_UNREAD; ABI 10)
  UNKNOWN  until an idle share, a service mean, a drop share, a CPU
           share or an unread figure is known
  FULL     idle < IDLE_FULL or svc > SVC_FULL or drops >= DROP_FULL or
           cpu >= CPU_FULL or unread >= UNREAD_FULL
  NEAR     idle < IDLE_NEAR or svc > SVC_NEAR or drops >= DROP_NEAR (or
           cpu >= CPU_NEAR, off by default) or unread >= UNREAD_NEAR
  OK       otherwise; and OK while the engine says quiet, once a send or
           receive window closed (the average restarts at the base)

The engine moves the service average at each tick (every max-age / 2) with
the newest window then; this reference sees the windows only when it reads
(every ~0.2 s), so the two agree on the level, not on every window.  The
waits-per-send rules (WPS_*) are off by default since ABI 5; wps_avg is
still computed for the tables.

The other figures of a window, for the tables:

  wait share  floor(1000 * sum_ns / (end_ns - start_ns)) of a poll window,
              per thread that waited in it;
  idle share  the same of sum_ns - runq_ns (waiting for work, not a CPU);
  cv2         floor(1000 * var / mean^2) of a send or recv window.
"""

WPS_NEAR = 150         # off by default (ABI 5): for rules that set them
WPS_FULL = 30
IDLE_NEAR = 150        # ABI 7 (250 and 100 before)
IDLE_FULL = 50
SVC_NEAR = 4000
SVC_FULL = 6000
DROP_NEAR = 10
DROP_FULL = 50
CPU_NEAR = None         # off (ABI 9): three corpus runs did not support it
CPU_FULL = 970          # ABI 9
UNREAD_NEAR = 16384     # ABI 10, bytes
UNREAD_FULL = 32768
SVC_MIN_SAMPLES = 16
SEEN_IDLE = 1 << 6
SEEN_DROPS = 1 << 8
SEEN_CPU = 1 << 9           # ABI 8: cpu_permille (ABI 9: a rule reads it)
SEEN_UNREAD = 1 << 10       # ABI 10: unread_max

UNKNOWN, OK, NEAR, FULL = 0, 1, 2, 3
NAMES = {UNKNOWN: "UNKNOWN", OK: "OK", NEAR: "NEAR", FULL: "FULL"}
BY_NAME = {v: k for k, v in NAMES.items()}


def wait_permille(w):
    if "wait_permille" in w:
        return w["wait_permille"]
    span = w["end_ns"] - w["start_ns"]
    return 1000 * w["sum_ns"] // span if span > 0 else 0


def idle_permille(w):
    if "idle_permille" in w:
        return w["idle_permille"]
    span = w["end_ns"] - w["start_ns"]
    busy = w.get("runq_ns", 0)
    return 1000 * (w["sum_ns"] - busy) // span if span > 0 else 0


def cv2_permille(w):
    """The engine's figure when the window carries it, else from the
    floored variance and mean (off by at most a few permille)."""
    if "cv2_permille" in w:
        return w["cv2_permille"]
    m = w["mean_ns"]
    return min(1000 * w["var_ns2"] // (m * m), 0xffffffff) if m else 0


def state_of(idle, svc_permille, idle_near=IDLE_NEAR, idle_full=IDLE_FULL,
             svc_near=SVC_NEAR, svc_full=SVC_FULL, drops=None,
             drop_near=DROP_NEAR, drop_full=DROP_FULL, cpu=None,
             cpu_near=CPU_NEAR, cpu_full=CPU_FULL, unread=None,
             unread_near=UNREAD_NEAR, unread_full=UNREAD_FULL):
    """The state for an idle share (None: unknown), a service time in
    permille of its base (None: unknown), a drop share in permille (None:
    unknown), a CPU share in permille (None: unknown) and the most bytes a
    receive left unread (None: unknown).  A limit of None is a rule that
    is off."""
    def held(v, lim, above):
        if v is None or lim is None:
            return False
        return v >= lim if above else v < lim
    if idle is None and svc_permille is None and drops is None and \
            cpu is None and unread is None:
        return UNKNOWN
    if held(idle, idle_full, False) or \
            (svc_permille is not None and svc_full is not None and
             svc_permille > svc_full) or held(drops, drop_full, True) or \
            held(cpu, cpu_full, True) or held(unread, unread_full, True):
        return FULL
    if held(idle, idle_near, False) or \
            (svc_permille is not None and svc_near is not None and
             svc_permille > svc_near) or held(drops, drop_near, True) or \
            held(cpu, cpu_near, True) or held(unread, unread_near, True):
        return NEAR
    return OK


class Rule:
    """Feed it each show --json reading of the target (update()); .state
    is the verdict, .svc_avg and .svc_base the service figures it used,
    .wps_avg the smoothed waits per send (for the tables)."""

    def __init__(self, idle_near=IDLE_NEAR, idle_full=IDLE_FULL,
                 svc_near=SVC_NEAR, svc_full=SVC_FULL, drop_near=DROP_NEAR,
                 drop_full=DROP_FULL, cpu_near=CPU_NEAR, cpu_full=CPU_FULL,
                 unread_near=UNREAD_NEAR, unread_full=UNREAD_FULL):
        self.limits = (idle_near, idle_full, svc_near, svc_full)
        self.drop_limits = (drop_near, drop_full)
        self.cpu_limits = (cpu_near, cpu_full)
        self.unread_limits = (unread_near, unread_full)
        self.drops = None
        self.cpu = None
        self.unread = None
        self.prev = None        # (send windows, send calls, poll calls)
        self.wps_avg = None
        self.svc_seq = 0
        self.svc_avg = None
        self.svc_base = None
        self.idle = None
        self.state = UNKNOWN

    def _wps(self, send_windows, send_calls, poll_calls):
        cur = (send_windows, send_calls, poll_calls)
        prev, self.prev = self.prev, cur
        if prev is None or poll_calls == 0:
            return
        closed = send_windows - prev[0]
        sends = send_calls - prev[1]
        if closed <= 0 or sends <= 0:
            return
        wps = min(1000 * (poll_calls - prev[2]) // sends, 0xffffffff)
        for _ in range(closed):
            if self.wps_avg is None:
                self.wps_avg = wps
            else:
                self.wps_avg = (7 * self.wps_avg + wps) >> 3

    def _svc(self, windows):
        if not windows:
            return
        w = max(windows, key=lambda x: x["seq"])
        if w["seq"] <= self.svc_seq:
            return
        self.svc_seq = w["seq"]
        if w.get("samples", 0) < SVC_MIN_SAMPLES:
            return
        m = min(w["mean_ns"], 1 << 53)
        if self.svc_avg is None:
            self.svc_avg = self.svc_base = m
        elif m < self.svc_avg:
            self.svc_avg = m
            self.svc_base = min(self.svc_base, m)
        else:
            self.svc_avg = (self.svc_avg + m) >> 1

    def update(self, t):
        """t: one target of satfeedctl show --json."""
        self._wps(t["send"]["seq"], t["send"]["calls"], t["poll"]["calls"])
        sat = t.get("saturation") or {}
        if sat.get("seen", 0) & SEEN_IDLE:
            self.idle = sat.get("idle_permille")
        if sat.get("seen", 0) & SEEN_DROPS:
            self.drops = sat.get("drop_permille")
        if sat.get("seen", 0) & SEEN_CPU:
            self.cpu = sat.get("cpu_permille")
        if sat.get("seen", 0) & SEEN_UNREAD:
            self.unread = sat.get("unread_max")
        self._svc((t.get("service") or {}).get("windows"))
        if "quiet" in (sat.get("reasons") or []):
            if self.svc_base is not None:
                self.svc_avg = self.svc_base
            # ok once a send or receive window closed (judged or not)
            if self.state != UNKNOWN or t["send"]["seq"] or \
                    (t.get("recv") or {}).get("seq"):
                self.state = OK
            return
        svc = (1000 * self.svc_avg // self.svc_base
               if self.svc_base else None)
        self.state = state_of(self.idle, svc, *self.limits, self.drops,
                              *self.drop_limits, self.cpu, *self.cpu_limits,
                              self.unread, *self.unread_limits)
