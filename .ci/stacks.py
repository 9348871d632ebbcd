#!/usr/bin/env python3
"""Summarizes gdb's `thread apply all bt` of a hung test process, read on standard input.

Threads whose stacks show the same frames are printed once, with their count; a stack keeps
its top frame and the project's own frames (a file under the repository, or, where gdb has no
line for a frame, a Swift function of the test binary itself), so the summary fits the end of a
CI log. When no thread can be read (gdb could not attach, say), gdb's own words are printed.
Usage: .ci/stacks.py REPOSITORY < gdb-output
"""
import collections
import re
import subprocess
import sys

repository = sys.argv[1].rstrip("/") + "/"
# "#3  0x00007f… in NAME (...) at FILE:LINE", "#0  NAME (...) from LIBRARY", "#5  <signal handler called>"
frame = re.compile(r"^#\d+\s+(?:0x[0-9a-f]+ in )?(?P<name>.+?)(?: \(.*\))?(?: at (?P<file>\S+):(?P<line>\d+)| from (?P<library>\S+))?$")

lines = sys.stdin.read().splitlines()
threads, current = [], None
for line in lines:
    if line.startswith("Thread "):
        current = []
        threads.append(current)
    elif current is not None and line.startswith("#") and (match := frame.match(line)):
        current.append(match.groupdict())

if not threads:
    noise = ("warning:", "During symbol reading", "[New LWP", "[Thread debugging", "Using host libthread_db")
    said = [line for line in lines if line.strip() and not line.startswith(noise)]
    print("  gdb showed no threads; it said:")
    for line in said[-20:]:
        print("    " + line[:200])
    sys.exit(0)

# One call to swift-demangle for every mangled name.
mangled = sorted({f["name"] for stack in threads for f in stack if f["name"].startswith("$s")})
readable = {}
if mangled:
    try:
        out = subprocess.run(["swift", "demangle", "--simplified", "--compact"], input="\n".join(mangled),
                             capture_output=True, text=True, timeout=60).stdout.splitlines()
        readable = dict(zip(mangled, out))
    except (OSError, subprocess.SubprocessError):
        pass


def ours(f):
    if f["file"]:
        return f["file"].startswith(repository)
    return f["library"] is None and f["name"].startswith("$s")


def kept(stack):
    frames = []
    for depth, f in enumerate(stack):
        if depth == 0 or ours(f):
            text = readable.get(f["name"], f["name"])[:110]
            if f["file"] and f["file"].startswith(repository):
                text += f" ({f['file'][len(repository):]}:{f['line']})"
            frames.append(text)
    return tuple(frames)


groups = collections.Counter(kept(stack) for stack in threads)
print(f"{len(threads)} threads; the same stacks are counted once, top frame first, then the project's frames:")
for stack, count in sorted(groups.items(), key=lambda item: (len(item[0]) > 1, item[1])):
    print(f"  {count:3d} × " + "\n          ← ".join(stack))
