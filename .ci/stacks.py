#!/usr/bin/env python3
"""Summarizes gdb's `thread apply all bt` of a hung test process, read on standard input.

Threads whose stacks show the same frames are printed once, with their count; a stack keeps
its top frame and the project's own frames (a file under the repository), so the summary
fits the end of a CI log. Usage: .ci/stacks.py REPOSITORY < gdb-output
"""
import collections
import re
import subprocess
import sys

repository = sys.argv[1].rstrip("/") + "/"
frame = re.compile(r"^#(\d+)\s+(?:0x[0-9a-f]+ in )?(\S+) \(.*?\)(?: at (\S+?):(\d+))?(?: from \S+)?$")

threads, current = [], None
for line in sys.stdin:
    line = line.rstrip("\n")
    if line.startswith("Thread "):
        current = []
        threads.append(current)
    elif current is not None and (match := frame.match(line)):
        current.append((match.group(2), match.group(3), match.group(4)))

# One call to swift-demangle for every mangled name.
mangled = sorted({name for stack in threads for name, _, _ in stack if name.startswith("$s")})
readable = {}
if mangled:
    try:
        out = subprocess.run(["swift", "demangle", "--simplified", "--compact"], input="\n".join(mangled),
                             capture_output=True, text=True, timeout=60).stdout.splitlines()
        readable = dict(zip(mangled, out))
    except (OSError, subprocess.SubprocessError):
        pass

def kept(stack):
    frames = []
    for depth, (name, file, line) in enumerate(stack):
        ours = file is not None and file.startswith(repository)
        if depth == 0 or ours:
            text = readable.get(name, name)[:110]
            frames.append(f"{text} ({file[len(repository):]}:{line})" if ours else text)
    return tuple(frames)

groups = collections.Counter(kept(stack) for stack in threads)
print(f"{len(threads)} threads; the same stacks are counted once, top frame first, then the project's frames:")
for stack, count in sorted(groups.items(), key=lambda item: (len(item[0]) > 1, item[1])):
    print(f"  {count:3d} × " + "\n          ← ".join(stack))
