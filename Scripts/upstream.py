#!/usr/bin/env python3
"""A loopback upstream for cache's demo and tests, on Python's standard library alone.

It serves an account in the {status, message, body} envelope at /account, and the Official
Joke API's 451 real jokes on that API's routes. Faults can be switched on from the command
line or at run time, so tests can drive every failure path over real HTTP:

    upstream.py [--port 0] [--delay S] [--fail-status 500] [--fault KIND] [--transactions N]
                [--tls-cert PEM --tls-key PEM]

    KIND: malformed | truncated | reset | plain | html | wrong-types | envelope-error | null-body | drip
          | announce (a Content-Length of {"announce": N} bytes, default 100 GiB, that the body never reaches)
    (reset: half the body with no length announced, then the connection reset)

Run-time control (JSON bodies), used by the tests:
    POST /_control  {"delay": 2, "status": 503, "fault": "truncated", "message": "..."}
                    keys left out are unchanged; {"reset": true} clears every fault
                    also: "hold": true (reads stay in flight until {"release": true} lets them go:
                    a test decides when a refresh lands, not a clock),
                    "validators": true (send ETag and Last-Modified, answer 304 to a match;
                    a string instead of true is sent as the ETag, as it is),
                    "retry_after": "2" (sent with error statuses), "gzip": true (compress JSON
                    answers for clients that accept gzip), "silent_once": true (the next upstream
                    request gets no answer at all), "always_304": true (answer 304 to everything)
    POST /_account  the account's body object: {"name", "currentBalance", "transactions"}
    POST /_generate {"count": N, "seed": S}: serve a generated account of N transactions
    POST /_static   {"path": "/account", "file": F}: serve F's bytes at path (benchmarks)
    POST /_items    {"items": [...]} or {"count": N}: the records the generic routes serve
    POST /_oauth    {"client_id", "client_secret", "expires_in": S, "expire_after": N}: from now on
                    /api/* wants a bearer token from POST /oauth/token (client credentials, HTTP
                    Basic); a token dies after S seconds or after N requests (a token expiring
                    mid-sync); {} turns it off; with "refresh_token": R, only the refresh-token
                    grant (RFC 6749 6) with R gives a token
    POST /oauth/token  the token endpoint: 401 {"error": "invalid_client"} for other credentials
    POST /_basic    {"user", "password"}: /api/* wants HTTP Basic authentication with them; {}: not
    POST /_rate_limit {"status": 429, "reset_in": S, "times": N} (or "retry_after": S): the next N
                    generic requests are refused with X-RateLimit-Remaining: 0 and the reset
    GET  /_stats    {"total": N, "bytes_sent": N, "token_requests": N, "paths": {"/account": N, ...}, "served_jokes": [[ids of each answer], ...],
                     "requests": [{"path", "query", "time", "if_none_match", "if_modified_since", "authorization",
                                   "headers": {lowercased name: value}}, ...]}

Generic JSON APIs, for json sources (?per_page=N, default 100; 300 generated items unless set):
    /api/items   GitHub style: an array per page, a Link header to the next (?page=N)
    /api/paged   Django REST style: {"count", "next", "previous", "results"}
    /api/cursor  a body cursor: {"data": {"items": [...]}, "meta": {"cursor": "..."}} (?cursor=C)
    /api/header-cursor  an array, the next cursor in the X-Next-Cursor header (?cursor=C)
    /api/offset  an array (?offset=O&limit=L)
    /api/pages   {"data": [...], "page": N} (?page=N&size=S; ?base=0 numbers pages from 0)
    /api/stripe  Stripe style: {"object": "list", "data": [...], "has_more": B} (?limit=L&starting_after=ID)
    /api/odata   OData style: {"value": [...], "@odata.nextLink": URL} (?skip=N)
    /api/items.csv  the same records as one CSV table (id,name,price,in_stock,updated_at,owner), for csv sources
  every generic route takes ?updated_since=T: only the records whose updated_at is T or later
  faults (POST /_control fields): "fail_page": N answers 500 for page N;
  "ignore_paging": true answers every request with the first page; "has_more_value": V sends V
  as /api/stripe's has_more where it would send true
  e.g. cache sources add repos --kind json --url http://127.0.0.1:PORT/api/items --key id --next link

A writable collection, for local edits (as real APIs behave):
    /api/tasks        GET every task (an array); POST creates one: the server numbers it
                      ("id"), 201 with Location and ETag
    /api/tasks/ID     GET one with its ETag ("v3"); PUT replaces it, PATCH merges a JSON merge
                      patch (RFC 7396) into it, DELETE removes it (204)
  If-Match: a write whose If-Match names another version (or a task that is gone) is 412.
  Idempotency-Key (draft-ietf-httpapi-idempotency-key-header: a quoted string): a write's key
  is kept a day; the same key with the same request gets the first answer again (applied once),
  with another body 422, while the first is still in flight 409.
  A task is a JSON object; "title", where given, a non-empty string, and "done" a boolean:
  else 422 {"error": ...}. Anything else is 400 or 404, as the route says.
  Control: POST /_tasks {"tasks": [...]} sets the collection (and clears the keys and logs);
  {"status": 503, "retry_after": "2", "times": N}: the next N writes are answered with it, not
  applied; {"apply_then_drop": N}: the next N writes are applied, then the connection is closed
  with no answer; {"hold": true}: writes stay in flight until {"release": true} lets them go
  (a test decides when, not a clock); {"reset": true} clears faults and lets held writes go.
  GET /_tasks {"tasks": [...], "applied": [{"method", "id", "key"}], "writes": [{"method",
  "path", "idempotency_key", "if_match", "status"}]}.

Extra routes: /loop (redirects to itself), /redirect-to-file (redirects to a file: URL),
/redirect?to=URL (302 to URL), /big?bytes=N (streams an N-byte body that is never valid JSON:
for the size cap), /gzip-bomb?bytes=N (a gzip body of N random hex digits, compressed as it is
sent), /huge-head (200,000 header lines), /no-reason (a status line without a reason phrase),
/redirect-endless (a redirect whose body never ends), /continue (100 Continue and 103 Early
Hints before the jokes), /silent (accepts, never answers), /broken/no-status-line,
/broken/negative-length, /broken/long-header (a 1 MiB header line), /broken/status-text
(answers that are not valid HTTP, byte for byte).

The first line on stdout is "listening on http://127.0.0.1:PORT", printed once the socket
is ready. With --tls-cert and --tls-key the upstream speaks https on that port (the line says
https://); with --bind ::1 it listens there. In both cases a second line "control on
http://127.0.0.1:PORT" names a plain IPv4 port with the same routes, for the control routes. The server stops on SIGTERM, SIGINT, or when its stdin
closes (--exit-on-eof).

With --zygote (for test runs) it starts upstreams instead of being one: each line on stdin is a
JSON object {"arguments": [...], "stdin": FIFO, "stdout": FIFO}, and for each it forks an
upstream run with those arguments, its stdin and stdout the two FIFOs, whose first line is
"pid N". A test run so pays Python's start-up and imports once (about 0.1 s of CPU each) instead
of at every upstream it starts. It ends when its stdin closes.
"""
import argparse
import csv
import io
import base64
import secrets
import gzip
import hashlib
import json
import os
import random
import re
import signal
import socket
import struct
import ssl
import urllib.parse
import zlib
import sys
import threading
import time
import traceback
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_JOKES = os.path.join(ROOT, "Scripts", "data", "official-jokes.json")

FAULTS = {"malformed", "truncated", "reset", "plain", "html", "wrong-types", "envelope-error", "null-body", "drip"}


def default_account():
    return {
        "name": "Jane Appleseed",
        "currentBalance": 1234.56,
        "transactions": [
            {"type": 0, "vendor": "Payroll", "amount": 2000, "date": "2026-11-27 09:00:00"},
            {"type": 1, "vendor": "Starbucks", "amount": 7.23, "date": "2026-11-28 08:15:14"},
            {"type": 1, "vendor": "Starbucks", "amount": 7.23, "date": "2026-11-28 08:15:14"},
            {"type": 1, "vendor": "Whole Foods", "amount": 84.1, "date": "2026-11-28 18:02:40"},
            {"type": 1, "vendor": "Uber", "amount": 23.5, "date": "2026-11-29 22:41:09"},
            {"type": 0, "vendor": "Refund: Amazon", "amount": 19.99, "date": "2026-11-30 07:30:00"},
        ],
    }


def generated_items(count, seed=3):
    """Records for the generic API: six fields each, one of them nested."""
    rng = random.Random(seed)
    return [{"id": n, "name": f"item-{n}", "price": round(rng.uniform(1, 500), 2), "in_stock": rng.random() < 0.8,
             "updated_at": f"2026-11-{1 + n % 28:02d}T10:00:00Z", "owner": {"login": f"user{n % 17}", "id": n % 17}}
            for n in range(1, count + 1)]


def generated_transactions(count, seed=7):
    """count transactions, one at a time, deterministic for a seed (the benchmark writes 10M as they come)."""
    rng = random.Random(seed)
    vendors = ["Starbucks", "Whole Foods", "Uber", "Amazon", "Shell", "Netflix", "Payroll", "Rent", "Lyft", "Target"]
    base = 1_700_000_000
    for i in range(count):
        stamp = time.gmtime(base + i * 37 + rng.randrange(30))
        yield {
            "type": 0 if rng.random() < 0.1 else 1,
            "vendor": rng.choice(vendors),
            "amount": round(rng.uniform(1, 500), 2),
            "date": time.strftime("%Y-%m-%d %H:%M:%S", stamp),
        }


def generated_account(count, seed=7):
    """A large account for scale tests: count transactions, deterministic for a seed."""
    return {"name": "Generated Account", "currentBalance": 10000.0, "transactions": list(generated_transactions(count, seed))}


class Tasks:
    """The writable collection (see the module's docstring): versions, idempotency keys, faults."""

    KEY_LIFETIME = 86400

    def __init__(self):
        self.lock = threading.RLock()
        self.set([])
        self.faults = {}
        self.released = threading.Event()  # held writes wait for it (see "hold")

    def set(self, tasks):
        with self.lock:
            self.records = {str(task["id"]): dict(task) for task in tasks}
            self.versions = {key: 1 for key in self.records}
            self.next_id = max([int(key) for key in self.records if key.isdigit()] + [0]) + 1
            self.keys = {}  # idempotency key -> {"fingerprint", "answer": (status, headers, body) or None, "at"}
            self.applied = []
            self.writes = []

    def etag(self, key):
        return f'"v{self.versions[key]}"'

    @staticmethod
    def merge(target, patch):
        """RFC 7396: a patch's null removes a member; an object merges into an object."""
        if not isinstance(patch, dict):
            return patch
        result = dict(target) if isinstance(target, dict) else {}
        for name, value in patch.items():
            if value is None:
                result.pop(name, None)
            else:
                result[name] = Tasks.merge(result.get(name), value)
        return result

    @staticmethod
    def problem(task):
        if not isinstance(task, dict):
            return "a task is a JSON object"
        if "title" in task and (not isinstance(task["title"], str) or not task["title"]):
            return "title must be a non-empty string"
        if "done" in task and not isinstance(task["done"], bool):
            return "done must be true or false"
        return None


class State:
    def __init__(self, jokes, account, faults):
        self.lock = threading.RLock()  # re-entered: send() counts bytes under it, and some routes send while holding it
        self.jokes = jokes
        self.account = account
        self.faults = faults
        self.counts = {}
        self.total = 0
        self.served_jokes = []  # the ids of each jokes answer, in order
        self.requests = []  # what each request sent that the tests check
        self.static = {}  # path -> bytes served as they are (--account-file)
        self.static_gzip = {}  # path -> those bytes gzip-compressed, made on first request
        self.bytes_sent = 0  # body bytes sent, as they went on the wire (compressed or not)
        self.rng = random.Random(1)
        self.items = generated_items(300)  # the generic API's records (/api/items, /api/paged, /api/cursor)
        self.rate_limits = []  # answers to give before the generic routes answer: {"status", "reset_in"}
        self.oauth = None  # {"client_id", "client_secret", "expires_in", "expire_after"}: /api/* needs a token
        self.basic = None  # {"user", "password"}: /api/* needs HTTP Basic authentication
        self.tokens = {}  # token -> {"expires": time, "uses_left": n or None}
        self.token_requests = 0
        self.tasks = Tasks()
        self.released = threading.Event()  # held reads wait for it (see "hold")

    def count(self, path, headers, query=""):
        with self.lock:
            self.total += 1
            self.counts[path] = self.counts.get(path, 0) + 1
            self.requests.append({
                "path": path, "query": query, "time": time.time(),
                "if_none_match": headers.get("If-None-Match"),
                "if_modified_since": headers.get("If-Modified-Since"),
                "authorization": headers.get("Authorization"),
                "headers": {key.lower(): value for key, value in headers.items()},
            })


# Broken upstreams, byte for byte: an HTTP/0.9-style answer with no status line, a negative
# Content-Length, a 1 MiB header line, a status that is not a number.
BROKEN_ANSWERS = {
    "/broken/no-status-line": b"[{\"id\": 1}]\r\n",
    "/broken/negative-length": b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: -1\r\n\r\n[]",
    "/broken/long-header": b"HTTP/1.1 200 OK\r\nX-Long: " + b"a" * (1 << 20) + b"\r\nContent-Length: 2\r\n\r\n[]",
    "/broken/status-text": b"HTTP/1.1 abc OK\r\nContent-Length: 2\r\n\r\n[]",
}


def make_handler(state):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # An answer is written as its head, then its body: with Nagle's algorithm on, the body
        # waits for the client's delayed ACK of the head (40 ms on Linux) on a kept connection.
        disable_nagle_algorithm = True

        def log_message(self, fmt, *args):  # keep test output clean
            pass

        # -- helpers -------------------------------------------------------
        def send(self, status, body, content_type="application/json", declared_length=None, drip=False, headers=None):
            data = body if isinstance(body, bytes) else body.encode()
            with state.lock:
                state.bytes_sent += len(data)
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.send_header("Content-Length", str(declared_length if declared_length is not None else len(data)))
            if declared_length is not None:
                self.send_header("Connection", "close")
            self.end_headers()
            if drip:
                for i in range(len(data)):
                    self.wfile.write(data[i:i + 1])
                    self.wfile.flush()
                    time.sleep(1)
                return
            self.wfile.write(data)
            self.wfile.flush()
            if declared_length is not None:
                self.close_connection = True

        def send_json(self, value, status=200):
            self.send(status, json.dumps(value))

        def read_json(self):
            length = int(self.headers.get("Content-Length") or 0)
            return json.loads(self.rfile.read(length) or b"{}")

        def csv_items(self):
            """The generic records as one CSV table (RFC 4180, a header row): for csv sources."""
            with state.lock:
                items = list(state.items)
            out = io.StringIO()
            writer = csv.writer(out, lineterminator="\r\n")
            writer.writerow(["id", "name", "price", "in_stock", "updated_at", "owner"])
            for item in items:
                owner = item.get("owner")
                writer.writerow([item.get("id"), item.get("name"), item.get("price"), str(item.get("in_stock", "")).lower(),
                                 item.get("updated_at"), owner.get("login") if isinstance(owner, dict) else owner])
            return self.send(200, out.getvalue(), "text/csv; charset=utf-8")

        # -- a generic JSON API, three ways of paging ------------------------
        def generic_api(self, path, faults):
            """One generic record list, paged each way an API pages (see the module's docstring).
            faults: "fail_page": N answers 500 for page N; "ignore_paging": true answers every
            request with the first page (a loop to be caught)."""
            query = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)
            arg = lambda name, default: (query.get(name) or [default])[0]
            with state.lock:
                limit = state.rate_limits.pop(0) if state.rate_limits else None
                items = list(state.items)
            if limit:
                reset = int(time.time() + float(limit.get("reset_in", 60)))
                status = int(limit.get("status", 429))
                headers = {"X-RateLimit-Limit": "60", "X-RateLimit-Remaining": "0"}
                # {"retry_after": S} sends Retry-After instead of the reset time.
                if "retry_after" in limit:
                    headers["Retry-After"] = str(int(limit["retry_after"]))
                else:
                    headers["X-RateLimit-Reset"] = str(reset)
                return self.send(status, json.dumps({"message": "API rate limit exceeded"}), headers=headers)
            if faults.get("ignore_paging"):
                query = {key: value for key, value in query.items()
                         if key in ("per_page", "limit", "size", "base")}
            # ?updated_since=T: only the records updated at T or later (an incremental sync).
            since = arg("updated_since", None)
            if since is not None:
                items = [item for item in items if str(item.get("updated_at", "")) >= since]
            per_page = int(arg("per_page", arg("limit", arg("size", "100"))))
            # Where this page starts, by the route's own paging parameter.
            if path in ("/api/cursor", "/api/header-cursor"):
                cursor = arg("cursor", "")
                start = int(cursor.removeprefix("c-") or 0)
            elif path == "/api/offset":
                start = int(arg("offset", "0"))
            elif path == "/api/pages":
                start = (int(arg("page", arg("base", "1"))) - int(arg("base", "1"))) * per_page
            elif path == "/api/stripe":
                after = arg("starting_after", None)
                ids = [str(item.get("id")) for item in items]
                start = ids.index(after) + 1 if after in ids else 0
            elif path == "/api/odata":
                start = int(arg("skip", "0"))
            else:
                start = (int(arg("page", "1")) - 1) * per_page
            page = start // per_page + 1
            if faults.get("fail_page") and int(faults["fail_page"]) == page:
                return self.send(500, "upstream failure\n", "text/plain")
            chunk = items[start:start + per_page]
            more = start + per_page < len(items)
            base = f"http://{self.headers.get('Host')}{path}"
            if path == "/api/items":
                headers = {}
                if more:
                    headers["Link"] = (f'<{base}?page={page + 1}&per_page={per_page}>; rel="next", '
                                       f'<{base}?page={(len(items) - 1) // per_page + 1}&per_page={per_page}>; rel="last"')
                return self.send(200, json.dumps(chunk), headers=headers)
            if path == "/api/paged":
                return self.send_json({"count": len(items), "next": f"{base}?page={page + 1}&per_page={per_page}" if more else None,
                                       "previous": None, "results": chunk})
            if path == "/api/cursor":
                return self.send_json({"data": {"items": chunk}, "meta": {"cursor": str(start + per_page) if more else None}})
            if path == "/api/header-cursor":
                headers = {"X-Next-Cursor": f"c-{start + per_page}"} if more else {}
                return self.send(200, json.dumps(chunk), headers=headers)
            if path == "/api/offset":
                return self.send_json(chunk)
            if path == "/api/pages":
                return self.send_json({"data": chunk, "page": page})
            if path == "/api/stripe":
                # faults "has_more_value": V sends V instead of true (a has_more that is not a boolean).
                return self.send_json({"object": "list", "data": chunk,
                                       "has_more": faults.get("has_more_value", True) if more else False})
            if path == "/api/odata":
                body = {"@odata.context": f"{base}/$metadata", "value": chunk}
                if more:
                    body["@odata.nextLink"] = f"{base}?skip={start + per_page}&per_page={per_page}"
                return self.send_json(body)
            return self.send_json({"error": "no such route"}, 404)

        # -- control -------------------------------------------------------
        def token_endpoint(self):
            """OAuth2 client credentials (RFC 6749 4.4): HTTP Basic client authentication and
            grant_type=client_credentials in a form body."""
            length = int(self.headers.get("Content-Length") or 0)
            form = urllib.parse.parse_qs(self.rfile.read(length).decode("utf-8", "replace"))
            state.count("/oauth/token", self.headers)
            with state.lock:
                state.token_requests += 1
                oauth = dict(state.oauth or {})
            basic = self.headers.get("Authorization", "")
            try:
                user, _, password = base64.b64decode(basic.removeprefix("Basic ")).decode().partition(":")
                user, password = urllib.parse.unquote_plus(user), urllib.parse.unquote_plus(password)
            except ValueError:
                user, password = "", ""
            if not oauth or not basic.startswith("Basic ") or (user, password) != (oauth.get("client_id"), oauth.get("client_secret")):
                return self.send_json({"error": "invalid_client"}, 401)
            grant = form.get("grant_type")
            if grant == ["refresh_token"]:
                # RFC 6749 6: a refresh token the client was given, if the upstream has one.
                if not oauth.get("refresh_token") or form.get("refresh_token") != [oauth["refresh_token"]]:
                    return self.send_json({"error": "invalid_grant"}, 400)
            elif grant != ["client_credentials"] or oauth.get("refresh_token"):
                return self.send_json({"error": "unsupported_grant_type"}, 400)
            token = "tok-" + secrets.token_hex(12)
            expires_in = int(oauth.get("expires_in", 3600))
            with state.lock:
                state.tokens[token] = {"expires": time.time() + expires_in, "uses_left": oauth.get("expire_after")}
            answer = {"access_token": token, "token_type": "Bearer", "expires_in": expires_in}
            if form.get("scope"):
                answer["scope"] = form["scope"][0]
            return self.send_json(answer)

        def token_refused(self):
            """With OAuth2 on, a generic route needs a live bearer token: False if it has one,
            else True, the 401 sent. A token spent (expire_after uses) or past its time is refused."""
            with state.lock:
                if state.basic:
                    expected = "Basic " + base64.b64encode(f"{state.basic['user']}:{state.basic['password']}".encode()).decode()
                    if self.headers.get("Authorization") == expected:
                        return False
                    self.send(401, json.dumps({"error": "unauthorized"}), headers={"WWW-Authenticate": 'Basic realm="api"'})
                    return True
                if not state.oauth:
                    return False
                token = self.headers.get("Authorization", "").removeprefix("Bearer ")
                entry = state.tokens.get(token)
                if entry and entry["expires"] > time.time() and (entry["uses_left"] is None or entry["uses_left"] > 0):
                    if entry["uses_left"] is not None:
                        entry["uses_left"] -= 1
                    return False
            self.send(401, json.dumps({"error": "invalid_token"}), headers={"WWW-Authenticate": 'Bearer error="invalid_token"'})
            return True

        # -- a writable collection -----------------------------------------
        def tasks_write(self):
            """A write to /api/tasks: preconditions, idempotency keys and faults, then the change."""
            tasks = state.tasks
            method, path = self.command, self.path.split("?", 1)[0]
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            key_header = self.headers.get("Idempotency-Key")
            if_match = self.headers.get("If-Match")
            log = {"method": method, "path": path, "idempotency_key": key_header, "if_match": if_match}
            if key_header is not None and not re.fullmatch(r'"[\x20-\x21\x23-\x5b\x5d-\x7e]{1,255}"', key_header):
                log["status"] = 400
                with tasks.lock:
                    tasks.writes.append(log)
                return self.send_json({"error": "Idempotency-Key must be a quoted string"}, 400)
            fingerprint = hashlib.sha256(method.encode() + b" " + path.encode() + b"\n" + body).hexdigest()
            with tasks.lock:
                # Logged under the lock that registers its key: a test that sees it logged sees
                # its key taken.
                tasks.writes.append(log)
                now = time.time()
                # Keys expire oldest first (the dict keeps the order they came in): one look a
                # write, not a pass over every key, which made a long push quadratic here.
                while tasks.keys:
                    oldest = next(iter(tasks.keys))
                    if now - tasks.keys[oldest]["at"] < Tasks.KEY_LIFETIME:
                        break
                    del tasks.keys[oldest]
                seen = tasks.keys.get(key_header) if key_header else None
                if seen is not None:
                    if seen["fingerprint"] != fingerprint:
                        log["status"] = 422
                        return self.send_json({"error": "this Idempotency-Key was used for another request"}, 422)
                    if seen["answer"] is None:
                        log["status"] = 409
                        return self.send_json({"error": "a request with this Idempotency-Key is still being processed"}, 409)
                    status, headers, answer = seen["answer"]
                    log["status"] = status
                    log["replayed"] = True
                    return self.send(status, answer, headers=headers)
                fault = dict(tasks.faults)
                if fault.get("times", 0) > 0 and fault.get("status"):
                    tasks.faults["times"] -= 1
                    log["status"] = int(fault["status"])
                    extra = {"Retry-After": str(fault["retry_after"])} if fault.get("retry_after") is not None else {}
                    return self.send(int(fault["status"]), json.dumps({"error": "try again later"}), headers=extra)
                if key_header:
                    tasks.keys[key_header] = {"fingerprint": fingerprint, "answer": None, "at": now}
                # Taken under the lock: a release that comes before the wait is not lost.
                held = tasks.released if fault.get("hold") else None
            if held is not None:
                held.wait(60)  # until the test lets it go (a minute at most)
            status, headers, answer = self.tasks_apply(method, path, body, if_match, key_header)
            log["status"] = status
            with tasks.lock:
                if key_header:
                    if status >= 500:
                        tasks.keys.pop(key_header, None)  # not done: a retry may try again
                    else:
                        tasks.keys[key_header]["answer"] = (status, headers, answer)
                drop = tasks.faults.get("apply_then_drop", 0) > 0 and status < 300
                if drop:
                    tasks.faults["apply_then_drop"] -= 1
            if drop:
                # Applied, and the answer lost: the connection closes with nothing sent.
                log["dropped"] = True
                self.close_connection = True
                try:
                    self.connection.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                return
            return self.send(status, answer, headers=headers)

        def tasks_apply(self, method, path, body, if_match, key_header):
            """The change itself: (status, headers, body)."""
            tasks = state.tasks
            error = lambda status, text: (status, {}, json.dumps({"error": text}))
            parts = path.split("/")  # ["", "api", "tasks"] or ["", "api", "tasks", ID]
            with tasks.lock:
                if len(parts) == 3:
                    if method != "POST":
                        return error(405, "POST creates a task; write one at /api/tasks/ID")
                    try:
                        task = json.loads(body or b"null")
                    except ValueError:
                        return error(400, "not JSON")
                    problem = Tasks.problem(task)
                    if problem:
                        return error(422, problem)
                    key = str(tasks.next_id)
                    tasks.next_id += 1
                    task = dict(task, id=int(key))
                    tasks.records[key] = task
                    tasks.versions[key] = 1
                    tasks.applied.append({"method": method, "id": key, "key": key_header})
                    return 201, {"Location": f"/api/tasks/{key}", "ETag": tasks.etag(key)}, json.dumps(task)
                key = urllib.parse.unquote(parts[3])
                current = tasks.records.get(key)
                if if_match is not None:
                    tags = [tag.strip() for tag in if_match.split(",")]
                    if current is None or ("*" not in tags and tasks.etag(key) not in tags):
                        return error(412, "the task changed since that version (If-Match)")
                if current is None:
                    return error(404, "no such task")
                if method == "DELETE":
                    del tasks.records[key]
                    tasks.versions[key] += 1
                    tasks.applied.append({"method": method, "id": key, "key": key_header})
                    return 204, {}, ""
                try:
                    given = json.loads(body or b"null")
                except ValueError:
                    return error(400, "not JSON")
                task = Tasks.merge(current, given) if method == "PATCH" else given
                problem = Tasks.problem(task)
                if problem:
                    return error(422, problem)
                if str(task.get("id", key)) != key:
                    return error(422, "a task's id cannot change")
                task = dict(task, id=current["id"])
                tasks.records[key] = task
                tasks.versions[key] += 1
                tasks.applied.append({"method": method, "id": key, "key": key_header})
                return 200, {"ETag": tasks.etag(key)}, json.dumps(task)

        def tasks_read(self, path):
            tasks = state.tasks
            parts = path.split("/")
            with tasks.lock:
                if len(parts) == 3:
                    return self.send_json([tasks.records[key] for key in sorted(tasks.records, key=lambda k: (len(k), k))])
                key = urllib.parse.unquote(parts[3])
                if key not in tasks.records:
                    return self.send_json({"error": "no such task"}, 404)
                if self.headers.get("If-None-Match") == tasks.etag(key):
                    self.send_response(304)
                    self.send_header("ETag", tasks.etag(key))
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                return self.send(200, json.dumps(tasks.records[key]), headers={"ETag": tasks.etag(key)})

        def do_PUT(self):
            if self.path.split("?", 1)[0].startswith("/api/tasks/"):
                return self.tasks_write()
            self.send_json({"error": "no such route"}, 404)

        do_PATCH = do_PUT
        do_DELETE = do_PUT

        def do_POST(self):
            if self.path == "/oauth/token":
                return self.token_endpoint()
            if self.path.split("?", 1)[0] == "/api/tasks":
                return self.tasks_write()
            try:
                value = self.read_json()
            except ValueError as error:
                return self.send_json({"error": str(error)}, 400)
            if self.path == "/_control":
                with state.lock:
                    if value.get("reset") or value.get("release"):
                        state.released.set()
                        state.released = threading.Event()
                        state.faults.pop("hold", None)
                    if value.get("reset"):
                        state.faults = {}
                    for key in ("hold", "delay", "status", "fault", "message", "envelope_status", "validators", "retry_after",
                                "gzip", "silent_once", "always_304", "fail_page", "ignore_paging", "has_more_value", "announce"):
                        if key in value:
                            state.faults[key] = value[key]
                    return self.send_json(state.faults)
            if self.path == "/_account":
                with state.lock:
                    state.account = value
                return self.send_json({"ok": True})
            if self.path == "/_static":
                with open(value["file"], "rb") as f:
                    data = f.read()
                with state.lock:
                    state.static[value.get("path", "/account")] = data
                    state.static_gzip.pop(value.get("path", "/account"), None)
                return self.send_json({"ok": True, "bytes": len(data)})
            if self.path == "/_items":
                # {"items": [...]} or {"count": N}: the generic API's records from now on.
                with state.lock:
                    state.items = value["items"] if "items" in value else generated_items(int(value.get("count", 300)))
                return self.send_json({"ok": True, "items": len(state.items)})
            if self.path == "/_basic":
                # {"user", "password"}: /api/* wants HTTP Basic authentication with them ({}: not).
                with state.lock:
                    state.basic = value or None
                return self.send_json({"ok": True})
            if self.path == "/_oauth":
                # {"client_id", "client_secret", "expires_in": S, "expire_after": N}: /api/* wants a token;
                # with "refresh_token": R, only the refresh-token grant with R gives one.
                with state.lock:
                    state.oauth = value or None
                    state.tokens = {}
                return self.send_json({"ok": True})
            if self.path == "/_rate_limit":
                # {"status": 429|403, "reset_in": seconds, "times": n}: the next n generic requests are refused.
                with state.lock:
                    state.rate_limits += [value] * int(value.get("times", 1))
                return self.send_json({"ok": True})
            if self.path == "/_tasks":
                tasks = state.tasks
                with tasks.lock:
                    if value.get("reset") or value.get("release"):
                        tasks.released.set()
                        tasks.released = threading.Event()
                    if value.get("reset"):
                        tasks.faults = {}
                    if value.get("release"):
                        tasks.faults.pop("hold", None)
                    if "tasks" in value:
                        tasks.set(value["tasks"])
                    for key in ("status", "retry_after", "times", "apply_then_drop", "hold"):
                        if key in value:
                            tasks.faults[key] = value[key]
                    if "status" in value and "times" not in value:
                        tasks.faults["times"] = 1
                    return self.send_json(tasks.faults)
            if self.path == "/_generate":
                account = generated_account(int(value.get("count", 10000)), int(value.get("seed", 7)))
                with state.lock:
                    state.account = account
                return self.send_json({"ok": True, "transactions": len(account["transactions"])})
            self.send_json({"error": "no such control route"}, 404)

        # -- upstream routes -----------------------------------------------
        def do_GET(self):
            path = self.path.split("?", 1)[0]
            if path == "/_tasks":
                tasks = state.tasks
                with tasks.lock:
                    return self.send_json({"tasks": list(tasks.records.values()), "applied": list(tasks.applied),
                                           "writes": list(tasks.writes)})
            if path == "/api/tasks" or path.startswith("/api/tasks/"):
                state.count(path, self.headers)
                return self.tasks_read(path)
            if path == "/_stats":
                with state.lock:
                    return self.send_json({"total": state.total, "bytes_sent": state.bytes_sent, "paths": dict(state.counts),
                                           "token_requests": state.token_requests,
                                           "served_jokes": list(state.served_jokes), "requests": list(state.requests)})
            state.count(path, self.headers, urllib.parse.urlsplit(self.path).query)
            with state.lock:
                faults = dict(state.faults)
                account = state.account
                silent = state.faults.pop("silent_once", False)
                # Taken under the lock: a release that comes before the wait is not lost.
                held = state.released if faults.get("hold") else None
            if held is not None:
                held.wait(120)
            if silent or path == "/silent":
                time.sleep(120)  # a server that accepted and never answers
                self.close_connection = True
                return
            if faults.get("delay"):
                time.sleep(float(faults["delay"]))
            if path in state.static:
                if state.faults.get("gzip") and "gzip" in (self.headers.get("Accept-Encoding") or ""):
                    with state.lock:
                        if path not in state.static_gzip:
                            state.static_gzip[path] = gzip.compress(state.static[path], 6)
                    return self.send(200, state.static_gzip[path], headers={"Content-Encoding": "gzip"})
                return self.send(200, state.static[path])
            if faults.get("always_304"):
                # A 304 whatever the request sent: a protocol error when it sent no validator.
                self.send_response(304)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            if faults.get("status"):
                extra = {"Retry-After": str(faults["retry_after"])} if faults.get("retry_after") is not None else {}
                return self.send(int(faults["status"]), "upstream failure\n", "text/plain", headers=extra)
            if path == "/loop":
                return self.send(302, "", "text/plain", headers={"Location": "/loop"})
            if path == "/redirect-to-file":
                return self.send(302, "", "text/plain", headers={"Location": "file:///etc/passwd"})
            if path == "/redirect":
                target = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query).get("to", ["/account"])[0]
                return self.send(302, "", "text/plain", headers={"Location": target})
            if path == "/gzip-bomb":
                query = dict(part.split("=", 1) for part in self.path.partition("?")[2].split("&") if "=" in part)
                return self.stream_gzip(int(query.get("bytes", 40_000_000)))
            if path == "/huge-head":
                # 200,000 header lines (about 5 MB) before any body.
                self.send_response(200)
                for i in range(200_000):
                    self.send_header(f"X-Filler-{i}", "x" * 8)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"[]")
                return
            if path == "/no-reason":
                # A status line with no reason phrase, as HTTP/1.1 allows.
                data = json.dumps(self.jokes_route("/jokes/ten")).encode()
                self.wfile.write(b"HTTP/1.1 200\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(data))
                self.wfile.write(data)
                return
            if path == "/redirect-endless":
                # A redirect whose body never ends: a client must follow it without reading on.
                self.send_response(302)
                self.send_header("Location", "/account")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                try:
                    for _ in range(600):
                        self.wfile.write(b"400\r\n" + b"x" * 1024 + b"\r\n")
                        self.wfile.flush()
                        time.sleep(0.05)
                except (BrokenPipeError, ConnectionResetError):
                    pass
                self.close_connection = True
                return
            if path in BROKEN_ANSWERS:
                # Answers that are not HTTP, or not valid HTTP, written as they are.
                self.wfile.write(BROKEN_ANSWERS[path])
                self.wfile.flush()
                self.close_connection = True
                return
            if path == "/continue":
                # Interim answers first, as a server may send them; the real one follows. The
                # 103's headers belong to it alone: a client that kept them would be wrong.
                self.wfile.write(b"HTTP/1.1 100 Continue\r\n\r\n")
                self.wfile.write(b"HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n"
                                 b"ETag: \"interim\"\r\nRetry-After: 5\r\n\r\n")
                self.wfile.flush()
                return self.answer(self.jokes_route("/jokes/ten"), None)
            if path == "/big":
                query = dict(part.split("=", 1) for part in self.path.partition("?")[2].split("&") if "=" in part)
                return self.stream_big(int(query.get("bytes", 300_000_000)), query.get("chunked") == "1")
            fault = faults.get("fault")
            if fault == "plain":
                return self.send(200, "Sorry, that's not a number.\n", "text/plain")
            if fault == "html":
                return self.send(200, "<!doctype html><title>Maintenance</title><h1>Back soon</h1>", "text/html")

            if path == "/api/items.csv":
                return self.csv_items()
            if path.startswith("/api/"):
                if self.token_refused():
                    return
                return self.generic_api(path, faults)
            if path == "/account":
                status = int(faults.get("envelope_status", 200))
                if fault == "envelope-error":
                    status = int(faults.get("envelope_status", 500))
                body = None if fault == "null-body" else account
                if fault == "wrong-types" and body is not None:
                    body = json.loads(json.dumps(body))
                    if body["transactions"]:
                        body["transactions"][0]["amount"] = str(body["transactions"][0]["amount"])
                    else:
                        body["currentBalance"] = "lots"
                envelope = {"status": status, "message": faults.get("message", "OK" if status == 200 else "Internal error"), "body": body}
                return self.answer(envelope, fault, validators=faults.get("validators"))

            value = self.jokes_route(path)
            if value is None:
                return self.send_json({"type": "error", "message": "joke not found"}, 404)
            if isinstance(value, str):
                return self.send(200, value, "text/plain")
            if isinstance(value, (list, dict)) and path != "/types":
                with state.lock:
                    state.served_jokes.append([j["id"] for j in (value if isinstance(value, list) else [value])])
            if fault == "wrong-types":
                items = value if isinstance(value, list) else [value]
                items = [dict(item, id=str(item["id"])) for item in items]
                value = items if isinstance(value, list) else items[0]
            return self.answer(value, fault)

        def answer(self, value, fault, validators=False):
            text = json.dumps(value)
            if validators and not fault:
                # {"validators": "TEXT"} sends TEXT as the ETag, as it is (a hostile one, say).
                tag = validators if isinstance(validators, str) else '"%s"' % hashlib.sha1(text.encode()).hexdigest()[:16]
                extra = {"ETag": tag, "Last-Modified": "Mon, 30 Nov 2026 00:00:00 GMT"}
                if self.headers.get("If-None-Match") == tag:
                    self.send_response(304)
                    for key, value in extra.items():
                        self.send_header(key, value)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                return self.send(200, text, headers=extra)
            if fault == "malformed":
                return self.send(200, text[: max(1, len(text) // 2)] + "}}]")
            if fault == "truncated":
                data = text.encode()
                return self.send(200, data[: len(data) // 2], declared_length=len(data))
            if fault == "announce":
                # A Content-Length the body never reaches ({"announce": N} bytes), then close.
                return self.send(200, text, declared_length=int(state.faults.get("announce") or 107374182400))
            if fault == "drip":
                return self.send(200, text, drip=True)
            if fault == "reset":
                data = text.encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Connection", "close")
                self.end_headers()
                self.wfile.write(data[: len(data) // 2])
                self.wfile.flush()
                # SO_LINGER with a zero timeout: close() sends a TCP reset instead of a FIN. The
                # descriptor is closed here, before the server's own shutdown() could send a FIN.
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                os.close(self.connection.detach())
                self.close_connection = True
                return
            if state.faults.get("gzip") and "gzip" in (self.headers.get("Accept-Encoding") or ""):
                return self.send(200, gzip.compress(text.encode()), headers={"Content-Encoding": "gzip"})
            self.send(200, text)

        def stream_gzip(self, size):
            """Random hex digits (they compress to about half), gzip-compressed as they are
            sent, with no length announced: the client must cap what it inflates."""
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Encoding", "gzip")
            self.send_header("Connection", "close")
            self.end_headers()
            compressor = zlib.compressobj(1, zlib.DEFLATED, 31)  # 31: the gzip container
            sent = 0
            try:
                while sent < size:
                    piece = os.urandom(min(1 << 20, (size - sent + 1) // 2)).hex().encode()[: size - sent]
                    self.wfile.write(compressor.compress(piece))
                    sent += len(piece)
                self.wfile.write(compressor.flush())
            except (BrokenPipeError, ConnectionResetError):
                pass
            self.close_connection = True

        def stream_big(self, size, chunked):
            """A huge body written in pieces, so the server holds little. With chunked=1 no
            length is announced, and a client must enforce its cap while the bytes arrive."""
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            if chunked:
                self.send_header("Transfer-Encoding", "chunked")
            else:
                self.send_header("Content-Length", str(size))
            self.send_header("Connection", "close")
            self.end_headers()
            piece = ("[" + ",".join(['{"id": 1, "type": "t", "setup": "s", "punchline": "p"}'] * 1000) + ",").encode()
            sent = 0
            try:
                while sent < size:
                    part = piece[: size - sent]
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part) if chunked else part)
                    sent += len(part)
                if chunked:
                    self.wfile.write(b"0\r\n\r\n")
            except (BrokenPipeError, ConnectionResetError):
                pass
            self.close_connection = True

        def jokes_route(self, path):
            jokes = state.jokes
            with state.lock:
                rng = state.rng

                def sample(items, n):
                    return rng.sample(items, min(n, len(items)))

                if path in ("/random_joke", "/jokes/random"):
                    return rng.choice(jokes)
                if path in ("/random_ten", "/jokes/ten"):
                    return sample(jokes, 10)
                if path == "/types":
                    return sorted({j["type"] for j in jokes})
                m = re.fullmatch(r"/jokes/random/([^/]+)", path)
                if m:
                    if not m.group(1).isdigit() or int(m.group(1)) > len(jokes):
                        return f"Sorry, that's not a number or it's more than {len(jokes)}.\n"
                    return sample(jokes, int(m.group(1)))
                m = re.fullmatch(r"/jokes/([^/]+)/(random|ten)", path)
                if m:
                    typed = [j for j in jokes if j["type"] == m.group(1)]
                    return sample(typed, 1 if m.group(2) == "random" else 10)
                m = re.fullmatch(r"/jokes/(\d+)", path)
                if m:
                    wanted = int(m.group(1))
                    return next((j for j in jokes if j["id"] == wanted), None)
            return None

    return Handler


def zygote():
    # The kernel reaps the upstreams: the tests wait for one by its stdout closing.
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    while line := sys.stdin.readline():
        request = json.loads(line)
        if os.fork() != 0:
            continue
        status = 0
        try:
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            # The test holds both FIFOs open already (stdin for writing, stdout for reading),
            # so neither open waits.
            for fd, path, flags in ((0, request["stdin"], os.O_RDONLY), (1, request["stdout"], os.O_WRONLY)):
                opened = os.open(path, flags)
                os.dup2(opened, fd)
                os.close(opened)
            sys.stdin = open(0, closefd=False)
            sys.stdout = open(1, "w", closefd=False)
            print(f"pid {os.getpid()}", flush=True)
            main(request["arguments"])
        except BaseException:
            traceback.print_exc()
            status = 1
        finally:
            # Not sys.exit: the child must never return into the zygote's loop.
            sys.stdout.flush()
            os._exit(status)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port (default)")
    parser.add_argument("--bind", default="127.0.0.1", help="the address to listen on: 127.0.0.1 (default) or ::1")
    parser.add_argument("--jokes", default=os.environ.get("CACHE_JOKES_FILE", DEFAULT_JOKES))
    parser.add_argument("--delay", type=float, default=0, help="seconds to wait before answering")
    parser.add_argument("--fail-status", type=int, help="answer every route with this HTTP status")
    parser.add_argument("--fault", choices=sorted(FAULTS), help="send this kind of bad body")
    parser.add_argument("--transactions", type=int, help="serve a generated account with N transactions")
    parser.add_argument("--account-file", help="serve this file's bytes as /account, and its rows alone as /transactions (benchmarks)")
    parser.add_argument("--exit-on-eof", action="store_true", help="stop when stdin closes (tests)")
    parser.add_argument("--tls-cert", help="serve https with this certificate chain (PEM)")
    parser.add_argument("--tls-key", help="the certificate's private key (PEM)")
    parser.add_argument("--zygote", action="store_true", help="fork upstreams as stdin asks (tests; see above)")
    args = parser.parse_args(argv)
    if args.zygote:
        return zygote()

    with open(args.jokes) as f:
        jokes = [dict(joke, id=index + 1) for index, joke in enumerate(json.load(f))]
    account = generated_account(args.transactions) if args.transactions else default_account()
    static = {}
    if args.account_file:
        # Served as bytes read once: the benchmark measures the client, not json.dumps.
        with open(args.account_file, "rb") as f:
            static["/account"] = f.read()
        static["/transactions"] = json.dumps(json.loads(static["/account"])["body"]["transactions"]).encode()
    faults = {}
    if args.delay:
        faults["delay"] = args.delay
    if args.fail_status:
        faults["status"] = args.fail_status
    if args.fault:
        faults["fault"] = args.fault

    state = State(jokes, account, faults)
    state.static = static
    ThreadingHTTPServer.address_family = socket.AF_INET6 if ":" in args.bind else socket.AF_INET
    # A backlog of 5 (the default) dropped the connections of 16 syncs at once: sent again a second later.
    ThreadingHTTPServer.request_queue_size = 128
    server = ThreadingHTTPServer((args.bind, args.port), make_handler(state))
    ThreadingHTTPServer.address_family = socket.AF_INET
    server.daemon_threads = True
    server.handle_error = lambda *_: None  # a client that hangs up or fails a handshake is no news
    servers = [server]
    scheme = "http"
    if args.tls_cert:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(args.tls_cert, args.tls_key)
        # The handshake happens in the handler's thread, so a client that stalls it holds no one up.
        server.socket = context.wrap_socket(server.socket, server_side=True, do_handshake_on_connect=False)
        scheme = "https"
    if args.tls_cert or args.bind != "127.0.0.1":
        control = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(state))
        control.daemon_threads = True
        servers.append(control)
        threading.Thread(target=control.serve_forever, daemon=True).start()

    def stop(*_):
        for each in servers:
            threading.Thread(target=each.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    # A parent may have spawned us from a thread that blocks signals (libdispatch workers do).
    signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGTERM, signal.SIGINT])
    host = f"[{args.bind}]" if ":" in args.bind else args.bind
    print(f"listening on {scheme}://{host}:{server.server_address[1]}", flush=True)
    if len(servers) > 1:
        print(f"control on http://127.0.0.1:{servers[1].server_address[1]}", flush=True)
    if args.exit_on_eof:
        threading.Thread(target=lambda: (sys.stdin.read(), stop()), daemon=True).start()
    server.serve_forever()


if __name__ == "__main__":
    main()
