#!/usr/bin/env python3
"""A forward HTTP proxy on loopback, for the tests: it serves the absolute-URL requests a
client sends when http_proxy names it, appends each URL to --log, and relays the answer.

    forward-proxy.py --log FILE [--exit-on-eof]

The first line on stdout is "listening on http://127.0.0.1:PORT".
"""
import argparse
import http.client
import sys
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HOP_BY_HOP = {"connection", "keep-alive", "proxy-connection", "proxy-authorization", "te", "trailer",
              "transfer-encoding", "upgrade"}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--log", required=True)
    parser.add_argument("--exit-on-eof", action="store_true")
    args = parser.parse_args()
    lock = threading.Lock()

    class Proxy(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *_):
            pass

        def do_GET(self):
            with lock, open(args.log, "a") as log:
                log.write(self.path + "\n")
            target = urllib.parse.urlsplit(self.path)
            upstream = http.client.HTTPConnection(target.hostname, target.port or 80, timeout=30)
            path = target.path + ("?" + target.query if target.query else "")
            headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP}
            upstream.request("GET", path or "/", headers=headers)
            answer = upstream.getresponse()
            body = answer.read()
            self.send_response(answer.status)
            for key, value in answer.getheaders():
                if key.lower() not in HOP_BY_HOP and key.lower() != "content-length":
                    self.send_header(key, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Proxy)
    server.daemon_threads = True
    print(f"listening on http://127.0.0.1:{server.server_address[1]}", flush=True)
    if args.exit_on_eof:
        threading.Thread(target=lambda: (sys.stdin.read(), server.shutdown()), daemon=True).start()
    server.serve_forever()


if __name__ == "__main__":
    main()
