"""Persistence end to end: real processes, real files, kill -9.

- crash recovery under appendfsync always (every acknowledged write survives
  SIGKILL at random moments; the state equals a model's) and everysec (at
  most ~1 s lost);
- a torn last write cut at every byte; a flipped byte refuses start-up and
  feedkv-check-aof finds and fixes it;
- snapshot round trips (DEBUG RELOAD, SAVE, BGSAVE) of every type, checked
  with DEBUG DIGEST and feedkv-check-rdb;
- BGREWRITEAOF + segment retirement, then restart;
- a full disk (RLIMIT_FSIZE) turns writes into -MISCONF until it recovers,
  reads go on, and nothing acknowledged is lost.

Families whose commands are not implemented yet (SADD, LSADD, COUNTER.*)
are skipped with the reason when the server answers "unknown command".
"""

import copy
import os
import random
import shutil
import threading
import time

import pytest
import redis

from persist_util import Server, command_available, digest, kill_all, run_tool, wait_until

ROUNDS = int(os.environ.get("FEEDKV_CRASH_ROUNDS", "20"))
FAMILY_PROBES = {
    "sets": ("SADD", "probe:set", "x"),
    "longset": ("LSADD", "probe:ls", "1"),
    "counters": ("COUNTER.INCRBY", "probe-space", "1", "f", "1"),
}


@pytest.fixture(autouse=True)
def _no_leftover_servers():
    yield
    kill_all()


def now_ms():
    return int(time.time() * 1000)


# ---------------------------------------------------------------------------
# A writer with a model of what it was told succeeded
# ---------------------------------------------------------------------------

class Writer(threading.Thread):
    """Sequential writes on keys "w<n>:*"; model = acknowledged state."""

    def __init__(self, n, port, families, rng):
        super().__init__(daemon=True)
        self.n, self.port, self.families, self.rng = n, port, families, rng
        self.p = f"w{n}:"
        self.space = f"w{n}sp"
        # key -> ("string", value, expire window or None) / ("set", frozenset)
        self.model = {}
        self.counters = {}  # (id, field) -> value
        self.inflight = None  # (model after, counters after) of the unanswered op
        self.acked = 0
        self.tmp_seq = 0
        self.stop_flag = False

    def reconnect(self, port):
        self.port = port
        self.stop_flag = False
        self.inflight = None
        threading.Thread.__init__(self, daemon=True)

    def next_op(self):
        r = self.rng
        m = copy.deepcopy(self.model)
        cnt = dict(self.counters)
        kinds = ["set", "incr", "expire", "tmp"]
        kinds += [f for f in self.families]
        kind = r.choice(kinds)
        if kind == "set":
            k = f"{self.p}s{r.randrange(20)}"
            v = f"v{r.randrange(10**9)}"
            m[k] = ("string", v, None)
            return ["SET", k, v], m, cnt, None
        if kind == "incr":
            k = f"{self.p}i{r.randrange(5)}"
            old = m.get(k, ("string", "0", None))
            m[k] = ("string", str(int(old[1]) + 1), old[2])
            return ["INCR", k], m, cnt, None
        if kind == "expire":
            strings = [k for k in m if k.startswith(f"{self.p}s") and m[k][0] == "string"]
            if not strings:
                return self.next_op()
            k = r.choice(strings)
            return ["EXPIRE", k, "100000"], m, cnt, k  # window filled in at send time
        if kind == "tmp":
            # A key that expires at once and is never touched again: the
            # expiry reaches the log as a DEL.
            self.tmp_seq += 1
            k = f"{self.p}t{self.tmp_seq}"
            return ["SET", k, "x", "PX", "20"], m, cnt, None
        if kind == "sets":
            k = f"{self.p}set{r.randrange(5)}"
            members = {f"m{r.randrange(50)}" for _ in range(r.randrange(1, 4))}
            old = m.get(k, ("set", frozenset()))
            m[k] = ("set", frozenset(old[1] | members))
            return ["SADD", k] + sorted(members), m, cnt, None
        if kind == "longset":
            k = f"{self.p}ls{r.randrange(5)}"
            members = {str(r.randrange(-10**12, 10**12)) for _ in range(r.randrange(1, 4))}
            old = m.get(k, ("set", frozenset()))
            m[k] = ("set", frozenset(old[1] | members))
            return ["LSADD", k] + sorted(members), m, cnt, None
        if kind == "counters":
            cid, field, delta = r.randrange(1, 30), r.choice(["like", "read"]), r.randrange(1, 100)
            cnt[(cid, field)] = cnt.get((cid, field), 0) + delta
            return ["COUNTER.INCRBY", self.space, str(cid), field, str(delta)], m, cnt, None
        raise AssertionError(kind)

    def run(self):
        c = redis.Redis(host="127.0.0.1", port=self.port, decode_responses=True, socket_timeout=30)
        try:
            while not self.stop_flag:
                cmd, m, cnt, expire_key = self.next_op()
                if expire_key is not None:
                    lo = now_ms() + 100000 * 1000
                    m[expire_key] = (m[expire_key][0], m[expire_key][1], (lo, None))
                self.inflight = (m, cnt)
                reply = c.execute_command(*cmd)
                if expire_key is not None:
                    assert reply == 1
                    lo = m[expire_key][2][0]
                    m[expire_key] = (m[expire_key][0], m[expire_key][1], (lo, now_ms() + 100000 * 1000))
                self.model, self.counters = m, cnt
                self.inflight = None
                self.acked += 1
        except (redis.ConnectionError, redis.TimeoutError, OSError):
            pass
        finally:
            c.close()

    # -- verification --

    def observe(self, c):
        state = {}
        for k in c.scan_iter(match=f"{self.p}*", count=1000):
            t = c.type(k)
            if t == "string":
                exp = c.execute_command("PEXPIRETIME", k)
                state[k] = ("string", c.get(k), None if exp == -1 else exp)
            elif t == "set":
                state[k] = ("set", frozenset(c.smembers(k)))
            elif t != "none":  # "none": expired between SCAN and TYPE
                state[k] = (t,)
        counters = {}
        if "counters" in self.families:
            for cid in range(1, 30):
                for field in ("like", "read"):
                    v = c.execute_command("COUNTER.GET", self.space, str(cid), field)
                    v = int(v[0] if isinstance(v, list) else v)
                    if v:
                        counters[(cid, field)] = v
        return state, counters

    @staticmethod
    def key_matches(got, want):
        if got is None or want[0] != got[0]:
            return False
        if want[0] != "string":
            return got == want
        if got[1] != want[1]:
            return False
        window = want[2]
        if window is None:
            return got[2] is None
        return got[2] is not None and window[0] <= got[2] and (window[1] is None or got[2] <= window[1])

    @classmethod
    def matches(cls, state, counters, model, model_counters):
        if counters != model_counters or set(state) != set(model):
            return False
        return all(cls.key_matches(state[k], want) for k, want in model.items())

    def verify(self, c):
        """Checks the server against the model; adopts the in-flight op if
        the server has it. Returns an error text or None."""
        state, counters = self.observe(c)
        if self.matches(state, counters, self.model, self.counters):
            return None
        if self.inflight is not None and self.matches(state, counters, *self.inflight):
            self.model, self.counters = self.inflight
            # An EXPIRE in flight has no upper bound yet: take what the server has.
            for k, v in self.model.items():
                if v[0] == "string" and v[2] is not None and v[2][1] is None:
                    self.model[k] = (v[0], v[1], (state[k][2], state[k][2]))
            return None
        missing = {k: (v, state.get(k)) for k, v in self.model.items()
                   if not self.key_matches(state.get(k), v)}
        extra = set(state) - set(self.model)
        return (f"writer {self.n}: state differs from the model after {self.acked} acked writes; "
                f"model-vs-server {sorted(missing.items())[:5]}, unexpected keys {sorted(extra)[:5]}, "
                f"counters equal: {counters == self.counters}")


def available_families(srv, families):
    c = srv.client()
    try:
        missing = [f for f in families if not command_available(c, *FAMILY_PROBES[f])]
        # Leave no probe keys behind (they are not part of any model).
        c.execute_command("DEL", "probe:set", "probe:ls")
    finally:
        c.close()
    return missing


@pytest.mark.parametrize("family", ["strings", "sets", "longset", "counters"])
def test_crash_appendfsync_always_loses_no_acknowledged_write(tmp_path, family):
    families = [] if family == "strings" else [family]
    srv = Server(tmp_path / "data", fsync="always")
    srv.start()
    missing = available_families(srv, families)
    if missing:
        srv.kill9()
        pytest.skip(f"{missing[0]}: the server answers 'unknown command' to "
                    f"{FAMILY_PROBES[missing[0]][0]} (family not implemented yet)")
    if family == "counters":
        c = srv.client()
        c.execute_command("COUNTER.DROP", "probe-space")
        c.config_set("counter-table-size", "1mb")
        for n in range(2):
            c.execute_command("COUNTER.CREATE", f"w{n}sp", "like:20", "read:32")
        c.close()
    rng = random.Random(1234 + len(family))
    writers = [Writer(n, srv.port, families, random.Random(rng.random())) for n in range(2)]
    for rnd in range(ROUNDS):
        for w in writers:
            if rnd > 0:
                w.reconnect(srv.port)
            w.start()
        time.sleep(rng.uniform(0.05, 0.5))
        srv.kill9()
        for w in writers:
            w.stop_flag = True
            w.join(timeout=30)
        srv.start()
        # "tmp" keys live 20 ms (SET PX 20). A restart can now finish within 20 ms of
        # the crash, and a key written just before it is then rightly still alive:
        # wait until every such key's absolute expiry has passed.
        time.sleep(0.05)
        c = srv.client()
        for w in writers:
            err = w.verify(c)
            assert err is None, f"round {rnd}: {err}\n{srv.log_tail()}"
        c.close()
    assert sum(w.acked for w in writers) > 100 * ROUNDS // 20
    srv.stop()


def test_crash_everysec_loses_at_most_the_last_second(tmp_path):
    srv = Server(tmp_path / "data", fsync="everysec")
    srv.start()
    acked_at = []  # ack time of the i-th INCR (value i+1)
    for rnd in range(5):
        c = srv.client()
        base = int(c.get("seq") or 0)
        del acked_at[base:]  # writes lost in the last round are not in the model
        stop = time.monotonic() + random.uniform(0.3, 1.5)
        while time.monotonic() < stop:
            c.incr("seq")
            acked_at.append(now_ms())
        kill_time = now_ms()
        srv.kill9()
        c.close()
        srv.start()
        c = srv.client()
        got = int(c.get("seq") or 0)
        c.close()
        lost = acked_at[got:]
        assert all(t > kill_time - 1500 for t in lost), f"lost writes older than 1 s: {len(lost)}"
        assert got <= len(acked_at)
    srv.stop()


# ---------------------------------------------------------------------------
# Torn tail and corruption
# ---------------------------------------------------------------------------

def last_group_start(data):
    """Offset where the final group begins (after the previous trailer)."""
    end = data.rfind(b"#xxh64:")
    prev = data.rfind(b"#xxh64:", 0, end)
    return 0 if prev < 0 else prev + 25


def test_torn_tail_cut_at_every_byte_of_the_last_record(tmp_path):
    srv = Server(tmp_path / "orig", fsync="always")
    srv.start()
    c = srv.client()
    for i in range(50):
        c.set(f"k{i}", f"v{i}")
        c.incr("n")
    prefix = digest(srv)
    c.set("last", "value")
    full = digest(srv)
    srv.kill9()
    seg = srv.segments()[-1]
    data = open(seg, "rb").read()
    start = last_group_start(data)
    assert data[start:start + 1] == b"*"
    work = tmp_path / "work"
    for cut in list(range(start, len(data) + 1)):
        shutil.rmtree(work, ignore_errors=True)
        shutil.copytree(srv.dir, work)
        os.remove(work / "server.log")
        wseg = work / "appendonlydir" / os.path.basename(seg)
        os.truncate(wseg, cut)
        s2 = Server(work, fsync="always")
        s2.start()
        d = digest(s2)
        s2.kill9()
        if cut == len(data):
            assert d == full
        else:
            assert d == prefix, f"cut at {cut}: state is not the prefix"
            if cut > start:
                assert "torn last write" in s2.log_text()
                assert os.path.getsize(wseg) == start
    # With aof-load-truncated no, a torn tail stops start-up.
    os.truncate(seg, len(data) - 3)
    srv.start("--aof-load-truncated", "no", expect_ok=False)
    assert srv.wait_exit() != 0
    assert "Truncated AOF" in srv.log_text()


def test_flipped_byte_refuses_start_and_check_tool_finds_it(tmp_path):
    srv = Server(tmp_path / "data", fsync="always")
    srv.start()
    c = srv.client()
    for i in range(40):
        c.set(f"key{i}", f"some-value-{i}")
    srv.kill9()
    seg = srv.segments()[-1]
    data = bytearray(open(seg, "rb").read())
    at = data.find(b"some-value-20")
    data[at + 5] ^= 0x01
    open(seg, "wb").write(bytes(data))
    group_start = data.rfind(b"#xxh64:", 0, at) + 25

    srv.start(expect_ok=False)
    assert srv.wait_exit() != 0
    log = srv.log_text()
    assert "appendonly.aof.000001" in log and f"offset {group_start}" in log, log[-2000:]

    r = run_tool("feedkv-check-aof", srv.aof_dir)
    assert r.returncode == 1
    assert f"offset {group_start}" in r.stdout, r.stdout
    r = run_tool("feedkv-check-aof", "--fix", srv.aof_dir)
    assert r.returncode == 0, r.stdout + r.stderr
    assert run_tool("feedkv-check-aof", srv.aof_dir).returncode == 0

    srv.start()
    c = srv.client()
    assert c.get("key19") == "some-value-19"
    assert c.get("key20") is None
    srv.stop()


# ---------------------------------------------------------------------------
# Snapshots
# ---------------------------------------------------------------------------

def populate_every_type(c):
    c.set("str", "hello")
    c.set("int", 12345)
    c.set("raw", "x" * 1000)
    c.set("bin", b"\x00\x01\r\n\xff".decode("latin-1"))
    c.set("ttl", "soon", ex=100000)
    for i in range(200):
        c.set(f"many:{i}", i)
    kinds = ["strings"]
    if command_available(c, "SADD", "set:str", "a", "b", "c"):
        c.sadd("set:int", *range(1000))
        c.sadd("set:big", *range(-10**15, -10**15 + 100))
        c.pexpire("set:int", 10**9)
        kinds.append("sets")
    if command_available(c, "LSADD", "ls:1", "1", "2", "3"):
        kinds.append("longset")
    # Small tables: several tables (and a roll) with few keys.
    c.config_set("counter-table-size", "1mb")
    if command_available(c, "COUNTER.CREATE", "post", "repost:20", "comment:20", "like:24", "read:32"):
        for i in range(1, 500):
            c.execute_command("COUNTER.INCRBY", "post", i, "like", i)
        c.execute_command("COUNTER.INCRBY", "post", 7, "repost", 2 ** 21)  # aux dict
        kinds.append("counters")
    return kinds


def test_snapshot_round_trip_of_every_type(tmp_path):
    srv = Server(tmp_path / "data", appendonly=False)
    srv.start()
    c = srv.client()
    kinds = populate_every_type(c)
    d0 = c.execute_command("DEBUG", "DIGEST")
    assert d0 != "0" * 40 and len(d0) == 40
    assert c.execute_command("DEBUG", "RELOAD") == "OK"
    assert c.execute_command("DEBUG", "DIGEST") == d0
    assert c.execute_command("DEBUG", "DIGEST-VALUE", "str", "nokey") != ["0" * 40, "0" * 40]
    assert c.execute_command("DEBUG", "DIGEST-VALUE", "nokey") == ["0" * 40]
    assert c.save()
    last = c.lastsave()
    srv.stop()
    r = run_tool("feedkv-check-rdb", os.path.join(srv.dir, "dump.rdb"))
    assert r.returncode == 0, r.stdout + r.stderr
    srv.start()
    c = srv.client()
    assert c.execute_command("DEBUG", "DIGEST") == d0, f"kinds {kinds}"
    assert c.lastsave() >= last
    if "sets" in kinds:
        assert c.object("encoding", "set:int") == "longset"
    c.set("after", "1")
    assert c.bgsave()
    wait_until(lambda: srv.info()["rdb_bgsave_in_progress"] == 0 and srv.info()["rdb_saves"] >= 1,
               what="bgsave")
    d1 = c.execute_command("DEBUG", "DIGEST")
    srv.kill9()
    srv.start()
    assert digest(srv) == d1
    srv.stop()


def test_check_rdb_detects_damage(tmp_path):
    srv = Server(tmp_path / "data", appendonly=False)
    srv.start()
    c = srv.client()
    populate_every_type(c)
    c.save()
    srv.stop()
    path = os.path.join(srv.dir, "dump.rdb")
    data = bytearray(open(path, "rb").read())
    data[len(data) // 2] ^= 0x40
    open(path, "wb").write(bytes(data))
    r = run_tool("feedkv-check-rdb", path)
    assert r.returncode == 1 and "damaged" in r.stdout
    srv.start(expect_ok=False)
    assert srv.wait_exit() != 0
    assert "dump.rdb" in srv.log_text()


def test_bgrewriteaof_retires_segments_and_restart_loses_nothing(tmp_path):
    srv = Server(tmp_path / "data", "--aof-segment-size", "4kb", "--aof-retain-segments", "1",
                 fsync="everysec")
    srv.start()
    c = srv.client()
    for i in range(600):
        c.set(f"k{i}", "v" * 50)
    info = srv.info()
    assert info["aof_segment_id"] > 5
    assert info["aof_offset"] == info["aof_first_offset"] + info["aof_current_size"]
    assert c.bgrewriteaof()
    wait_until(lambda: srv.info()["aof_rewrites"] >= 1, what="rewrite")
    snap_seg = srv.info()["rdb_snapshot_aof_segment"]
    # Retirement follows the rewrite on the writer thread; one segment is kept.
    wait_until(lambda: srv.info()["aof_first_segment_id"] == snap_seg - 1, what="retirement")
    info = srv.info()
    wait_until(lambda: len(srv.segments()) == info["aof_segments"], what="segment files removed")
    for i in range(600, 700):
        c.set(f"k{i}", "w" * 50)
    c.delete("k0")
    d = c.execute_command("DEBUG", "DIGEST")
    # everysec acknowledges before the writer thread's write(): let it catch up.
    wait_until(lambda: srv.info()["aof_written_offset"] == srv.info()["aof_offset"], what="write")
    srv.kill9()
    srv.start()
    assert digest(srv) == d
    assert "replayed from" in srv.log_text()
    srv.stop()


def test_info_persistence_reports_the_position(tmp_path):
    srv = Server(tmp_path / "data", fsync="always")
    srv.start()
    c = srv.client()
    before = srv.info()
    c.set("a", "1")
    after = srv.info()
    assert after["aof_enabled"] == 1
    assert after["aof_offset"] > before["aof_offset"]
    assert after["aof_durable_offset"] == after["aof_offset"]
    assert after["aof_segment_id"] == 1
    assert after["aof_segment_offset"] == after["aof_offset"]
    assert after["aof_last_write_status"] == "ok"
    assert os.path.getsize(srv.segments()[-1]) == after["aof_segment_offset"]
    srv.stop()


# ---------------------------------------------------------------------------
# Full disk
# ---------------------------------------------------------------------------

def test_full_disk_gives_misconf_until_it_recovers(tmp_path):
    srv = Server(tmp_path / "data", fsync="always")
    srv.start()
    c = srv.client()
    c.set("before", "1")
    srv.fill_disk()
    result = {}

    def blocked_write():
        try:
            result["reply"] = srv.client().set("held", "x" * 100)
        except Exception as e:  # noqa: BLE001
            result["reply"] = e

    t = threading.Thread(target=blocked_write)
    t.start()
    wait_until(lambda: srv.info()["aof_last_write_status"] == "err", what="write error")
    with pytest.raises(redis.ResponseError, match="MISCONF"):
        c.set("refused", "1")
    assert c.get("before") == "1"  # reads go on
    assert t.is_alive(), "the write whose record is not durable is not acknowledged"
    srv.free_disk()
    t.join(timeout=10)
    assert result.get("reply") is True
    wait_until(lambda: srv.info()["aof_last_write_status"] == "ok", what="recovery")
    c.set("after", "1")
    srv.kill9()
    srv.start()
    c = srv.client()
    assert c.get("held") == "x" * 100 and c.get("after") == "1" and c.get("refused") is None
    srv.stop()


def test_save_points_trigger_a_background_save(tmp_path):
    srv = Server(tmp_path / "data", appendonly=False)
    srv.base_args = ["--save", "1 1"]
    srv.start()
    c = srv.client()
    c.set("a", "1")
    wait_until(lambda: srv.info()["rdb_saves"] >= 1, timeout=15, what="automatic save")
    assert srv.info()["rdb_changes_since_last_save"] == 0
    srv.kill9()
    srv.start()
    assert srv.client().get("a") == "1"
    srv.stop()
