"""Acknowledged means logged: kill -9 under every appendfsync policy, with
transactions and big values, loses no write whose reply was received.

Redis writes the AOF before it replies, so a process kill loses nothing
under any policy (only an OS crash may lose up to a second under everysec,
or more under no); feedkv must match that. Each round runs writers that keep
the server busy (MULTI/EXEC batches, pipelines of 16 KB values, one large
EXEC), kills the server at a random moment, restarts it and checks that every
acknowledged write is there with its value.

Also here: SHUTDOWN's SAVE / NOSAVE / ABORT, a SIGTERM whose final save fails
(the server stays up), and start-up clean-up of temporary files.
"""

import os
import random
import signal
import socket
import threading
import time

import pytest
import redis

from conftest import encode_command, is_real_redis
from persist_util import Server, kill_all, run_tool, wait_until

# Redis is killed by SIGXFSZ when RLIMIT_FSIZE is hit (it does not ignore the
# signal) and exits on an AOF write error under always, and its files are laid
# out differently; these checks are feedkv's own.
feedkv_only = pytest.mark.skipif(is_real_redis(), reason="feedkv's files, tools or full-disk handling")

ROUNDS = int(os.environ.get("FEEDKV_DURABILITY_ROUNDS", "3"))
BIG = 16 * 1024


@pytest.fixture(autouse=True)
def _no_leftover_servers():
    yield
    reports = kill_all()
    assert not reports, f"sanitizer or crash report in the server log: {reports}"


def value_for(key, size):
    """A value that names its key, so a value stored under another key is caught."""
    head = f"{key}|".encode()
    return (head * (size // len(head) + 1))[:size]


class AckedWriter(threading.Thread):
    """Writes until stopped; `acked` holds (key, size) of every write whose
    reply arrived. mode: "exec" (MULTI/EXEC of `batch` SETs), "pipeline"
    (non-transactional pipelines), or "bigexec" (one EXEC of many SETs)."""

    def __init__(self, name, port, mode, batch, size):
        super().__init__(daemon=True)
        self.name_, self.port, self.mode, self.batch, self.size = name, port, mode, batch, size
        self.acked = []
        self.stop_flag = False
        self.seq = 0
        self.error = None

    def run(self):
        c = redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=60)
        try:
            while not self.stop_flag:
                keys = [f"{self.name_}:{self.seq + i}" for i in range(self.batch)]
                self.seq += self.batch
                p = c.pipeline(transaction=self.mode in ("exec", "bigexec"))
                for k in keys:
                    p.set(k, value_for(k, self.size))
                p.execute()
                self.acked.extend((k, self.size) for k in keys)
                if self.mode == "bigexec":
                    return
        except (redis.ConnectionError, redis.TimeoutError, ConnectionResetError, OSError):
            return  # the kill
        except Exception as e:  # noqa: BLE001 - reported by the test
            self.error = e


def missing_writes(srv, acked):
    c = redis.Redis(host="127.0.0.1", port=srv.port, socket_timeout=60)
    lost = []
    try:
        for i in range(0, len(acked), 500):
            chunk = acked[i:i + 500]
            got = c.mget([k for k, _ in chunk])
            for (k, size), v in zip(chunk, got):
                if v != value_for(k, size):
                    lost.append(k)
    finally:
        c.close()
    return lost


@pytest.mark.parametrize("fsync", ["always", "everysec", "no"])
def test_kill9_loses_no_acknowledged_write(tmp_path, fsync):
    srv = Server(tmp_path / "data", fsync=fsync)
    srv.start()
    rng = random.Random(hash(fsync) & 0xffff)
    acked = []
    for rnd in range(ROUNDS):
        writers = [
            AckedWriter(f"r{rnd}tx", srv.port, "exec", 20, 64),
            AckedWriter(f"r{rnd}big", srv.port, "pipeline", 32, BIG),
            AckedWriter(f"r{rnd}bigtx", srv.port, "exec", 8, BIG),
        ]
        for w in writers:
            w.start()
        time.sleep(rng.uniform(0.3, 1.0))
        srv.kill9()
        for w in writers:
            w.stop_flag = True
            w.join(timeout=60)
            assert w.error is None, f"{w.name_}: {w.error!r}"
            acked.extend(w.acked)
        srv.start()
        lost = missing_writes(srv, acked)
        assert not lost, (f"round {rnd} ({fsync}): {len(lost)} of {len(acked)} acknowledged "
                          f"writes lost, e.g. {lost[:5]}\n{srv.log_tail()}")
    assert len(acked) > 100 * ROUNDS, "the writers barely ran: the test proves little"
    srv.stop()


@pytest.mark.parametrize("fsync", ["always", "everysec", "no"])
def test_kill9_right_after_a_large_exec_is_acknowledged(tmp_path, fsync):
    """One EXEC of 40,000 SETs (40 MB), killed the moment its reply starts to
    arrive: the reply may only start once all of it is logged."""
    srv = Server(tmp_path / "data", fsync=fsync)
    srv.start()
    n, size = 40000, 1024
    keys = [f"huge:{i}" for i in range(n)]
    payload = encode_command("MULTI") + b"".join(
        encode_command("SET", k, value_for(k, size)) for k in keys) + encode_command("EXEC")
    sock = socket.create_connection(("127.0.0.1", srv.port), timeout=120)
    sender = threading.Thread(target=sock.sendall, args=(payload,), daemon=True)
    sender.start()
    want = b"*%d\r\n" % n  # the EXEC reply's header follows the QUEUED replies
    got = bytearray()
    scanned = 0
    while got.find(want, max(0, scanned - len(want))) < 0:
        scanned = len(got)
        chunk = sock.recv(1 << 20)
        assert chunk, "the server closed the connection"
        got += chunk
    srv.kill9()
    sock.close()
    srv.start()
    lost = missing_writes(srv, [(k, size) for k in keys])
    assert not lost, f"{len(lost)} writes of an acknowledged EXEC lost\n{srv.log_tail()}"
    srv.stop()


@feedkv_only
@pytest.mark.parametrize("fsync", ["everysec", "no"])
def test_a_pipelining_client_cannot_run_the_log_writer_far_behind(tmp_path, fsync):
    """A client is not read again until its earlier replies may go out, so the
    bytes executed but not yet written stay bounded (it used to reach 70 MB)."""
    srv = Server(tmp_path / "data", fsync=fsync)
    srv.start()
    writers = [AckedWriter(f"p{i}", srv.port, "pipeline", 256, BIG) for i in range(2)]
    for w in writers:
        w.start()
    c = srv.client()
    worst = 0
    deadline = time.monotonic() + 3.0
    while time.monotonic() < deadline:
        info = c.info("persistence")
        worst = max(worst, info["aof_offset"] - info["aof_written_offset"])
        time.sleep(0.005)
    for w in writers:
        w.stop_flag = True
        w.join(timeout=60)
        assert w.error is None
    assert sum(len(w.acked) for w in writers) > 256
    assert worst < 16 << 20, f"the writer fell {worst >> 20} MB behind"
    srv.stop()


@feedkv_only
def test_exec_reply_waits_for_the_log_under_always(tmp_path):
    """While the AOF cannot be written, an EXEC's reply is held (the write is not
    acknowledged), and it arrives once the disk recovers."""
    srv = Server(tmp_path / "data", fsync="always")
    srv.start()
    c = srv.client()
    c.set("before", "1")
    srv.fill_disk()
    result = {}

    def tx():
        try:
            p = srv.client().pipeline(transaction=True)
            p.set("tx:a", "1").set("tx:b", "2")
            result["reply"] = p.execute()
        except Exception as e:  # noqa: BLE001
            result["reply"] = e

    t = threading.Thread(target=tx)
    t.start()
    wait_until(lambda: srv.info()["aof_last_write_status"] == "err", what="write error")
    time.sleep(0.3)
    assert t.is_alive(), f"EXEC acknowledged before its records were durable: {result}"
    srv.free_disk()
    t.join(timeout=10)
    assert result.get("reply") == [True, True]
    srv.kill9()
    srv.start()
    c = srv.client()
    assert c.get("tx:a") == "1" and c.get("tx:b") == "2"
    srv.stop()


def process_cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@feedkv_only
def test_full_disk_under_everysec_does_not_spin_the_writer(tmp_path):
    srv = Server(tmp_path / "data", fsync="everysec")
    srv.start()
    c = srv.client()
    c.set("before", "1")
    srv.fill_disk()
    held = threading.Thread(target=lambda: srv.client().set("held", "x" * 100), daemon=True)
    held.start()
    wait_until(lambda: srv.info()["aof_last_write_status"] == "err", what="write error")
    cpu0, t0 = process_cpu_seconds(srv.proc.pid), time.monotonic()
    time.sleep(2.0)
    used = (process_cpu_seconds(srv.proc.pid) - cpu0) / (time.monotonic() - t0)
    # A spinning writer thread uses a whole core (~1.0); retrying once a second
    # uses next to nothing.
    assert used < 0.3, f"the server used {used:.2f} CPU-seconds per second while the disk was full"
    with pytest.raises(redis.ResponseError, match="MISCONF"):
        c.set("refused", "1")
    srv.free_disk()
    held.join(timeout=10)
    assert not held.is_alive()
    srv.kill9()
    srv.start()
    assert srv.client().get("held") == "x" * 100
    srv.stop()


# ---------------------------------------------------------------------------
# SHUTDOWN and SIGTERM
# ---------------------------------------------------------------------------

def fill(srv, n, prefix="k"):
    c = srv.client()
    p = c.pipeline(transaction=False)
    for i in range(n):
        p.set(f"{prefix}{i}", i)
    p.execute()
    c.close()


def shutdown(srv, *args):
    c = srv.client()
    try:
        c.execute_command("SHUTDOWN", *args)
    except redis.ConnectionError:
        pass
    srv.wait_exit()


def test_shutdown_save_saves_without_save_points(tmp_path):
    srv = Server(tmp_path / "data", appendonly=False)  # --save ""
    srv.start()
    fill(srv, 10000)
    shutdown(srv, "SAVE")
    assert srv.proc.returncode == 0
    srv.start()
    assert srv.client().dbsize() == 10000
    srv.stop()


def test_shutdown_nosave_does_not_save_with_save_points(tmp_path):
    srv = Server(tmp_path / "data", appendonly=False)
    srv.base_args = ["--save", "3600 1"]
    srv.start()
    fill(srv, 100)
    shutdown(srv, "NOSAVE")
    assert srv.proc.returncode == 0
    assert not os.path.exists(os.path.join(srv.dir, "dump.rdb"))
    srv.start()
    assert srv.client().dbsize() == 0
    srv.stop()


def test_shutdown_arguments_as_redis(tmp_path):
    srv = Server(tmp_path / "data", appendonly=False)
    srv.start()
    c = srv.client()
    with pytest.raises(redis.ResponseError, match="^syntax error$"):
        c.execute_command("SHUTDOWN", "SAVE", "NOSAVE")
    with pytest.raises(redis.ResponseError, match="^syntax error$"):
        c.execute_command("SHUTDOWN", "ABORT", "NOW")
    with pytest.raises(redis.ResponseError, match="^syntax error$"):
        c.execute_command("SHUTDOWN", "BOGUS")
    with pytest.raises(redis.ResponseError, match="^No shutdown in progress.$"):
        c.execute_command("SHUTDOWN", "ABORT")
    assert c.ping()
    srv.stop()


def full_disk_server(tmp_path):
    """A server with save points whose snapshot cannot be written (RLIMIT_FSIZE
    below its size), and data in memory only."""
    srv = Server(tmp_path / "data", appendonly=False)
    srv.base_args = ["--save", "3600 1"]
    srv.start()
    c = srv.client()
    c.set("big", "x" * 200000)
    fill(srv, 1000)
    srv.fill_disk(4096)
    return srv


@feedkv_only
def test_sigterm_with_a_failing_final_save_keeps_serving(tmp_path):
    srv = full_disk_server(tmp_path)
    srv.proc.send_signal(signal.SIGTERM)
    wait_until(lambda: "can't exit" in srv.log_text(), what="the failed-save log line")
    time.sleep(0.2)
    assert srv.proc.poll() is None, "the server exited though its final save failed"
    c = srv.client()
    assert c.dbsize() == 1001
    c.set("after", "1")
    # Once the disk has room, the next SIGTERM saves and exits.
    srv.free_disk()
    srv.proc.send_signal(signal.SIGTERM)
    assert srv.wait_exit() == 0
    srv.start()
    assert srv.client().dbsize() == 1002
    srv.stop()


@feedkv_only
def test_shutdown_with_a_failing_save_replies_an_error_and_force_exits(tmp_path):
    srv = full_disk_server(tmp_path)
    c = srv.client()
    with pytest.raises(redis.ResponseError, match="^Errors trying to SHUTDOWN. Check logs.$"):
        c.execute_command("SHUTDOWN")
    assert c.dbsize() == 1001
    shutdown(srv, "FORCE")
    assert srv.proc.returncode == 0


# ---------------------------------------------------------------------------
# Start-up clean-up and AOF damage reports
# ---------------------------------------------------------------------------

@feedkv_only
def test_temporary_files_are_removed_at_startup(tmp_path):
    srv = Server(tmp_path / "data", fsync="everysec")
    srv.start()
    srv.client().set("a", "1")
    srv.kill9()
    junk = [os.path.join(srv.dir, "temp-12345.rdb"), os.path.join(srv.dir, "temp-bg-1-2.rdb"),
            os.path.join(srv.aof_dir, "appendonly.aof.manifest.tmp")]
    for j in junk:
        with open(j, "wb") as f:
            f.write(b"partial")
    srv.start()
    assert [j for j in junk if os.path.exists(j)] == []
    assert srv.client().get("a") == "1"
    srv.stop()


@feedkv_only
def test_flipped_final_lf_refuses_start_naming_the_bytes(tmp_path):
    """A checksum line written whole but with a changed last byte is damage, not a
    torn write: cutting its (complete, acknowledged) group would lose writes."""
    srv = Server(tmp_path / "data", fsync="always")
    srv.start()
    srv.client().set("acked", "1")
    srv.kill9()
    seg = srv.segments()[-1]
    with open(seg, "r+b") as f:
        data = f.read()
        assert data.endswith(b"\r\n")
        f.seek(len(data) - 1)
        f.write(b"X")
    srv.start(expect_ok=False)
    assert srv.wait_exit() != 0
    log = srv.log_text()
    assert "ends in 0x0d 0x58 instead of CR LF" in log, log[-2000:]
    out = run_tool("feedkv-check-aof", srv.aof_dir)
    assert out.returncode == 1 and "instead of CR LF" in out.stdout


@feedkv_only
def test_check_aof_fix_explains_dropped_segments(tmp_path):
    srv = Server(tmp_path / "data", "--aof-segment-size", "1024", fsync="always")
    srv.start()
    c = srv.client()
    for i in range(200):
        c.set(f"k{i}", "v" * 50)
    srv.kill9()
    segs = srv.segments()
    assert len(segs) >= 3
    with open(segs[0], "r+b") as f:  # damage the first segment
        f.seek(40)
        b = f.read(1)
        f.seek(40)
        f.write(bytes([b[0] ^ 0x01]))
    out = run_tool("feedkv-check-aof", "--fix", srv.aof_dir)
    assert out.returncode == 0, out.stdout + out.stderr
    assert ".dropped" in out.stdout and "To recover them" in out.stdout, out.stdout
    named = [line.split("-> ")[1].strip() for line in out.stdout.splitlines() if "-> " in line]
    assert named and all(os.path.exists(os.path.join(srv.aof_dir, n)) for n in named), named


# ---------------------------------------------------------------------------
# Snapshot bookkeeping
# ---------------------------------------------------------------------------

def test_a_save_point_forks_once(tmp_path):
    srv = Server(tmp_path / "data", fsync="everysec")
    srv.base_args += ["--save", "1 1"]
    srv.start()
    c = srv.client()
    c.set("a", "1")
    wait_until(lambda: srv.info()["rdb_saves"] >= 1, timeout=15, what="the automatic save")
    time.sleep(1.0)
    stats = srv.info("stats")
    assert stats["total_forks"] == 1, stats["total_forks"]
    assert stats["latest_fork_usec"] > 0
    assert srv.info()["rdb_changes_since_last_save"] == 0
    srv.stop()


@feedkv_only
def test_a_failed_aof_rewrite_does_not_refuse_writes(tmp_path):
    """Redis answers MISCONF only after a failed BGSAVE or AOF write; a failed
    rewrite loses nothing (the log goes on)."""
    srv = Server(tmp_path / "data", "--aof-segment-size", "1024", fsync="always")
    srv.base_args += ["--save", "3600 1"]
    srv.start()
    c = srv.client()
    p = c.pipeline(transaction=False)
    for i in range(2000):
        p.set(f"key:{i}", "v" * 100)
    p.execute()
    # Segments stay near 1 KB; the snapshot of 2000 keys does not fit in 64 KB.
    srv.fill_disk(64 * 1024)
    c.bgrewriteaof()
    wait_until(lambda: srv.info()["aof_last_bgrewrite_status"] == "err", timeout=15,
               what="the rewrite to fail")
    assert srv.info()["rdb_last_bgsave_status"] == "ok"
    assert c.set("after", "1") is True
    srv.free_disk()
    srv.kill9()
    srv.start()
    assert srv.client().get("after") == "1"
    srv.stop()
