"""comm_check.py - read satfeedctl's output on stdin and print "ok" when the
comms in it are shown safely, else what is wrong.

  json PID=HEX...
      the bytes are UTF-8 and the text JSON; the comm of each PID decodes to
      the first 15 bytes of HEX (the kernel's cut) read as Latin-1, one code
      point per byte value (test_hardening.sh picks bytes that never form a
      UTF-8 sequence)
  text
      the output is not empty and holds printable ASCII and newlines only
"""
import json
import sys

doc = sys.stdin.buffer.read()
if sys.argv[1] == "json":
    j = json.loads(doc.decode("utf-8", errors="strict"))
    got = {t["pid"]: t["comm"] for t in j["targets"]}
    bad = []
    for w in sys.argv[2:]:
        pid, hexname = w.split("=")
        want = bytes.fromhex(hexname)[:15].decode("latin-1")
        if got.get(int(pid)) != want:
            bad.append("%s: got %r want %r" % (pid, got.get(int(pid)), want))
    print("\n".join(bad) if bad else "ok")
elif sys.argv[1] == "text":
    bad = sorted(set(b for b in doc if not (0x20 <= b < 0x7f or b == 0x0a)))
    print("ok" if doc and not bad else "raw bytes %s" % bad)
else:
    raise SystemExit("unknown mode " + sys.argv[1])
