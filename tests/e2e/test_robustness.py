"""Robustness over raw sockets: malformed frames get Redis's protocol error text
and the connection is closed; bad lengths, unterminated input, huge bulks,
deep pipelines, binary keys, byte-by-byte frames, slow readers. After every
case a fresh connection must get PONG and every acknowledged key must still
be there with its value."""

import os
import socket
import time

import pytest

from conftest import RawConn, RespError, encode_command

INVALID_MBULK = "ERR Protocol error: invalid multibulk length"
INVALID_BULK = "ERR Protocol error: invalid bulk length"
UNBALANCED = "ERR Protocol error: unbalanced quotes in request"
TOO_BIG_INLINE = "ERR Protocol error: too big inline request"
TOO_BIG_MBULK = "ERR Protocol error: too big mbulk count string"
TOO_BIG_BULK = "ERR Protocol error: too big bulk count string"

SENTINELS = {
    b"sentinel:plain": b"value",
    b"sentinel:bin\x00\r\n": b"\x00\x01\r\n\xff" * 100,
    b"sentinel:counter": b"12",
}


@pytest.fixture
def guarded(server):
    """Writes acknowledged keys before the case; after it checks the server
    answers a new connection and kept every key."""
    with RawConn(server.port) as c:
        for k, v in SENTINELS.items():
            assert c.cmd("SET", k, v) == "OK"
    yield server
    assert server.alive(), "server process died"
    assert server.ping_ok(timeout=10), "a new connection did not get PONG"
    with RawConn(server.port) as c:
        for k, v in SENTINELS.items():
            assert c.cmd("GET", k) == v, f"acknowledged key {k!r} lost or changed"


def protocol_error_case(server, payload, expected):
    c = server.raw()
    c.send(payload)
    reply = c.read_reply(timeout=10)
    assert reply == RespError(expected), reply
    assert c.closed_by_server(timeout=10), "connection not closed after a protocol error"


MALFORMED = [
    ("multibulk-not-a-number", b"*abc\r\n", INVALID_MBULK),
    ("multibulk-over-int-max", b"*2147483648\r\n", INVALID_MBULK),
    ("multibulk-huge", b"*99999999999999999999\r\n", INVALID_MBULK),
    ("multibulk-trailing-junk", b"*1x\r\n", INVALID_MBULK),
    ("bulk-not-a-number", b"*1\r\n$abc\r\n", INVALID_BULK),
    ("bulk-negative", b"*1\r\n$-1\r\n", INVALID_BULK),
    ("bulk-very-negative", b"*2\r\n$3\r\nGET\r\n$-100\r\n", INVALID_BULK),
    ("bulk-over-proto-max", b"*2\r\n$3\r\nSET\r\n$536870913\r\n", INVALID_BULK),
    ("bulk-int64-overflow", b"*1\r\n$9223372036854775808\r\n", INVALID_BULK),
    ("bulk-missing-dollar", b"*1\r\nPING\r\n", "ERR Protocol error: expected '$', got 'P'"),
    ("inline-unbalanced-quotes", b'SET k "unterminated\r\n', UNBALANCED),
    ("inline-unbalanced-single", b"ECHO 'abc\r\n", UNBALANCED),
    ("inline-quote-then-char", b'ECHO "abc"x\r\n', UNBALANCED),
    ("inline-too-big", b"A" * (64 * 1024 + 10), TOO_BIG_INLINE),
    ("mbulk-count-too-big", b"*" + b"1" * (64 * 1024 + 10), TOO_BIG_MBULK),
    ("bulk-count-too-big", b"*1\r\n$" + b"1" * (64 * 1024 + 10), TOO_BIG_BULK),
]


@pytest.mark.parametrize("payload,expected", [m[1:] for m in MALFORMED],
                         ids=[m[0] for m in MALFORMED])
def test_malformed_frame_gets_error_and_close(guarded, payload, expected):
    protocol_error_case(guarded, payload, expected)


def test_protocol_error_after_valid_commands_in_same_packet(guarded):
    c = guarded.raw()
    c.send(encode_command("SET", "before", "1") + encode_command("PING") + b"*1\r\n$x\r\n" +
           encode_command("SET", "after", "1"))
    assert c.read_reply() == "OK"
    assert c.read_reply() == "PONG"
    assert c.read_reply() == RespError(INVALID_BULK)
    assert c.closed_by_server(timeout=10)
    with RawConn(guarded.port) as c2:
        assert c2.cmd("GET", "before") == b"1"
        assert c2.cmd("EXISTS", "after") == 0  # nothing after the error runs


def test_non_positive_multibulk_is_ignored(guarded):
    # Redis treats *0 and *-1 as empty requests, not errors
    c = guarded.raw()
    c.send(b"*0\r\n*-1\r\n" + encode_command("PING"))
    assert c.read_reply() == "PONG"
    assert not c.closed_by_server(timeout=0.3)


def test_empty_inline_lines_are_ignored(guarded):
    c = guarded.raw()
    c.send(b"\r\n\r\n\n" + b"PING\r\n")
    assert c.read_reply() == "PONG"


def test_inline_commands(guarded):
    c = guarded.raw()
    c.send(b"SET inl \"a b\\x41\\n\"\r\nGET inl\r\nPING\nECHO 'it\\'s'\r\n  ECHO   two  \r\n")
    assert c.read_reply() == "OK"
    assert c.read_reply() == b"a bA\n"
    assert c.read_reply() == "PONG"
    assert c.read_reply() == b"it's"
    assert c.read_reply() == b"two"


@pytest.mark.parametrize("payload", [
    b"*3\r\n$3\r\nSET\r\n$7\r\npartial\r\n$5\r\nval",   # inside the last bulk
    b"*3\r\n$3\r\nSET\r\n$7\r\npartial\r\n",            # missing an argument
    b"*3\r\n$3\r\nSET\r\n$7\r\npar",                    # inside a key
    b"*3\r\n$3",                                        # inside a length
    b"*300",                                            # inside the count
    b"SET partial inline",                              # inline without newline
    b"*2\r\n$3\r\nSET\r\n$400000000\r\nabc",            # large declared bulk
    b"*1048576\r\n$4\r\nPING\r\n",                      # large declared count
], ids=["in-bulk", "missing-arg", "in-key", "in-len", "in-count", "inline", "big-bulk",
        "big-count"])
def test_unterminated_input_then_close(guarded, payload):
    c = guarded.raw()
    c.send(payload)
    time.sleep(0.05)  # let the server read the partial frame before the close
    c.close()
    with RawConn(guarded.port) as c2:
        assert c2.cmd("EXISTS", "partial") == 0


def test_half_close_after_partial_frame(guarded):
    c = guarded.raw()
    c.send(b"*2\r\n$4\r\nECHO\r\n$5\r\nhel")
    c.sock.shutdown(socket.SHUT_WR)
    assert c.closed_by_server(timeout=10)


def test_frame_sent_byte_by_byte(guarded):
    c = guarded.raw()
    data = (encode_command("SET", "slow\r\nkey", "v\x00v") + encode_command("GET", "slow\r\nkey") +
            b"PING\r\n")
    for i in range(len(data)):
        c.send(data[i:i + 1])
    assert c.read_replies(3) == ["OK", b"v\x00v", "PONG"]


def test_100mb_bulk_set_then_get(guarded):
    size = 100 * 1024 * 1024
    block = os.urandom(1 << 20)
    value = block * 100
    assert len(value) == size
    c = guarded.raw(timeout=120)
    c.send(b"*3\r\n$3\r\nSET\r\n$8\r\nhuge:key\r\n$%d\r\n" % size)
    mv = memoryview(value)
    for off in range(0, size, 8 << 20):
        c.send(mv[off:off + (8 << 20)])
    c.send(b"\r\n")
    assert c.read_reply(timeout=120) == "OK"
    assert c.cmd("STRLEN", "huge:key") == size
    got = c.cmd("GET", "huge:key")
    assert len(got) == size
    assert got == value
    assert c.cmd("GETRANGE", "huge:key", str(size - 5), "-1") == value[-5:]
    assert c.cmd("DEL", "huge:key") == 1
    del value, got


def test_10000_pipelined_commands_in_one_send(guarded):
    n = 10000
    parts = []
    for i in range(n):
        kind = i % 4
        if kind == 0:
            parts.append(encode_command("SET", f"p:{i}", f"v{i}"))
        elif kind == 1:
            parts.append(encode_command("GET", f"p:{i - 1}"))
        elif kind == 2:
            parts.append(encode_command("INCR", "p:counter"))
        else:
            parts.append(encode_command("ECHO", str(i)))
    c = guarded.raw(timeout=60)
    c.send(b"".join(parts))
    replies = c.read_replies(n, timeout=60)
    incr = 0
    for i, rep in enumerate(replies):
        kind = i % 4
        if kind == 0:
            assert rep == "OK", (i, rep)
        elif kind == 1:
            assert rep == f"v{i - 1}".encode(), (i, rep)
        elif kind == 2:
            incr += 1
            assert rep == incr, (i, rep)
        else:
            assert rep == str(i).encode(), (i, rep)
    assert c.cmd("GET", "p:counter") == str(n // 4).encode()


def test_pipeline_of_inline_commands(guarded):
    c = guarded.raw(timeout=60)
    c.send(b"".join(b"INCR inl:c\r\n" for _ in range(5000)))
    assert c.read_replies(5000, timeout=60) == list(range(1, 5001))


def test_binary_keys_and_values(guarded):
    keys = [b"\x00", b"a\x00b", b"\r\n", b"x\r\ny", b"\xff\xfe", b" spaced key ", b"*1\r\n$4\r\n",
            b"\x00" * 100 + b"\r\n" * 100, "ключ-🙂".encode()]
    c = guarded.raw()
    for i, k in enumerate(keys):
        assert c.cmd("SET", k, k + b"=" + bytes([i])) == "OK"
    for i, k in enumerate(keys):
        assert c.cmd("GET", k) == k + b"=" + bytes([i])
        assert c.cmd("EXISTS", k) == 1
    listed = set(c.cmd("KEYS", "*"))
    assert set(keys) <= listed
    cursor, seen = b"0", set()
    for _ in range(1000):
        cursor, batch = c.cmd("SCAN", cursor, "COUNT", "3")
        seen.update(batch)
        if cursor == b"0":
            break
    assert set(keys) <= seen
    assert c.cmd("MGET", *keys) == [k + b"=" + bytes([i]) for i, k in enumerate(keys)]
    assert c.cmd("DEL", *keys) == len(keys)


def test_slow_reader_does_not_block_others(guarded):
    c = guarded.raw(timeout=60)
    assert c.cmd("SET", "big1m", b"z" * (1 << 20)) == "OK"
    c.send(b"".join(encode_command("GET", "big1m") for _ in range(64)))  # ~64 MB of replies
    t0 = time.monotonic()
    with RawConn(guarded.port) as other:  # server keeps serving others meanwhile
        for _ in range(20):
            assert other.cmd("PING") == "PONG"
    assert time.monotonic() - t0 < 10
    replies = c.read_replies(64, timeout=120)
    assert all(len(x) == 1 << 20 for x in replies)


def test_many_clients_interleaved_partial_frames(guarded):
    conns = [guarded.raw() for _ in range(50)]
    frames = [encode_command("SET", f"mc:{i}", f"val{i}") for i in range(50)]
    for cut in (5, 13):
        for i, c in enumerate(conns):
            lo = 0 if cut == 5 else 5
            c.send(frames[i][lo:cut])
    for i, c in enumerate(conns):
        c.send(frames[i][13:])
    for c in conns:
        assert c.read_reply() == "OK"
    with RawConn(guarded.port) as c:
        assert c.cmd("MGET", *[f"mc:{i}" for i in range(50)]) == [
            f"val{i}".encode() for i in range(50)]


def test_abrupt_disconnect_with_pending_replies(guarded):
    for _ in range(20):
        c = RawConn(guarded.port)
        c.send(b"".join(encode_command("SET", f"ab:{i}", "x") for i in range(500)))
        c.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        c.close()  # RST, replies undeliverable
    assert guarded.ping_ok()


def test_reset_storm_on_listener(guarded):
    for _ in range(200):
        s = socket.create_connection(("127.0.0.1", guarded.port), timeout=5)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        s.close()
    assert guarded.ping_ok()
