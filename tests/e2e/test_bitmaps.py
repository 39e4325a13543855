"""Bitmaps end to end, side by side with Redis 7.

A seeded random script of SETBIT/GETBIT/BITCOUNT/BITPOS/BITOP/BITFIELD/BITFIELD_RO
(BYTE and BIT ranges, negative and huge offsets, every field width and overflow
mode, the "#n" offset form, integer-encoded strings, wrong types and arity) runs
against feedkv and Redis 7 over raw RESP connections, and every reply must be the
same. Then WATCH, the offset limit, and a big bitmap against a Python model.
"""

import random

import pytest

from conftest import assert_same_replies, norm_reply, run_seeded_script, watch_outcomes

OFFSETS = ["0", "1", "7", "8", "15", "63", "64", "100", "1000", "-1", "x", "4294967295",
           "4294967296", "9223372036854775807", "1.5", ""]
RANGE = ["0", "1", "-1", "-2", "2", "5", "-100", "100", "9223372036854775807",
         "-9223372036854775808", "x"]
TYPES = ["u1", "u8", "i8", "u16", "i16", "u63", "i64", "i1", "u7", "i33", "u64", "i65", "x8", "u0",
         "U8", "I8", "u"]
VALUES = ["0", "1", "-1", "127", "128", "255", "256", "-128", "-129", "65535",
          "9223372036854775807", "-9223372036854775808", "x"]


def range_args(rng, n):
    """n trailing arguments of BITCOUNT/BITPOS: up to two range ends, a unit, junk."""
    args = [rng.choice(RANGE) for _ in range(min(n, 2))]
    if n >= 3:
        args.append(rng.choice(["BIT", "BYTE", "bit", "nibble"]))
    if n == 4:
        args.append("x")
    return args


def random_op(rng):
    key = rng.choice(["b1", "b1", "b2", "b3", "num"])
    p = rng.random()
    if p < 0.25:
        return ["SETBIT", key, rng.choice(OFFSETS[:9] + [str(rng.randrange(2000))]),
                rng.choice(["0", "1", "1", "2", "-1", "x"])]
    if p < 0.33:
        return ["GETBIT", key, rng.choice(OFFSETS + [str(rng.randrange(2000))])]
    if p < 0.45:
        return ["BITCOUNT", key, *range_args(rng, rng.choice([0, 1, 2, 2, 3, 4]))]
    if p < 0.60:
        return ["BITPOS", key, rng.choice(["0", "1", "1", "2", "x"]),
                *range_args(rng, rng.choice([0, 1, 2, 3, 3, 4]))]
    if p < 0.70:
        op = rng.choice(["AND", "OR", "XOR", "NOT", "and", "NAND"])
        srcs = rng.sample(["b1", "b2", "b3", "num", "nokey"], rng.choice([1, 1, 2, 3]))
        return ["BITOP", op, rng.choice(["dest", "b3", "b2"]), *srcs]
    if p < 0.90:
        cmd = [rng.choice(["BITFIELD", "BITFIELD", "BITFIELD_RO"]), key]
        for _ in range(rng.choice([0, 1, 2, 4])):
            sub = rng.choice(["GET", "SET", "INCRBY", "OVERFLOW", "get", "BOGUS"])
            if sub == "OVERFLOW":
                cmd += [sub, rng.choice(["WRAP", "SAT", "FAIL", "sat", "MAYBE"])]
                continue
            off = rng.choice(OFFSETS[:8] + ["#0", "#1", "#3", "#x", str(rng.randrange(200))])
            cmd += [sub, rng.choice(TYPES), off]
            if sub in ("SET", "INCRBY") or rng.random() < 0.05:
                cmd.append(rng.choice(VALUES))
        return cmd
    if p < 0.94:
        return rng.choice([["GET", key], ["STRLEN", key], ["SET", "num", str(rng.randrange(-999, 999))]])
    return rng.choice([["SETBIT", "hash", "1", "1"], ["GETBIT", "hash", "1"], ["BITCOUNT", "hash"],
                       ["BITPOS", "hash", "1"], ["BITOP", "AND", "dest", "hash"],
                       ["BITOP", "OR", "hash", "b1"], ["BITFIELD", "hash", "GET", "u8", "0"],
                       ["BITFIELD_RO", "hash", "GET", "u8", "0"], ["SETBIT", key, "1"],
                       ["BITOP", "NOT", "dest", "b1", "b2"], ["BITOP", "AND", "dest"],
                       ["BITPOS", "nokey", "0"], ["BITPOS", "nokey", "1"], ["BITCOUNT", "nokey", "x"]])


def run_script(srv, seed, n):
    return run_seeded_script(srv, seed, n, random_op, setup=[["HSET", "hash", "f", "v"], ["SET", "num", "12345"]],
                             finals=[["GET", k] for k in ("b1", "b2", "b3", "dest", "num")])


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_script_replies_match_redis(server, redis7_server, seed):
    assert_same_replies(run_script(server, seed, 3000), run_script(redis7_server, seed, 3000))


def test_offset_limits_and_growth_match_redis(server, redis7_server):
    def script(srv):
        c = srv.raw()
        return [norm_reply(c.cmd(*cmd)) for cmd in (
            ["SETBIT", "k", "4294967295", "1"], ["STRLEN", "k"], ["SETBIT", "k", "4294967296", "1"],
            ["CONFIG", "SET", "proto-max-bulk-len", "1000000"],
            ["CONFIG", "SET", "proto-max-bulk-len", "1048576"], ["SETBIT", "k2", "8388607", "1"],
            ["SETBIT", "k2", "8388608", "1"], ["BITFIELD", "k3", "SET", "u8", "#1048575", "1"],
            ["BITFIELD", "k3", "SET", "u8", "#1048576", "1"], ["GETBIT", "k", "8388608"],
            ["BITCOUNT", "k"], ["BITPOS", "k", "1"], ["BITPOS", "k", "1", "-1", "-1", "BIT"],
            ["CONFIG", "SET", "proto-max-bulk-len", "536870912"], ["DEL", "k"])]
    assert script(server) == script(redis7_server)


def test_watch_sees_bit_writes(server, redis7_server):
    changes = (["SETBIT", "w", "0", "0"], ["SETBIT", "w", "1", "1"], ["GETBIT", "w", "1"],
               ["BITFIELD", "w", "SET", "u8", "0", "64"], ["BITFIELD", "w", "SET", "u8", "0", "64"],
               ["BITFIELD", "w", "GET", "u8", "0"], ["BITOP", "NOT", "dest", "w"],
               ["BITOP", "AND", "w", "src"])

    def script(srv):
        srv.client().mset({"w": "\x00", "src": "a"})
        return watch_outcomes(srv, "w", changes, ["GET", "w"])
    assert script(server) == script(redis7_server)


def test_big_bitmap_agrees_with_a_model(r):
    rng = random.Random(7)
    bits = set()
    for _ in range(20000):
        off = rng.randrange(10_000_000)
        v = rng.random() < 0.7
        assert r.setbit("dau", off, int(v)) == (off in bits)
        (bits.add if v else bits.discard)(off)
    assert r.bitcount("dau") == len(bits)
    assert r.bitpos("dau", 1) == min(bits)
    lo = rng.randrange(10_000_000)
    assert r.bitcount("dau", lo, lo + 100_000, "BIT") == sum(1 for b in bits if lo <= b <= lo + 100_000)
    for off in rng.sample(range(10_000_000), 200):
        assert r.getbit("dau", off) == (off in bits)
