"""two_threads.py - a process with a second thread, both asleep for 300 s:
test_cli.sh offers the second thread's id (not a tgid) to `add --pid`."""
import threading
import time

threading.Thread(target=time.sleep, args=(300,), daemon=True).start()
time.sleep(300)
