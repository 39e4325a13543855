"""String and keyspace commands through redis-py and a raw socket, with
Redis 7's exact error texts."""

import time

import pytest
import redis

from conftest import RespError, wait_until

WRONGTYPE = "WRONGTYPE Operation against a key holding the wrong kind of value"
NOT_INT = "ERR value is not an integer or out of range"
NOT_FLOAT = "ERR value is not a valid float"
OVERFLOW = "ERR increment or decrement would overflow"
SYNTAX = "ERR syntax error"


# --- GET / SET -------------------------------------------------------------------

def test_set_get_basic(r):
    assert r.get("missing") is None
    assert r.set("k", "v1") is True
    assert r.get("k") == "v1"
    assert r.set("k", "v2") is True
    assert r.get("k") == "v2"
    assert r.set("empty", "") is True
    assert r.get("empty") == ""
    assert r.exists("empty") == 1


def test_set_get_binary(server):
    b = server.client(decode_responses=False)
    value = bytes(range(256)) * 4
    key = b"k\x00\r\n\xff"
    assert b.set(key, value) is True
    assert b.get(key) == value
    assert b.strlen(key) == len(value)


def test_set_nx_xx(r):
    assert r.set("k", "a", xx=True) is None
    assert r.get("k") is None
    assert r.set("k", "a", nx=True) is True
    assert r.set("k", "b", nx=True) is None
    assert r.get("k") == "a"
    assert r.set("k", "c", xx=True) is True
    assert r.get("k") == "c"


def test_set_get_option(r, raw):
    assert r.set("k", "old") is True
    assert r.set("k", "new", get=True) == "old"
    assert r.get("k") == "new"
    assert r.set("fresh", "x", get=True) is None
    assert r.get("fresh") == "x"
    c = raw()
    assert c.cmd("SET", "k", "newer", "NX", "GET") == b"new"  # exists: not set
    assert c.cmd("GET", "k") == b"new"
    assert c.cmd("SET", "k2", "v", "XX", "GET") is None
    assert c.cmd("EXISTS", "k2") == 0


def test_set_get_option_on_wrong_type(raw):
    c = raw()
    assert c.cmd("SADD", "aset", "m") == 1
    assert c.cmd("SET", "aset", "x", "GET") == RespError(WRONGTYPE)
    assert c.cmd("TYPE", "aset") == "set"


def test_set_expiry_options(r):
    assert r.set("ex", "v", ex=100) is True
    assert 99 <= r.ttl("ex") <= 100
    assert r.set("px", "v", px=100000) is True
    assert 99000 <= r.pttl("px") <= 100000
    now = int(time.time())
    assert r.set("exat", "v", exat=now + 200) is True
    assert 198 <= r.ttl("exat") <= 200
    assert r.set("pxat", "v", pxat=(now + 300) * 1000) is True
    assert 298 <= r.ttl("pxat") <= 300
    # KEEPTTL keeps it, a plain SET clears it
    assert r.set("ex", "v2", keepttl=True) is True
    assert 98 <= r.ttl("ex") <= 100
    assert r.get("ex") == "v2"
    assert r.set("ex", "v3") is True
    assert r.ttl("ex") == -1
    # an absolute time in the past: the key is gone at once
    assert r.set("past", "v", exat=now - 10) is True
    assert r.get("past") is None
    assert r.exists("past") == 0


def test_set_option_errors(raw):
    c = raw()
    assert c.cmd("SET", "k", "v", "EX", "0") == RespError("ERR invalid expire time in 'set' command")
    assert c.cmd("SET", "k", "v", "EX", "-5") == RespError("ERR invalid expire time in 'set' command")
    assert c.cmd("SET", "k", "v", "PX", "0") == RespError("ERR invalid expire time in 'set' command")
    assert c.cmd("SET", "k", "v", "EX", "abc") == RespError(NOT_INT)
    assert c.cmd("SET", "k", "v", "EX", "10", "PX", "100") == RespError(SYNTAX)
    assert c.cmd("SET", "k", "v", "NX", "XX") == RespError(SYNTAX)
    assert c.cmd("SET", "k", "v", "KEEPTTL", "EX", "1") == RespError(SYNTAX)
    assert c.cmd("SET", "k", "v", "EX") == RespError(SYNTAX)
    assert c.cmd("SET", "k", "v", "BOGUS") == RespError(SYNTAX)
    assert c.cmd("SET", "k") == RespError("ERR wrong number of arguments for 'set' command")
    assert c.cmd("EXISTS", "k") == 0


def test_setnx_setex_psetex(r, raw):
    assert r.setnx("k", "a") is True
    assert r.setnx("k", "b") is False
    assert r.get("k") == "a"
    assert r.setex("se", 50, "v") is True
    assert 49 <= r.ttl("se") <= 50
    assert r.psetex("pse", 50000, "v") is True
    assert 49000 <= r.pttl("pse") <= 50000
    c = raw()
    assert c.cmd("SETEX", "x", "0", "v") == RespError("ERR invalid expire time in 'setex' command")
    assert c.cmd("PSETEX", "x", "-1", "v") == RespError("ERR invalid expire time in 'psetex' command")
    assert c.cmd("SETEX", "x", "ten", "v") == RespError(NOT_INT)


def test_mset_mget_msetnx(r, raw):
    assert r.mset({"a": "1", "b": "2", "c": "3"}) is True
    assert r.mget("a", "b", "nope", "c") == ["1", "2", None, "3"]
    assert r.msetnx({"c": "x", "d": "4"}) is False
    assert r.get("d") is None
    assert r.msetnx({"d": "4", "e": "5"}) is True
    assert r.mget("d", "e") == ["4", "5"]
    c = raw()
    assert c.cmd("MSET", "a") == RespError("ERR wrong number of arguments for 'mset' command")
    assert c.cmd("MSET", "a", "1", "b") == RespError("ERR wrong number of arguments for 'mset' command")
    assert c.cmd("MSETNX", "a") == RespError("ERR wrong number of arguments for 'msetnx' command")


def test_mget_non_string_is_nil(r):
    r.set("a", "1")
    r.sadd("s", "m")
    assert r.mget("a", "s") == ["1", None]  # a non-string reads as nil, no error


def test_getset_getdel_getex(r, raw):
    assert r.getset("k", "1") is None
    assert r.getset("k", "2") == "1"
    assert r.getdel("k") == "2"
    assert r.exists("k") == 0
    assert r.getdel("k") is None
    r.set("g", "v")
    assert r.getex("g", ex=100) == "v"
    assert 99 <= r.ttl("g") <= 100
    assert r.getex("g", px=50000) == "v"
    assert 49000 <= r.pttl("g") <= 50000
    assert r.getex("g", persist=True) == "v"
    assert r.ttl("g") == -1
    assert r.getex("g") == "v"
    assert r.getex("nokey", ex=10) is None
    c = raw()
    assert c.cmd("GETEX", "g", "EX", "0") == RespError("ERR invalid expire time in 'getex' command")
    assert c.cmd("GETEX", "g", "PERSIST", "EX", "10") == RespError(SYNTAX)
    # GETEX with an absolute time in the past deletes the key
    assert c.cmd("GETEX", "g", "EXAT", str(int(time.time()) - 5)) == b"v"
    assert c.cmd("EXISTS", "g") == 0


def test_append_strlen_getrange_setrange(r, raw):
    assert r.append("k", "Hello") == 5
    assert r.append("k", " World") == 11
    assert r.strlen("k") == 11
    assert r.strlen("nokey") == 0
    assert r.getrange("k", 0, 4) == "Hello"
    assert r.getrange("k", -5, -1) == "World"
    assert r.getrange("k", 5, 3) == ""
    assert r.getrange("k", 0, 100) == "Hello World"
    assert r.getrange("nokey", 0, 10) == ""
    assert r.setrange("k", 6, "Redis") == 11
    assert r.get("k") == "Hello Redis"
    assert r.setrange("pad", 5, "x") == 6
    assert r.get("pad") == "\x00" * 5 + "x"
    assert r.setrange("nothing", 3, "") == 0
    assert r.exists("nothing") == 0
    r.set("num", 12345)
    assert r.append("num", "6") == 6
    assert r.incr("num") == 123457
    c = raw()
    assert c.cmd("SETRANGE", "k", "-1", "x") == RespError("ERR offset is out of range")
    assert c.cmd("SETRANGE", "k", "536870912", "x") == RespError(
        "ERR string exceeds maximum allowed size (proto-max-bulk-len)")
    assert c.cmd("GETRANGE", "k", "a", "1") == RespError(NOT_INT)


# --- counters ---------------------------------------------------------------------

def test_object_encoding_names_strings_by_length_as_redis(r):
    # int, embstr up to 44 bytes, raw beyond (feedkv keeps values up to 1 KB in
    # the key's own block, but names them as Redis does); APPEND makes raw.
    cases = {"i": "12345", "e44": "x" * 44, "r45": "x" * 45, "r2k": "x" * 2000}
    for k, v in cases.items():
        r.set(k, v)
    assert [r.object("encoding", k) for k in cases] == ["int", "embstr", "raw", "raw"]
    assert all(r.get(k) == v for k, v in cases.items())
    r.set("a", "short")
    r.append("a", "er")
    assert r.object("encoding", "a") == "raw" and r.get("a") == "shorter"
    r.expire("r45", 100)  # rebuilding the block keeps the value
    assert r.get("r45") == "x" * 45 and r.object("encoding", "r45") == "raw"


def test_incrbyfloat_leaves_its_result_as_text_as_redis(r):
    # Redis stores INCRBYFLOAT's result as a string object without trying an integer
    # encoding: "100" after INCRBYFLOAT is embstr, after SET int; INCR makes it int.
    r.set("f", "99.5")
    assert r.incrbyfloat("f", "0.5") == 100.0
    assert r.get("f") == "100" and r.object("encoding", "f") == "embstr"
    r.set("g", "100")
    assert r.object("encoding", "g") == "int"
    assert r.incr("f") == 101 and r.object("encoding", "f") == "int"


def test_incr_family(r):
    assert r.incr("c") == 1
    assert r.incr("c") == 2
    assert r.incrby("c", 10) == 12
    assert r.incrby("c", -20) == -8
    assert r.decr("c") == -9
    assert r.decrby("c", 1) == -10
    assert r.get("c") == "-10"
    r.set("c2", "41")
    assert r.incr("c2") == 42
    r.set("big", "9223372036854775806")
    assert r.incr("big") == 9223372036854775807
    r.set("small", "-9223372036854775807")
    assert r.decr("small") == -9223372036854775808


def test_incr_keeps_ttl(r):
    r.set("c", 5, ex=100)
    assert r.incr("c") == 6
    assert 98 <= r.ttl("c") <= 100


def test_incr_errors(raw):
    c = raw()
    for bad in ("abc", "1.5", " 1", "1 ", "010", "", "99999999999999999999", "+1"):
        assert c.cmd("SET", "k", bad) == "OK"
        assert c.cmd("INCR", "k") == RespError(NOT_INT), bad
        assert c.cmd("GET", "k") == bad.encode()
    assert c.cmd("SET", "k", "9223372036854775807") == "OK"
    assert c.cmd("INCR", "k") == RespError(OVERFLOW)
    assert c.cmd("INCRBY", "k", "1") == RespError(OVERFLOW)
    assert c.cmd("SET", "k", "-9223372036854775808") == "OK"
    assert c.cmd("DECR", "k") == RespError(OVERFLOW)
    assert c.cmd("DECRBY", "n", "-9223372036854775808") == RespError("ERR decrement would overflow")
    assert c.cmd("INCRBY", "n", "1.5") == RespError(NOT_INT)
    assert c.cmd("INCRBY", "n", "x") == RespError(NOT_INT)
    assert c.cmd("EXISTS", "n") == 0
    assert c.cmd("INCR", "a", "b") == RespError("ERR wrong number of arguments for 'incr' command")


def test_incrbyfloat(r, raw):
    r.set("f", "10.50")
    assert r.incrbyfloat("f", 0.1) == pytest.approx(10.6)
    assert r.get("f") == "10.6"
    r.set("f2", "5.0e3")
    assert r.incrbyfloat("f2", 200) == 5200
    assert r.get("f2") == "5200"
    assert r.incrbyfloat("new", -2.5) == -2.5
    assert r.get("new") == "-2.5"
    r.set("i", "3")
    assert r.incrbyfloat("i", "1.5") == 4.5
    c = raw()
    assert c.cmd("INCRBYFLOAT", "f", "abc") == RespError(NOT_FLOAT)
    assert c.cmd("SET", "s", "abc") == "OK"
    assert c.cmd("INCRBYFLOAT", "s", "1") == RespError(NOT_FLOAT)
    assert c.cmd("INCRBYFLOAT", "f", "inf") == RespError("ERR increment would produce NaN or Infinity")
    assert c.cmd("GET", "f") == b"10.6"


# --- wrong type -----------------------------------------------------------------

def test_wrongtype_errors(raw):
    c = raw()
    assert c.cmd("SADD", "s", "1", "2") == 2
    for cmd in (["GET", "s"], ["INCR", "s"], ["DECRBY", "s", "2"], ["INCRBYFLOAT", "s", "1"],
                ["APPEND", "s", "x"], ["STRLEN", "s"], ["GETRANGE", "s", "0", "1"],
                ["SETRANGE", "s", "0", "x"], ["GETSET", "s", "x"], ["GETDEL", "s"],
                ["GETEX", "s"]):
        assert c.cmd(*cmd) == RespError(WRONGTYPE), cmd
    assert c.cmd("TYPE", "s") == "set"
    assert c.cmd("SCARD", "s") == 2  # untouched
    assert c.cmd("SET", "s", "now-a-string") == "OK"  # SET overwrites any type
    assert c.cmd("TYPE", "s") == "string"
    assert c.cmd("SADD", "s", "x") == RespError(WRONGTYPE)


# --- generic keyspace --------------------------------------------------------------

def test_del_unlink_exists_type_touch(r):
    r.mset({"a": 1, "b": 2, "c": 3, "d": 4})
    assert r.exists("a", "a", "b", "nope") == 3
    assert r.type("a") == "string"
    assert r.type("nope") == "none"
    assert r.touch("a", "b", "nope") == 2
    assert r.delete("a", "nope") == 1
    assert r.unlink("b", "c", "d") == 3
    assert r.exists("a", "b", "c", "d") == 0
    assert r.delete("a") == 0


def test_type_del_exists_of_a_set(r):
    r.sadd("s", "x")
    assert r.type("s") == "set"
    assert r.exists("s") == 1
    assert r.delete("s") == 1
    assert r.type("s") == "none"


def test_keys_and_randomkey(r):
    assert r.randomkey() is None
    r.mset({"user:1": 1, "user:2": 2, "post:1": 1, "u": 0})
    assert sorted(r.keys("user:*")) == ["user:1", "user:2"]
    assert sorted(r.keys("*")) == ["post:1", "u", "user:1", "user:2"]
    assert sorted(r.keys("?ser:[12]")) == ["user:1", "user:2"]
    assert r.keys("nomatch*") == []
    for _ in range(10):
        assert r.randomkey() in {"user:1", "user:2", "post:1", "u"}


def test_expire_ttl_pttl_persist(r, raw):
    assert r.ttl("nokey") == -2
    assert r.pttl("nokey") == -2
    r.set("k", "v")
    assert r.ttl("k") == -1
    assert r.pttl("k") == -1
    assert r.expire("k", 100) is True
    assert 99 <= r.ttl("k") <= 100
    assert 99000 <= r.pttl("k") <= 100000
    assert r.pexpire("k", 50000) is True
    assert 49000 <= r.pttl("k") <= 50000
    assert r.persist("k") is True
    assert r.persist("k") is False
    assert r.ttl("k") == -1
    assert r.expire("nokey", 10) is False
    at = int(time.time()) + 1000
    assert r.expireat("k", at) is True
    assert r.expiretime("k") == at
    assert r.pexpiretime("k") == at * 1000
    assert r.pexpireat("k", at * 1000 + 500) is True
    assert r.pexpiretime("k") == at * 1000 + 500
    r.set("nottl", "v")
    assert r.expiretime("nottl") == -1
    assert r.expiretime("nokey") == -2
    c = raw()
    assert c.cmd("EXPIRE", "k", "abc") == RespError(NOT_INT)
    assert c.cmd("EXPIRE", "k", "9223372036854775807") == RespError(
        "ERR invalid expire time in 'expire' command")
    assert c.cmd("EXPIRE", "k", "10", "BOGUS") == RespError("ERR Unsupported option BOGUS")


def test_expire_nx_xx_gt_lt(r, raw):
    r.set("k", "v")
    assert r.expire("k", 100, xx=True) is False
    assert r.expire("k", 100, nx=True) is True
    assert r.expire("k", 200, nx=True) is False
    assert r.expire("k", 50, gt=True) is False
    assert r.expire("k", 200, gt=True) is True
    assert r.expire("k", 300, lt=True) is False
    assert r.expire("k", 150, lt=True) is True
    assert 149 <= r.ttl("k") <= 150
    assert r.expire("k", 120, xx=True) is True
    c = raw()
    assert c.cmd("EXPIRE", "k", "10", "NX", "XX") == RespError(
        "ERR NX and XX, GT or LT options at the same time are not compatible")
    assert c.cmd("EXPIRE", "k", "10", "GT", "LT") == RespError(
        "ERR GT and LT options at the same time are not compatible")
    # a key without TTL counts as infinite: GT never applies, LT always does
    r.set("p", "v")
    assert r.expire("p", 10, gt=True) is False
    assert r.expire("p", 10, lt=True) is True


def test_expire_zero_or_past_deletes(r):
    r.set("a", 1)
    r.set("b", 1)
    r.set("c", 1)
    assert r.expire("a", 0) is True
    assert r.expire("b", -10) is True
    assert r.expireat("c", int(time.time()) - 100) is True
    assert r.exists("a", "b", "c") == 0


def test_lazy_expiry(r):
    r.set("k", "v", px=100)
    assert r.get("k") == "v"
    assert wait_until(lambda: r.get("k") is None, timeout=3)
    assert r.exists("k") == 0
    assert r.ttl("k") == -2


def test_active_expiry_removes_untouched_keys(r):
    """Keys that nobody reads must still go (DBSIZE does not touch keys)."""
    pipe = r.pipeline(transaction=False)
    for i in range(500):
        pipe.set(f"vol:{i}", "x", px=100 + (i % 50))
    for i in range(50):
        pipe.set(f"keep:{i}", "x")
    pipe.execute()
    assert r.dbsize() == 550
    assert wait_until(lambda: r.dbsize() == 50, timeout=10, step=0.05), r.dbsize()
    assert sorted(r.keys("*")) == sorted(f"keep:{i}" for i in range(50))


def test_overwrite_clears_ttl_and_rename_keeps_it(r):
    r.set("k", "v", ex=100)
    r.set("k", "v2")
    assert r.ttl("k") == -1
    r.set("t", "v", ex=100)
    assert r.rename("t", "t2") is True
    assert 98 <= r.ttl("t2") <= 100


# --- SCAN --------------------------------------------------------------------------

def full_scan(c, **kw):
    cursor, seen, rounds = 0, [], 0
    while True:
        cursor, keys = c.scan(cursor=cursor, **kw)
        seen += keys
        rounds += 1
        assert rounds < 20000, "SCAN did not finish"
        if cursor == 0:
            return seen, rounds


def test_scan_covers_all_keys(r):
    pipe = r.pipeline(transaction=False)
    strings = {f"str:{i}" for i in range(1500)}
    others = {f"other:{i}" for i in range(300)}
    for k in strings | others:
        pipe.set(k, "v")
    pipe.execute()
    seen, rounds = full_scan(r, count=100)
    assert len(seen) >= len(strings | others)
    assert set(seen) == strings | others
    assert rounds > 1  # COUNT is honoured as a hint, not everything in one reply
    seen, _ = full_scan(r, match="other:*", count=50)
    assert set(seen) == others
    seen, _ = full_scan(r, match="str:1?", count=1000)
    assert set(seen) == {f"str:1{d}" for d in range(10)}
    seen, _ = full_scan(r, _type="string", match="str:99*", count=200)
    assert set(seen) == {k for k in strings if k.startswith("str:99")}
    seen, _ = full_scan(r, _type="set", count=200)
    assert seen == []
    assert set(r.scan_iter(count=500)) == strings | others


def test_scan_type_filter_with_sets(r):
    pipe = r.pipeline(transaction=False)
    strings = {f"str:{i}" for i in range(500)}
    sets = {f"set:{i}" for i in range(300)}
    for k in strings:
        pipe.set(k, "v")
    for k in sets:
        pipe.sadd(k, "1", "2")
    pipe.execute()
    seen, _ = full_scan(r, count=100)
    assert set(seen) == strings | sets
    seen, _ = full_scan(r, _type="set", count=200)
    assert set(seen) == sets
    seen, _ = full_scan(r, _type="string", count=200)
    assert set(seen) == strings
    seen, _ = full_scan(r, _type="set", match="set:1*", count=200)
    assert set(seen) == {k for k in sets if k.startswith("set:1")}


def test_scan_while_keys_are_deleted_keeps_the_rest(r):
    r.mset({f"k:{i}": i for i in range(2000)})
    cursor, seen, rounds = 0, set(), 0
    while True:
        cursor, keys = r.scan(cursor=cursor, count=100)
        seen.update(keys)
        rounds += 1
        if rounds == 3:
            r.delete(*[f"k:{i}" for i in range(0, 2000, 2)])
        assert rounds < 20000
        if cursor == 0:
            break
    # every key that existed from start to end must have been returned
    assert {f"k:{i}" for i in range(1, 2000, 2)} <= seen


def test_scan_errors(raw):
    c = raw()
    assert c.cmd("SCAN", "abc") == RespError("ERR invalid cursor")
    assert c.cmd("SCAN", "0", "COUNT", "0") == RespError(SYNTAX)
    assert c.cmd("SCAN", "0", "COUNT", "x") == RespError(NOT_INT)
    assert c.cmd("SCAN", "0", "BOGUS", "1") == RespError(SYNTAX)
    reply = c.cmd("SCAN", "0")
    assert reply == [b"0", []]


# --- RENAME / COPY -------------------------------------------------------------------

def test_rename_renamenx(r, raw):
    r.set("a", "1")
    r.set("b", "2")
    assert r.rename("a", "c") is True
    assert r.get("c") == "1" and r.exists("a") == 0
    assert r.rename("c", "b") is True  # overwrites
    assert r.get("b") == "1"
    assert r.rename("b", "b") is True
    assert r.get("b") == "1"
    r.set("x", "y")
    assert r.renamenx("b", "x") is False
    assert r.renamenx("b", "z") is True
    assert r.get("z") == "1"
    c = raw()
    assert c.cmd("RENAME", "nokey", "x") == RespError("ERR no such key")
    assert c.cmd("RENAMENX", "nokey", "x") == RespError("ERR no such key")


def test_copy(r, raw):
    r.set("src", "v", ex=100)
    assert r.copy("src", "dst") is True
    assert r.get("dst") == "v"
    assert 98 <= r.ttl("dst") <= 100
    r.set("src", "changed")
    assert r.get("dst") == "v"  # an independent copy
    assert r.copy("src", "dst") is False
    assert r.copy("src", "dst", replace=True) is True
    assert r.get("dst") == "changed"
    assert r.copy("nokey", "dst2") is False
    assert r.copy("src", "other-db", destination_db=3) is True
    assert r.exists("other-db") == 0
    assert server_db(r, 3).get("other-db") == "changed"
    c = raw()
    assert c.cmd("COPY", "src", "src") == RespError("ERR source and destination objects are the same")
    assert c.cmd("COPY", "src", "x", "DB", "99") == RespError("ERR DB index is out of range")
    assert c.cmd("COPY", "src", "x", "BOGUS") == RespError(SYNTAX)


def test_rename_and_copy_a_set(r):
    r.sadd("s", "m1", "m2")
    assert r.rename("s", "s2") is True
    assert r.smembers("s2") == {"m1", "m2"}
    assert r.type("s2") == "set"
    assert r.copy("s2", "s3") is True
    r.srem("s2", "m1")
    assert r.smembers("s3") == {"m1", "m2"}  # an independent copy
    r.set("str", "v")
    assert r.rename("s3", "str") is True  # overwrites a key of another type
    assert r.type("str") == "set"


def server_db(r, db):
    kw = r.connection_pool.connection_kwargs
    return redis.Redis(host=kw["host"], port=kw["port"], db=db, decode_responses=True,
                       socket_timeout=10)


def test_many_keys_and_large_values(r):
    big = "x" * (4 * 1024 * 1024)
    r.set("big", big)
    assert r.strlen("big") == len(big)
    assert r.get("big") == big
    pipe = r.pipeline(transaction=False)
    for i in range(20000):
        pipe.set(f"key:{i}", i)
    pipe.execute()
    assert r.dbsize() == 20001
    assert r.mget([f"key:{i}" for i in range(0, 20000, 1000)]) == [str(i) for i in range(0, 20000, 1000)]
