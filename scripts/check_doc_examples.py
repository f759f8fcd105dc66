#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Run every example command of the docs against the demo providers.

The docs (README.md, tools/*/README.md, man/*.1) show commands and what they
print; this check keeps them true (issue 25: a man page's example named a
counter that did not exist, a README showed a header the program no longer
printed). What it reads:

- Markdown (README.md, tools/*/README.md, docs/*.md): every line of a fenced block whose info string is ``sh`` (a
  leading ``$ `` is dropped, `` # comments`` too, backslash continuations
  joined) that starts with a pcw tool (pcwstat, pcwdump, pcwtop,
  pcw-exporter, pcwgen) or with ``curl``. A block of synopsis or output is
  fenced ``text``. An indented (4-space) block that starts with a tool's
  name is an error: it would escape the check. So is a placeholder left in
  the text (a line that is one ALL_CAPS_NAME).
- A ``text`` block right after ``<!-- output-of: CMD -->`` (``screen-of``:
  CMD's interactive screen, read from tmux at 200x50): CMD is run and the
  words (runs of letters) of the block's first line must be those of the
  output's first line, in order: numbers, times and values may differ, the
  labels may not.
- man pages: each line of the EXAMPLES section, as man renders it, that
  starts with a tool's name.

Each command runs with bash in a scratch folder, PATH leading to the build's
tools, PCW_DIR a private root holding the demo providers: the Geometric Waves
example and the README's "Web Server" provider (built from the README). A
command passes when it exits 0, or is still running after TIMEOUT seconds (a
sampler, a viewer, an exporter: it started and did not fail). Commands that
need a terminal (pcwtop without -b) run in tmux. Substitutions: the pid 4242
becomes the Geometric Waves provider's pid, a segment path
/dev/shm/pcw-<uid>/<pid>-<id>.seg that provider's segment; counters.txt
exists and lists a path. ``curl`` lines get a pcw-exporter of their own on
the default address for their duration.

Usage: scripts/check_doc_examples.py BUILD_DIR   (from the top of the tree)
"""
import glob
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time

TOOLS = ("pcwstat", "pcwdump", "pcwtop", "pcw-exporter", "pcwgen")
TIMEOUT = 3.0
TOOL_RE = re.compile(r"^(?:\$ )?(?:sudo )?(%s|curl)\b" % "|".join(re.escape(t) for t in TOOLS))


def strip_comment(line):
    """Drop a trailing ' # comment' that is outside quotes."""
    quote = None
    for i, ch in enumerate(line):
        if quote:
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and i > 0 and line[i - 1] in " \t":
            return line[:i].rstrip()
    return line.rstrip()


def commands(lines):
    """(first line number, command) of numbered lines: a line ending in a
    backslash continues on the next; trailing comments are dropped."""
    joined, start = "", None
    for n, t in lines:
        t = t.rstrip()
        if start is None:
            start = n
        if t.endswith("\\"):
            joined += t[:-1] + " "
            continue
        yield start, strip_comment((joined + t).strip())
        joined, start = "", None


class Example:
    def __init__(self, where, cmd, kind="run", sample=None):
        self.where, self.cmd, self.kind, self.sample = where, cmd, kind, sample


def from_markdown(path):
    out, errors = [], []
    lines = open(path, encoding="utf-8").read().split("\n")
    i, marker = 0, None
    while i < len(lines):
        line = lines[i]
        m = re.match(r"^\s*<!-- (output-of|screen-of): (.*) -->\s*$", line)
        if m:
            marker = (m.group(1), m.group(2), i + 1)
            i += 1
            continue
        fence = re.match(r"^(\s*)```(\S*)\s*$", line)
        if fence:
            indent, info = fence.group(1), fence.group(2)
            body, j = [], i + 1
            while j < len(lines) and not re.match(r"^\s*```\s*$", lines[j]):
                body.append((j + 1, lines[j][len(indent):] if lines[j].startswith(indent) else lines[j]))
                j += 1
            if marker and info == "text":
                kind = "output" if marker[0] == "output-of" else "screen"
                first = next((t for _, t in body if t.strip()), "")
                out.append(Example("%s:%d" % (path, marker[2]), marker[1], kind, first))
            elif info == "sh":
                for start, cmd in commands(body):
                    if cmd.startswith("$ "):
                        cmd = cmd[2:]
                    if TOOL_RE.match(cmd):
                        out.append(Example("%s:%d" % (path, start), cmd))
            marker = None
            i = j + 1
            continue
        if line.strip() and not line.lstrip().startswith("<!--"):
            marker = None
        if re.match(r"^[A-Z][A-Z0-9]*(_[A-Z0-9]+)+$", line.strip()):
            errors.append("%s:%d: a placeholder left in the text: %s" % (path, i + 1, line.strip()))
        # An indented code block (outside lists) that shows a tool's command.
        if line.startswith("    ") and not line.lstrip().startswith(("-", "*", "|")):
            t = line.strip()
            if TOOL_RE.match(t) and (i == 0 or not lines[i - 1].strip() or lines[i - 1].startswith("    ")):
                errors.append("%s:%d: an indented block with a command (%s): fence it as ```sh "
                              "(run by this check) or ```text (a synopsis)" % (path, i + 1, t[:60]))
        i += 1
    return out, errors


def from_man(path):
    env = dict(os.environ, MANWIDTH="250", MAN_KEEP_FORMATTING="")
    text = subprocess.run(["man", "--nj", "--nh", "-l", path], capture_output=True, text=True,
                          env=env, check=True).stdout
    text = re.sub(r".\x08", "", text)
    out, in_examples, lines = [], False, []
    for n, line in enumerate(text.split("\n"), 1):
        if re.match(r"^[A-Z][A-Z ]+$", line):
            in_examples = line.strip() == "EXAMPLES"
            continue
        if in_examples:
            lines.append((n, line.strip()))
    for start, cmd in commands(lines):
        # A Makefile recipe shown in a man page ($@, $<) is make's, not the shell's.
        if TOOL_RE.match(cmd) and not re.search(r"\$[@<^]", cmd):
            out.append(Example("%s (EXAMPLES, rendered line %d)" % (path, start), cmd))
    return out


def words(line):
    # Letters after a digit are a unit ("1s"): part of the value.
    return re.findall(r"(?<![0-9.])[A-Za-z]+", line)


class Env:
    def __init__(self, build):
        self.build = os.path.abspath(build)
        self.tmp = tempfile.mkdtemp(prefix="pcw-doc-examples.")
        self.root = os.path.join(self.tmp, "shm")
        self.work = os.path.join(self.tmp, "work")
        os.makedirs(self.root)
        os.makedirs(self.work)
        self.env = dict(os.environ, PCW_DIR=self.root,
                        PATH=self.build + os.pathsep + os.environ.get("PATH", ""))
        self.procs = []
        self.screens = 0  # one tmux server (socket) per screen read

    def start_providers(self):
        self.waves = self.spawn([os.path.join(self.build, "examples", "geometric_waves")])
        src = os.path.join(self.tmp, "readme")
        subprocess.run(["./scripts/readme-files.sh", src], check=True)
        pc = os.path.join(self.build, "pkgconfig")
        flags = subprocess.run(["pkg-config", "--cflags", "--libs", "pcw-provider"],
                               env=dict(self.env, PKG_CONFIG_PATH=pc), capture_output=True,
                               text=True, check=True).stdout.split()
        subprocess.run(["cc", "-std=c11", "main.c", "web.c"] + flags + ["-o", "web"], cwd=src,
                       check=True)
        self.web_prog = os.path.join(src, "web")
        self.web = None
        self.ensure_providers()
        self.waves_seg = self.segment_of(self.waves.pid)
        with open(os.path.join(self.work, "counters.txt"), "w") as f:
            f.write("# the Geometric Waves example\n\\Geometric Waves(*)\\Triangle\n")
        for man in glob.glob("examples/manifests/*.man"):
            shutil.copy(man, self.work)
        with open(os.path.join(self.work, "web.yml"), "w") as f:
            f.write("# no TLS, no users: the man page's example file, emptied\n")

    def spawn(self, argv):
        p = subprocess.Popen(argv, env=self.env, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
        self.procs.append(p)
        return p

    def segment_of(self, pid):
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            segs = glob.glob(os.path.join(self.root, "pcw-*", "%d-*.seg" % pid))
            if segs:
                return segs[0]
            time.sleep(0.05)
        raise SystemExit("check-doc-examples: provider %d made no segment" % pid)

    def ensure_providers(self):
        """The README's provider serves for a few seconds: start it again
        whenever it has ended, and wait for its segment."""
        if self.web is None or self.web.poll() is not None:
            self.web = self.spawn([self.web_prog])
            self.segment_of(self.web.pid)

    def substitute(self, cmd):
        cmd = cmd.replace("/etc/pcw-exporter/web.yml", "web.yml")
        cmd = re.sub(r"/dev/shm/pcw-\d+/\d+-[0-9a-f]+\.seg", self.waves_seg, cmd)
        return re.sub(r"\b4242\b", str(self.waves.pid), cmd)

    def run(self, cmd, timeout=TIMEOUT):
        """(status or None when still running at the timeout, stdout, stderr)."""
        p = subprocess.Popen(["bash", "-c", cmd], cwd=self.work, env=self.env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             start_new_session=True)
        try:
            out, err = p.communicate(timeout=timeout)
            self.kill_group(p)
            return p.returncode, out, err
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGTERM)
            try:
                out, err = p.communicate(timeout=5)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                out, err = p.communicate()
            return None, out, err

    @staticmethod
    def kill_group(p):
        """What the command left running in the background ends with it."""
        try:
            os.killpg(p.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass

    def screen(self, cmd):
        """The first line of cmd's screen in a 200x50 tmux pane, once it shows."""
        # A socket of its own each time: a new session on the socket of a
        # server that kill-server is still taking down fails ("server
        # exited unexpectedly").
        self.screens += 1
        t = ["tmux", "-L", "pcw-doc-examples-%d-%d" % (os.getpid(), self.screens)]
        shell = "cd %s && export PCW_DIR=%s PATH=%s && %s; sleep 30" % (
            shlex.quote(self.work), shlex.quote(self.root), shlex.quote(self.env["PATH"]), cmd)
        subprocess.run(t + ["-f", "/dev/null", "new-session", "-d", "-x", "200", "-y", "50",
                            shell], check=True)
        try:
            deadline = time.monotonic() + 10
            first = ""
            while time.monotonic() < deadline:
                cap = subprocess.run(t + ["capture-pane", "-p"], capture_output=True, text=True)
                first = cap.stdout.split("\n")[0]
                if first.strip():
                    break
                time.sleep(0.1)
            return first
        finally:
            subprocess.run(t + ["kill-server"], capture_output=True)

    def close(self):
        for p in self.procs:
            p.terminate()
        for p in self.procs:
            p.wait()
        shutil.rmtree(self.tmp, ignore_errors=True)


def main():
    if len(sys.argv) != 2:
        raise SystemExit("usage: scripts/check_doc_examples.py BUILD_DIR")
    examples, errors = [], []
    for path in ["README.md"] + sorted(glob.glob("tools/*/README.md") + glob.glob("docs/*.md")):
        ex, er = from_markdown(path)
        examples += ex
        errors += er
    for path in sorted(glob.glob("man/*.1")):
        examples += from_man(path)
    env = Env(sys.argv[1])
    passed = 0
    try:
        env.start_providers()
        for ex in examples:
            env.ensure_providers()
            # `cmd &` runs in the foreground here: still running at the
            # timeout is what the doc promises.
            cmd = re.sub(r"\s*&$", "", env.substitute(ex.cmd))
            if ex.kind == "screen":
                got = env.screen(cmd)
                if words(got) != words(ex.sample):
                    errors.append("%s: the screen of `%s` begins\n    %s\n  where the doc shows\n    %s"
                                  % (ex.where, ex.cmd, got.rstrip(), ex.sample.rstrip()))
                    continue
            elif ex.kind == "output":
                status, out, err = env.run(cmd, timeout=15)
                # An example of an error message shows standard error.
                shown = out if out.strip() else err
                first = next((l for l in shown.split("\n") if l.strip()), "")
                if (status not in (0, None) and shown is out) or words(first) != words(ex.sample):
                    errors.append("%s: `%s` (exit %s) begins\n    %s\n  where the doc shows\n    %s%s"
                                  % (ex.where, ex.cmd, status, first.rstrip(), ex.sample.rstrip(),
                                     "\n  stderr: " + err.strip()[:300] if err.strip() else ""))
                    continue
            else:
                exporter = None
                if ex.cmd.startswith("curl"):
                    exporter = subprocess.Popen(["pcw-exporter"], env=env.env, cwd=env.work,
                                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
                    # Wait until it listens (its own log line would do; a
                    # connect is what curl needs).
                    deadline = time.monotonic() + 10
                    while time.monotonic() < deadline:
                        if env.run("curl -sf -o /dev/null localhost:10158/metrics", 5)[0] == 0:
                            break
                        time.sleep(0.05)
                bare = cmd.startswith("pcwtop") and not re.search(r"(^|\s)-b\b", cmd)
                if bare:
                    got = env.screen(cmd)
                    status, err = (None, "") if got.startswith("pcwtop") else (1, got)
                else:
                    status, out, err = env.run(cmd)
                if exporter:
                    exporter.terminate()
                    exporter.wait()
                if status not in (0, None):
                    errors.append("%s: `%s` exited %s: %s" % (ex.where, ex.cmd, status,
                                                              err.strip()[:400]))
                    continue
            passed += 1
    finally:
        env.close()
    for e in errors:
        print("check-doc-examples: " + e, file=sys.stderr)
    print("check-doc-examples: %d passed, %d failed" % (passed, len(errors)))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
