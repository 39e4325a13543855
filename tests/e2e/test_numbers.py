"""Number parsing of stored values and arguments, input by input, with Redis
7's exact replies: INCR/DECR/INCRBY/DECRBY take string2ll (no blank, '+',
leading zero or trailing byte, NUL included), INCRBYFLOAT takes string2ld
(strtold over every byte: no leading blank, no trailing byte or NUL, no NaN;
inf parses but the result may not be inf). Also the other numeric arguments
whose parse was loose: SCAN-family cursors (strtoul, as Redis), WAIT and
CLIENT KILL ID texts, integer and memory config values."""

import pytest

from conftest import RespError

NOT_INT = RespError("ERR value is not an integer or out of range")
NOT_FLOAT = RespError("ERR value is not a valid float")
OVERFLOW = RespError("ERR increment or decrement would overflow")
NAN_INF = RespError("ERR increment would produce NaN or Infinity")

MAX = b"9223372036854775807"
MIN = b"-9223372036854775808"

# Inputs no parse accepts: NUL in the middle / at either end, blanks, junk.
REJECTED = [b"1\x00", b"1\x002", b"\x001", b" 1", b"1 ", b"\t1", b"1\n", b"", b"nan", b"1_0",
            b"\xff", b"1e5000"]
# Floats that INCRBYFLOAT takes and the integer parse refuses:
# input -> (reply to INCRBYFLOAT on a stored input +1, reply to 5 + input).
FLOAT_ONLY = {
    b"+1": (b"2", b"6"),
    b"01": (b"2", b"6"),
    b"0x10": (b"17", b"21"),
    b"0X1p4": (b"17", b"21"),
    b"1e3": (b"1001", b"1005"),
    b"1E3": (b"1001", b"1005"),
    b"-0": (b"1", b"5"),
    b"1.5": (b"2.5", b"6.5"),
    b"-.5": (b"0.5", b"4.5"),
    b"5.": (b"6", b"10"),
    b"0.0": (b"1", b"5"),
    b"-0.0": (b"1", b"5"),
    b"1e-400": (b"1", b"5"),  # no underflow for a long double
    b"9223372036854775808": (b"9223372036854775809", b"9223372036854775813"),
}
INFINITE = [b"inf", b"-inf", b"infinity", b"INF"]


def incr_family(c, stored, arg):
    """Replies of every integer and float increment: on `stored` with a
    good increment, then on a good stored value with `arg`."""
    out = {}
    for cmd in (("INCR",), ("DECR",), ("INCRBY", "1"), ("DECRBY", "1"), ("INCRBYFLOAT", "1")):
        c.cmd("SET", "k", stored)
        out["stored " + " ".join(cmd)] = c.cmd(cmd[0], "k", *cmd[1:])
    for cmd in ("INCRBY", "DECRBY", "INCRBYFLOAT"):
        c.cmd("SET", "k", "5")
        out["arg " + cmd] = c.cmd(cmd, "k", arg)
    return out


def expect(stored_int, stored_float, arg_int, arg_float):
    """The replies in incr_family's order; each stored_/arg_ item a reply or a
    callable of the command name."""
    out = {}
    for cmd in ("INCR", "DECR", "INCRBY 1", "DECRBY 1"):
        out["stored " + cmd] = stored_int(cmd) if callable(stored_int) else stored_int
    out["stored INCRBYFLOAT 1"] = stored_float
    for cmd in ("INCRBY", "DECRBY"):
        out["arg " + cmd] = arg_int(cmd) if callable(arg_int) else arg_int
    out["arg INCRBYFLOAT"] = arg_float
    return out


@pytest.mark.parametrize("v", REJECTED, ids=repr)
def test_rejected_everywhere(raw, v):
    c = raw()
    assert incr_family(c, v, v) == expect(NOT_INT, NOT_FLOAT, NOT_INT, NOT_FLOAT)


@pytest.mark.parametrize("v", sorted(FLOAT_ONLY), ids=repr)
def test_floats_the_integer_parse_refuses(raw, v):
    c = raw()
    on_stored, as_arg = FLOAT_ONLY[v]
    assert incr_family(c, v, v) == expect(NOT_INT, on_stored, NOT_INT, as_arg)


@pytest.mark.parametrize("v", INFINITE, ids=repr)
def test_infinity_parses_but_cannot_be_the_result(raw, v):
    c = raw()
    assert incr_family(c, v, v) == expect(NOT_INT, NAN_INF, NOT_INT, NAN_INF)


def test_int64_limits(raw):
    c = raw()
    got = incr_family(c, MAX, MAX)
    assert got["stored INCR"] == OVERFLOW and got["stored INCRBY 1"] == OVERFLOW
    assert got["stored DECR"] == 9223372036854775806 and got["stored DECRBY 1"] == 9223372036854775806
    assert got["stored INCRBYFLOAT 1"] == b"9223372036854775808"
    assert got["arg INCRBY"] == OVERFLOW and got["arg DECRBY"] == -9223372036854775802
    got = incr_family(c, MIN, MIN)
    assert got["stored INCR"] == -9223372036854775807 and got["stored INCRBY 1"] == -9223372036854775807
    assert got["stored DECR"] == OVERFLOW and got["stored DECRBY 1"] == OVERFLOW
    assert got["arg INCRBY"] == -9223372036854775803
    assert got["arg DECRBY"] == RespError("ERR decrement would overflow")


def test_incrbyfloat_on_a_value_with_a_nul_inside(raw):
    # The report of issue 11: "1\0" + "2" read as 1 by a C-string strtold.
    c = raw()
    assert c.cmd("SET", "foo", "1") == "OK"
    assert c.cmd("SETRANGE", "foo", "2", "2") == 3
    assert c.cmd("GET", "foo") == b"1\x002"
    assert c.cmd("INCRBYFLOAT", "foo", "1") == NOT_FLOAT
    assert c.cmd("INCR", "foo") == NOT_INT
    assert c.cmd("GET", "foo") == b"1\x002"


# SCAN/SSCAN cursors are read by strtoul over a C string, as Redis does:
# a sign and "" are taken, a NUL ends the number, a blank or junk is refused.
CURSOR_OK = [b"0", b"", b"+0", b"-0", b"\x001", b"0\x00junk", b"00"]
CURSOR_BAD = [b" 0", b"0 ", b"\t0", b"0x0", b"1e3", b"x", b"18446744073709551616"]


@pytest.mark.parametrize("cursor", CURSOR_OK, ids=repr)
def test_scan_cursor_accepted(raw, cursor):
    c = raw()
    c.cmd("SET", "k", "v")
    c.cmd("SADD", "s", "a")
    cursor_out, keys = c.cmd("SCAN", cursor)  # each of these reads as cursor 0
    assert (cursor_out, sorted(keys)) == (b"0", [b"k", b"s"])
    assert c.cmd("SSCAN", "s", cursor) == [b"0", [b"a"]]


@pytest.mark.parametrize("cursor", CURSOR_BAD, ids=repr)
def test_scan_cursor_refused(raw, cursor):
    c = raw()
    c.cmd("SADD", "s", "a")
    assert c.cmd("SCAN", cursor) == RespError("ERR invalid cursor")
    assert c.cmd("SSCAN", "s", cursor) == RespError("ERR invalid cursor")


@pytest.mark.parametrize("v", [b"01", b"+1", b"1\x00", b" 1", b"1 ", b"1.0", b"x"], ids=repr)
def test_wait_timeout_text(raw, v):
    c = raw()
    assert c.cmd("WAIT", "0", v) == RespError("ERR timeout is not an integer or out of range")


@pytest.mark.parametrize("v", [b"0", b"-1", b"01", b"+1", b"1\x00", b" 1", b"x"], ids=repr)
def test_client_kill_id_must_be_a_positive_integer(raw, v):
    c = raw()
    assert c.cmd("CLIENT", "KILL", "ID", v) == RespError("ERR client-id should be greater than 0")


def config_error(name, text):
    return RespError(f"ERR CONFIG SET failed (possibly related to argument '{name}') - {text}")


@pytest.mark.parametrize("v", [b"01", b"+1", b"-0", b" 1", b"1 ", b"1\x00", b"1k", b"0x10", b"1e3"],
                         ids=repr)
def test_integer_config_takes_string2ll(raw, v):
    c = raw()
    assert c.cmd("CONFIG", "SET", "slowlog-max-len", v) == config_error(
        "slowlog-max-len", "argument couldn't be parsed into an integer")
    assert c.cmd("CONFIG", "SET", "slowlog-max-len", "77") == "OK"
    assert c.cmd("CONFIG", "GET", "slowlog-max-len") == [b"slowlog-max-len", b"77"]


@pytest.mark.parametrize("v, want", [(b"010mb", b"10485760"), (b"0", b"0"), (b"2K", b"2000"),
                                     (b"3kb", b"3072"), (b"1B", b"1")], ids=repr)
def test_memory_config_takes_memtoull(raw, v, want):
    c = raw()
    assert c.cmd("CONFIG", "SET", "maxmemory", v) == "OK"
    assert c.cmd("CONFIG", "GET", "maxmemory") == [b"maxmemory", want]
    assert c.cmd("CONFIG", "SET", "maxmemory", "0") == "OK"


@pytest.mark.parametrize("v", [b"-0", b"-1", b"+1", b" 1", b"1 ", b"1x", b"1.5mb"], ids=repr)
def test_memory_config_refuses_a_sign_blank_or_junk(raw, v):
    c = raw()
    assert c.cmd("CONFIG", "SET", "maxmemory", v) == config_error(
        "maxmemory", "argument must be a memory value")
