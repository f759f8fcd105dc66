#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""check-public-headers: no installed header hands a private name to its users.

docs/design.md ("Map", naming): pcw__ names what is private to a library,
pcwq_ the query layer's inside. An installed header may still use such names
for its own header-only code - a `static inline` helper or a `static const`
table compiled into the including program, and a type only they use (stb's
`stbi__` convention) - but nothing else: no extern function or object (a
symbol of the library or of the user's program), no member of a public
struct, no type a public declaration mentions.

Each header is preprocessed alone as a user includes it (#include <pcw/...>,
with _GNU_SOURCE as `pkg-config --cflags pcw-provider` gives it, without
PCW_PROVIDER_IMPLEMENTATION: the provider's implementation section is the one
program's that asks for it). Of the result, the lines from this tree's
headers are read: every static declaration (up to its `;` or the end of its
body) is set aside, then every private type defined but mentioned nowhere
else, and whatever private name is left is reported.

Usage: check-public-headers.py CC HEADER...   (HEADER: lib/pcw/...)
Exit status: 0 clean, 1 a header hands out a private name, 2 usage.
"""
import os
import re
import subprocess
import sys

PRIVATE = re.compile(r"\b(?:pcw__|pcwq_)\w+")
MARKER = re.compile(r'^# \d+ "([^"]*)"')


def user_visible(cc, header):
    """The preprocessed text of this tree's headers, as (file, line) pairs."""
    inc = header[len("lib/"):] if header.startswith("lib/") else header
    r = subprocess.run([cc, "-E", "-D_GNU_SOURCE", "-Ilib", "-x", "c", "-"],
                       input="#include <%s>\n" % inc, capture_output=True, text=True)
    if r.returncode != 0:
        return None, r.stderr
    out, cur = [], ""
    for line in r.stdout.splitlines():
        m = MARKER.match(line)
        if m:
            cur = os.path.normpath(m.group(1))
            continue
        if cur.startswith("lib/"):
            out.append((cur, line))
    return out, None


def strip_statics(text):
    """text without its static declarations; and the names they declare."""
    keep, names = [], set()
    i, n = 0, len(text)
    for m in re.finditer(r"\bstatic\b", text):
        if m.start() < i:
            continue
        keep.append(text[i:m.start()])
        # The declaration runs to the ';' at depth 0, or the '}' closing a
        # function's body (a '{' right after ')' at depth 0).
        j, depth, head_end, last_close_paren = m.end(), 0, None, False
        while j < n:
            c = text[j]
            if c in "([{":
                if head_end is None and depth == 0 and c in "([=":
                    head_end = j
                if c == "{" and depth == 0 and last_close_paren:
                    # function body: to its matching brace
                    d = 0
                    while j < n:
                        d += text[j] == "{"
                        d -= text[j] == "}"
                        j += 1
                        if d == 0:
                            break
                    break
                depth += 1
            elif c in ")]}":
                depth -= 1
            elif c == "=" and depth == 0 and head_end is None:
                head_end = j
            elif c == ";" and depth == 0:
                j += 1
                break
            if not c.isspace():
                last_close_paren = c == ")" and depth == 0
            j += 1
        head = text[m.end():head_end if head_end is not None else j]
        words = re.findall(r"\w+", head)
        if words:
            names.add(words[-1])
        i = j
    keep.append(text[i:])
    return "".join(keep), names


def main(argv):
    if len(argv) < 2:
        sys.stderr.write("usage: check-public-headers.py CC HEADER...\n")
        return 2
    cc, headers = argv[0], argv[1:]
    findings, fail = {}, False
    for h in headers:
        lines, err = user_visible(cc, h)
        if lines is None:
            sys.stderr.write("check-public-headers: %s does not compile on its own:\n%s" % (h, err))
            fail = True
            continue
        by_file = {}
        for f, line in lines:
            by_file.setdefault(f, []).append(line)
        for f, ls in by_file.items():
            rest, _ = strip_statics("\n".join(ls))
            # A private type whose only mention left is its own definition
            # serves the static code alone.
            for t in set(PRIVATE.findall(rest)):
                defn = re.compile(r"typedef\s+(?:struct|union|enum)\s+%s\s*\{[^{}]*\}\s*%s\s*;"
                                  % (t, t))
                without = defn.sub("", rest)
                if without != rest and t not in without:
                    rest = without
            for name in PRIVATE.findall(rest):
                findings.setdefault(f, set()).add(name)
    for f in sorted(findings):
        names = sorted(findings[f])
        more = " (and %d more)" % (len(names) - 6) if len(names) > 6 else ""
        sys.stderr.write("check-public-headers: %s hands private names to its users: %s%s\n"
                         % (f, ", ".join(names[:6]), more))
    if findings or fail:
        return 1
    print("check-public-headers: %d installed headers hand no pcw__ or pcwq_ name to their users "
          "(static helpers aside)" % len(headers))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
