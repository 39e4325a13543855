"""GEO commands end to end, side by side with Redis 7.

Seeded scripts of GEOADD (NX/XX/CH, bad coordinates, wrong argument counts), GEOPOS,
GEODIST (every unit), GEOHASH, GEORADIUS[_RO], GEORADIUSBYMEMBER[_RO], GEOSEARCH and
GEOSEARCHSTORE (BYRADIUS/BYBOX, FROMMEMBER/FROMLONLAT, WITHDIST/WITHHASH/WITHCOORD,
ASC/DESC, COUNT with and without ANY, STORE/STOREDIST, every error) run against feedkv
and Redis 7 in one run, over points clustered so that searches find many members,
near the antimeridian and the poles too, and every reply must agree byte for byte,
including the order of unsorted results and of ties under COUNT.
"""

import random

import pytest

from conftest import RespError, assert_same_replies, run_seeded_script

CLUSTERS = [(13.0, 38.0), (-179.9, 0.0), (179.9, 84.9), (0.0, -84.9), (-73.9, 40.7)]


def make_random_op(max_member):
    state = {"center": CLUSTERS[0]}

    def num(rng, lo, hi):
        r = rng.random()
        if r < 0.04:
            return rng.choice(["abc", "inf", "-inf", "nan", "", "1e400"])
        if r < 0.08:
            return str(rng.choice([lo, hi, lo - 1, hi + 1]))
        return repr(round(rng.uniform(lo, hi), rng.randint(0, 8)))

    def lon(rng):
        if rng.random() < 0.7:
            return repr(max(-180.0, min(180.0, state["center"][0] + rng.uniform(-1, 1))))
        return num(rng, -180, 180)

    def lat(rng):
        if rng.random() < 0.7:
            return repr(max(-85.05112878, min(85.05112878, state["center"][1] + rng.uniform(-1, 1))))
        return num(rng, -85.05112878, 85.05112878)

    def unit(rng):
        return rng.choice(["m", "km", "ft", "mi", "KM", "Mi", "parsec"])

    def radius(rng):
        return rng.choice([str(rng.uniform(0, 200000)), str(rng.uniform(0, 200000)), str(rng.uniform(0, 5e6)),
                           str(rng.uniform(0, 100)), "0", "-1", "abc"])

    def member(rng):
        return "m%d" % rng.randint(0, max_member)

    def key(rng):
        return rng.choice(["g", "g", "g", "h", "s", "missing"])

    def options(rng, store_ok, searchstore):
        out = []
        for _ in range(rng.randint(0, 4)):
            r = rng.random()
            if r < 0.15:
                out.append(rng.choice(["WITHDIST", "WITHHASH", "WITHCOORD", "withdist"]))
            elif r < 0.3:
                out.append(rng.choice(["ASC", "DESC"]))
            elif r < 0.45:
                out += ["COUNT", str(rng.choice([1, 2, 3, 5, 10, 50, 0, -1]))]
            elif r < 0.5:
                out.append("ANY")
            elif r < 0.55 and store_ok:
                out += [rng.choice(["STORE", "STOREDIST"]), "dst"]
            elif r < 0.6 and searchstore:
                out.append("STOREDIST")
        return out

    def shape(rng):
        s = ["FROMMEMBER", member(rng)] if rng.random() < 0.5 else ["FROMLONLAT", lon(rng), lat(rng)]
        s += ["BYRADIUS", radius(rng), unit(rng)] if rng.random() < 0.5 else ["BYBOX", radius(rng), radius(rng), unit(rng)]
        if rng.random() < 0.1:
            rng.shuffle(s)
        return s

    def random_op(rng):
        if rng.random() < 0.01:
            state["center"] = rng.choice(CLUSTERS)
        r = rng.random()
        if r < 0.35:
            args = ["GEOADD", key(rng)]
            if rng.random() < 0.1:
                args.append(rng.choice(["NX", "XX", "CH"]))
            for _ in range(rng.randint(1, 4)):
                args += [lon(rng), lat(rng), member(rng)]
            if rng.random() < 0.03:
                args.pop()
            return args
        if r < 0.45:
            return ["GEOPOS", key(rng)] + [member(rng) for _ in range(rng.randint(0, 3))]
        if r < 0.52:
            return ["GEODIST", key(rng), member(rng), member(rng)] + ([unit(rng)] if rng.random() < 0.5 else [])
        if r < 0.58:
            return ["GEOHASH", key(rng)] + [member(rng) for _ in range(rng.randint(0, 3))]
        if r < 0.68:
            return ([rng.choice(["GEORADIUS", "GEORADIUS_RO"]), key(rng), lon(rng), lat(rng), radius(rng), unit(rng)]
                    + options(rng, True, False))
        if r < 0.76:
            return ([rng.choice(["GEORADIUSBYMEMBER", "GEORADIUSBYMEMBER_RO"]), key(rng), member(rng), radius(rng),
                     unit(rng)] + options(rng, True, False))
        if r < 0.9:
            return ["GEOSEARCH", key(rng)] + shape(rng) + options(rng, False, False)
        if r < 0.96:
            return ["GEOSEARCHSTORE", "dst", key(rng)] + shape(rng) + options(rng, False, True)
        return rng.choice([["ZRANGE", "dst", "0", "-1", "WITHSCORES"], ["OBJECT", "ENCODING", "dst"],
                           ["ZADD", "g", str(rng.uniform(-1e16, 1e16)), member(rng)], ["TYPE", "dst"],
                           ["ZRANGE", "g", "0", "-1", "WITHSCORES"]])

    return random_op


SETUP = [["SADD", "s", "x"]]
FINALS = [["ZRANGE", "g", "0", "-1", "WITHSCORES"], ["ZRANGE", "h", "0", "-1", "WITHSCORES"],
          ["OBJECT", "ENCODING", "g"], ["ZRANGE", "dst", "0", "-1", "WITHSCORES"]]


@pytest.mark.parametrize("seed,max_member", [(1, 60), (2, 300), (3, 300), (4, 2000)])
def test_random_geo_scripts_match_redis(server, redis7_server, seed, max_member):
    def run(srv):
        return run_seeded_script(srv, seed, 1500, make_random_op(max_member), setup=SETUP, finals=FINALS)
    assert_same_replies(run(server), run(redis7_server))


def test_random_geo_scripts_match_redis_in_resp3(server, redis7_server):
    def run(srv):
        return run_seeded_script(srv, 9, 800, make_random_op(200), setup=[["HELLO", "3"]] + SETUP, finals=FINALS)
    assert_same_replies(run(server), run(redis7_server))


def test_sicily_example(server):
    c = server.raw()
    assert c.cmd("GEOADD", "Sicily", "13.361389", "38.115556", "Palermo", "15.087269", "37.502669", "Catania") == 2
    assert c.cmd("GEODIST", "Sicily", "Palermo", "Catania") == b"166274.1516"
    assert c.cmd("GEODIST", "Sicily", "Palermo", "Catania", "km") == b"166.2742"
    assert c.cmd("GEOHASH", "Sicily", "Palermo", "Catania", "nowhere") == [b"sqc8b49rny0", b"sqdtr74hyu0", None]
    assert c.cmd("GEOPOS", "Sicily", "Palermo", "nowhere") == [[b"13.36138933897018433", b"38.11555639549629859"],
                                                               None]
    assert c.cmd("GEORADIUS", "Sicily", "15", "37", "200", "km", "WITHDIST", "ASC") == [
        [b"Catania", b"56.4413"], [b"Palermo", b"190.4424"]]
    assert c.cmd("GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYBOX", "400", "400", "km", "ASC", "WITHCOORD",
                 "WITHDIST", "WITHHASH") == [
        [b"Catania", b"56.4413", 3479447370796909, [b"15.08726745843887329", b"37.50266842333162032"]],
        [b"Palermo", b"190.4424", 3479099956230698, [b"13.36138933897018433", b"38.11555639549629859"]]]
    # A geo key is a sorted set.
    assert c.cmd("TYPE", "Sicily") == "zset"
    assert c.cmd("ZSCORE", "Sicily", "Palermo") == b"3479099956230698"
    assert c.cmd("OBJECT", "ENCODING", "Sicily") == b"listpack"


def test_errors(server):
    c = server.raw()
    c.cmd("GEOADD", "g", "13.361389", "38.115556", "Palermo")
    c.cmd("SET", "str", "x")
    cases = [
        (["GEOADD", "g", "200", "10", "m"], "ERR invalid longitude,latitude pair 200.000000,10.000000"),
        (["GEOADD", "g", "10", "86", "m"], "ERR invalid longitude,latitude pair 10.000000,86.000000"),
        (["GEOADD", "g", "10", "20", "m", "11"], "ERR syntax error"),
        (["GEOADD", "g", "NX", "XX", "10", "20", "m"], "ERR syntax error"),
        (["GEOADD", "str", "10", "20", "m"], "WRONGTYPE Operation against a key holding the wrong kind of value"),
        (["GEODIST", "g", "a", "b", "parsecs"], "ERR unsupported unit provided. please use M, KM, FT, MI"),
        (["GEODIST", "g", "a", "b", "km", "x"], "ERR syntax error"),
        (["GEORADIUS", "g", "15", "37", "-1", "km"], "ERR radius cannot be negative"),
        (["GEORADIUS", "g", "15", "37", "x", "km"], "ERR need numeric radius"),
        (["GEORADIUS", "g", "15", "37", "1", "km", "STORE", "d", "WITHDIST"],
         "ERR STORE option in GEORADIUS is not compatible with WITHDIST, WITHHASH and WITHCOORD options"),
        (["GEORADIUS_RO", "g", "15", "37", "1", "km", "STORE", "d"], "ERR syntax error"),
        (["GEORADIUSBYMEMBER", "g", "nobody", "1", "km"], "ERR could not decode requested zset member"),
        (["GEOSEARCH", "g", "FROMLONLAT", "15", "37", "ASC", "WITHDIST"],
         "ERR exactly one of BYRADIUS and BYBOX can be specified for GEOSEARCH"),
        (["geosearch", "g", "BYRADIUS", "1", "km", "ASC", "WITHDIST"],
         "ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for geosearch"),
        (["GEOSEARCH", "g", "FROMLONLAT", "15", "37", "BYRADIUS", "1", "km", "BYBOX", "1", "1", "km"],
         "ERR syntax error"),
        (["GEOSEARCH", "g", "FROMLONLAT", "15", "37", "BYBOX", "-1", "1", "km"],
         "ERR height or width cannot be negative"),
        (["GEOSEARCH", "g", "FROMLONLAT", "15", "37", "BYBOX", "1", "x", "km"], "ERR need numeric height"),
        (["GEOSEARCH", "g", "FROMLONLAT", "15", "37", "BYRADIUS", "1", "km", "ANY"],
         "ERR the ANY argument requires COUNT argument"),
        (["GEOSEARCH", "g", "FROMLONLAT", "15", "37", "BYRADIUS", "1", "km", "COUNT", "0"], "ERR COUNT must be > 0"),
        (["GEOSEARCHSTORE", "d", "g", "FROMLONLAT", "15", "37", "BYRADIUS", "1", "km", "WITHCOORD"],
         "ERR GEOSEARCHSTORE is not compatible with WITHDIST, WITHHASH and WITHCOORD options"),
        (["GEOSEARCH", "str", "FROMLONLAT", "15", "37", "BYRADIUS", "1", "km"],
         "WRONGTYPE Operation against a key holding the wrong kind of value"),
    ]
    for cmd, text in cases:
        assert c.cmd(*cmd) == RespError(text), cmd


def test_store_replaces_or_deletes_the_destination(server):
    c = server.raw()
    c.cmd("GEOADD", "g", "13.361389", "38.115556", "Palermo", "15.087269", "37.502669", "Catania")
    assert c.cmd("GEORADIUS", "g", "15", "37", "200", "km", "STOREDIST", "near") == 2
    assert c.cmd("ZRANGE", "near", "0", "-1", "WITHSCORES") == [b"Catania", b"56.441257870158204",
                                                                b"Palermo", b"190.44242984775784"]
    assert c.cmd("GEOSEARCHSTORE", "near", "g", "FROMMEMBER", "Palermo", "BYRADIUS", "1", "km") == 1
    assert c.cmd("ZRANGE", "near", "0", "-1", "WITHSCORES") == [b"Palermo", b"3479099956230698"]
    # Nothing found: the destination goes; a missing source also answers 0.
    assert c.cmd("GEORADIUS", "g", "0", "0", "1", "km", "STORE", "near") == 0
    assert c.cmd("EXISTS", "near") == 0
    c.cmd("SET", "near", "x")
    assert c.cmd("GEOSEARCHSTORE", "near", "missing", "FROMLONLAT", "0", "0", "BYRADIUS", "1", "km") == 0
    assert c.cmd("EXISTS", "near") == 0
    assert c.cmd("GEORADIUSBYMEMBER", "missing", "x", "1", "km") == []


def test_keyspace_events_and_watch(server):
    c = server.raw()
    c.cmd("CONFIG", "SET", "notify-keyspace-events", "KEA")
    sub = server.raw()
    sub.cmd("PSUBSCRIBE", "__keyevent@0__:*")
    c.cmd("GEOADD", "g", "13.361389", "38.115556", "Palermo")
    c.cmd("GEORADIUS", "g", "13", "38", "100", "km", "STORE", "a")
    c.cmd("GEOSEARCHSTORE", "b", "g", "FROMLONLAT", "13", "38", "BYRADIUS", "100", "km")
    events = [sub.read_reply()[2] for _ in range(3)]
    assert events == [b"__keyevent@0__:zadd", b"__keyevent@0__:georadiusstore", b"__keyevent@0__:geosearchstore"]
    # WATCH sees a store into its key.
    w = server.raw()
    w.cmd("WATCH", "a")
    c.cmd("GEORADIUS", "g", "13", "38", "100", "km", "STORE", "a")
    w.cmd("MULTI")
    w.cmd("GET", "x")
    assert w.cmd("EXEC") is None


def test_command_info_and_getkeys(server, redis7_server):
    names = ["geoadd", "geopos", "geodist", "geohash", "georadius", "georadius_ro", "georadiusbymember",
             "georadiusbymember_ro", "geosearch", "geosearchstore"]

    def info(srv):
        c = srv.raw()
        rows = [entry[:7] for entry in c.cmd("COMMAND", "INFO", *names)]
        keys = [c.cmd("COMMAND", "GETKEYS", "GEORADIUS", "src", "1", "2", "3", "km", "STORE", "a", "STOREDIST", "b"),
                c.cmd("COMMAND", "GETKEYS", "GEOSEARCHSTORE", "dst", "src", "FROMLONLAT", "1", "2", "BYRADIUS", "1",
                      "m")]
        return rows, keys
    assert info(server) == info(redis7_server)


def test_geo_set_survives_a_restart(start_server):
    srv = start_server("--appendonly", "yes")
    c = srv.raw()
    c.cmd("GEOADD", "g", "13.361389", "38.115556", "Palermo", "15.087269", "37.502669", "Catania")
    c.cmd("GEOSEARCHSTORE", "d", "g", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km", "STOREDIST")
    before = (c.cmd("ZRANGE", "g", "0", "-1", "WITHSCORES"), c.cmd("ZRANGE", "d", "0", "-1", "WITHSCORES"))
    srv.stop()
    srv.start()
    c = srv.raw()
    assert (c.cmd("ZRANGE", "g", "0", "-1", "WITHSCORES"), c.cmd("ZRANGE", "d", "0", "-1", "WITHSCORES")) == before
