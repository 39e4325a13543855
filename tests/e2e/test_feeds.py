"""FEED.* end to end (docs/feeds.md): timelines as server commands.

A model test drives a Zipf follow graph with random publish / follow / unfollow /
delete / mode / activate operations and checks every FEED.TIMELINE page against a
brute-force merge of the outboxes of the authors a user follows (their own posts
included), newest first by (ts, post id), deleted posts left out; pages walked with
BEFORE cursors never repeat or skip an entry, even when 1000 posts share one ts;
authors cross feed-push-max-followers mid-run (and flip modes by FEED.MODE) without
losing or duplicating entries. After a restart from the AOF and on a replica the
timelines and DEBUG DIGEST are the same. FEED.* is feedkv's own: these tests skip
against Redis.
"""

import bisect
import os
import random
from collections import defaultdict

import pytest
import redis

from conftest import RawConn, RespError, is_real_redis
from persist_util import Server, digest, kill_all, wait_until

pytestmark = pytest.mark.skipif(is_real_redis(), reason="FEED.* is a feedkv extension")

BAD_ID = "Invalid stream ID specified as stream command argument"


@pytest.fixture(autouse=True)
def _no_leftover_servers():
    yield
    reports = kill_all()
    assert not reports, f"sanitizer or crash report in the server log: {reports}"


class Model:
    """What a timeline should hold: the newest posts of the followed authors and the
    user's own, by (ts, post id), from per-author sorted lists (no server code)."""

    def __init__(self):
        self.following = defaultdict(set)
        self.posts = defaultdict(dict)  # author -> {post id: ts}
        self.order = defaultdict(list)  # author -> sorted [(ts, post id)]

    def publish(self, author, pid, ts):
        self.posts[author][pid] = ts
        bisect.insort(self.order[author], (ts, pid))

    def delete(self, author, pid):
        ts = self.posts[author].pop(pid, None)
        if ts is not None:
            self.order[author].remove((ts, pid))

    def timeline(self, uid, before=None, count=20):
        out = []
        for a in self.following[uid] | {uid}:
            order = self.order[a]
            end = len(order) if before is None else bisect.bisect_left(order, before)
            out += [(ts, pid, a) for ts, pid in order[max(0, end - count):end]]
        out.sort(reverse=True)
        return out[:count]


def page(c, uid, before=None, count=20):
    args = ["FEED.TIMELINE", uid]
    if before is not None:
        args += ["BEFORE", f"{before[0]}-{before[1]}"]
    args += ["COUNT", count]
    out = []
    for entry_id, author in c.execute_command(*args):
        ts, pid = entry_id.split("-")
        out.append((int(ts), int(pid), author))
    return out


def walk(c, uid, count):
    """A whole timeline, page by page with BEFORE cursors."""
    seen, cursor = [], None
    while True:
        got = page(c, uid, cursor, count=count)
        if not got:
            return seen
        seen += got
        cursor = got[-1][:2]


def zipf_choice(rng, n, s=1.1):
    weights = [1 / (i + 1) ** s for i in range(n)]
    return rng.choices(range(n), weights=weights)[0]


def run_model(c, seed, users, ops, check_every=1):
    """Random operations against feedkv and the model; checks pages as it goes."""
    rng = random.Random(seed)
    model = Model()
    ts = 1_700_000_000_000
    next_post = 1
    all_posts = []
    for i in range(users * 3):
        a, b = rng.randrange(users), zipf_choice(rng, users)
        if a != b:
            c.execute_command("FEED.FOLLOW", a, b)
            model.following[a].add(b)
    for step in range(ops):
        p = rng.random()
        if p < 0.35:
            author = zipf_choice(rng, users)
            if rng.random() < 0.6:
                ts += rng.choice([0, 0, 1, 5])  # many posts share a ts
            c.execute_command("FEED.PUBLISH", author, next_post, ts)
            model.publish(author, next_post, ts)
            all_posts.append((author, next_post))
            next_post += 1
        elif p < 0.45:
            a, b = rng.randrange(users), zipf_choice(rng, users)
            if a != b:
                assert c.execute_command("FEED.FOLLOW", a, b) == (0 if b in model.following[a] else 1)
                model.following[a].add(b)
        elif p < 0.52:
            a = rng.randrange(users)
            if model.following[a]:
                b = rng.choice(sorted(model.following[a]))
                assert c.execute_command("FEED.UNFOLLOW", a, b) == 1
                model.following[a].discard(b)
        elif p < 0.56 and all_posts:
            author, pid = rng.choice(all_posts)
            had = pid in model.posts[author]
            assert c.execute_command("FEED.DELETE", author, pid) == (1 if had else 0)
            model.delete(author, pid)
        elif p < 0.58:
            c.execute_command("FEED.MODE", zipf_choice(rng, users), rng.choice(["PUSH", "PULL", "AUTO"]))
        elif p < 0.66:
            c.execute_command("FEED.ACTIVATE", rng.randrange(users))
        elif step % check_every == 0:
            uid = rng.randrange(users)
            got = page(c, uid)
            assert got == model.timeline(uid), f"step {step}: user {uid}"
            if got and rng.random() < 0.3:
                cursor = got[-1][:2]
                assert page(c, uid, cursor) == model.timeline(uid, cursor), f"step {step}: page 2"
    return model


def test_timelines_equal_a_brute_force_merge(tmp_path):
    # Caps out of the way: the model checks the merge (caps have their own test).
    srv = Server(tmp_path / "s", "--feed-follow-backfill", "1000000", "--feed-push-max-followers", "12",
                 "--feed-inbox-max-len", "1000000", "--feed-outbox-max-len", "1000000").start()
    c = srv.client()
    # CI's size; FEEDKV_FEED_MODEL="users ops [check-every]" runs a bigger one by hand.
    size = [int(x) for x in os.environ.get("FEEDKV_FEED_MODEL", "150 6000").split()]
    users, ops = size[0], size[1]
    model = run_model(c, 11, users, ops, check_every=size[2] if len(size) > 2 else 1)
    # Every user's first pages, and a full walk for a few.
    for uid in range(users):
        assert page(c, uid) == model.timeline(uid), uid
    for uid in range(0, users, max(1, users // 5)):
        assert walk(c, uid, 7) == model.timeline(uid, count=10**9)
    info = c.info("feeds")
    assert info["feed_timeline_pages"] > 0 and info["feed_fanout_writes"] > 0
    assert info["feed_pull_authors"] > 0  # popular authors crossed the push limit
    srv.stop()


def test_paging_through_posts_sharing_one_ts_never_repeats_or_skips(tmp_path):
    srv = Server(tmp_path / "s", "--feed-inbox-max-len", "1000", "--feed-outbox-max-len", "1000").start()
    c = srv.client()
    c.execute_command("FEED.FOLLOW", 1, 2)  # user 1 reads from an inbox
    c.execute_command("FEED.ACTIVATE", 1)
    c.execute_command("FEED.FOLLOW", 3, 2)  # user 3 has none: pulls
    for pid in rng_order(1000):
        c.execute_command("FEED.PUBLISH", 2, pid, 5000)
    for uid in (1, 3):
        assert walk(c, uid, 9) == [(5000, pid, 2) for pid in range(1000, 0, -1)], uid
        newer = c.execute_command("FEED.TIMELINE", uid, "AFTER", "5000-500", "COUNT", 3)
        assert newer == [["5000-503", 2], ["5000-502", 2], ["5000-501", 2]]
    srv.stop()


def rng_order(n):
    ids = list(range(1, n + 1))
    random.Random(3).shuffle(ids)
    return ids


def test_restart_and_replica_serve_identical_timelines(tmp_path):
    master = Server(tmp_path / "m", "--appendonly", "yes", "--feed-push-max-followers", "10").start()
    replica = Server(tmp_path / "r", "--feed-push-max-followers", "10")
    replica.start("--replicaof", "127.0.0.1", str(master.port))
    wait_until(lambda: replica.info("replication").get("master_link_status") == "up",
               timeout=30, what="the replica's link")
    c = master.client()
    users = 80
    run_model(c, 5, users, 2500, check_every=5)
    pages = {uid: page(c, uid, count=50) for uid in range(users)}
    m_off = master.info("replication")["master_repl_offset"]
    wait_until(lambda: replica.info("replication").get("slave_repl_offset") == m_off,
               timeout=30, what="the replica to catch up")
    rc = replica.client()
    assert {uid: page(rc, uid, count=50) for uid in range(users)} == pages
    assert digest(replica) == digest(master)
    before = digest(master)
    ttl = c.pttl("feed:{0}:inbox")
    master.stop()
    master.start()
    c = master.client()
    assert {uid: page(c, uid, count=50) for uid in range(users)} == pages
    assert digest(master) == before
    if ttl > 0:  # the inbox's idle expiry was logged as PEXPIREAT: it survives
        assert 0 < c.pttl("feed:{0}:inbox") <= ttl
    replica.stop()
    master.stop()


def test_errors_keys_and_info(tmp_path):
    srv = Server(tmp_path / "s").start()
    c = srv.client()
    with pytest.raises(redis.ResponseError, match=BAD_ID):
        c.execute_command("FEED.TIMELINE", 1, "BEFORE", "12x")
    with pytest.raises(redis.ResponseError, match=BAD_ID):
        c.execute_command("FEED.MARKREAD", 1, "5")
    with pytest.raises(redis.ResponseError, match="not an integer"):
        c.execute_command("FEED.FOLLOW", "bob", 2)
    with pytest.raises(redis.ResponseError, match="syntax error"):
        c.execute_command("FEED.MODE", 1, "SOMETIMES")
    c.set("feed:{9}:outbox", "x")
    with pytest.raises(redis.ResponseError, match="WRONGTYPE"):
        c.execute_command("FEED.PUBLISH", 9, 1, 1)
    assert c.execute_command("FEED.FOLLOW", 1, 2) == 1
    assert c.execute_command("FEED.FOLLOW", 1, 2) == 0
    assert c.execute_command("FEED.PUBLISH", 2, 77, 1000) == 0  # no inbox yet: nothing written
    assert c.execute_command("FEED.PUBLISH", 2, 77, 1000) == 0  # and a repeat is a no-op
    assert c.execute_command("FEED.ACTIVATE", 1) == 1
    assert c.execute_command("FEED.PUBLISH", 2, 78, 1001) == 1
    assert c.type("feed:{1}:inbox") == "feed" and c.object("encoding", "feed:{1}:inbox") == "timeline"
    assert c.type("feed:{1}:following") == "set" and c.smembers("feed:{2}:followers") == {"1"}
    assert c.ttl("feed:{1}:inbox") > 29 * 86400
    assert c.execute_command("FEED.UNREAD", 1) == 2
    assert c.execute_command("FEED.MARKREAD", 1, "1000-77") == "OK"
    assert c.execute_command("FEED.MARKREAD", 1, "999-1") == "OK"  # never moves back
    assert c.execute_command("FEED.UNREAD", 1) == 1
    info = c.execute_command("FEED.INFO", 1)
    info = dict(zip(info[::2], info[1::2]))
    assert info["following"] == 1 and info["inbox_len"] == 2 and info["read_mark"] == "1000-77"
    assert c.execute_command("FEED.DELETE", 2, 78) == 1
    assert page(c, 1) == [(1000, 77, 2)]
    assert c.execute_command("FEED.UNFOLLOW", 1, 2) == 1
    assert page(c, 1) == []
    assert c.command_getkeys("FEED.TIMELINE", "42") == ["42"]
    srv.stop()


def test_a_reused_key_gets_one_error_and_no_half_done_follow(tmp_path):
    # A followers key the application reused for a string: FEED.FOLLOW/UNFOLLOW
    # answer WRONGTYPE once (not an error followed by a count) and change neither set.
    srv = Server(tmp_path / "s").start()
    c = RawConn(srv.port)
    c.cmd("SET", "feed:{2}:followers", "x")
    for cmd in (["FEED.FOLLOW", 1, 2], ["FEED.UNFOLLOW", 1, 2]):
        reply = c.cmd(*cmd)
        assert isinstance(reply, RespError) and str(reply).startswith("WRONGTYPE"), reply
        assert c.cmd("PING") == "PONG"  # nothing else was queued behind the error
    assert c.cmd("EXISTS", "feed:{1}:following") == 0
    assert c.cmd("GET", "feed:{2}:followers") == b"x"
    # The global pull-authors key reused: the post is still published.
    c.cmd("SET", "feed:pull-authors", "y")
    c.cmd("FEED.MODE", 5, "PULL")
    assert c.cmd("FEED.PUBLISH", 5, 1, 1000) == 0
    assert c.cmd("PING") == "PONG"
    assert c.cmd("EXISTS", "feed:{5}:outbox") == 1
    c.close()
    srv.stop()


def test_watch_sees_the_keys_a_feed_command_changes(tmp_path):
    srv = Server(tmp_path / "s").start()
    a, b = srv.client(), srv.client()
    a.execute_command("FEED.FOLLOW", 1, 2)
    a.execute_command("FEED.ACTIVATE", 1)

    def watched_exec(key, change):
        with a.pipeline(transaction=True) as p:
            p.watch(key)
            b.execute_command(*change)
            p.multi()
            p.exists(key)
            try:
                return p.execute()
            except redis.WatchError:
                return "aborted"

    # A fan-out changes the follower's inbox; a repeat publish changes nothing.
    assert watched_exec("feed:{1}:inbox", ["FEED.PUBLISH", 2, 10, 100]) == "aborted"
    assert watched_exec("feed:{1}:inbox", ["FEED.PUBLISH", 2, 10, 100]) == [1]
    assert watched_exec("feed:{2}:followers", ["FEED.FOLLOW", 3, 2]) == "aborted"
    assert watched_exec("feed:{2}:followers", ["FEED.FOLLOW", 3, 2]) == [1]
    assert watched_exec("feed:{1}:mark", ["FEED.MARKREAD", 1, "100-10"]) == "aborted"
    assert watched_exec("feed:{2}:outbox", ["FEED.TIMELINE", 2]) == [1]
    srv.stop()
