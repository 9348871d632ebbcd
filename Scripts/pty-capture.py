#!/usr/bin/env python3
"""Runs a command in a pseudo-terminal and prints everything it wrote, escapes included.

    pty-capture.py [--cols 100] [--rows 30] [--timeout 30] [--answer TEXT] -- COMMAND [ARG...]

With --answer, TEXT is typed at the terminal once the command has written something (a prompt;
"\x03" is Ctrl-C). On stderr it says how wide the widest line drawn was, in columns as
Python's unicodedata measures them (East Asian wide and fullwidth count two, combining marks
none), so the tests check `cache`'s own measure against another one.

The tests drive `cache list` through it to see what a person at a terminal sees. Its exit
status is the command's.
"""
import argparse
import fcntl
import os
import pty
import re
import select
import signal
import struct
import sys
import termios
import time
import unicodedata


def columns(text):
    """Terminal columns of text without escape sequences."""
    width = 0
    for char in text:
        if unicodedata.combining(char) or unicodedata.category(char) in ("Mn", "Me", "Cf", "Cc"):
            continue
        width += 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1
    return width


def widest_line(data):
    """The widest line written: escapes dropped, each carriage return starting over."""
    text = re.sub(r"\x1b\[[0-9;?]*[ -/]*[@-~]", "", data.decode("utf-8", "replace"))
    return max((columns(segment) for line in re.split(r"\r?\n", text) for segment in line.split("\r")), default=0)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cols", type=int, default=100)
    parser.add_argument("--rows", type=int, default=30)
    parser.add_argument("--timeout", type=float, default=30)
    parser.add_argument("--answer", help="typed once the command has written something")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command

    pid, fd = pty.fork()
    if pid == 0:
        # As a shell does for a foreground job: Ctrl-C interrupts even when this script was
        # started with SIGINT ignored (a background job of a non-interactive shell).
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGINT])
        # The size is set here, before the command runs: set by the parent alone, a command
        # that asks for it at once could find the terminal still without one.
        fcntl.ioctl(1, termios.TIOCSWINSZ, struct.pack("HHHH", args.rows, args.cols, 0, 0))
        os.execvp(command[0], command)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", args.rows, args.cols, 0, 0))
    captured = bytearray()
    deadline = time.monotonic() + args.timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.1)
        if ready:
            try:
                chunk = os.read(fd, 65536)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            captured += chunk
            if args.answer is not None:
                os.write(fd, args.answer.encode())
                args.answer = None
    else:
        os.kill(pid, 9)
    _, status = os.waitpid(pid, 0)
    sys.stdout.buffer.write(bytes(captured))
    print(f"widest line: {widest_line(bytes(captured))} columns", file=sys.stderr)
    sys.exit(os.waitstatus_to_exitcode(status) if hasattr(os, "waitstatus_to_exitcode") else status >> 8)


if __name__ == "__main__":
    main()
