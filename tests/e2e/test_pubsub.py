"""Pub/Sub end to end, side by side with Redis 7 (issue 17, first landing).

The same sequences of SUBSCRIBE / PSUBSCRIBE / SSUBSCRIBE / UNSUBSCRIBE / PUBLISH /
SPUBLISH / PUBSUB over raw connections run against feedkv and Redis 7, RESP2 and RESP3,
and every reply and every delivered message must agree; redis-py's pubsub() works.
Orders Redis leaves to its dict iteration (UNSUBSCRIBE with no argument over several
channels) are compared as sets.
"""

import time

import pytest

from conftest import Push, RawConn, RespError
from persist_util import Server, kill_all, wait_until


def transcript(srv):
    out = []
    sub, sub3, pub = srv.raw(), srv.raw(), srv.raw()

    def send(conn, *cmd, replies=1):
        conn.send_command(*cmd)
        got = conn.read_replies(replies)
        if cmd[:2] in (("PUBSUB", "CHANNELS"), ("PUBSUB", "SHARDCHANNELS")):
            got = [sorted(got[0])]  # Redis lists them in its dict's order
        out.append((cmd, got))

    send(sub, "SUBSCRIBE", "news", "sport", replies=2)
    send(sub, "SUBSCRIBE", "news")  # again: still one subscription
    send(sub, "PSUBSCRIBE", "n*", "s?ort", replies=2)
    send(sub, "GET", "x")
    send(sub, "PING")
    send(sub, "PING", "hello")
    send(sub, "SET", "k", "v")
    sub3.cmd("HELLO", "3")  # its reply names each server's own version
    send(sub3, "SSUBSCRIBE", "shard1")
    send(sub3, "SUBSCRIBE", "news")
    send(sub3, "GET", "x")  # RESP3: any command works while subscribed
    send(pub, "PUBLISH", "news", "headline")
    out.append(("sub gets", sub.read_replies(2)))  # message + pmessage
    out.append(("sub3 gets", sub3.read_replies(1)))
    send(pub, "PUBLISH", "sport", "goal")
    out.append(("sub gets", sub.read_replies(2)))
    send(pub, "PUBLISH", "nobody", "x")
    out.append(("sub gets", sub.read_replies(1)))  # n* matches "nobody"
    send(pub, "SPUBLISH", "shard1", "s-msg")
    out.append(("sub3 gets", sub3.read_replies(1)))
    send(pub, "PUBSUB", "CHANNELS")
    send(pub, "PUBSUB", "CHANNELS", "n*")
    send(pub, "PUBSUB", "NUMSUB", "news", "sport", "none")
    send(pub, "PUBSUB", "NUMPAT")
    send(pub, "PUBSUB", "SHARDCHANNELS")
    send(pub, "PUBSUB", "SHARDNUMSUB", "shard1", "x")
    send(pub, "PUBSUB", "NOPE")
    send(pub, "PUBSUB")
    send(pub, "SUBSCRIBE")
    send(sub, "UNSUBSCRIBE", "sport", "never")
    send(sub, "PUNSUBSCRIBE", "s?ort")
    send(sub3, "SUNSUBSCRIBE")
    send(sub3, "SUNSUBSCRIBE")
    send(sub, "UNSUBSCRIBE")
    send(sub, "PUNSUBSCRIBE")
    send(sub, "UNSUBSCRIBE")
    send(sub, "GET", "x")  # no subscriptions left: back to normal
    send(pub, "PUBLISH", "news", "late")
    out.append(("sub3 gets", sub3.read_replies(1)))
    sub3.close()
    time.sleep(0.1)
    send(pub, "PUBSUB", "NUMSUB", "news")
    send(pub, "PUBLISH", "news", "after close")
    return out


def test_transcript_matches_redis(server, redis7_server):
    ours, theirs = transcript(server), transcript(redis7_server)
    assert len(ours) == len(theirs)
    for (cmd, a), (_, b) in zip(ours, theirs):
        assert a == b, f"{cmd}: feedkv {a!r} != redis {b!r}"


def test_resp3_messages_are_pushes(server):
    sub, pub = server.raw(), server.raw()
    sub.cmd("HELLO", "3")
    reply = sub.cmd("SUBSCRIBE", "c")
    assert isinstance(reply, Push) and reply == [b"subscribe", b"c", 1]
    assert pub.cmd("PUBLISH", "c", "m") == 1
    msg = sub.read_reply()
    assert isinstance(msg, Push) and msg == [b"message", b"c", b"m"]


def test_unsubscribe_all_names_every_channel(server, redis7_server):
    def run(srv):
        c = srv.raw()
        c.send_command("SUBSCRIBE", "a", "b", "c")
        c.read_replies(3)
        c.send_command("UNSUBSCRIBE")
        replies = c.read_replies(3)
        return sorted(r[1] for r in replies), sorted(r[2] for r in replies)
    assert run(server) == run(redis7_server)


def test_reset_and_close_drop_subscriptions(server):
    c, probe = server.raw(), server.raw()
    c.send_command("SUBSCRIBE", "x")
    c.read_reply()
    assert probe.cmd("PUBSUB", "NUMSUB", "x") == [b"x", 1]
    assert c.cmd("RESET") == "RESET"
    assert probe.cmd("PUBSUB", "NUMSUB", "x") == [b"x", 0]
    assert c.cmd("GET", "nothing") is None
    c.send_command("PSUBSCRIBE", "*")
    c.read_reply()
    assert probe.cmd("PUBSUB", "NUMPAT") == 1
    c.close()
    deadline = time.monotonic() + 5
    while probe.cmd("PUBSUB", "NUMPAT") != 0:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    assert probe.cmd("PUBLISH", "anything", "m") == 0


def test_redis_py_pubsub(server):
    r = server.client()
    p = r.pubsub()
    p.subscribe("events")
    p.psubscribe("ev*")
    for _ in range(2):
        assert p.get_message(timeout=2)["type"] in ("subscribe", "psubscribe")
    assert r.publish("events", "hi") == 2
    got = [p.get_message(timeout=2) for _ in range(2)]
    assert {m["type"] for m in got} == {"message", "pmessage"}
    assert all(m["data"] == "hi" for m in got)
    p.close()


def test_many_subscribers_all_receive(server):
    subs = [server.raw() for _ in range(50)]
    for s in subs:
        s.send_command("SUBSCRIBE", "fan")
        s.read_reply()
    pub = server.raw()
    for i in range(20):
        assert pub.cmd("PUBLISH", "fan", f"m{i}") == 50
    for s in subs:
        assert [m[2] for m in s.read_replies(20)] == [f"m{i}".encode() for i in range(20)]
    assert pub.cmd("SUBSCRIBE") == RespError("ERR wrong number of arguments for 'subscribe' command")


def test_publish_on_a_master_reaches_its_replicas_subscribers(tmp_path):
    # As Redis: PUBLISH and SPUBLISH travel to replicas, which deliver them to
    # their own subscribers; a PUBLISH on a replica stays there; the master's
    # AOF never makes a message run again at restart.
    master = Server(tmp_path / "master").start()
    replica = Server(tmp_path / "replica")
    try:
        replica.start("--replicaof", "127.0.0.1", str(master.port))
        wait_until(lambda: replica.client().info("replication").get("master_link_status") == "up",
                   timeout=30, what="the replica's link")
        mc = master.client()
        sub = replica.client().pubsub()
        sub.subscribe("news")
        sub.psubscribe("n*")
        for _ in range(2):
            assert sub.get_message(timeout=5)["type"] in ("subscribe", "psubscribe")
        shard = RawConn(replica.port)
        assert shard.cmd("SSUBSCRIBE", "news") == [b"ssubscribe", b"news", 1]
        mc.set("k", "v")
        assert mc.publish("news", "m1") == 0  # nobody on the master itself
        assert mc.execute_command("SPUBLISH", "news", "m2") == 0
        with mc.pipeline(transaction=True) as p:
            p.set("k", "w").publish("news", "m3")
            p.execute()
        got = []
        deadline = time.monotonic() + 10
        while len(got) < 4 and time.monotonic() < deadline:
            m = sub.get_message(timeout=1)
            if m is not None:
                got.append((m["type"], m["data"]))
        assert got == [("message", "m1"), ("pmessage", "m1"), ("message", "m3"), ("pmessage", "m3")]
        assert shard.read_reply() == [b"smessage", b"news", b"m2"]
        other = master.client().pubsub()
        other.subscribe("news")
        assert other.get_message(timeout=5)["type"] == "subscribe"
        assert replica.client().publish("news", "local") == 2
        assert sub.get_message(timeout=5)["data"] == "local"
        assert other.get_message(timeout=0.5) is None
        other.close()
        sub.close()
        shard.close()
        master.stop()
        master.start()
        assert master.client().get("k") == "w"
        assert "failed" not in open(master.log_path).read().split("=== start 2 ===")[1]
    finally:
        assert not kill_all()
