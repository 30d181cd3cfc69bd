"""set_comm.py HEX prctl|proc READY - name this process with the bytes HEX,
through prctl(PR_SET_NAME) or by writing /proc/self/comm, create the file
READY and sleep 600 s: a watched process whose comm holds what it likes."""
import ctypes
import sys
import time

PR_SET_NAME = 15

name = bytes.fromhex(sys.argv[1])
if sys.argv[2] == "prctl":
    ctypes.CDLL(None).prctl(PR_SET_NAME, ctypes.c_char_p(name), 0, 0, 0)
else:
    with open("/proc/self/comm", "wb") as f:
        f.write(name)
open(sys.argv[3], "w").close()
time.sleep(600)
