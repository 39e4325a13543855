"""Client-side caching (CLIENT TRACKING), side by side with Redis 7 (issue 17).

One script of commands over several raw connections — default-mode, NOLOOP, OPTIN,
OPTOUT, BCAST with prefixes, REDIRECT to a RESP2 subscriber of __redis__:invalidate, a
broken redirect, MULTI, flushes and every error of CLIENT TRACKING / CACHING — runs
against feedkv and against Redis 7. After each command every connection is synced
with a PING or CLIENT GETREDIR, and the replies and invalidation messages each one received must agree.
Client ids differ between the servers: the subscriber's id is written as "$S".
node-redis's clientSideCache (tests/clients/node) runs against the server too.
"""

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import Push, is_real_redis

# The sync command: a CLIENT subcommand, which (as in Redis) leaves a pending
# CLIENT CACHING in force; the RESP2 subscriber can only PING.
def sync_command(name):
    return ("PING",) if name == "s" else ("CLIENT", "GETREDIR")


def is_sync_reply(reply):
    return reply in ("PONG", [b"pong", b""]) or (isinstance(reply, int) and not isinstance(reply, bool))


SCRIPT = [
    ("a", "CLIENT", "TRACKING", "on"),
    ("a", "GET", "k1"), ("a", "MGET", "k2", "k3"),
    ("b", "SET", "k1", "x"),
    ("b", "SET", "k1", "y"),  # told once: the key is forgotten until read again
    ("a", "GET", "k1"), ("a", "SET", "k1", "z"),  # its own write: after its reply
    ("a", "CLIENT", "TRACKINGINFO"), ("a", "CLIENT", "GETREDIR"),
    ("b", "MSET", "k2", "1", "k3", "2"),
    ("a", "GET", "k4"), ("b", "DEL", "k4"),  # nothing changed
    ("a", "HGET", "h", "f"), ("b", "HSET", "h", "f", "v"),
    ("a", "GET", "k5"), ("b", "SET", "k5", "v"), ("b", "PEXPIRE", "k5", "100000"),
    ("a", "GET", "k6"), ("b", "FLUSHALL"),
    ("a", "CLIENT", "TRACKING", "off"), ("a", "GET", "k7"), ("b", "SET", "k7", "1"),
    ("a", "CLIENT", "TRACKING", "on", "NOLOOP"), ("a", "GET", "k8"), ("a", "SET", "k8", "1"),
    ("b", "SET", "k8", "2"),
    ("a", "CLIENT", "TRACKINGINFO"),
    ("s", "SUBSCRIBE", "__redis__:invalidate"),
    ("t", "CLIENT", "TRACKING", "on", "REDIRECT", "$S"),
    ("t", "GET", "r1"), ("b", "SET", "r1", "1"),
    ("t", "CLIENT", "GETREDIR"), ("t", "CLIENT", "TRACKINGINFO"),
    ("t", "GET", "r2"), ("a", "GET", "r2"), ("b", "FLUSHDB"),
    ("c", "CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "user:", "PREFIX", "feed:"),
    ("b", "MSET", "user:1", "a", "feed:2", "b", "other", "c"),
    ("c", "SET", "user:9", "x"),  # BCAST without NOLOOP: its own change too
    ("c", "CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "u"),
    ("c", "CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "x", "NOLOOP"),
    ("c", "SET", "x1", "1"), ("b", "SET", "x2", "1"),
    ("c", "CLIENT", "TRACKINGINFO"),
    ("c", "CLIENT", "TRACKING", "on"),
    ("c", "CLIENT", "TRACKING", "on", "PREFIX", "x"),
    ("o", "CLIENT", "TRACKING", "on", "OPTIN"), ("o", "GET", "p1"),
    ("o", "CLIENT", "CACHING", "yes"), ("o", "CLIENT", "TRACKINGINFO"), ("o", "GET", "p2"),
    ("b", "MSET", "p1", "1", "p2", "2"),
    ("o", "CLIENT", "CACHING", "yes"), ("o", "CLIENT", "GETREDIR"), ("o", "GET", "p3"),
    ("b", "SET", "p3", "1"),
    ("o", "CLIENT", "CACHING", "no"),
    ("o", "CLIENT", "TRACKING", "on", "OPTOUT"),
    ("o", "CLIENT", "TRACKING", "off"), ("o", "CLIENT", "TRACKING", "on", "OPTOUT"),
    ("o", "CLIENT", "CACHING", "no"), ("o", "GET", "q1"), ("o", "GET", "q2"),
    ("b", "MSET", "q1", "1", "q2", "2"),
    ("a", "CLIENT", "TRACKING", "on"), ("a", "GET", "m"),
    ("a", "MULTI"), ("a", "SET", "m", "1"), ("a", "GET", "m"), ("a", "EXEC"),
    ("a", "CLIENT", "TRACKING", "maybe"),
    ("a", "CLIENT", "TRACKING", "on", "OPTIN", "OPTOUT"),
    ("a", "CLIENT", "TRACKING", "on", "BCAST", "OPTIN"),
    ("a", "CLIENT", "TRACKING", "on", "REDIRECT", "999999"),
    ("a", "CLIENT", "TRACKING", "on", "REDIRECT", "abc"),
    ("a", "CLIENT", "TRACKING", "on", "REDIRECT"),
    ("a", "CLIENT", "CACHING", "maybe"),
    ("b", "CLIENT", "CACHING", "yes"),
    ("b", "CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "a", "PREFIX", "ab"),
    ("b", "CLIENT", "GETREDIR"), ("b", "CLIENT", "TRACKINGINFO"),
    ("b", "CLIENT", "TRACKING", "off"),
    ("close", "s"),
    ("t", "GET", "r3"), ("b", "SET", "r3", "1"), ("t", "CLIENT", "TRACKINGINFO"),
    ("h3", "CLIENT", "TRACKING", "on", "REDIRECT", "$T"), ("h3", "GET", "r4"),
    ("close", "t"), ("b", "SET", "r4", "1"), ("h3", "CLIENT", "TRACKINGINFO"),
]


def normalize(v, ids):
    if isinstance(v, Push):
        return Push(normalize(x, ids) for x in v)
    if isinstance(v, list):
        return [normalize(x, ids) for x in v]
    if isinstance(v, dict):
        return {k: normalize(x, ids) for k, x in v.items()}
    if isinstance(v, int) and not isinstance(v, bool) and v in ids:
        return ids[v]
    return v


def run_script(srv):
    names = ["a", "b", "s", "t", "c", "o", "h3"]
    conns = {n: srv.raw() for n in names}
    for n in ("a", "c", "o", "h3"):
        conns[n].cmd("HELLO", "3")  # its reply names each server's own version
    ids = {conns["s"].cmd("CLIENT", "ID"): "$S", conns["t"].cmd("CLIENT", "ID"): "$T"}
    by_name = {v: k for k, v in ids.items()}
    out = []
    in_multi = set()
    for step in SCRIPT:
        if step[0] == "close":
            conns.pop(step[1]).close()
            continue
        who, cmd = step[0], [str(by_name.get(a, a)) for a in step[1:]]
        c = conns[who]
        c.send_command(*cmd)
        got = {who: [c.read_reply()]}
        if cmd[0] == "MULTI":
            in_multi.add(who)
        elif cmd[0] in ("EXEC", "DISCARD"):
            in_multi.discard(who)
        for n, conn in conns.items():  # what each connection received since
            if n in in_multi:
                continue  # a PING would be queued
            conn.send_command(*sync_command(n))
            seen = []
            while not is_sync_reply(r := conn.read_reply()):
                seen.append(r)
            if seen:
                got.setdefault(n, []).extend(seen)
        out.append((step, normalize(got, ids)))
    info = conns["b"].cmd("INFO", "stats").decode() + conns["b"].cmd("INFO", "clients").decode()
    fields = {}
    for line in info.splitlines():
        key, _, value = line.partition(":")
        if key.startswith("tracking_"):
            fields[key] = value
    out.append((("INFO",), fields))
    for conn in conns.values():
        conn.close()
    return out


@pytest.mark.skipif(is_real_redis(), reason="compares feedkv with Redis 7")
def test_tracking_script_matches_redis(server, redis7_server):
    ours, theirs = run_script(server), run_script(redis7_server)
    for (step, a), (_, b) in zip(ours, theirs):
        assert a == b, f"{step}: feedkv {a!r} != redis {b!r}"
    assert len(ours) == len(theirs)


def test_client_list_shows_tracking_flags(server):
    t = server.raw()
    t.cmd("HELLO", "3")
    w = server.raw()
    w_id = w.cmd("CLIENT", "ID")
    assert t.cmd("CLIENT", "TRACKING", "on", "REDIRECT", str(w_id)) == "OK"
    line = t.cmd("CLIENT", "INFO").decode()
    assert " flags=t " in line and f" redir={w_id} " in line
    t.cmd("GET", "x")
    w.close()
    server.raw().cmd("SET", "x", "1")
    assert t.read_reply() == Push([b"tracking-redir-broken", w_id])
    line = t.cmd("CLIENT", "INFO").decode()
    assert " flags=tR " in line
    assert t.cmd("CLIENT", "TRACKING", "off") == "OK"
    b = server.raw()
    b.cmd("HELLO", "3")
    b.cmd("CLIENT", "TRACKING", "on", "BCAST")
    assert " flags=tB " in b.cmd("CLIENT", "INFO").decode()


def test_tracking_table_max_keys_invalidates_early(server):
    r = server.raw()
    r.cmd("HELLO", "3")
    assert r.cmd("CLIENT", "TRACKING", "on") == "OK"
    for i in range(20):
        r.cmd("GET", f"key{i}")
    assert r.cmd("CONFIG", "SET", "tracking-table-max-keys", "5") == "OK"
    got = set()
    while len(got) < 15:  # the cron drops 15 keys, telling the client of each
        m = r.read_reply(timeout=5)
        assert isinstance(m, Push) and m[0] == b"invalidate", m
        got.update(m[1])
    assert len(got) == 15
    info = r.cmd("INFO", "stats").decode()
    assert "tracking_total_keys:5\r\n" in info


def test_a_closed_client_leaves_no_tracking_state(server):
    c = server.raw()
    c.cmd("HELLO", "3")
    c.cmd("CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "p")
    assert "tracking_clients:1\r\n" in server.raw().cmd("INFO", "clients").decode()
    c.close()
    other = server.raw()
    for _ in range(50):
        if "tracking_clients:0\r\n" in other.cmd("INFO", "clients").decode():
            break
    info = other.cmd("INFO").decode()
    assert "tracking_clients:0\r\n" in info and "tracking_total_prefixes:0\r\n" in info
    assert other.cmd("SET", "p1", "x") == "OK"  # nobody left to tell: no crash


NODE_DIR = Path(__file__).resolve().parent.parent / "clients" / "node"


@pytest.fixture(scope="module")
def node_redis():
    """node-redis installed from the npm registry (package-lock.json pins it)."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("node and npm are not installed: node-redis's client-side cache not checked")
    if not (NODE_DIR / "node_modules" / "redis").exists():
        r = subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=NODE_DIR,
                           capture_output=True, text=True, timeout=300)
        if r.returncode != 0:
            pytest.skip(f"npm ci failed (registry unreachable?): {r.stderr[-500:]}")
    return NODE_DIR


@pytest.mark.parametrize("mode", ["PLAIN", "OPTIN"])
def test_node_redis_client_side_cache_is_invalidated(server, node_redis, mode):
    r = subprocess.run(["node", "client_side_cache.mjs", str(server.port), mode], cwd=node_redis,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    seen = json.loads(r.stdout.strip().splitlines()[-1])
    assert seen["first"] == "1" and seen["second"] == "1"
    assert seen["afterReads"] == {"size": 1, "hits": 1, "misses": 1}  # the second read was cached
    assert seen["invalidated"] and seen["third"] == "2"  # another client's write reached the cache
    assert seen["flushed"] and seen["fourth"] is None  # FLUSHALL emptied it
