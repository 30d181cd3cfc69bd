#!/usr/bin/env python3
"""pid_reuse.py PID SENDS: start a process that gets pid PID again (through
/proc/sys/kernel/ns_last_pid, retried while other forks take it first) and
makes SENDS send() calls on a socket, then exits.  Prints "reused PID" once
that process ran, or "not reused" after 200 tries (exit 1)."""
import os
import socket
import sys


def main():
    pid, sends = int(sys.argv[1]), int(sys.argv[2])
    for _ in range(200):
        with open("/proc/sys/kernel/ns_last_pid", "w") as f:
            f.write(str(pid - 1))
        child = os.fork()
        if child == 0:
            if os.getpid() != pid:
                os._exit(3)
            a, b = socket.socketpair()
            for _ in range(sends):
                a.send(b"x")
                b.recv(1)
            os._exit(0)
        _, status = os.waitpid(child, 0)
        if child == pid and os.WEXITSTATUS(status) == 0:
            print("reused %d" % pid)
            return 0
    print("not reused")
    return 1


if __name__ == "__main__":
    sys.exit(main())
