#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Every relative link in the tree's Markdown files names a file that is
there, and an anchor (#...) names a heading of that file, with GitHub's
slugs.  A moved section or a document that was never written otherwise
stays a dead link that nothing reads.

Usage: check-doc-links.py SOURCE_DIR"""
import os
import re
import subprocess
import sys

LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^\s*(```|~~~)")


def slug(heading):
    s = heading.strip().lower()
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


def headings(path):
    out, fenced = set(), False
    seen = {}
    for line in open(path, encoding="utf-8"):
        if FENCE.match(line):
            fenced = not fenced
        elif not fenced and line.startswith("#"):
            s = slug(line.lstrip("#"))
            n = seen.get(s, 0)
            seen[s] = n + 1
            out.add(s if n == 0 else "%s-%d" % (s, n))
    return out


def links(path):
    fenced = False
    for no, line in enumerate(open(path, encoding="utf-8"), 1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if fenced or line.startswith("    "):
            continue
        line = re.sub(r"`[^`]*`", "", line)
        for m in LINK.finditer(line):
            yield no, m.group(1)


def main(top):
    files = subprocess.run(["git", "-C", top, "ls-files", "*.md"], check=True,
                           capture_output=True, text=True).stdout.split()
    bad = 0
    for rel in files:
        src = os.path.join(top, rel)
        for no, target in links(src):
            if re.match(r"^[a-z]+:", target):
                continue  # https:, mailto:
            name, _, anchor = target.partition("#")
            dest = os.path.normpath(os.path.join(os.path.dirname(src), name)) if name else src
            if not os.path.exists(dest):
                print("%s:%d: link to missing %s" % (rel, no, target))
                bad += 1
            elif anchor and dest.endswith(".md") and anchor not in headings(dest):
                print("%s:%d: no heading for #%s in %s" % (rel, no, anchor, os.path.relpath(dest, top)))
                bad += 1
    print("check-doc-links: %d Markdown files, %d dead links" % (len(files), bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))
