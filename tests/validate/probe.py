"""probe.py - queueing seen from outside satfeed, for the corpus records:
what the kernel's own tables say about a server at one instant, read
beside every satfeedctl show --json reading (sweep.py --probe-port), so
that a saturation rule can be checked against queueing measured
independently of the engine.

  backlog    connections waiting in the accept queue of the server's
             listening TCP socket(s) on PORT (/proc/net/tcp rx_queue of
             the LISTEN socket);
  rxq        bytes received and not yet read, summed over the server's
             established TCP sockets on PORT, and conns, their number;
  udp_rxq    bytes queued on the server's UDP socket(s) on PORT, and
             udp_drops, datagrams dropped there since the socket opened
             (a counter);
  run_ns, wait_ns, threads
             the server's threads' time on a CPU and time runnable but
             waiting for one (/proc/PID/task/TID/schedstat, summed over
             the threads of the process, or of every process of the
             cgroup), counters in ns.

Python 3 standard library only; every figure is None when its source
cannot be read (a process gone, a kernel without schedstat).
"""
import os


def _sockets(path, port):
    """(state, tx_queue, rx_queue, drops) of the sockets bound to
    local PORT in a /proc/net table."""
    out = []
    try:
        with open(path) as f:
            next(f)
            for line in f:
                p = line.split()
                if int(p[1].split(":")[1], 16) != port:
                    continue
                tx, rx = (int(x, 16) for x in p[4].split(":"))
                drops = int(p[12]) if len(p) > 12 and "udp" in path else 0
                out.append((p[3], tx, rx, drops))
    except (OSError, ValueError, IndexError, StopIteration):
        return None
    return out


def _pids(pid, cgroup):
    if pid is not None:
        return [pid]
    try:
        with open(os.path.join(cgroup, "cgroup.procs")) as f:
            return [int(x) for x in f.read().split()]
    except (OSError, ValueError):
        return []


def _schedstat(pids):
    run = wait = n = 0
    for pid in pids:
        base = "/proc/%d/task" % pid
        try:
            tids = os.listdir(base)
        except OSError:
            continue
        for tid in tids:
            try:
                with open("%s/%s/schedstat" % (base, tid)) as f:
                    r, w, _ = f.read().split()
            except (OSError, ValueError):
                continue
            run += int(r)
            wait += int(w)
            n += 1
    return (run, wait, n) if n else (None, None, 0)


def probe(port, pid=None, cgroup=None):
    """One reading, as a dict (see the module's docstring)."""
    d = {"backlog": None, "rxq": None, "conns": None, "udp_rxq": None,
         "udp_drops": None}
    tcp = _sockets("/proc/net/tcp", port)
    if tcp is not None:
        lis = [s for s in tcp if s[0] == "0A"]
        est = [s for s in tcp if s[0] == "01"]
        d["backlog"] = sum(s[2] for s in lis) if lis else None
        d["rxq"] = sum(s[2] for s in est)
        d["conns"] = len(est)
    udp = _sockets("/proc/net/udp", port)
    if udp:
        d["udp_rxq"] = sum(s[2] for s in udp)
        d["udp_drops"] = sum(s[3] for s in udp)
    d["run_ns"], d["wait_ns"], d["threads"] = _schedstat(_pids(pid, cgroup))
    return d
