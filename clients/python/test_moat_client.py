"""Tests of moat_client: its parsers offline, and a whole agent loop against
a real ``moat serve``.

The server tests need MOAT_SERVE_SOCKET naming a running ``moat serve`` (the
client finds its token where moat serve wrote it); python_client_linux_test.go starts one and sets
MOAT_TEST_REQUIRE_SERVER=1, which turns a missing server into a failure,
never a skip. Run by hand::

    moat serve --socket "$d/serve.sock" &   # $d: a 0700 directory of yours
    MOAT_SERVE_SOCKET=$d/serve.sock python3 -m unittest -v test_moat_client
"""

from __future__ import annotations

import contextlib
import http.client
import io
import json
import os
import random
import socket
import tempfile
import threading
import time
import unittest
from typing import Any, Callable, List, Optional
from unittest import mock

import moat_client as mc

REQUIRE_SERVER = os.environ.get("MOAT_TEST_REQUIRE_SERVER") == "1"
SERVER_SOCKET = os.environ.get("MOAT_SERVE_SOCKET", "")
SERVER_URL = os.environ.get("MOAT_TEST_SERVE_URL", "")  # the server's TCP listener, when it has one


# ---------------------------------------------------------------------------
# Offline: the client's own parsing and finding, no server.


class BytesEncodingTest(unittest.TestCase):
    def test_round_trip(self) -> None:
        for data in [b"", b"hello\n", "h\u00e9llo \u2603".encode(), b"\x00\xff\xfe", bytes(range(256))]:
            enc = mc._encode_bytes(data)
            self.assertEqual(len(enc), 1, enc)
            self.assertEqual(mc._decode_bytes(enc, "x"), data)
            if b"\xff" in data:
                self.assertIn("base64", enc)
            else:
                self.assertIn("text", enc)

    def test_str_is_text(self) -> None:
        self.assertEqual(mc._encode_bytes("caf\u00e9"), {"text": "caf\u00e9"})
        with self.assertRaises(mc.BadRequest):
            mc._encode_bytes("\ud800")

    def test_bad_objects(self) -> None:
        for obj in [
            {"text": "a", "base64": "YQ=="},
            {"base64": "not base64!"},
            {"base64": 5},
            {"text": 5},
            {"text": "\ud800"},
            "plain string",
            [1],
        ]:
            with self.subTest(obj=obj), self.assertRaises(mc.BadResponse):
                mc._decode_bytes(obj, "x")
        self.assertEqual(mc._decode_bytes(None, "x"), b"")
        self.assertEqual(mc._decode_bytes({}, "x"), b"")


class ParserFuzzTest(unittest.TestCase):
    """Random JSON values into every reader: each value is read or refused
    with BadResponse, never another exception."""

    def _value(self, rnd: random.Random, depth: int = 0) -> Any:
        choices: List[Callable[[], Any]] = [
            lambda: None,
            lambda: rnd.choice([True, False]),
            lambda: rnd.randint(-(2**70), 2**70),
            lambda: rnd.random(),
            lambda: "".join(chr(rnd.randint(0, 0x2FFF)) for _ in range(rnd.randint(0, 8))),
        ]
        if depth < 3:
            keys = ["text", "base64", "exit_code", "refusals", "id", "argv", "state", "data", "offset",
                    "process", "stdout", "stderr", "kind", "subject", "args", "limits", "allows", "type", "result"]
            choices.append(lambda: [self._value(rnd, depth + 1) for _ in range(rnd.randint(0, 3))])
            choices.append(
                lambda: {rnd.choice(keys): self._value(rnd, depth + 1) for _ in range(rnd.randint(0, 5))}
            )
        return rnd.choice(choices)()

    def test_readers(self) -> None:
        rnd = random.Random(25)
        readers = [
            lambda v: mc._decode_bytes(v, "x"),
            mc.RunResult.from_json,
            mc.Proc.from_json,
            mc.ProcOutput.from_json,
            mc.FileInfo.from_json,
            mc.SessionInfo.from_json,
            mc.PolicyInfo.from_json,
            mc.Refusal.from_json,
            mc.Summary.from_json,
            lambda v: mc._error_from_json(v, 400),
        ]
        for _ in range(3000):
            v = self._value(rnd)
            for read in readers:
                try:
                    read(v)
                except mc.BadResponse:
                    pass

    def test_error_classes(self) -> None:
        for code, cls in mc._ERRORS.items():
            e = mc._error_from_json({"code": code, "message": "m", "setting": "s"}, 418)
            self.assertIsInstance(e, cls)
            self.assertIsInstance(e, mc.MoatError)
            self.assertEqual((e.code, e.message, e.status, e.setting), (code, "m", 418, "s"))
        e = mc._error_from_json({"code": "a_new_code", "message": "m"}, 400)
        self.assertIs(type(e), mc.MoatError)
        self.assertEqual(e.code, "a_new_code")


class FindingTest(unittest.TestCase):
    def setUp(self) -> None:
        self.dir = tempfile.mkdtemp()
        os.chmod(self.dir, 0o700)
        self.addCleanup(lambda: __import__("shutil").rmtree(self.dir, ignore_errors=True))
        clean = {k: v for k, v in os.environ.items() if not k.startswith("MOAT_SERVE_")}
        clean["XDG_STATE_HOME"] = os.path.join(self.dir, "state")
        p = mock.patch.dict(os.environ, clean, clear=True)
        p.start()
        self.addCleanup(p.stop)

    def token_file(self, token: str = "ab" * 32, sock: "str | None" = None) -> str:
        """Writes the token where moat serve puts it for sock (None: the
        default socket): under the state root's serve directory."""
        if sock is None:
            sock = os.path.join(self.dir, "serve.sock")
        p = mc.default_token_file(sock)
        os.makedirs(os.path.dirname(p), mode=0o700, exist_ok=True)
        with open(p, "w") as f:
            f.write(token + "\n")
        os.chmod(p, 0o600)
        return p

    def test_order(self) -> None:
        tf = self.token_file()
        sock = os.path.join(self.dir, "serve.sock")
        # The token file moat serve writes for an explicit socket: in the
        # state root, named after the socket's path.
        self.assertEqual(os.path.dirname(tf), os.path.join(self.dir, "state", "moat", "serve"))
        self.assertRegex(os.path.basename(tf), r"^serve-[0-9a-f]{16}\.token$")
        c = mc.Client(sock)
        self.assertEqual((c.socket_path, c.token_file, c._token_now()), (sock, tf, "ab" * 32))
        # The environment, when no argument says.
        os.environ["MOAT_SERVE_SOCKET"] = sock
        os.environ["MOAT_SERVE_TOKEN"] = "cd" * 32
        c = mc.Client()
        self.assertEqual((c.socket_path, c._token_now()), (sock, "cd" * 32))
        del os.environ["MOAT_SERVE_TOKEN"]
        os.environ["MOAT_SERVE_TOKEN_FILE"] = tf
        self.assertEqual(mc.Client().token_file, tf)
        # Arguments win over the environment.
        c = mc.Client(url="http://127.0.0.1:8600", token="ef" * 32)
        self.assertEqual((c.socket_path, c._tcp, c._token_now()), (None, ("127.0.0.1", 8600), "ef" * 32))
        # MOAT_SERVE_URL alone means TCP.
        del os.environ["MOAT_SERVE_SOCKET"]
        os.environ["MOAT_SERVE_URL"] = "http://[::1]:9000"
        self.assertEqual(mc.Client()._tcp, ("::1", 9000))

    def test_default_token_file(self) -> None:
        os.environ["XDG_RUNTIME_DIR"] = self.dir
        serve = os.path.join(self.dir, "state", "moat", "serve")
        self.assertEqual(mc.default_token_file(), os.path.join(serve, "serve.token"))
        # The default socket named with --socket still has serve.token.
        self.assertEqual(mc.default_token_file(os.path.join(self.dir, "moat", "serve.sock")), os.path.join(serve, "serve.token"))
        import hashlib
        other = os.path.join(self.dir, "x.sock")
        want = "serve-" + hashlib.sha256(other.encode()).hexdigest()[:16] + ".token"
        self.assertEqual(mc.default_token_file(other), os.path.join(serve, want))

    def test_token_beside_socket_read_when_there(self) -> None:
        sock = os.path.join(self.dir, "serve.sock")
        c = mc.Client(sock)
        self.assertIsNone(c._token_now())  # none yet: on the socket, none is sent
        self.token_file("12" * 32)
        self.assertEqual(c._token_now(), "12" * 32)
        # Over TCP the token is required: a missing file is an error.
        c = mc.Client(url="http://127.0.0.1:1", token_file=os.path.join(self.dir, "absent"))
        with self.assertRaises(mc.Unauthorized):
            c._token_now()

    def test_default_socket(self) -> None:
        os.environ["XDG_RUNTIME_DIR"] = self.dir
        self.assertEqual(mc.default_socket_path(), os.path.join(self.dir, "moat", "serve.sock"))
        del os.environ["XDG_RUNTIME_DIR"]
        os.environ["XDG_STATE_HOME"] = self.dir
        self.assertEqual(mc.default_socket_path(), os.path.join(self.dir, "moat", "serve", "serve.sock"))

    def test_url_refused_off_loopback(self) -> None:
        for url in ["https://127.0.0.1:1", "http://10.0.0.1:80", "http://example.com:80",
                    "http://127.0.0.1", "http://127.0.0.1:80/x", "http://u:p@127.0.0.1:80", "ftp://127.0.0.1:1",
                    "http://localhost:80"]:  # a name may resolve to another loopback address
            with self.subTest(url=url), self.assertRaises(mc.BadRequest):
                mc.Client(url=url, token="x")
        for url in ["http://127.0.0.1:80", "http://[::1]:80"]:  # control
            mc.Client(url=url, token="x")

    def test_token_file_refusals(self) -> None:
        tf = self.token_file()
        link = os.path.join(self.dir, "link.token")
        os.symlink(tf, link)
        with self.assertRaises(mc.Unauthorized):
            mc._read_token_file(link)
        big = os.path.join(self.dir, "big.token")
        with open(big, "w") as f:
            f.write("a" * (mc.MAX_TOKEN_FILE + 1))
        with self.assertRaises(mc.Unauthorized):
            mc._read_token_file(big)
        with self.assertRaises(mc.Unauthorized):
            mc._read_token_file(self.dir)
        self.assertEqual(mc._read_token_file(tf), "ab" * 32)


class _FakeStream:
    """A one-shot HTTP server on a Unix socket that answers a streamed run
    with the given body, to check the client's line bound and endings."""

    def __init__(self, dirpath: str, body: bytes, ctype: str = "application/x-ndjson") -> None:
        self.path = os.path.join(dirpath, "fake.sock")
        self.srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.srv.bind(self.path)
        self.srv.listen(1)
        self.body, self.ctype = body, ctype
        self.t = threading.Thread(target=self._serve, daemon=True)
        self.t.start()

    def _serve(self) -> None:
        conn, _ = self.srv.accept()
        with conn:
            buf = b""
            while b"\r\n\r\n" not in buf:
                buf += conn.recv(65536)
            head, rest = buf.split(b"\r\n\r\n", 1)
            n = 0
            for line in head.split(b"\r\n"):
                if line.lower().startswith(b"content-length:"):
                    n = int(line.split(b":")[1])
            while len(rest) < n:
                rest += conn.recv(65536)
            conn.sendall(
                b"HTTP/1.1 200 OK\r\nContent-Type: " + self.ctype.encode()
                + b"\r\nConnection: close\r\nContent-Length: %d\r\n\r\n" % len(self.body) + self.body
            )
        self.srv.close()


class StreamParsingTest(unittest.TestCase):
    def setUp(self) -> None:
        self.dir = tempfile.mkdtemp()
        self.addCleanup(lambda: __import__("shutil").rmtree(self.dir, ignore_errors=True))

    def session(self, body: bytes, ctype: str = "application/x-ndjson") -> mc.Session:
        fake = _FakeStream(self.dir, body, ctype)
        c = mc.Client(fake.path, token="t", max_line=1024)
        info = mc.SessionInfo("s1", "", "default", "/w", "", "", "", mc.Summary())
        return mc.Session(c, info)

    def test_events(self) -> None:
        body = b"".join(json.dumps(x).encode() + b"\n" for x in [
            {"type": "stdout", "data": {"text": "hi\n"}},
            {"type": "stderr", "data": {"base64": "/w=="}},
            {"type": "later-kind", "x": 1},
            {"type": "exit", "result": {"exit_code": 3, "stdout": {"text": ""}, "stderr": {"text": ""},
                                        "refusals": [{"kind": "dns", "subject": "evil.example"}]}},
        ])
        out: List[bytes] = []
        err: List[bytes] = []
        r = self.session(body).run(["x"], on_stdout=out.append, on_stderr=err.append)
        self.assertEqual((r.exit_code, out, err), (3, [b"hi\n"], [b"\xff"]))
        self.assertEqual(r.refusals[0].subject, "evil.example")

    def test_error_event(self) -> None:
        body = b'{"type":"stdout","data":{"text":"a"}}\n{"type":"error","error":{"code":"start_failed","message":"no such program"}}\n'
        with self.assertRaises(mc.StartFailed):
            list(self.session(body).stream(["x"]))

    def test_line_bound(self) -> None:
        body = b'{"type":"stdout","data":{"text":"' + b"a" * 4096 + b'"}}\n'
        with self.assertRaises(mc.BadResponse) as cm:
            list(self.session(body).stream(["x"]))
        self.assertIn("longer than 1024", cm.exception.message)

    def test_no_exit(self) -> None:
        with self.assertRaises(mc.BadResponse):
            self.session(b'{"type":"stdout","data":{"text":"a"}}\n').run(["x"], on_stdout=lambda b: None)

    def test_not_json(self) -> None:
        with self.assertRaises(mc.BadResponse):
            list(self.session(b"{not json\n").stream(["x"]))

    def test_wrong_type(self) -> None:
        with self.assertRaises(mc.BadResponse):
            self.session(b"{}", ctype="text/html").stream(["x"])


# ---------------------------------------------------------------------------
# Against a real moat serve


def _need_server(case: unittest.TestCase) -> None:
    if not SERVER_SOCKET:
        if REQUIRE_SERVER:
            case.fail("MOAT_TEST_REQUIRE_SERVER=1 but MOAT_SERVE_SOCKET names no server")
        case.skipTest("no moat serve: set MOAT_SERVE_SOCKET (see this file's doc)")


def _eventually(what: str, probe: Callable[[], Optional[Any]], seconds: float = 20.0) -> Any:
    deadline = time.monotonic() + seconds
    while True:
        got = probe()
        if got:
            return got
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting for " + what)
        time.sleep(0.1)


CALC = '''def add(a, b):
    return a + b
'''

TEST_CALC = '''import unittest
import calc

class CalcTest(unittest.TestCase):
    def test_add(self):
        self.assertEqual(calc.add(2, 3), 5)

if __name__ == "__main__":
    unittest.main()
'''

# Waits up to 30 s for the loopback server, then fetches a file from it.
FETCH = '''import sys, time, urllib.request
url = "http://127.0.0.1:%d/calc.py"
for i in range(300):
    try:
        print(urllib.request.urlopen(url, timeout=5).read().decode(), end="")
        sys.exit(0)
    except OSError as e:
        err = e
        time.sleep(0.1)
print("unreachable:", err, file=sys.stderr)
sys.exit(1)
'''

# The command lines of the processes the sandbox sees.
PS = '''import os
for p in os.listdir("/proc"):
    if p.isdigit() and int(p) != os.getpid():
        try:
            print(open("/proc/%s/cmdline" % p).read().replace("\\0", " "))
        except OSError:
            pass
'''

# A lookup of a host the policy does not allow: refused, and recorded.
LOOKUP = '''import socket, sys
try:
    socket.getaddrinfo("pypi.org", 443)
except OSError as e:
    print("refused:", e)
    sys.exit(3)
print("resolved")
'''


class ServerTest(unittest.TestCase):
    client: mc.Client

    def setUp(self) -> None:
        _need_server(self)
        # Found from the environment, as an agent would find it.
        self.client = mc.Client()

    def session(self, **kw: Any) -> mc.Session:
        s = self.client.create_session(**kw)
        self.addCleanup(s.__exit__, None, None, None)
        return s

    def test_policies(self) -> None:
        names = [p.name for p in self.client.policies()]
        self.assertIn("default", names)
        doc = self.client.openapi()
        self.assertTrue(str(doc.get("openapi", "")).startswith("3.1"), doc.get("openapi"))

    def test_agent_loop(self) -> None:
        s = self.session(name="agent-loop")
        self.assertIn(s.id, [i.id for i in self.client.sessions()])
        self.assertEqual(self.client.session(s.id).info.name, "agent-loop")
        self.assertEqual(s.info.allows.network, "none")

        # Write a module and its test, and run them.
        s.write_file("calc.py", CALC)
        s.write_text("test_calc.py", TEST_CALC)
        self.assertEqual(s.read_text("calc.py"), CALC)
        self.assertTrue({"calc.py", "test_calc.py"} <= set(s.list(".").names()))
        st = s.stat("calc.py")
        self.assertEqual((st.type, st.size, st.mode), ("file", len(CALC), "0644"))
        r = s.run(["python3", "-m", "unittest", "-v", "test_calc"], timeout=60)
        self.assertEqual(r.exit_code, 0, r.stderr_text)
        self.assertIn("OK", r.stderr_text)

        # Break it: the test fails, streamed this time. (A new size, so
        # that Python's bytecode cache, keyed on size and mtime in whole
        # seconds, sees the change.)
        s.write_file("calc.py", CALC.replace("a + b", "a + b + 1"))
        out: List[bytes] = []
        err: List[bytes] = []
        r = s.run(["python3", "-m", "unittest", "test_calc"], on_stdout=out.append, on_stderr=err.append, timeout=60)
        self.assertNotEqual(r.exit_code, 0)
        self.assertIn(b"FAILED", b"".join(err))
        self.assertEqual(r.stderr, b"")  # streamed: the result carries none
        s.write_file("calc.py", CALC)

        # The stream as an iterator of events, with stdin.
        with s.stream(["python3", "-c", "import sys; print(sys.stdin.read().upper())"], stdin="shout\n") as ev:
            events = list(ev)
        self.assertEqual(events[-1].type, "exit")
        self.assertEqual(ev.result.exit_code if ev.result else None, 0)
        self.assertIn(b"SHOUT", b"".join(e.data for e in events if e.type == "stdout"))

        # Leaving a stream early kills the command: no process of it is left.
        marker = "moat-client-left-early"
        with s.stream(["python3", "-c", "import time; print(%r, flush=True); time.sleep(120)" % marker]) as ev:
            first = next(iter(ev))
            # The control: while the stream is open, the probe sees it.
            self.assertIn(marker.encode(), s.run(["python3", "-c", PS]).stdout)
        self.assertEqual((first.type, first.text.strip()), ("stdout", marker))
        _eventually("the abandoned command to be killed", lambda: marker.encode() not in s.run(
            ["python3", "-c", PS]).stdout)

        # A loopback server in the background, queried from inside.
        port = 8765
        p = s.start(["python3", "-u", "-m", "http.server", "--bind", "127.0.0.1", str(port)])
        self.assertEqual(p.state, "running")
        self.assertIn(p.id, [x.id for x in s.processes()])
        r = s.run(["python3", "-c", FETCH % port], timeout=60)
        self.assertEqual(r.exit_code, 0, r.stderr_text)
        self.assertEqual(r.stdout_text, CALC)
        o = _eventually("the server's log of the request",
                        lambda: (lambda o: o if b"GET /calc.py" in o.stderr.data else None)(s.output(p)))
        self.assertIn(b"Serving HTTP", o.stdout.data)
        # Only what is new after the offsets.
        again = s.output(p, o.stdout.next, o.stderr.next)
        self.assertEqual((again.stdout.offset, again.stderr.offset), (o.stdout.next, o.stderr.next))
        self.assertNotIn(b"GET /calc.py", again.stderr.data)
        s.signal(p, "INT")
        done = _eventually("the server to exit on INT",
                           lambda: next((x for x in s.processes() if x.id == p.id and not x.running), None))
        self.assertEqual(done.state, "exited")
        # stop() ends one that ignores TERM.
        q = s.start(["python3", "-c", "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(600)"])
        stopped = s.stop(q)
        self.assertEqual(stopped.state, "exited")

        # Meet a refusal and read it back.
        s.write_file("lookup.py", LOOKUP)
        r = s.run(["python3", "lookup.py"], timeout=60)
        self.assertEqual(r.exit_code, 3, r.stdout_text + r.stderr_text)
        mine = [x for x in r.refusals if x.subject == "pypi.org"]
        self.assertTrue(mine, r.refusals)
        self.assertEqual(mine[0].kind, "dns")
        self.assertEqual(mine[0].setting, "network.allow-domain")
        self.assertIn("pypi.org", mine[0].args)
        self.assertIn("pypi.org", [x.subject for x in s.refusals()])
        rep = s.report()
        self.assertEqual(rep.get("version"), 1)
        self.assertIn("pypi.org", [x.get("subject") for x in rep.get("refusals", [])])

        final = s.close()
        self.assertEqual(final.get("version"), 1)
        self.assertIn("pypi.org", [x.get("subject") for x in final.get("refusals", [])])
        self.assertIs(s.close(), final)
        self.assertNotIn(s.id, [i.id for i in self.client.sessions()])
        with self.assertRaises((mc.NotFound, mc.SessionClosed)) as cm:
            s.run(["true"])
        self.assertIn(cm.exception.status, (404, 410))

    def test_files_bytes(self) -> None:
        s = self.session()
        blob = bytes(range(256)) * 4
        info = s.write_bytes("blob.bin", blob, mode="0600")
        self.assertEqual((info.size, info.mode), (len(blob), "0600"))
        self.assertEqual(s.read_bytes("blob.bin"), blob)
        part = s.read_file("blob.bin", max=10)
        self.assertEqual((part.content, part.truncated), (blob[:10], True))
        with self.assertRaises(mc.TooLarge):
            mc.Session.read_bytes(_Truncating(s), "blob.bin")
        s.write_file("uni.txt", "caf\u00e9 \u2603\n")
        self.assertEqual(s.read_text("uni.txt"), "caf\u00e9 \u2603\n")
        r = s.run(["python3", "-c", "import os; os.symlink('/etc/hostname', 'ln'); os.mkfifo('ff')"])
        self.assertEqual(r.exit_code, 0, r.stderr_text)
        ln = s.stat("ln")
        self.assertEqual((ln.type, ln.target), ("symlink", "/etc/hostname"))
        with self.assertRaises(mc.NotRegularFile) as cm:
            s.read_file("ff")
        self.assertEqual(cm.exception.status, 409)

    def test_errors(self) -> None:
        with self.assertRaises(mc.NotFound) as cm:
            self.client.session("no-such-session")
        self.assertEqual((cm.exception.code, cm.exception.status), ("not_found", 404))
        with self.assertRaises(mc.UnknownPolicy) as cm2:
            self.client.create_session("no-such-policy")
        self.assertEqual(cm2.exception.status, 404)
        # Widening: a domain the policy (no network) does not allow.
        with self.assertRaises(mc.WidenRefused) as cm3:
            self.client.create_session(narrow=mc.Narrowing(network="allow-list", allow_domains=["pypi.org"]))
        self.assertEqual((cm3.exception.code, cm3.exception.status), ("widen_refused", 403))
        # Bad requests: an unknown field, and malformed JSON.
        with self.assertRaises(mc.BadRequest) as cm4:
            self.client.create_session(narrow={"network": "deny", "more_network_please": True})
        self.assertEqual(cm4.exception.status, 400)
        status, body = self.raw("POST", "/v1/sessions", b'{"policy": ')
        self.assertEqual((status, body["error"]["code"]), (400, "bad_request"))
        s = self.session(narrow=mc.Narrowing(network="deny", limits=mc.NarrowLimits(processes=64)))
        with self.assertRaises(mc.StartFailed) as cm5:
            s.run(["no-such-program-here"])
        self.assertEqual(cm5.exception.status, 422)
        with self.assertRaises(mc.PathRefused) as cm6:
            s.write_file("/etc/moat-client-test", "x")
        self.assertEqual(cm6.exception.status, 403)
        with self.assertRaises(mc.NotFound):
            s.output("p999")
        with self.assertRaises(mc.BadRequest):
            s.signal("p1", "STOP")  # refused by the client itself
        with self.assertRaises(mc.BadRequest):
            s.run("ls -l")  # a string is not an argv

    def test_tcp_token(self) -> None:
        if not SERVER_URL:
            if REQUIRE_SERVER:
                self.fail("MOAT_TEST_REQUIRE_SERVER=1 but MOAT_TEST_SERVE_URL names no TCP listener")
            self.skipTest("no TCP listener")
        # Over TCP the client is told where the token is; the ready line
        # named it (the socket tests find it by themselves).
        tf = os.environ.get("MOAT_TEST_TOKEN_FILE", "") or mc.default_token_file(SERVER_SOCKET or None)
        self.assertEqual(tf, mc.default_token_file(SERVER_SOCKET or None))
        good = mc.Client(url=SERVER_URL, token_file=tf)
        self.assertIn("default", [p.name for p in good.policies()])
        with self.assertRaises(mc.Unauthorized) as cm:
            mc.Client(url=SERVER_URL, token="00" * 32).policies()
        self.assertEqual(cm.exception.status, 401)
        with self.assertRaises(mc.Unauthorized):
            _no_token(SERVER_URL)

    def test_readme_example(self) -> None:
        """The README's Python example runs as shown and prints what it says."""
        readme = os.environ.get("MOAT_TEST_README", "")
        if not readme:
            if REQUIRE_SERVER:
                self.fail("MOAT_TEST_REQUIRE_SERVER=1 but MOAT_TEST_README names no README")
            self.skipTest("no README named (MOAT_TEST_README)")
        with open(readme, encoding="utf-8") as f:
            text = f.read()
        start = text.index("```python\n") + len("```python\n")
        code = text[start:text.index("```", start)]
        self.assertIn("moat_client", code)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(code, "README.md", "exec"), {})
        self.assertEqual(out.getvalue().splitlines()[0], "0 hi")

    def raw(self, method: str, path: str, body: bytes) -> "tuple[int, Any]":
        conn = self.client._connection(30)
        try:
            headers = {"Content-Type": "application/json"}
            tok = self.client._token_now()
            if tok:
                headers["Authorization"] = "Bearer " + tok
            conn.request(method, path, body=body, headers=headers)
            resp = conn.getresponse()
            return resp.status, json.loads(resp.read(1 << 20))
        finally:
            conn.close()


def _no_token(url: str) -> None:
    """A request over TCP with no Authorization header."""
    host, port = mc._check_url(url)
    conn = http.client.HTTPConnection(host, port, timeout=30)
    try:
        conn.request("GET", "/v1/policies")
        resp = conn.getresponse()
        if resp.status == 200:
            raise AssertionError("served without a token")
        raise mc._response_error(resp)
    finally:
        conn.close()


class _Truncating:
    """A stand-in whose read_file always reports a cut-short read."""

    def __init__(self, s: mc.Session) -> None:
        self.s = s

    def read_file(self, path: str, max: Optional[int] = None) -> mc.FileContent:
        f = self.s.read_file(path, max=1)
        return mc.FileContent(f.info, f.content, True)


if __name__ == "__main__":
    unittest.main()
