"""Fixtures for feedkv's end-to-end tests.

Every test gets its own feedkv-server process: the real binary, on a free
127.0.0.1 port, with its own temporary --dir and no RDB saving. Extra start-up
arguments come from markers:

    @pytest.mark.server_args("--requirepass", "s3cret")
    @pytest.mark.server_config("maxclients 100\\nloglevel verbose\\n")  # conf file
    @pytest.mark.no_debug_command   # start without --enable-debug-command yes

Both feedkv and Redis 7 refuse DEBUG by default; the fixtures start servers
with --enable-debug-command yes (before the test's own arguments, which can
override it) unless asked not to.

The binary is $FEEDKV_SERVER (ctest sets it) or <repo>/build/feedkv-server.
Pointing FEEDKV_SERVER at /usr/bin/redis-server runs the same suite against
real Redis, which is how the expectations here were checked.

Fixtures:
    server        the started server (FeedkvServer): .port, .dir, .client(),
                  .raw(), .log_text(), .expect_exit(code), .wait_exit()
    r             server.client() - redis-py, decode_responses=True
    raw           factory: raw() -> RawConn (a RESP socket) to `server`
    start_server  factory for further servers: start_server(*args, config=None)

On teardown each server gets SIGTERM and must exit with status 0 within a
deadline; a server that crashed, exited on its own without the test
expecting it, or printed a sanitizer report fails the test. The tail of the
server log is attached to every failing test's report.
"""

import os
import pathlib
import shutil
import signal
import socket
import subprocess
import tempfile
import time

import pytest
import redis


def wait_until(pred, timeout=5.0, step=0.01):
    """Polls pred until it is true or timeout seconds pass; returns its last value."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(step)
    return pred()


REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]
STARTUP_TIMEOUT = float(os.environ.get("FEEDKV_E2E_STARTUP_TIMEOUT", "30"))
SHUTDOWN_TIMEOUT = float(os.environ.get("FEEDKV_E2E_SHUTDOWN_TIMEOUT", "20"))
LOG_TAIL_BYTES = 20000
SANITIZER_MARKERS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:",
                     "ThreadSanitizer:", "Segmentation fault", "terminate called")


def wait_blocked(srv, n, timeout=5.0):
    """Waits until `n` clients of `srv` are blocked (INFO clients blocked_clients)."""
    c = srv.client()
    if not wait_until(lambda: int(c.info("clients")["blocked_clients"]) >= n, timeout):
        raise AssertionError(f"{n} clients never blocked")


def norm_reply(v):
    """A reply with errors turned into comparable ("error", text) pairs."""
    if isinstance(v, RespError):
        return ("error", str(v))
    if isinstance(v, list):
        return [norm_reply(x) for x in v]
    return v


def run_seeded_script(srv, seed, n, random_op, setup=(), finals=()):
    """Runs `setup`, then n commands drawn by random_op(rng) from a Random(seed), then
    `finals` over one raw connection; returns the (command, normalised reply) pairs."""
    import random
    rng = random.Random(seed)
    c = srv.raw()
    for cmd in setup:
        c.cmd(*cmd)
    out = []
    for _ in range(n):
        cmd = random_op(rng)
        out.append((cmd, norm_reply(c.cmd(*cmd))))
    for cmd in finals:
        out.append((cmd, norm_reply(c.cmd(*cmd))))
    return out


def assert_same_replies(ours, theirs):
    """The (command, reply) pairs of one seeded script run on feedkv and on Redis 7,
    compared command by command (the first difference names its command)."""
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        assert a == b, f"command {a[0]}: feedkv {a[1]!r} != redis {b[1]!r}"


def aof_log_bytes(srv):
    """The bytes of srv's AOF segments (appendonlydir/appendonly.aof.N), in order."""
    return b"".join(p.read_bytes() for p in sorted((srv.dir / "appendonlydir").glob("appendonly.aof.*"))
                    if p.name[-1].isdigit())


def watch_outcomes(srv, key, changes, read):
    """For each change: client A WATCHes `key`, client B runs the change, then A runs
    MULTI, `read` (a command list) and EXEC. Returns, per change, B's reply (or error
    text) and A's EXEC result or "aborted" — what WATCH tests compare with Redis 7."""
    a, b = srv.client(), srv.client()
    out = []
    for change in changes:
        with a.pipeline(transaction=True) as p:
            p.watch(key)
            try:
                out.append((change, b.execute_command(*change)))
            except redis.ResponseError as e:
                out.append((change, str(e)))
            p.multi()
            p.execute_command(*read)
            try:
                out.append((change, p.execute()))
            except redis.WatchError:
                out.append((change, "aborted"))
    return out


def server_binary():
    p = os.environ.get("FEEDKV_SERVER") or str(REPO_ROOT / "build" / "feedkv-server")
    return p


def tools_dir():
    return os.environ.get("FEEDKV_TOOLS_DIR") or str(REPO_ROOT / "build")


def is_real_redis():
    """True when the suite runs against Redis itself (reference run)."""
    return os.path.basename(server_binary()).startswith("redis-server")


def is_sanitized():
    """True when the server under test is the ASan+UBSan build (its RSS holds
    shadow memory and a quarantine of freed blocks: RSS bounds do not apply)."""
    return os.environ.get("FEEDKV_SANITIZED") == "1"


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ---------------------------------------------------------------------------
# RESP over a raw socket
# ---------------------------------------------------------------------------

class RespError(Exception):
    """An error reply. str(e) is the text after '-'."""

    def __eq__(self, other):
        return isinstance(other, RespError) and str(self) == str(other)

    def __hash__(self):
        return hash(str(self))

    def __repr__(self):
        return f"RespError({str(self)!r})"


class Push(list):
    """A RESP3 push ('>') frame."""


class Simple(str):
    """A simple-string ('+') reply."""


class Verbatim(bytes):
    """A RESP3 verbatim string; the bytes are the text after 'fmt:'."""


class ConnectionClosed(Exception):
    pass


def encode_command(*args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        if isinstance(a, str):
            a = a.encode()
        elif isinstance(a, int):
            a = str(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


class RawConn:
    """A blocking RESP2/RESP3 connection that reports replies as data
    (errors are returned as RespError, never raised) and can tell whether
    the server closed the connection."""

    def __init__(self, port, timeout=10.0, host="127.0.0.1"):
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.timeout = timeout
        self.buf = bytearray()
        self.pos = 0

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def send(self, data):
        self.sock.sendall(data)

    def send_command(self, *args):
        self.send(encode_command(*args))

    def cmd(self, *args):
        self.send_command(*args)
        return self.read_reply()

    def _fill(self, deadline):
        if self.pos > 1 << 20 and self.pos > len(self.buf) // 2:
            del self.buf[:self.pos]
            self.pos = 0
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("no complete reply from the server in time")
        self.sock.settimeout(left)
        try:
            chunk = self.sock.recv(1 << 20)
        except ConnectionResetError as e:
            raise ConnectionClosed(f"connection reset: {e}") from e
        except socket.timeout as e:
            raise TimeoutError("no complete reply from the server in time") from e
        if not chunk:
            raise ConnectionClosed("server closed the connection")
        self.buf += chunk

    def _line(self, deadline):
        while True:
            i = self.buf.find(b"\r\n", self.pos)
            if i >= 0:
                line = bytes(self.buf[self.pos:i])
                self.pos = i + 2
                return line
            self._fill(deadline)

    def _exact(self, n, deadline):
        while len(self.buf) - self.pos < n + 2:
            self._fill(deadline)
        data = bytes(self.buf[self.pos:self.pos + n])
        if self.buf[self.pos + n:self.pos + n + 2] != b"\r\n":
            raise AssertionError("bulk not terminated by CRLF")
        self.pos += n + 2
        return data

    def read_reply(self, timeout=None):
        deadline = time.monotonic() + (timeout if timeout is not None else self.timeout)
        return self._read(deadline)

    def _read(self, deadline):
        line = self._line(deadline)
        if not line:
            raise AssertionError("empty reply line")
        t, rest = line[:1], line[1:]
        if t == b"+":
            return Simple(rest.decode("utf-8", "replace"))
        if t == b"-":
            return RespError(rest.decode("utf-8", "replace"))
        if t == b":":
            return int(rest)
        if t == b"$":
            n = int(rest)
            return None if n < 0 else self._exact(n, deadline)
        if t in (b"*", b"~", b">"):
            n = int(rest)
            if n < 0:
                return None
            items = [self._read(deadline) for _ in range(n)]
            return Push(items) if t == b">" else items
        if t == b"%":
            n = int(rest)
            d = {}
            for _ in range(n):
                k = self._read(deadline)
                d[k if not isinstance(k, list) else tuple(k)] = self._read(deadline)
            return d
        if t == b"|":  # attribute: skip it, return the reply it annotates
            n = int(rest)
            for _ in range(2 * n):
                self._read(deadline)
            return self._read(deadline)
        if t == b"_":
            return None
        if t == b"#":
            return rest == b"t"
        if t == b",":
            return float(rest.decode())
        if t == b"(":
            return int(rest)
        if t == b"=":
            data = self._exact(int(rest), deadline)
            return Verbatim(data[4:])
        if t == b"!":
            return RespError(self._exact(int(rest), deadline).decode("utf-8", "replace"))
        raise AssertionError(f"unknown RESP type byte in {line[:80]!r}")

    def read_replies(self, n, timeout=None):
        deadline = time.monotonic() + (timeout if timeout is not None else self.timeout)
        return [self._read(deadline) for _ in range(n)]

    def closed_by_server(self, timeout=5.0):
        """True if the server closes the connection within `timeout` (any
        unread bytes are discarded); False if it stays open."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            self.sock.settimeout(left)
            try:
                chunk = self.sock.recv(65536)
            except socket.timeout:
                return False
            except (ConnectionResetError, BrokenPipeError):
                return True
            if not chunk:
                return True
            self.buf += chunk

    def pending(self):
        return bytes(self.buf[self.pos:])


# ---------------------------------------------------------------------------
# The server process
# ---------------------------------------------------------------------------

class ServerStartError(Exception):
    pass


class FeedkvServer:
    def __init__(self, binary, workdir, args=(), config=None, name="server", debug_command=True):
        self.binary = binary
        self.name = name
        self.workdir = pathlib.Path(workdir)
        self.dir = self.workdir / "data"
        self.dir.mkdir(parents=True, exist_ok=True)
        self.log_path = self.workdir / "server.log"
        self.config_path = None
        if config is not None:
            self.config_path = self.workdir / "feedkv.conf"
            self.config_path.write_text(config)
        self.extra_args = [str(a) for a in args]
        self.debug_command = debug_command
        self.port = None
        self.proc = None
        self.expected_exit = None
        self._clients = []
        self._raws = []
        self._sigterm_sent = False

    # -- life cycle --
    def command_line(self, port):
        cmd = [self.binary]
        if self.config_path is not None:
            cmd.append(str(self.config_path))
        cmd += ["--port", str(port), "--dir", str(self.dir), "--save", ""]
        if self.debug_command:
            cmd += ["--enable-debug-command", "yes"]
        return cmd + self.extra_args

    def start(self):
        if not os.access(self.binary, os.X_OK):
            raise ServerStartError(
                f"server binary {self.binary} not found or not executable; build it "
                "(ninja -C build feedkv-server) or set FEEDKV_SERVER")
        last = ""
        for _ in range(5):
            port = free_port()
            with open(self.log_path, "ab") as logf:
                logf.write(("=== starting: %s\n" % " ".join(
                    repr(a) if a == "" else a for a in self.command_line(port))).encode())
                logf.flush()
                self.proc = subprocess.Popen(
                    self.command_line(port), stdin=subprocess.DEVNULL, stdout=logf,
                    stderr=subprocess.STDOUT, cwd=str(self.workdir), start_new_session=True)
            self.port = port
            state = self._wait_ready(time.monotonic() + STARTUP_TIMEOUT)
            if state == "ready":
                return self
            last = self.log_tail()
            if state == "exited" and ("in use" in last.lower() or "could not create" in last.lower()):
                continue  # lost the race for the port: try another one
            if state == "timeout":
                self._kill()
                raise ServerStartError(
                    f"{self.name} did not answer PING within {STARTUP_TIMEOUT:.0f}s\n{last}")
            raise ServerStartError(
                f"{self.name} exited during start-up with status {self.proc.returncode}\n{last}")
        raise ServerStartError(f"{self.name} could not bind a free port\n{last}")

    def _wait_ready(self, deadline):
        delay = 0.005
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                return "exited"
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1.0) as s:
                    s.settimeout(2.0)
                    s.sendall(b"*1\r\n$4\r\nPING\r\n")
                    data = s.recv(256)
                    if data.startswith(b"+PONG") or data.startswith(b"-NOAUTH"):
                        return "ready"
            except OSError:
                pass
            time.sleep(delay)
            delay = min(delay * 2, 0.1)
        return "timeout"

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def expect_exit(self, code=0):
        """Declare that the server will exit by itself with `code` (e.g. SHUTDOWN)."""
        self.expected_exit = code

    def wait_exit(self, timeout=SHUTDOWN_TIMEOUT):
        """Waits for the process to end; returns its exit status, or None on timeout."""
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None

    def _kill(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass

    def stop(self):
        """Stops the server; returns a list of problems (empty when clean)."""
        problems = []
        for c in self._clients:
            try:
                c.connection_pool.disconnect()
            except Exception:
                pass
        for rc in self._raws:
            rc.close()
        if self.proc is None:
            return problems
        rc = self.proc.poll()
        if rc is not None:
            if self.expected_exit is None:
                problems.append(f"{self.name} exited on its own during the test (status "
                                f"{describe_status(rc)}) - crashed?")
            elif rc != self.expected_exit:
                problems.append(f"{self.name} exited with status {describe_status(rc)}, "
                                f"expected {self.expected_exit}")
        else:
            self._sigterm_sent = True
            self.proc.send_signal(signal.SIGTERM)
            try:
                rc = self.proc.wait(timeout=SHUTDOWN_TIMEOUT)
            except subprocess.TimeoutExpired:
                self._kill()
                problems.append(f"{self.name} did not exit within {SHUTDOWN_TIMEOUT:.0f}s of SIGTERM")
                rc = None
            if rc is not None and rc != 0:
                problems.append(f"{self.name} exited with status {describe_status(rc)} after "
                                "SIGTERM (expected a clean exit, status 0)")
        text = self.log_text()
        for m in SANITIZER_MARKERS:
            if m in text:
                problems.append(f"{self.name} log contains '{m}'")
                break
        return problems

    # -- access --
    def client(self, **kw):
        opts = dict(host="127.0.0.1", port=self.port, socket_timeout=30,
                    socket_connect_timeout=10, decode_responses=True)
        opts.update(kw)
        c = redis.Redis(**opts)
        self._clients.append(c)
        return c

    def raw(self, timeout=10.0):
        c = RawConn(self.port, timeout=timeout)
        self._raws.append(c)
        return c

    def ping_ok(self, timeout=5.0):
        """A fresh connection gets +PONG (or NOAUTH when a password is set)."""
        try:
            with RawConn(self.port, timeout=timeout) as c:
                reply = c.cmd("PING")
                return reply == "PONG" or (isinstance(reply, RespError) and str(reply).startswith("NOAUTH"))
        except (OSError, ConnectionClosed, TimeoutError):
            return False

    def log_text(self):
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""

    def log_tail(self, nbytes=LOG_TAIL_BYTES):
        t = self.log_text()
        return t if len(t) <= nbytes else "...\n" + t[-nbytes:]


def describe_status(rc):
    if rc is None:
        return "unknown"
    if rc < 0:
        try:
            return f"{rc} (killed by {signal.Signals(-rc).name})"
        except ValueError:
            return f"{rc} (signal {-rc})"
    return str(rc)


# ---------------------------------------------------------------------------
# pytest plumbing
# ---------------------------------------------------------------------------

def pytest_configure(config):
    config.addinivalue_line("markers", "server_args(*args): extra feedkv-server arguments")
    config.addinivalue_line("markers", "server_config(text): config file passed as first argument")
    config.addinivalue_line("markers", "no_debug_command: start without --enable-debug-command yes")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    if rep.failed:
        for srv in getattr(item, "_feedkv_servers", []):
            rep.sections.append(
                (f"{srv.name} log ({srv.log_path}, port {srv.port})", srv.log_tail()))


@pytest.fixture
def _server_registry(request):
    servers = []
    request.node._feedkv_servers = servers
    base = pathlib.Path(tempfile.mkdtemp(prefix="feedkv-e2e-"))

    def make(args=(), config=None, name=None, debug_command=True):
        name = name or ("server" if not servers else f"server{len(servers) + 1}")
        srv = FeedkvServer(server_binary(), base / name, args=args, config=config, name=name,
                           debug_command=debug_command)
        servers.append(srv)
        try:
            srv.start()
        except ServerStartError as e:
            pytest.fail(str(e), pytrace=False)
        return srv

    yield make

    problems = []
    for srv in servers:
        problems += srv.stop()
    if problems:
        for srv in servers:
            print(f"\n----- {srv.name} log tail -----\n{srv.log_tail()}")
        pytest.fail("; ".join(problems), pytrace=False)
    shutil.rmtree(base, ignore_errors=True)


@pytest.fixture
def server(request, _server_registry):
    args = []
    for m in request.node.iter_markers("server_args"):
        args = list(m.args) + args
    config = None
    m = request.node.get_closest_marker("server_config")
    if m is not None:
        config = m.args[0]
    debug_command = request.node.get_closest_marker("no_debug_command") is None
    return _server_registry(args=args, config=config, name="server", debug_command=debug_command)


@pytest.fixture
def start_server(_server_registry):
    def start(*args, config=None, name=None, debug_command=True):
        return _server_registry(args=args, config=config, name=name, debug_command=debug_command)
    return start


def redis_binary():
    return os.environ.get("REDIS_SERVER") or shutil.which("redis-server") or "/usr/bin/redis-server"


@pytest.fixture
def redis7_server():
    """Real Redis 7 (Debian's redis-server, or $REDIS_SERVER) on a free port with
    --save '', for side-by-side tests; stopped (and checked) afterwards. Skips when
    Redis is missing or the whole suite already runs against Redis."""
    binary = redis_binary()
    if not os.access(binary, os.X_OK) or is_real_redis():
        pytest.skip("redis-server not installed (or the suite already runs against Redis)")
    base = pathlib.Path(tempfile.mkdtemp(prefix="feedkv-e2e-redis-"))
    srv = FeedkvServer(binary, base, name="redis7")
    try:
        srv.start()
    except ServerStartError as e:
        pytest.fail(str(e), pytrace=False)
    yield srv
    problems = srv.stop()
    shutil.rmtree(base, ignore_errors=True)
    assert not problems, problems


@pytest.fixture
def r(server):
    return server.client()


@pytest.fixture
def raw(server):
    return server.raw
