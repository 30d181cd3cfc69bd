#!/usr/bin/env bash
# tests/unit/test_paths.sh - every repository path named in the docs and
# comments exists (tests/lib/check_paths.py), and the check finds one that
# does not: a copy of the tree with the old drift planted again (the README
# naming sfbench.c in tests/bench/ after sfbench became a folder) must fail and
# name it, and so must a Markdown link to nothing, while patterns, system
# headers, other roots and URLs pass.  (The
# planted paths are spelled "${B}name" here, so that this file names none.)
#
# Needs python3 and git; no root, no BPF.  Prints "N passed, M failed".
set -uo pipefail
. "$(dirname "$0")/../lib.sh"

SF_NAME=test_paths
SF_T0=$(date +%s.%N)
cd "$SF_REPO" || exit 1
SF_TMP=$(mktemp -d /tmp/satfeed-test_paths.XXXXXX)
sf_trap_cleanup _sf_on_exit
CHECK=$SF_REPO/tests/lib/check_paths.py

ASSERT_OK "this tree: every path named exists" python3 "$CHECK"
ASSERT_MATCH "this tree: paths were checked, none missing" \
	"^[1-9][0-9]* paths checked in [1-9][0-9]* files, 0 missing$" "$OUT"

# a copy of the tracked files as they are now (not a git checkout: the
# check reads every file below it)
T=$SF_TMP/tree
mkdir "$T"
ASSERT_TRUE "a copy of the tree" sh -c \
	'git ls-files -z -co --exclude-standard | tar --null -T - -cf - | tar -xf - -C "$1"' _ "$T"
ASSERT_OK "the copy passes" python3 "$CHECK" --repo "$T"

B=tests/bench/
L=tools/lib/
DOC=docs/
printf '%s\n' 'The benchmark is `build/sfbench` (`'"$B"'sfbench.c`).' \
	>>"$T/README.md"
printf '%s\n' "/* the policy, ${L}sf_nothing.c, tools/lib/*.c," \
	'   <bpf/libbpf.h>, build/tools/x.o, kmod-example/x.ko, the' \
	'   kernel'"'"'s tools/sched_ext and tests/bench/sfbench/ */' \
	>"$T/${L}sf_planted.c"
printf '%s\n' 'See [the figures](figures.md#units), [nothing](nothing.md) and' \
	'[the kernel](https://docs.kernel.org/bpf/).' >>"$T/docs/cli.md"
ASSERT_RC "planted paths: the check fails" 1 python3 "$CHECK" --repo "$T"
ASSERT_MATCH "names the old sfbench.c drift in README.md" \
	"^README\\.md:[0-9]+: ${B}sfbench\\.c does not exist$" "$OUT"
ASSERT_MATCH "names a missing path in a source comment" \
	"^${L}sf_planted\\.c:1: ${L}sf_nothing\\.c does not exist$" "$OUT"
ASSERT_MATCH "names a Markdown link to nothing, relative to its file" \
	"^${DOC}cli\\.md:[0-9]+: link nothing\\.md does not exist$" "$OUT"
ASSERT_EQ "only those three: patterns, <headers>, other roots, build products, URLs, allowed and existing paths pass" \
	3 "$(printf '%s\n' "$OUT" | grep -c 'does not exist$')"
ASSERT_MATCH "the summary counts them" ", 3 missing$" "$OUT"
ASSERT_RC "bad usage: exit 2" 2 python3 "$CHECK" --nonsense

sf_finish
