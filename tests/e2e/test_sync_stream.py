"""The old SYNC command as stream readers use it (redis-cli --replica, Redis's
own test helper attach_to_replication_stream): the snapshot as one bulk with no
+FULLRESYNC line before it, then the writes made after the attach as plain RESP
commands, a SELECT only where the database changes.

Also what those tests lean on: SWAPDB waking a client blocked on a key the
swap brings in, and DEBUG QUICKLIST-PACKED-THRESHOLD. Every case runs against
Redis 7 as well (FEEDKV_SERVER=redis-server) and both agree.
"""

import socket
import time

from conftest import RawConn, RespError, wait_blocked


class SyncStream:
    """A connection that sent SYNC: reads the payload, then commands."""

    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.buf = b""
        self.sock.sendall(b"SYNC\r\n")
        while True:  # newlines may come while the snapshot is made
            line = self._line()
            if line:
                break
        assert line.startswith(b"$"), f"SYNC answered {line!r}, not the payload's length"
        self._take(int(line[1:]))

    def _fill(self):
        chunk = self.sock.recv(65536)
        if not chunk:
            raise ConnectionError("closed")
        self.buf += chunk

    def _line(self):
        while b"\n" not in self.buf:
            self._fill()
        line, _, self.buf = self.buf.partition(b"\n")
        return line.rstrip(b"\r")

    def _take(self, n):
        while len(self.buf) < n:
            self._fill()
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def command(self):
        line = self._line()
        assert line.startswith(b"*"), f"not a command in the stream: {line!r}"
        args = []
        for _ in range(int(line[1:])):
            size = self._line()
            assert size.startswith(b"$"), size
            args.append(self._take(int(size[1:]) + 2)[:-2].decode())
        args[0] = args[0].lower()
        return args

    def expect(self, *patterns):
        for want in patterns:
            got = self.command()
            assert len(got) == len(want), (got, want)
            for g, w in zip(got, want):
                assert w == "*" or g == w, (got, want)

    def close(self):
        self.sock.close()


def test_sync_streams_the_writes_after_it_selecting_only_on_change(server):
    c = RawConn(server.port)
    c.cmd("SET", "before", "attach")  # made before SYNC: in the payload, not the stream
    stream = SyncStream(server.port)
    try:
        assert c.cmd("SELECT", "9") == "OK"
        c.cmd("SET", "a", "b")
        c.cmd("INCR", "n")
        c.cmd("SELECT", "1")
        c.cmd("RPUSH", "k", "hello")
        c.cmd("PEXPIRE", "k", "100000")
        c.cmd("GET", "a")  # reads are not in the stream
        c.cmd("SELECT", "9")
        c.cmd("DEL", "a")
        stream.expect(["select", "9"], ["set", "a", "b"], ["incr", "n"], ["select", "1"],
                      ["rpush", "k", "hello"], ["pexpireat", "k", "*"], ["select", "9"],
                      ["del", "a"])
    finally:
        stream.close()


def test_swapdb_wakes_a_client_blocked_on_a_key_the_swap_brings_in(server):
    c = RawConn(server.port)
    c.cmd("SELECT", "1")
    c.cmd("RPUSH", "k", "hello")
    waiter = RawConn(server.port)
    waiter.cmd("SELECT", "9")
    waiter.send_command("BRPOP", "k", "5")
    wait_blocked(server, 1)
    assert c.cmd("SWAPDB", "1", "9") == "OK"
    assert waiter.read_reply() == [b"k", b"hello"]


def test_swapdb_leaves_a_waiter_blocked_when_the_key_brought_in_has_expired(server):
    c = RawConn(server.port)
    c.cmd("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    try:
        c.cmd("SELECT", "1")
        c.cmd("RPUSH", "k", "hello")
        c.cmd("PEXPIRE", "k", "50")
        waiter = RawConn(server.port)
        waiter.cmd("SELECT", "9")
        waiter.send_command("BRPOP", "k", "0")
        wait_blocked(server, 1)
        time.sleep(0.1)
        assert c.cmd("SWAPDB", "1", "9") == "OK"
        time.sleep(0.05)
        assert c.cmd("INFO", "clients").count(b"blocked_clients:1") == 1
        c.cmd("LPUSH", "k", "again")  # db 1 is the old db 9 now; the waiter is in 9
        c.cmd("SELECT", "9")
        c.cmd("LPUSH", "k", "fresh")
        assert waiter.read_reply() == [b"k", b"fresh"]
    finally:
        c.cmd("DEBUG", "SET-ACTIVE-EXPIRE", "1")


def test_quicklist_packed_threshold_is_checked_and_lists_keep_their_elements(server):
    c = RawConn(server.port)
    err = "argument must be a memory value bigger than 1 and smaller than 4gb"
    for bad in ("5gb", "-1", "x"):
        reply = c.cmd("DEBUG", "QUICKLIST-PACKED-THRESHOLD", bad)
        assert isinstance(reply, RespError) and str(reply) == "ERR " + err, (bad, reply)
    assert c.cmd("DEBUG", "QUICKLIST-PACKED-THRESHOLD", "1b") == "OK"
    try:
        c.cmd("RPUSH", "l", "9", "x" * 10, "y" * 500)
        c.cmd("LPUSH", "l", "z" * 20)
        c.cmd("LINSERT", "l", "BEFORE", "9", "8")
        c.cmd("LSET", "l", "1", "w" * 30)
        assert c.cmd("LRANGE", "l", "0", "-1") == [b"z" * 20, b"w" * 30, b"9", b"x" * 10, b"y" * 500]
        assert c.cmd("DEBUG", "RELOAD") == "OK"
        assert c.cmd("LRANGE", "l", "0", "-1") == [b"z" * 20, b"w" * 30, b"9", b"x" * 10, b"y" * 500]
        assert c.cmd("OBJECT", "ENCODING", "l") == b"quicklist"
    finally:
        assert c.cmd("DEBUG", "QUICKLIST-PACKED-THRESHOLD", "0") == "OK"
