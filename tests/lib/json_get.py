"""json_get.py JSON PYEXPR - print PYEXPR evaluated with j = the parsed JSON
(floats kept exact as Decimal), or "null"; tests/lib/check.sh's sf_json_get."""
import json
import sys
from decimal import Decimal

j = json.loads(sys.argv[1], parse_float=Decimal)
v = eval(sys.argv[2])
print("null" if v is None else v)
