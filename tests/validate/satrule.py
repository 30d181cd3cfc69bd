"""satrule.py - the engine's saturation rule (struct satfeed_verdict in
bpf/satfeed.h), recomputed in Python from what satfeedctl shows, so that
tests/validate/validate.sh can check the engine's verdict against an
independent implementation, and both against the sweep's knee.

The figure (docs/validation.md, "Saturation rules", has the sweeps that
chose it): waits per send, the poll-family waits that ended per 1000 sends.
A server below saturation waits about once per request; a saturated one
finds work queued every time it looks, so its waits become rare.

  wps      floor(1000 * waits / sends) over one send window
  wps_avg  wps of the first send window, then (7 * wps_avg + wps) >> 3 at
           each send window close
  UNKNOWN  until a send window has closed while the poll stream counts
           waits
  FULL     wps_avg < WPS_FULL
  NEAR     wps_avg < WPS_NEAR
  OK       otherwise

The engine sees the poll stream's counter at the exact close of each send
window; this reference sees both counters only when it polls (every ~0.2 s)
and applies the interval's wps once per send window that closed in it.
The two agree on the level, not on every window.

The other figures of a window, for the tables:

  wait share  floor(1000 * sum_ns / (end_ns - start_ns)) of a poll window,
              summed over threads (a server with four idle threads reads
              ~4000);
  idle share  the same of sum_ns - runq_ns (waiting for work, not a CPU);
  cv2         floor(1000 * var / mean^2) of a send or recv window.
"""

WPS_NEAR = 150
WPS_FULL = 30

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


def state_of(wps_avg, near=WPS_NEAR, full=WPS_FULL):
    if wps_avg is None:
        return UNKNOWN
    if wps_avg < full:
        return FULL
    if wps_avg < near:
        return NEAR
    return OK


class Rule:
    """Feed it the counters each time they are read (update()); .state is
    the verdict, .wps_avg the smoothed figure it used."""

    def __init__(self, near=WPS_NEAR, full=WPS_FULL):
        self.near, self.full = near, full
        self.prev = None        # (send windows, send calls, poll calls)
        self.wps_avg = None
        self.state = UNKNOWN

    def update(self, send_windows, send_calls, poll_calls):
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
        self.state = state_of(self.wps_avg, self.near, self.full)
