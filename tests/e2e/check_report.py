"""check_report.py FILE PYEXPR - sfload's JSON report in FILE has every key
and PYEXPR (over the report dict r) holds; run by tests/e2e/test_tools.sh."""
import json, sys
r = json.load(open(sys.argv[1]))
need = ["offered_rps", "sent_rps", "achieved_rps", "requests", "replies",
        "errors", "timeouts", "p50_us", "p90_us", "p99_us", "p999_us",
        "max_us", "duration_s"]
missing = [k for k in need if k not in r]
if missing:
    sys.exit("missing keys: %s" % missing)
if not eval(sys.argv[2], {}, {"r": r}):
    sys.exit("check failed: %s\nreport: %s" % (sys.argv[2], json.dumps(r)))
