"""Security defaults, as Redis 7.0 (docs/protocol.md, "Security defaults"):

- protected configs: CONFIG SET dir / dbfilename refused unless
  enable-protected-configs allows it; dbfilename must be a plain file name;
- protected mode: a non-local client is refused with -DENIED while no password
  is set;
- DEBUG refused unless enable-debug-command allows it; DEBUG SLEEP never
  overflows;
- client-output-buffer-limit parsed with memory units, soft limit honoured.

Every expectation here was checked against redis-server 7.0.15
(FEEDKV_SERVER=/usr/bin/redis-server). The non-loopback tests run the server
in a network namespace of their own (tests/e2e/netns.py) and connect to it
from a non-loopback address there; they are skipped where one cannot be made.
"""

import socket
import subprocess
import time

import pytest

from conftest import RawConn, RespError, free_port, is_real_redis, server_binary, wait_until
from netns import NetNamespace

PROTECTED_ERR = "ERR CONFIG SET failed (possibly related to argument '{}') - can't set protected config"
IMMUTABLE_ERR = "ERR CONFIG SET failed (possibly related to argument '{}') - can't set immutable config"
DEBUG_ERR = ('ERR DEBUG command not allowed. If the enable-debug-command option is set to "local", '
             "you can run it from a local connection, otherwise you need to set this option in the "
             "configuration file, and then restart the server.")
DENIED = (
    "DENIED Redis is running in protected mode because protected mode is enabled and no password "
    "is set for the default user. In this mode connections are only accepted from the loopback "
    "interface. If you want to connect from external computers to Redis you may adopt one of the "
    "following solutions: 1) Just disable protected mode sending the command 'CONFIG SET "
    "protected-mode no' from the loopback interface by connecting to Redis from the same host the "
    "server is running, however MAKE SURE Redis is not publicly accessible from internet if you "
    "do so. Use CONFIG REWRITE to make this change permanent. 2) Alternatively you can just "
    "disable the protected mode by editing the Redis configuration file, and setting the "
    "protected mode option to 'no', and then restarting the server. 3) If you started the server "
    "manually just for testing, restart it with the '--protected-mode no' option. 4) Setup a an "
    "authentication password for the default user. NOTE: You only need to do one of the above "
    "things in order for the server to start accepting connections from the outside.")
OBUF_ERR = "ERR CONFIG SET failed (possibly related to argument 'client-output-buffer-limit') - {}"
OBUF_DEFAULT_REST = "slave 268435456 67108864 60 pubsub 33554432 8388608 60"


def config_get(c, name):
    reply = c.cmd("CONFIG", "GET", name)
    if isinstance(reply, dict):
        return reply[name.encode()].decode()
    return reply[1].decode()


def start_fails(tmp_path, *args):
    """Runs the server binary with args; returns its output, asserting it exits non-zero."""
    cmd = [server_binary(), "--port", "0", "--dir", str(tmp_path), "--save", ""] + list(args)
    p = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, cwd=str(tmp_path), timeout=30)
    assert p.returncode != 0, p.stdout
    return p.stdout.decode(errors="replace")


# --- item 10: protected configs --------------------------------------------

def test_dir_and_dbfilename_are_protected_by_default(server, raw):
    c = raw()
    assert config_get(c, "enable-protected-configs") == "no"
    assert c.cmd("CONFIG", "SET", "dir", "/tmp") == RespError(PROTECTED_ERR.format("dir"))
    assert c.cmd("CONFIG", "SET", "DIR", "/tmp") == RespError(PROTECTED_ERR.format("DIR"))
    assert c.cmd("CONFIG", "SET", "dbfilename", "../escaped.rdb") == \
        RespError(PROTECTED_ERR.format("dbfilename"))
    # All pairs of one CONFIG SET are refused together.
    assert c.cmd("CONFIG", "SET", "maxclients", "99", "dbfilename", "x.rdb") == \
        RespError(PROTECTED_ERR.format("dbfilename"))
    assert config_get(c, "maxclients") != "99"
    assert config_get(c, "dbfilename") == "dump.rdb"
    # SAVE writes where the server was told at start-up, nowhere else.
    assert c.cmd("SET", "k", "v") == "OK"
    assert c.cmd("SAVE") == "OK"
    assert (server.dir / "dump.rdb").exists()
    assert not (server.dir.parent / "escaped.rdb").exists()


def test_enable_protected_configs_is_immutable(raw):
    c = raw()
    for name in ("enable-protected-configs", "enable-debug-command"):
        assert c.cmd("CONFIG", "SET", name, "yes") == RespError(IMMUTABLE_ERR.format(name))
        # Immutability is judged before the value.
        assert c.cmd("CONFIG", "SET", name, "maybe") == RespError(IMMUTABLE_ERR.format(name))


def test_enable_protected_configs_takes_yes_no_local_only(tmp_path):
    out = start_fails(tmp_path, "--enable-protected-configs", "maybe")
    assert "argument(s) must be one of the following: no, yes, local" in out


@pytest.mark.server_args("--enable-protected-configs", "yes")
def test_dbfilename_must_be_a_file_name(server, raw):
    c = raw()
    path_err = ("ERR CONFIG SET failed (possibly related to argument 'dbfilename') - "
                "dbfilename can't be a path, just a filename")
    for bad in ("../escaped.rdb", "/tmp/x.rdb", "sub/x.rdb", "a\\b.rdb"):
        assert c.cmd("CONFIG", "SET", "dbfilename", bad) == RespError(path_err), bad
    assert config_get(c, "dbfilename") == "dump.rdb"
    assert c.cmd("CONFIG", "SET", "dbfilename", "other.rdb") == "OK"
    assert c.cmd("SAVE") == "OK"
    assert (server.dir / "other.rdb").exists()
    assert not (server.dir.parent / "escaped.rdb").exists()
    # With protected configs enabled, dir may change (to a directory that exists).
    sub = server.dir / "sub"
    sub.mkdir()
    assert c.cmd("CONFIG", "SET", "dir", str(sub)) == "OK"
    assert c.cmd("SAVE") == "OK"
    assert (sub / "other.rdb").exists()


@pytest.mark.server_args("--enable-protected-configs", "local")
def test_protected_configs_local_allows_loopback(server, raw):
    c = raw()
    assert config_get(c, "enable-protected-configs") == "local"
    assert c.cmd("CONFIG", "SET", "dbfilename", "local.rdb") == "OK"


def test_file_names_from_config_file_and_command_line(tmp_path, start_server):
    # The command line (and a config file) still set them...
    srv = start_server("--dbfilename", "snap.rdb", config="dbfilename ignored.rdb\n")
    c = srv.raw()
    assert config_get(c, "dbfilename") == "snap.rdb"
    assert c.cmd("SAVE") == "OK"
    assert (srv.dir / "snap.rdb").exists()
    # ...but only to plain names, as Redis.
    out = start_fails(tmp_path, "--dbfilename", "../x.rdb")
    assert "dbfilename can't be a path, just a filename" in out
    out = start_fails(tmp_path, "--appendfilename", "../x.aof")
    assert "appendfilename can't be a path, just a filename" in out
    out = start_fails(tmp_path, "--appendfilename", "")
    assert "appendfilename can't be empty" in out
    out = start_fails(tmp_path, "--appenddirname", "a/b")
    assert "appenddirname can't be a path, just a dirname" in out


# --- item 11: protected mode -------------------------------------------------

class NamespacedServer:
    """The server under test, started inside a network namespace of the test's
    own (tests/e2e/netns.py) and bound to 0.0.0.0 there. Clients reach it at
    127.0.0.1 (local) or at 192.0.2.1 (not local), both on the namespace's
    own loopback interface. No traffic leaves the namespace."""

    def __init__(self, ns, workdir, args):
        self.ns = ns
        self.port = free_port()
        self.log = open(workdir / "server.log", "wb")
        argv = [server_binary(), "--port", str(self.port), "--bind", "0.0.0.0",
                "--dir", str(workdir), "--save", ""]
        if is_real_redis():
            argv += ["--daemonize", "no"]
        self.proc = ns.popen(argv + list(args), stdout=self.log, stderr=subprocess.STDOUT,
                             cwd=str(workdir))
        self.conns = []
        assert wait_until(self._ready, timeout=30), "the server in the namespace did not start"

    def _ready(self):
        try:
            c = self.raw("127.0.0.1", timeout=1)
        except OSError:
            return False
        ok = c.cmd("PING") in ("PONG", RespError("NOAUTH Authentication required."))
        c.close()
        return ok

    def raw(self, host, timeout=5.0):
        """A RawConn from `host` (127.0.0.1 or the outside address) inside the namespace."""
        c = RawConn.__new__(RawConn)
        c.sock = self.ns.connect(host, self.port, timeout=timeout)
        c.timeout, c.buf, c.pos = timeout, bytearray(), 0
        self.conns.append(c)
        assert c.sock.getsockname()[0] == host  # the server sees this peer address
        return c

    def stop(self):
        for c in self.conns:
            c.close()
        self.proc.terminate()
        rc = self.proc.wait(timeout=30)
        self.log.close()
        assert rc == 0, f"the server in the namespace exited with {rc}"


@pytest.fixture
def ns_server(tmp_path):
    """Factory: ns_server(*args) starts the server in a fresh namespace."""
    made = []

    def start(*args):
        ns = NetNamespace().__enter__()
        made.append(ns)
        srv = NamespacedServer(ns, tmp_path, args)
        made.append(srv)
        return srv

    yield start
    for m in reversed(made):
        if isinstance(m, NamespacedServer):
            m.stop()
        else:
            m.close()


def read_until_closed(c):
    """Everything the server sends until it closes or pauses; (bytes, closed)."""
    closed = c.closed_by_server(timeout=2.0)
    return c.pending(), closed


def stat(c, field):
    info = c.cmd("INFO", "stats")
    text = info.decode() if isinstance(info, bytes) else str(info)
    for line in text.splitlines():
        if line.startswith(field + ":"):
            return int(line.split(":", 1)[1])
    raise AssertionError(f"{field} not in INFO stats")


def test_protected_mode_refuses_non_loopback_clients(ns_server):
    srv = ns_server()
    c = srv.raw("127.0.0.1")
    assert config_get(c, "protected-mode") == "yes"
    data, closed = read_until_closed(srv.raw(NetNamespace.OUTSIDE_ADDR))
    assert data.decode() == "-" + DENIED + "\r\n"
    assert closed
    assert stat(c, "rejected_connections") == 1
    # Loopback clients are served.
    assert c.cmd("PING") == "PONG"
    # Turned off at runtime, the outside client is served.
    assert c.cmd("CONFIG", "SET", "protected-mode", "no") == "OK"
    out = srv.raw(NetNamespace.OUTSIDE_ADDR)
    assert out.cmd("PING") == "PONG"


def test_protected_mode_lets_clients_in_when_a_password_is_set(ns_server):
    srv = ns_server("--requirepass", "pw")
    out = srv.raw(NetNamespace.OUTSIDE_ADDR)
    assert out.cmd("PING") == RespError("NOAUTH Authentication required.")
    assert out.cmd("AUTH", "pw") == "OK"
    assert out.cmd("PING") == "PONG"


def test_local_settings_refuse_non_loopback_clients(ns_server):
    srv = ns_server("--protected-mode", "no", "--enable-protected-configs", "local",
                    "--enable-debug-command", "local")
    out = srv.raw(NetNamespace.OUTSIDE_ADDR)
    assert out.cmd("CONFIG", "SET", "dbfilename", "x.rdb") == \
        RespError(PROTECTED_ERR.format("dbfilename"))
    assert out.cmd("DEBUG", "SLEEP", "0") == RespError(DEBUG_ERR)
    c = srv.raw("127.0.0.1")
    assert c.cmd("CONFIG", "SET", "dbfilename", "x.rdb") == "OK"
    assert c.cmd("DEBUG", "SLEEP", "0") == "OK"


# --- item 12: DEBUG ------------------------------------------------------------

@pytest.mark.no_debug_command
@pytest.mark.server_args("--requirepass", "pw")
def test_debug_refused_by_default(raw):
    c = raw()
    assert c.cmd("DEBUG") == RespError("ERR wrong number of arguments for 'debug' command")
    # Refused before authentication is asked for.
    assert c.cmd("DEBUG", "SLEEP", "0") == RespError(DEBUG_ERR)
    assert c.cmd("AUTH", "pw") == "OK"
    assert config_get(c, "enable-debug-command") == "no"
    assert c.cmd("DEBUG", "DIGEST") == RespError(DEBUG_ERR)
    assert c.cmd("MULTI") == "OK"
    assert c.cmd("DEBUG", "SLEEP", "0") == RespError(DEBUG_ERR)
    assert c.cmd("EXEC") == RespError("EXECABORT Transaction discarded because of previous errors.")
    stats = c.cmd("INFO", "commandstats").decode()
    line = next(l for l in stats.splitlines() if l.startswith("cmdstat_debug:"))
    assert line.startswith("cmdstat_debug:calls=0,") and ",rejected_calls=4," in line


def test_debug_sleep_sleeps_and_never_overflows(raw):
    c = raw()
    t0 = time.monotonic()
    assert c.cmd("DEBUG", "SLEEP", "0.1") == "OK"
    took = time.monotonic() - t0
    assert 0.09 <= took < 2.0, took
    # What Redis 7.0 does on x86-64: no sleep, +OK at once (docs/protocol.md).
    for v in ("inf", "-inf", "1e300", "-1", "nan", "1e13", "0", "abc"):
        t0 = time.monotonic()
        assert c.cmd("DEBUG", "SLEEP", v) == "OK", v
        assert time.monotonic() - t0 < 1.0, v
    assert c.cmd("PING") == "PONG"


# --- item 13: client-output-buffer-limit ---------------------------------------

def test_output_buffer_limit_reads_units(server, raw):
    c = raw()
    assert c.cmd("CONFIG", "SET", "client-output-buffer-limit", "normal 64mb 0 0") == "OK"
    assert config_get(c, "client-output-buffer-limit") == "normal 67108864 0 0 " + OBUF_DEFAULT_REST
    value = b"x" * (1 << 20)
    assert c.cmd("SET", "big", value) == "OK"
    assert c.cmd("GET", "big") == value
    assert c.cmd("PING") == "PONG"


def test_output_buffer_hard_limit_closes_the_client(server, raw):
    c = raw()
    assert c.cmd("CONFIG", "SET", "client-output-buffer-limit", "normal 1mb 0 0") == "OK"
    assert c.cmd("SET", "big", b"x" * (2 << 20)) == "OK"
    c.send_command("GET", "big")
    assert c.closed_by_server(timeout=10)
    assert wait_until(lambda: "for overcoming of output buffer limits" in server.log_text())
    d = raw()
    assert d.cmd("STRLEN", "big") == 2 << 20
    if not is_real_redis():
        assert stat(d, "client_output_buffer_limit_disconnections") == 1


def test_output_buffer_soft_limit_closes_after_its_seconds(server, raw):
    c = raw()
    # A fixed receive buffer: autotuned (up to tcp_rmem's 32 MB here) after the
    # first big read, the kernel could take the whole second reply and leave the
    # server's buffer under the soft limit.
    c.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 18)
    assert c.cmd("CONFIG", "SET", "client-output-buffer-limit", "normal 0 1mb 1") == "OK"
    assert c.cmd("SET", "big", b"x" * (16 << 20)) == "OK"
    # Read at once, a reply past the soft limit is delivered: the limit allows 1 s.
    assert len(c.cmd("GET", "big")) == 16 << 20
    # A client that does not read keeps the buffer over the soft limit; the next
    # reply after more than a second closes it.
    c.send_command("GET", "big")
    # Whole seconds, as Redis: 3.5 s leaves room for a GET that ran late on a
    # loaded host (the limit is checked as the PING's reply is added).
    time.sleep(3.5)
    c.send_command("PING")
    assert c.closed_by_server(timeout=10)
    assert len(c.pending()) < (16 << 20) + 20
    assert raw().cmd("PING") == "PONG"


def test_output_buffer_limit_values(raw):
    c = raw()
    ok = [("NORMAL 1Kb 2KB 3", "normal 1024 2048 3 " + OBUF_DEFAULT_REST),
          ("replica 1g 1G 0", "normal 1024 2048 3 slave 1000000000 1000000000 0 pubsub 33554432 8388608 60"),
          ("pubsub 1k 2m 5 slave 0 0 0",
           "normal 1024 2048 3 slave 0 0 0 pubsub 1000 2000000 5"),
          ("normal 1 0 +5 normal 7b 0 0", "normal 7 0 0 slave 0 0 0 pubsub 1000 2000000 5"),
          ("", "normal 7 0 0 slave 0 0 0 pubsub 1000 2000000 5")]
    for value, want in ok:
        assert c.cmd("CONFIG", "SET", "client-output-buffer-limit", value) == "OK", value
        assert config_get(c, "client-output-buffer-limit") == want, value
    count = "Wrong number of arguments in buffer limit configuration."
    cls = "Invalid client class specified in buffer limit configuration."
    val = "Error in hard, soft or soft_seconds setting in buffer limit configuration."
    bad = [("pubsub 1 2", count), (" normal 5 6 7 ", count), ("master 1 1 1", cls),
           ("foo 1 1 1", cls), ("normal 1 0 0 foo 1 1 1", cls), ("normal -1 0 0", val),
           ("normal 1x 0 0", val), ("normal 1 0 -1", val), ("normal 1 0 1.5", val),
           ("normal 1 1 0 pubsub 1 0 x", val), ('normal "8" 0 0', val)]
    for value, why in bad:
        assert c.cmd("CONFIG", "SET", "client-output-buffer-limit", value) == \
            RespError(OBUF_ERR.format(why)), value
    # Nothing changed on an error.
    assert config_get(c, "client-output-buffer-limit") == ok[-1][1]


@pytest.mark.server_config("client-output-buffer-limit normal 1kb 2kb 3\n"
                           "client-output-buffer-limit pubsub 0 0 0\n")
def test_output_buffer_limit_lines_in_config_file(raw):
    assert config_get(raw(), "client-output-buffer-limit") == \
        "normal 1024 2048 3 slave 268435456 67108864 60 pubsub 0 0 0"
