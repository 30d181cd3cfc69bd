#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""check_paths.py - every repository path named in the docs and comments
exists.

    python3 tests/lib/check_paths.py [--repo DIR]

Reads the files git tracks under DIR, and the new ones it does not ignore
(default DIR: the repository this file is in; every file below DIR when
it is not a git checkout): README.md,
Kconfig-notes, docs/*.md, every README and every source, build and test
file.  In each it finds the words that name a path of this tree, a word
that starts with one of its top-level folders (bpf/, loader/,
kmod-example/, tools/, tests/, docs/) or is a top-level file
(Kconfig-notes, Makefile, README.md), and checks that the path exists
under DIR.  A word that is a pattern (*, %, $, <, {, [) is a pattern, not a
path, and is passed over; so is a word glued to what comes before it
(build/tools/..., $SF_REPO/tests/...: another root; <bpf/libbpf.h>: a
system header), a build product (.o, .ko: made in place by a build) and
a path the ALLOWED list below names with the reason (the kernel's own
tree).  In Markdown files the target of every link, [text](path), is
checked too, relative to the file.

Prints one line per missing path, "FILE:LINE: PATH does not exist", then
"N paths checked in M files, K missing"; exit 0 when none is missing, 1
otherwise, 2 on bad usage.
"""
import os
import re
import subprocess
import sys

TOP_DIRS = ("bpf", "loader", "kmod-example", "tools", "tests", "docs")
TOP_FILES = ("Kconfig-notes", "Makefile", "README.md")
# paths of other trees that the docs name on purpose: (prefix, why)
ALLOWED = (
	("tools/sched_ext", "the kernel's sched_ext schedulers"),
	("tools/testing/selftests", "the kernel's BPF selftests"),
	("tools/lib/bpf", "the kernel's libbpf"),
	("tools/bpf/bpftool", "the kernel's bpftool"),
)
BUILT = (".o", ".ko", ".mod", ".skel.h")
TEXT_EXT = (".c", ".h", ".sh", ".py", ".md", ".bt", ".yml", ".yaml", ".in",
	    ".txt", ".service")
TEXT_NAMES = ("Makefile", "Kbuild", "Kconfig-notes")

WORD = re.compile(r"(?<![\w./$~<-])((?:%s)/[\w.+/-]*|(?:%s)(?![\w.-]))" % (
	"|".join(re.escape(d) for d in TOP_DIRS),
	"|".join(re.escape(f) for f in TOP_FILES)))
# a Markdown link's target, relative to the file that holds it
LINK = re.compile(r"\]\(([^()\s#]+)(?:#[^()\s]*)?\)")
PATTERN = re.compile(r"[*%$<{[]")


def tracked(repo):
	try:
		out = subprocess.run(["git", "-C", repo, "ls-files", "-z", "-co",
				      "--exclude-standard"],
				     capture_output=True, check=True).stdout
		return [f for f in out.decode().split("\0") if f]
	except (OSError, subprocess.CalledProcessError):
		files = []
		for top, dirs, names in os.walk(repo):
			dirs[:] = [d for d in dirs if d not in (".git", "build")]
			for n in names:
				files.append(os.path.relpath(os.path.join(top, n),
							     repo))
		return files


def wanted(f):
	base = os.path.basename(f)
	return base in TEXT_NAMES or base.endswith(TEXT_EXT)


def paths_in(f, line):
	"""The paths one line of file f names: (path in the tree, as told)."""
	found = []
	for m in LINK.finditer(line) if f.endswith(".md") else ():
		t = m.group(1)
		if not re.match(r"^[a-z]+:", t):	# not a URL
			found.append((os.path.normpath(os.path.join(
				os.path.dirname(f), t)), "link " + t))
	for m in WORD.finditer(line):
		p = m.group(1)
		end = m.end(1)
		if PATTERN.search(line[end:end + 1]) or PATTERN.search(p):
			continue
		p = p.rstrip(".,:;")
		if p.endswith(BUILT) or any(p == a or p.startswith(a + "/")
					    for a, _ in ALLOWED):
			continue
		found.append((p, p))
	return found


def main(argv):
	repo = os.path.join(os.path.dirname(os.path.abspath(__file__)),
			    "..", "..")
	args = argv[1:]
	if args[:1] == ["--repo"] and len(args) == 2:
		repo = args[1]
	elif args:
		print("check_paths.py: usage: check_paths.py [--repo DIR]",
		      file=sys.stderr)
		return 2
	repo = os.path.abspath(repo)
	files = [f for f in tracked(repo) if wanted(f)]
	named = []		# (file, line, path in the tree, as written)
	for f in files:
		try:
			with open(os.path.join(repo, f), encoding="utf-8",
				  errors="replace") as fh:
				lines = fh.read().split("\n")
		except OSError:
			continue
		for n, line in enumerate(lines, 1):
			named += [(f, n, p, w) for p, w in paths_in(f, line)]
	missing = set()		# each (file, line, path) told once
	for f, n, p, w in named:
		if not os.path.lexists(os.path.join(repo, p)) and \
		   (f, n, p) not in missing:
			missing.add((f, n, p))
			print("%s:%d: %s does not exist" % (f, n, w))
	checked = len(named)
	missing = len(missing)
	print("%d paths checked in %d files, %d missing" %
	      (checked, len(files), missing))
	return 1 if missing else 0


if __name__ == "__main__":
	sys.exit(main(sys.argv))
