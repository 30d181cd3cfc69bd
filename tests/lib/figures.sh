# shellcheck shell=bash
# tests/lib/figures.sh - a benchmark's output is well formed: every figure
# it must produce stands exactly once in its results file and is a finite
# number, and its table has every section and no NaN or infinity.  The
# figures themselves are never judged.  Part of tests/lib.sh; each check
# prints what is wrong on stderr, prefixed with the script's name, and
# returns 1 if anything is.

# sf_check_figures FILE KEY...: each KEY on exactly one 'KEY VALUE' line of
# FILE, VALUE a finite decimal number.
sf_check_figures() {
	local file=$1 k n v bad=0
	shift
	for k in "$@"; do
		n=$(grep -c "^$k " "$file" 2>/dev/null || true)
		v=$(awk -v k="$k" '$1 == k { print $2 }' "$file" 2>/dev/null)
		if [ "${n:-0}" -ne 1 ]; then
			echo "${0##*/}: figure $k: found ${n:-0} times" >&2
			bad=1
		elif ! [[ $v =~ ^-?[0-9]+(\.[0-9]+)?$ ]]; then
			echo "${0##*/}: figure $k is not a finite number: '$v'" >&2
			bad=1
		fi
	done
	return "$bad"
}

# sf_check_sections TABLE ERE...: a line of TABLE matches each ERE.
sf_check_sections() {
	local table=$1 s bad=0
	shift
	for s in "$@"; do
		grep -Eq -- "$s" "$table" || {
			echo "${0##*/}: the table $table lacks '$s'" >&2
			bad=1
		}
	done
	return "$bad"
}

# sf_check_table_numbers TABLE: no figure of TABLE is NaN or infinite
# (printed by C's %f or Python's %f, as a number, a ratio "x" or a
# percentage, alone or in brackets).
sf_check_table_numbers() {
	if grep -Eiq '(^|[ (\[])[-+]?(nan|inf)(x|%)?([] ),]|$)' "$1"; then
		echo "${0##*/}: the table $1 shows a figure that is not a number" >&2
		return 1
	fi
}
