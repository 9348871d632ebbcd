#!/usr/bin/env python3
"""A hostile loopback upstream for cache's fuzz test: GET /case/N answers with response N of a
seeded series of broken, odd and valid HTTP answers, written byte for byte on a raw socket, and
then closes the connection (so no case can hold a client past its own deadline).

    fuzz-upstream.py [--seed S] [--port 0]
    fuzz-upstream.py --show N [--seed S]     print case N's bytes (repr) and exit

Each case draws, from its own random generator (seed, N):
  - the status line: a common status, an odd one (1xx, 204, 299, 999, text), another version,
    no reason phrase, a malformed line, or none at all (an HTTP/0.9-style answer);
  - headers: names and values that are normal, empty, long, UTF-8, or hold controls, among
    them Content-Type, ETag, Last-Modified, Retry-After, Link, Location, X-RateLimit-*;
  - the framing: a right Content-Length, a wrong, negative, huge or doubled one, none (closed),
    or chunked with random chunk sizes, a malformed size, or no last chunk;
  - the encoding: none, gzip or deflate (right), or a label over bytes that are not it;
  - the body: valid jokes (a list or one), the same mutated (a byte changed, cut, extended),
    JSON of another shape, random bytes, invalid UTF-8, or nothing;
  - a cut: sometimes the whole answer ends at a random byte.
The first line on stdout is "listening on http://127.0.0.1:PORT".
"""
import argparse
import gzip
import json
import random
import socket
import threading
import zlib

COMMON = [200] * 8 + [201, 203, 206, 301, 302, 304, 400, 401, 403, 404, 408, 410, 429, 500, 502, 503]
ODD = [100, 101, 103, 204, 299, 399, 600, 999, 0]
NAMES = ["Content-Type", "ETag", "Last-Modified", "Retry-After", "Link", "Location", "X-RateLimit-Remaining",
         "X-RateLimit-Reset", "Cache-Control", "Set-Cookie", "X-Custom", "Vary", "Age", "Date", "Server"]


def jokes(rng):
    items = [{"id": rng.randint(1, 40), "type": rng.choice(["general", "programming", "knock-knock"]),
              "setup": rng.choice(["Why?", "Who's there?", "Ünïcödé ☕", "a\tb", ""]),
              "punchline": rng.choice(["Because.", "Boo.", "x" * rng.randint(0, 300)])}
             for _ in range(rng.randint(1, 6))]
    return items if rng.random() < 0.8 else items[0]


def body(rng):
    kind = rng.random()
    valid = json.dumps(jokes(rng)).encode()
    if kind < 0.35:
        return valid
    if kind < 0.6:  # valid, then mutated
        data = bytearray(valid)
        for _ in range(rng.randint(1, 4)):
            what = rng.random()
            at = rng.randrange(len(data)) if data else 0
            if what < 0.4 and data:
                data[at] = rng.randrange(256)
            elif what < 0.7:
                del data[at:]
            else:
                data[at:at] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
        return bytes(data)
    if kind < 0.72:  # JSON of another shape
        return json.dumps(rng.choice([{"status": 200}, [1, 2, 3], "text", None, {"id": "x"}, [{"id": None}],
                                      [{"id": 1.5, "type": 1, "setup": [], "punchline": {}}], {"a": {"b": [{}]}}])).encode()
    if kind < 0.82:
        return bytes(rng.randrange(256) for _ in range(rng.randint(0, 400)))
    if kind < 0.9:
        return b"[" * rng.randint(1, 3000)
    return b""


def header_value(rng, name):
    kind = rng.random()
    if kind < 0.35:
        return {"Content-Type": "application/json", "ETag": '"abc"', "Last-Modified": "Mon, 30 Nov 2026 00:00:00 GMT",
                "Retry-After": str(rng.randint(0, 3)), "Link": '</case/0>; rel="next"', "Location": "/case/0",
                "X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "1"}.get(name, "ok").encode()
    if kind < 0.5:
        return b""
    if kind < 0.6:
        return ("v" * rng.randint(100, 8000)).encode()
    if kind < 0.7:
        return "ünï ☕ 漢字".encode()
    if kind < 0.8:
        return bytes([rng.choice([0x01, 0x7F, 0x0B, 0x0C, 0x00, 0x1B])]) + b"x"
    if kind < 0.9:
        return str(rng.choice([-1, 0, 2 ** 31, 2 ** 63, 10 ** 30, 3.5])).encode()
    return bytes(rng.randrange(0x20, 0x7F) for _ in range(rng.randint(1, 40)))


def encode(rng, data):
    kind = rng.random()
    if kind < 0.75:
        return [], data
    if kind < 0.85:
        return [(b"Content-Encoding", b"gzip")], gzip.compress(data)
    if kind < 0.9:
        return [(b"Content-Encoding", b"deflate")], zlib.compress(data)
    return [(b"Content-Encoding", rng.choice([b"gzip", b"deflate", b"br", b"zstd", b"x-unknown"]))], data


def frame(rng, data):
    kind = rng.random()
    if kind < 0.45:
        return [(b"Content-Length", str(len(data)).encode())], data
    if kind < 0.6:
        wrong = rng.choice([len(data) + rng.randint(1, 50), max(0, len(data) - rng.randint(1, 50)), -1,
                            10 ** 12, 2 ** 63, "abc", "12, 13", ""])
        return [(b"Content-Length", str(wrong).encode())], data
    if kind < 0.65:
        return [(b"Content-Length", str(len(data)).encode()), (b"Content-Length", str(len(data) + 1).encode())], data
    if kind < 0.75:
        return [], data  # close-delimited
    chunks, at = [], 0
    while at < len(data):
        size = rng.randint(1, 64)
        chunks.append(b"%x\r\n" % size + data[at:at + size] + b"\r\n")
        at += size
    last = rng.random()
    tail = b"0\r\n\r\n" if last < 0.7 else b"" if last < 0.85 else b"zz\r\n\r\n"
    if chunks and rng.random() < 0.1:
        chunks[rng.randrange(len(chunks))] = b"-5\r\nxxxxx\r\n"
    return [(b"Transfer-Encoding", b"chunked")], b"".join(chunks) + tail


def case(seed, number):
    rng = random.Random(seed * 1_000_003 + number)
    kind = rng.random()
    status = rng.choice(COMMON) if kind < 0.85 else rng.choice(ODD)
    line = rng.random()
    if line < 0.7:
        status_line = b"HTTP/1.1 %d OK\r\n" % status
    elif line < 0.8:
        status_line = b"HTTP/1.0 %d\r\n" % status
    elif line < 0.86:
        status_line = rng.choice([b"HTTP/1.1 abc OK\r\n", b"HTP/1.1 200 OK\r\n", b"HTTP/1.1\r\n",
                                  b"http/1.1 200 ok\r\n", b"HTTP/9.9 200 OK\r\n", b"HTTP/1.1  200  OK\r\n"])
    elif line < 0.9:
        status_line = None  # no status line at all
    else:
        status_line = b"HTTP/1.1 %d \xff\xfe\r\n" % status
    headers = []
    for _ in range(rng.randint(0, 6)):
        name = rng.choice(NAMES).encode() if rng.random() < 0.8 else rng.choice([b"", b"Bad Name", b"X\x01", b"\xc3\xa9"])
        headers.append((name, header_value(rng, name.decode("latin-1"))))
    content = body(rng)
    coding, content = encode(rng, content)
    framing, content = frame(rng, content)
    head = b"".join(name + b": " + value + b"\r\n" for name, value in coding + framing + headers)
    answer = content if status_line is None else status_line + head + b"\r\n" + content
    if rng.random() < 0.12 and answer:
        answer = answer[:rng.randrange(len(answer))]
    return answer


def serve(connection, seed):
    try:
        connection.settimeout(5)
        request = b""
        while b"\r\n\r\n" not in request:
            data = connection.recv(4096)
            if not data:
                return
            request += data
        path = request.split(b" ", 2)[1].decode("latin-1")
        number = int(path.rsplit("/", 1)[-1]) if path.startswith("/case/") and path.rsplit("/", 1)[-1].isdigit() else 0
        connection.sendall(case(seed, number))
    except (OSError, ValueError):
        pass
    finally:
        try:
            connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        connection.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--show", type=int, help="print this case's bytes and exit")
    args = parser.parse_args()
    if args.show is not None:
        print(repr(case(args.seed, args.show)))
        return
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", args.port))
    listener.listen(64)
    print("listening on http://127.0.0.1:%d" % listener.getsockname()[1], flush=True)
    # Stop when the test that started us goes away (its end of stdin closes).
    threading.Thread(target=lambda: (__import__("sys").stdin.read(), __import__("os")._exit(0)), daemon=True).start()
    while True:
        connection, _ = listener.accept()
        threading.Thread(target=serve, args=(connection, args.seed), daemon=True).start()


if __name__ == "__main__":
    main()
