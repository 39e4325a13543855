"""Bloom filters (BF.*) end to end, RedisBloom-compatible.

Debian's Redis 7 has no RedisBloom, so these tests cannot run side by side; they
check RedisBloom's documented replies instead (redis.io BF.* pages: BF.INFO of a
default filter after one add is Capacity 100, Size 240, 1 filter, 1 item, expansion
2), its error lines byte for byte (RespError compares the whole line), the reply
types in RESP2 and RESP3, its sizing (bits per entry, hashes, 64-bit rounding, the
halved error of a scaling chain's links) through the SCANDUMP header, the measured
false-positive rate, and what feedkv adds: deterministic logging of filters made by
an add, bf-max-filter-bytes, persistence, DUMP/RESTORE and the INFO "bf" section.
"""

import math
import random
import struct

import pytest

from conftest import RespError, Simple, aof_log_bytes, is_real_redis

pytestmark = pytest.mark.skipif(is_real_redis(), reason="Redis 7 here has no RedisBloom module")

HEADER = struct.Struct("<QIII")
LINK = struct.Struct("<QQQddIQB")


def parse_header(data):
    size, nfilters, options, growth = HEADER.unpack_from(data, 0)
    assert len(data) == HEADER.size + LINK.size * nfilters
    links = [dict(zip(("bytes", "bits", "size", "error", "bpe", "hashes", "entries", "n2"),
                      LINK.unpack_from(data, HEADER.size + LINK.size * i)))
             for i in range(nfilters)]
    return {"size": size, "options": options, "growth": growth, "links": links}


def redisbloom_link(entries, error):
    """RedisBloom's bloom_init with BLOOM_OPT_NOROUND, computed independently."""
    bpe = abs(math.log(error) / 0.480453013918201)
    bits = int(entries * bpe) or 1
    nbytes = (bits // 64 + (1 if bits % 64 else 0)) * 8
    return {"bytes": nbytes, "bits": nbytes * 8, "hashes": math.ceil(0.693147180559945 * bpe),
            "entries": entries}


def scandump(c, key):
    chunks = []
    it = 0
    while True:
        it, data = c.execute_command("BF.SCANDUMP", key, it)
        if it == 0:
            return chunks
        chunks.append((it, data))


def test_documented_info_of_a_default_filter(server):
    raw = server.raw()
    assert raw.cmd("BF.ADD", "bf1", "observation1") == 1
    assert raw.cmd("BF.INFO", "bf1") == [
        Simple("Capacity"), 100, Simple("Size"), 240, Simple("Number of filters"), 1,
        Simple("Number of items inserted"), 1, Simple("Expansion rate"), 2]
    assert all(type(x) is Simple for x in raw.cmd("BF.INFO", "bf1")[::2])
    assert raw.cmd("BF.INFO", "bf1", "CAPACITY") == [100]
    assert raw.cmd("BF.INFO", "bf1", "size") == [240]
    assert raw.cmd("BF.INFO", "bf1", "Filters") == [1]
    assert raw.cmd("BF.INFO", "bf1", "items") == [1]
    assert raw.cmd("BF.INFO", "bf1", "expansion") == [2]
    assert raw.cmd("BF.INFO", "bf1", "nosuchfield") == RespError("Invalid information value")
    assert raw.cmd("BF.INFO", "bf1", "capacity", "size") == RespError(
        "ERR wrong number of arguments for 'bf.info' command")
    assert raw.cmd("BF.INFO", "missing", "nosuchfield") == RespError("ERR not found")
    assert raw.cmd("TYPE", "bf1") == Simple("MBbloom--")
    assert raw.cmd("BF.CARD", "bf1") == 1
    assert raw.cmd("BF.CARD", "missing") == 0


def test_replies_in_resp2_and_resp3(server):
    raw = server.raw()
    assert raw.cmd("BF.RESERVE", "ns", "0.01", "10", "NONSCALING") == Simple("OK")
    r2 = [raw.cmd("BF.ADD", "ns", "a"), raw.cmd("BF.EXISTS", "ns", "a"), raw.cmd("BF.EXISTS", "ns", "b")]
    assert r2 == [1, 1, 0] and all(type(x) is int for x in r2)
    assert raw.cmd("BF.MADD", "ns", "a", "b") == [0, 1]
    assert raw.cmd("BF.MEXISTS", "ns", "a", "zz") == [1, 0]
    assert raw.cmd("BF.INFO", "ns", "EXPANSION") == [None]
    raw.cmd("HELLO", "3")
    r3 = [raw.cmd("BF.ADD", "ns", "c"), raw.cmd("BF.EXISTS", "ns", "c"), raw.cmd("BF.EXISTS", "ns", "d")]
    assert r3 == [True, True, False] and all(type(x) is bool for x in r3)
    assert raw.cmd("BF.MADD", "ns", "c", "e") == [False, True]
    assert raw.cmd("BF.INSERT", "ns", "ITEMS", "e", "f") == [False, True]
    assert raw.cmd("BF.MEXISTS", "missing", "a") == [False]
    info = raw.cmd("BF.INFO", "ns")
    assert info == {"Capacity": 10, "Size": info["Size"], "Number of filters": 1,
                    "Number of items inserted": 5, "Expansion rate": None}
    assert raw.cmd("BF.INFO", "ns", "capacity") == {"Capacity": 10}
    assert raw.cmd("BF.CARD", "ns") == 5


@pytest.mark.parametrize("args,error", [
    (["1", "100"], "ERR error rate must be in the range (0.000000, 1.000000)"),
    (["0", "100"], "ERR error rate must be in the range (0.000000, 1.000000)"),
    (["inf", "100"], "ERR error rate must be in the range (0.000000, 1.000000)"),
    (["abc", "100"], "ERR bad error rate"),
    (["nan", "100"], "ERR bad error rate"),
    (["1e-400", "100"], "ERR bad error rate"),
    (["0.01", "0"], "ERR capacity must be in the range [1, 1073741824]"),
    (["0.01", "-5"], "ERR capacity must be in the range [1, 1073741824]"),
    (["0.01", "1073741825"], "ERR capacity must be in the range [1, 1073741824]"),
    (["0.01", "007"], "ERR bad capacity"),
    (["0.01", "1.5"], "ERR bad capacity"),
    (["0.01", "100", "EXPANSION"], "ERR no expansion"),
    (["0.01", "100", "EXPANSION", "x"], "ERR bad expansion"),
    (["0.01", "100", "EXPANSION", "-1"], "ERR expansion must be in the range [0, 32768]"),
    (["0.01", "100", "EXPANSION", "32769"], "ERR expansion must be in the range [0, 32768]"),
    (["0.01", "100", "NONSCALING", "EXPANSION", "2"], "Nonscaling filters cannot expand"),
    (["4.9e-324", "100"], "ERR could not create filter"),
])
def test_reserve_refusals_are_redisblooms(server, args, error):
    raw = server.raw()
    assert raw.cmd("BF.RESERVE", "k", *args) == RespError(error)
    assert raw.cmd("EXISTS", "k") == 0


def test_reserve_checks_arguments_before_the_key(server):
    raw = server.raw()
    raw.cmd("SET", "str", "v")
    raw.cmd("BF.RESERVE", "bf", "0.01", "100")
    assert raw.cmd("BF.RESERVE", "str", "abc", "100") == RespError("ERR bad error rate")
    assert raw.cmd("BF.RESERVE", "bf", "0.01", "100", "EXPANSION") == RespError("ERR no expansion")
    wrongtype = RespError("WRONGTYPE Operation against a key holding the wrong kind of value")
    assert raw.cmd("BF.RESERVE", "str", "0.01", "100") == wrongtype
    assert raw.cmd("BF.RESERVE", "bf", "0.01", "100") == RespError("ERR item exists")
    assert raw.cmd("BF.RESERVE", "k", "0.01") == RespError(
        "ERR wrong number of arguments for 'bf.reserve' command")
    assert raw.cmd("BF.RESERVE", "k", "0.01", "1", "a", "b", "c", "d") == RespError(
        "ERR wrong number of arguments for 'bf.reserve' command")
    # Options are found anywhere; EXPANSION 0 is NONSCALING; unknown words are ignored.
    assert raw.cmd("BF.RESERVE", "zero", "0.01", "100", "expansion", "0") == Simple("OK")
    assert raw.cmd("BF.RESERVE", "odd", "0.01", "100", "GROWTH", "2") == Simple("OK")
    assert raw.cmd("BF.INFO", "zero", "EXPANSION") == [None]
    assert raw.cmd("BF.INFO", "odd", "EXPANSION") == [2]


def test_other_types(server):
    raw = server.raw()
    raw.cmd("SET", "str", "v")
    raw.cmd("BF.ADD", "bf", "x")
    wrongtype = RespError("WRONGTYPE Operation against a key holding the wrong kind of value")
    for cmd in (["BF.ADD", "str", "a"], ["BF.MADD", "str", "a"], ["BF.INSERT", "str", "ITEMS", "a"],
                ["BF.INFO", "str"], ["BF.CARD", "str"], ["BF.SCANDUMP", "str", "0"],
                ["BF.LOADCHUNK", "str", "1", "x"], ["GET", "bf"], ["SADD", "bf", "m"]):
        assert raw.cmd(*cmd) == wrongtype, cmd
    # As RedisBloom: a read of another type answers "no", not an error.
    assert raw.cmd("BF.EXISTS", "str", "a") == 0
    assert raw.cmd("BF.MEXISTS", "str", "a", "b") == [0, 0]
    assert raw.cmd("GET", "str") == b"v"
    assert raw.cmd("SCAN", "0", "TYPE", "MBbloom--") == [b"0", [b"bf"]]
    assert raw.cmd("OBJECT", "ENCODING", "bf") == b"raw"


def test_insert_arguments(server):
    raw = server.raw()
    assert raw.cmd("BF.INSERT", "k", "CAPACITY", "10") == RespError(
        "ERR wrong number of arguments for 'bf.insert' command")
    assert raw.cmd("BF.INSERT", "k", "ITEMS") == RespError(
        "ERR wrong number of arguments for 'bf.insert' command")
    assert raw.cmd("BF.INSERT", "k", "CAPACITY", "x", "ITEMS", "a") == RespError("Bad capacity")
    assert raw.cmd("BF.INSERT", "k", "CAPACITY", "0", "ITEMS", "a") == RespError("Bad capacity")
    assert raw.cmd("BF.INSERT", "k", "ERROR", "x", "ITEMS", "a") == RespError("Bad error rate")
    assert raw.cmd("BF.INSERT", "k", "ERROR", "1", "ITEMS", "a") == RespError("Bad error rate")
    assert raw.cmd("BF.INSERT", "k", "EXPANSION", "x", "ITEMS", "a") == RespError("Bad expansion")
    assert raw.cmd("BF.INSERT", "k", "WAT", "ITEMS", "a") == RespError("Unknown argument received")
    assert raw.cmd("BF.INSERT", "k", "NOCREATE", "ITEMS", "a") == RespError("ERR not found")
    assert raw.cmd("EXISTS", "k") == 0
    # First letters decide, as RedisBloom's parser: "ERR" is ERROR, "EXP" EXPANSION, "NOC" NOCREATE.
    assert raw.cmd("BF.INSERT", "k", "cap", "50", "err", "0.1", "exp", "4", "items", "a", "b") == [1, 1]
    assert raw.cmd("BF.INFO", "k") == [
        Simple("Capacity"), 50, Simple("Size"), raw.cmd("BF.INFO", "k", "SIZE")[0],
        Simple("Number of filters"), 1, Simple("Number of items inserted"), 2,
        Simple("Expansion rate"), 4]
    assert raw.cmd("BF.INSERT", "k", "noc", "ITEMS", "a", "c") == [0, 1]
    header = parse_header(raw.cmd("BF.SCANDUMP", "k", "0")[1])
    assert header["links"][0]["error"] == 0.05  # a scaling chain's first link: half the rate


def test_sizing_matches_redisbloom(server):
    c = server.client(decode_responses=False)
    c.execute_command("BF.RESERVE", "s", "0.001", "1000")
    c.execute_command("BF.RESERVE", "n", "0.01", "12345", "NONSCALING")
    c.execute_command("BF.RESERVE", "e", "0.2", "7", "EXPANSION", "3")
    for key, error, entries, growth, options in [("s", 0.0005, 1000, 2, 5), ("n", 0.01, 12345, 2, 13),
                                                 ("e", 0.1, 7, 3, 5)]:
        it, data = c.execute_command("BF.SCANDUMP", key, 0)
        assert it == 1
        h = parse_header(data)
        assert (h["size"], h["options"], h["growth"]) == (0, options, growth)
        link = h["links"][0]
        want = redisbloom_link(entries, error)
        assert {k: link[k] for k in want} == want, key
        assert link["error"] == error and link["n2"] == 0 and link["size"] == 0
        assert c.execute_command("BF.INFO", key, "SIZE") == [32 + 64 + want["bytes"]]
    # Scaling: a full link gets a successor of entries * expansion at half the error.
    for i in range(7 + 21 + 1):
        c.execute_command("BF.ADD", "e", f"item{i}")
    links = parse_header(c.execute_command("BF.SCANDUMP", "e", 0)[1])["links"]
    assert [(l["entries"], l["error"]) for l in links] == [(7, 0.1), (21, 0.05), (63, 0.025)]
    assert [l["size"] for l in links][:2] == [7, 21]
    assert c.execute_command("BF.INFO", "e", "CAPACITY") == [7 + 21 + 63]
    assert c.execute_command("BF.CARD", "e") == sum(l["size"] for l in links)


def test_nonscaling_full_filter_stops_madd(server):
    raw = server.raw()
    raw.cmd("BF.RESERVE", "ns", "0.000001", "50", "NONSCALING")
    raw.cmd("BF.MADD", "ns", *[f"item-{i}" for i in range(49)])
    assert raw.cmd("BF.ADD", "ns", "last") == 1
    assert raw.cmd("BF.ADD", "ns", "over") == RespError("ERR non scaling filter is full")
    assert raw.cmd("BF.ADD", "ns", "last") == 0
    assert raw.cmd("BF.MADD", "ns", "item-1", "over", "after") == [0, RespError("ERR non scaling filter is full")]
    assert raw.cmd("BF.EXISTS", "ns", "after") == 0
    assert raw.cmd("BF.CARD", "ns") == 50


def test_false_positive_rate_at_capacity(server):
    """At capacity a NONSCALING filter's false-positive rate is within 20% of the rate
    asked for (1M absent items probed); a scaling chain four links deep stays under it."""
    c = server.client(decode_responses=False)
    rng = random.Random(5)
    n = 100_000
    for rate in (0.01, 0.001):
        key = f"fp{rate}"
        c.execute_command("BF.RESERVE", key, rate, n, "NONSCALING")
        members = [f"m{rng.getrandbits(64)}" for _ in range(n)]
        pipe = c.pipeline(transaction=False)
        for i in range(0, n, 5000):
            pipe.execute_command("BF.MADD", key, *members[i:i + 5000])
        pipe.execute()
        assert all(c.execute_command("BF.MEXISTS", key, *members[:5000]))
        hits = 0
        for _ in range(100):
            probe = [f"absent{rng.getrandbits(64)}" for _ in range(10_000)]
            hits += sum(c.execute_command("BF.MEXISTS", key, *probe))
        measured = hits / 1_000_000
        assert abs(measured - rate) <= 0.2 * rate, (rate, measured)
    c.execute_command("BF.RESERVE", "chain", 0.01, 1000)
    total = 1000 + 2000 + 4000 + 8000 + 16000
    members = [f"c{i}" for i in range(total)]
    for i in range(0, total, 5000):
        c.execute_command("BF.MADD", "chain", *members[i:i + 5000])
    assert c.execute_command("BF.INFO", "chain", "FILTERS") == [5]
    hits = sum(c.execute_command("BF.MEXISTS", "chain", *[f"z{i}" for i in range(200_000)]))
    assert hits / 200_000 <= 0.01


def test_scandump_loadchunk_round_trip(server):
    c = server.client(decode_responses=False)
    c.execute_command("BF.RESERVE", "src", 0.01, 100, "EXPANSION", 2)
    items = [f"item{i}" for i in range(700)]
    c.execute_command("BF.MADD", "src", *items)
    chunks = scandump(c, "src")
    header_iter, header = chunks[0]
    assert header_iter == 1
    assert len(parse_header(header)["links"]) == c.execute_command("BF.INFO", "src", "FILTERS")[0]
    for it, data in chunks:
        assert c.execute_command("BF.LOADCHUNK", "dst", it, data) == b"OK"
    probe = items + [f"other{i}" for i in range(3000)]
    assert c.execute_command("BF.MEXISTS", "dst", *probe) == c.execute_command("BF.MEXISTS", "src", *probe)
    assert c.execute_command("BF.INFO", "dst") == c.execute_command("BF.INFO", "src")
    assert scandump(c, "dst") == chunks
    # Past the end and before the start: [0, ""].
    assert c.execute_command("BF.SCANDUMP", "src", 10**9) == [0, b""]
    assert c.execute_command("BF.SCANDUMP", "src", -5) == [0, b""]


def test_scandump_and_loadchunk_errors(server):
    raw = server.raw()
    raw.cmd("BF.ADD", "bf", "x")
    assert raw.cmd("BF.SCANDUMP", "missing", "0") == RespError("ERR not found")
    assert raw.cmd("BF.SCANDUMP", "bf", "x") == RespError("Second argument must be numeric")
    assert raw.cmd("BF.LOADCHUNK", "bf", "x", "data") == RespError("ERR Second argument must be numeric")
    assert raw.cmd("BF.LOADCHUNK", "missing", "5", "data") == RespError("ERR not found")
    assert raw.cmd("BF.LOADCHUNK", "new", "1", "garbage") == RespError("ERR received bad data")
    assert raw.cmd("BF.LOADCHUNK", "bf", "1", "xx") == RespError("ERR received bad data")
    assert raw.cmd("BF.LOADCHUNK", "bf", "1", "x") == RespError("ERR invalid offset - no link found")
    assert raw.cmd("BF.LOADCHUNK", "bf", "1000", "x") == RespError("ERR invalid offset - no link found")
    assert raw.cmd("BF.LOADCHUNK", "bf", "200", "x" * 150) == RespError(
        "ERR invalid chunk - Too big for current filter")
    # Hostile headers: every field checked, a huge claim refused before allocating.
    _, header = raw.cmd("BF.SCANDUMP", "bf", "0")
    rng = random.Random(3)
    for _ in range(300):
        bad = bytearray(header)
        for _ in range(rng.choice([1, 2, 5])):
            bad[rng.randrange(len(bad))] = rng.randrange(256)
        reply = raw.cmd("BF.LOADCHUNK", "fuzz", "1", bytes(bad))
        assert reply == Simple("OK") or isinstance(reply, RespError)
        raw.cmd("DEL", "fuzz")
    size, nfilters, options, growth = HEADER.unpack_from(header, 0)
    link = list(LINK.unpack_from(header, HEADER.size))
    link[0], link[1] = 1 << 40, 1 << 43
    huge = HEADER.pack(size, nfilters, options, growth) + LINK.pack(*link)
    assert raw.cmd("BF.LOADCHUNK", "huge", "1", huge) == RespError(
        f"ERR filter would exceed bf-max-filter-bytes (bytes needed {1 << 40})")
    assert raw.cmd("EXISTS", "huge") == 0
    assert raw.cmd("PING") == Simple("PONG")


def test_max_filter_bytes(server):
    raw = server.raw()
    assert raw.cmd("CONFIG", "SET", "bf-max-filter-bytes", "100000") == Simple("OK")
    want = redisbloom_link(100_000, 0.005)["bytes"]
    assert raw.cmd("BF.RESERVE", "big", "0.01", "100000") == RespError(
        f"ERR filter would exceed bf-max-filter-bytes (bytes needed {want})")
    assert raw.cmd("EXISTS", "big") == 0
    raw.cmd("BF.RESERVE", "grow", "0.01", "40000")
    first = redisbloom_link(40_000, 0.005)["bytes"]
    raw.cmd("BF.MADD", "grow", *[f"i{i}" for i in range(40_000)])
    assert raw.cmd("BF.CARD", "grow") <= 40_000
    card = raw.cmd("BF.CARD", "grow")
    if card < 40_000:  # a few false positives at the end: fill it exactly
        raw.cmd("BF.MADD", "grow", *[f"j{i}" for i in range(40_000 - card + 50)])
    needed = first + redisbloom_link(80_000, 0.0025)["bytes"]
    too_big = RespError(f"ERR filter would exceed bf-max-filter-bytes (bytes needed {needed})")
    new_items = [f"new{i}" for i in range(3)]
    replies = raw.cmd("BF.MADD", "grow", "i1", *new_items)
    assert replies[0] == 0 and replies[1:] == [too_big] * 3
    assert raw.cmd("BF.INFO", "grow", "FILTERS") == [1]
    assert raw.cmd("BF.EXISTS", "grow", "i7") == 1
    raw.cmd("CONFIG", "SET", "bf-max-filter-bytes", "512mb")
    assert raw.cmd("BF.ADD", "grow", "new0") == 1
    assert raw.cmd("BF.INFO", "grow", "FILTERS") == [2]


def test_config_names_ranges_and_defaults(server):
    raw = server.raw()
    got = dict(zip(*[iter(raw.cmd("CONFIG", "GET", "bf-*"))] * 2))
    assert got == {b"bf-error-rate": b"0.01", b"bf-expansion-factor": b"2", b"bf-initial-size": b"100",
                   b"bf-max-filter-bytes": b"536870912"}
    for name, value, why in [
            ("bf-error-rate", "x", "Invalid value for `bf-error-rate`"),
            ("bf-error-rate", "1", "Value for `bf-error-rate` must be in the range (0.000000, 1.000000)"),
            ("bf-initial-size", "0", "Value for `bf-initial-size` must be in the range [1, 1073741824]"),
            ("bf-expansion-factor", "32769", "Value for `bf-expansion-factor` must be in the range [0, 32768]")]:
        reply = raw.cmd("CONFIG", "SET", name, value)
        assert isinstance(reply, RespError) and reply.args[0].endswith(why), reply
    raw.cmd("CONFIG", "SET", "bf-error-rate", "0.5")
    assert raw.cmd("CONFIG", "GET", "bf-error-rate") == [b"bf-error-rate", b"0.25"]  # RedisBloom's cap
    raw.cmd("CONFIG", "SET", "bf-initial-size", "7")
    raw.cmd("CONFIG", "SET", "bf-expansion-factor", "0")
    raw.cmd("BF.ADD", "auto", "x")
    assert raw.cmd("BF.INFO", "auto", "CAPACITY") == [7]
    assert raw.cmd("BF.INFO", "auto", "EXPANSION") == [None]
    header = parse_header(raw.cmd("BF.SCANDUMP", "auto", "0")[1])
    assert header["links"][0]["error"] == 0.25 and header["growth"] == 0


def test_auto_created_filter_is_logged_explicitly(start_server):
    """The AOF holds every parameter of a filter an add created, so a server started
    with other bf-* defaults rebuilds the same filter (equal digest)."""
    srv = start_server("--appendonly", "yes", "--bf-error-rate", "0.02", "--bf-initial-size", "30")
    c = srv.client(decode_responses=False)
    c.execute_command("BF.ADD", "a", "x")
    c.execute_command("BF.MADD", "b", *[f"i{i}" for i in range(200)])
    c.execute_command("BF.INSERT", "c", "NONSCALING", "ITEMS", "p", "q")
    c.execute_command("BF.RESERVE", "d", "0.1", "5")
    c.execute_command("BF.MADD", "d", *[f"i{i}" for i in range(40)])
    c.execute_command("BF.MADD", "d", "i1", "i2")  # nothing new: nothing logged
    log = aof_log_bytes(srv)
    assert b"BF.INSERT\r\n$1\r\na\r\n$8\r\nCAPACITY\r\n$2\r\n30\r\n$5\r\nERROR\r\n$4\r\n0.02\r\n" in log
    assert b"$9\r\nEXPANSION\r\n$1\r\n2\r\n$5\r\nITEMS\r\n$1\r\nx\r\n" in log
    assert b"$10\r\nNONSCALING\r\n" in log
    assert log.count(b"BF.MADD") == 1
    before = c.execute_command("DEBUG", "DIGEST")
    infos = [c.execute_command("BF.INFO", k) for k in "abcd"]
    assert srv.stop() == []
    srv.extra_args = ["--appendonly", "yes", "--bf-error-rate", "0.2", "--bf-initial-size", "1000",
                      "--bf-expansion-factor", "5"]
    srv.start()
    c = srv.client(decode_responses=False)
    assert c.execute_command("DEBUG", "DIGEST") == before
    assert [c.execute_command("BF.INFO", k) for k in "abcd"] == infos


@pytest.mark.parametrize("mode", ["rdb", "aof-rewrite"])
def test_filters_survive_restart(start_server, mode):
    srv = start_server("--appendonly", "yes" if mode != "rdb" else "no")
    c = srv.client(decode_responses=False)
    for k in range(5):
        c.execute_command("BF.RESERVE", f"f{k}", 0.01, 50 * (k + 1))
        c.execute_command("BF.MADD", f"f{k}", *[f"{k}:{i}" for i in range(300 * k + 10)])
    c.expire("f0", 1000)
    before = c.execute_command("DEBUG", "DIGEST")
    if mode == "rdb":
        assert c.save()
    else:
        c.execute_command("BGREWRITEAOF")
        from conftest import wait_until
        wait_until(lambda: c.info("persistence")["aof_rewrite_in_progress"] == 0
                   and c.info("persistence")["aof_rewrite_scheduled"] == 0, timeout=20)
    assert srv.stop() == []
    srv.start()
    c = srv.client(decode_responses=False)
    assert c.execute_command("DEBUG", "DIGEST") == before
    assert c.ttl("f0") > 900
    assert c.execute_command("BF.EXISTS", "f4", "4:1199") == 1


def test_keyspace_dump_restore_copy_and_memory(server):
    c = server.client(decode_responses=False)
    c.execute_command("BF.RESERVE", "bf", 0.001, 10000)
    c.execute_command("BF.MADD", "bf", *[f"i{i}" for i in range(500)])
    payload = c.dump("bf")
    c.restore("copy1", 0, payload)
    c.copy("bf", "copy2")
    c.rename("copy2", "copy3")
    for k in ("copy1", "copy3"):
        assert c.type(k) == b"MBbloom--"
        assert c.execute_command("BF.INFO", k) == c.execute_command("BF.INFO", "bf")
        assert c.execute_command("BF.MEXISTS", k, "i1", "i499", "nope") == [1, 1, 0]
    bits = redisbloom_link(10000, 0.0005)["bytes"]
    assert bits < c.memory_usage("bf") < bits + 1024
    info = c.info("bf")
    assert info["bf_filters"] == 3 and info["bf_items"] == 1500
    assert info["bf_bytes"] == 3 * bits and info["bf_links_max"] == 1
    c.delete("copy1", "copy3")
    c.execute_command("BF.RESERVE", "s", 0.01, 2)
    c.execute_command("BF.MADD", "s", *[f"x{i}" for i in range(20)])
    info = c.info("bf")
    assert info["bf_filters"] == 2 and info["bf_links_max"] >= 3 and info["bf_scale_events"] >= 2
    c.flushall()
    info = c.info("bf")
    assert (info["bf_filters"], info["bf_bytes"], info["bf_items"]) == (0, 0, 0)


def test_watch_sees_bloom_writes(server):
    c = server.client(decode_responses=False)
    c.execute_command("BF.ADD", "bf", "x")
    for change, expect_abort in ((["BF.ADD", "bf", "y"], True), (["BF.ADD", "bf", "x"], False),
                                 (["BF.EXISTS", "bf", "zz"], False)):
        p = c.pipeline()
        p.watch("bf")
        other = server.client(decode_responses=False)
        other.execute_command(*change)
        p.multi()
        p.execute_command("BF.CARD", "bf")
        try:
            p.execute()
            aborted = False
        except Exception:
            aborted = True
        assert aborted == expect_abort, change


def test_replica_with_other_defaults_builds_the_same_filters(tmp_path):
    """Acceptance 4 of docs/bloom.md's spec: a replica whose bf-* defaults differ has an
    equal digest after adds that auto-created filters on the master."""
    from persist_util import Server, digest, kill_all, wait_until
    master = Server(tmp_path / "master").start()
    replica = Server(tmp_path / "replica", "--bf-error-rate", "0.2", "--bf-initial-size", "1000",
                     "--bf-expansion-factor", "0")
    try:
        replica.start("--replicaof", "127.0.0.1", str(master.port))
        c = master.client()
        c.execute_command("BF.ADD", "a", "x")
        c.execute_command("BF.MADD", "b", *[f"i{i}" for i in range(500)])
        c.execute_command("BF.INSERT", "c", "NONSCALING", "ITEMS", "p")
        c.execute_command("BF.RESERVE", "d", "0.05", "10", "NONSCALING")
        wait_until(lambda: replica.client().info("replication").get("slave_repl_offset")
                   == c.info("replication")["master_repl_offset"], timeout=30, what="the replica")
        assert digest(replica) == digest(master)
        r = replica.client()
        assert [r.execute_command("BF.INFO", k) for k in "abcd"] == \
            [c.execute_command("BF.INFO", k) for k in "abcd"]
    finally:
        assert not kill_all()
