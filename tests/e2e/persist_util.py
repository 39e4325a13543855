"""Helpers for the persistence end-to-end tests: feedkv-server processes
that keep their --dir across restarts and can be killed with SIGKILL.

The binary is $FEEDKV_SERVER (ctest sets it) or <repo>/build/feedkv-server;
tools come from $FEEDKV_TOOLS_DIR (or <repo>/build).
"""

import os
import pathlib
import resource
import signal
import socket
import subprocess
import time

import redis

REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]


def server_binary():
    return os.environ.get("FEEDKV_SERVER") or str(REPO_ROOT / "build" / "feedkv-server")


def tool(name):
    return os.path.join(os.environ.get("FEEDKV_TOOLS_DIR") or str(REPO_ROOT / "build"), name)


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until(pred, timeout=10.0, what="condition"):
    deadline = time.monotonic() + timeout
    while True:
        v = pred()
        if v:
            return v
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.01)


LIVE = []  # every Server started, so a failing test leaves no process behind


SANITIZER_MARKERS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:",
                     "Segmentation fault", "terminate called")


def kill_all():
    """Kills every server started; returns the sanitizer or crash reports
    found in their logs (empty when none)."""
    reports = []
    for s in LIVE:
        s.kill9()
        text = s.log_text()
        reports += [f"{s.log_path}: {m}" for m in SANITIZER_MARKERS if m in text]
    LIVE.clear()
    return reports


class Server:
    """One feedkv-server on a free port with a fixed data dir.

    start() / kill9() / stop() may be called repeatedly; the dir (and so the
    AOF and snapshot) survives. `args` are extra --name value arguments.
    """

    def __init__(self, data_dir, *args, appendonly=True, fsync="always"):
        self.dir = str(data_dir)
        os.makedirs(self.dir, exist_ok=True)
        # DEBUG DIGEST / RELOAD check round trips; both servers refuse DEBUG by default.
        self.base_args = ["--save", "", "--enable-debug-command", "yes"]
        if appendonly:
            self.base_args += ["--appendonly", "yes", "--appendfsync", fsync]
        self.base_args += list(args)
        self.proc = None
        self.port = None
        self.log_path = os.path.join(self.dir, "server.log")
        self.starts = 0

    @property
    def aof_dir(self):
        return os.path.join(self.dir, "appendonlydir")

    def segments(self):
        names = sorted(n for n in os.listdir(self.aof_dir)
                       if n.startswith("appendonly.aof.") and n[-1].isdigit())
        return [os.path.join(self.aof_dir, n) for n in names]

    def start(self, *extra, expect_ok=True, timeout=30.0, port=None):
        self.port = port or free_port()
        self.starts += 1
        with open(self.log_path, "a") as log:
            log.write(f"\n=== start {self.starts} ===\n")
        log = open(self.log_path, "a")
        cmd = [server_binary(), "--port", str(self.port), "--dir", self.dir,
               "--bind", "127.0.0.1"] + self.base_args + list(extra)
        self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
        log.close()
        if self not in LIVE:
            LIVE.append(self)
        if not expect_ok:
            return self
        deadline = time.monotonic() + timeout
        while True:
            if self.proc.poll() is not None:
                raise AssertionError(f"server exited with {self.proc.returncode}:\n{self.log_tail()}")
            try:
                c = self.client()
                c.ping()
                c.close()
                return self
            except (redis.ConnectionError, redis.BusyLoadingError):
                if time.monotonic() > deadline:
                    raise AssertionError("server did not start:\n" + self.log_tail())
                time.sleep(0.02)

    def wait_exit(self, timeout=30.0):
        return self.proc.wait(timeout=timeout)

    def client(self, **kw):
        return redis.Redis(host="127.0.0.1", port=self.port, decode_responses=True,
                           socket_timeout=kw.pop("socket_timeout", 30), **kw)

    def kill9(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(timeout=10)

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def log_text(self):
        try:
            with open(self.log_path, errors="replace") as f:
                return f.read()
        except FileNotFoundError:
            return ""

    def log_tail(self, n=4000):
        return self.log_text()[-n:]

    def fill_disk(self, limit=None):
        """Makes the AOF unwritable from now on: RLIMIT_FSIZE at the current size of
        the log (or `limit` bytes); free_disk() lifts it."""
        if limit is None:
            limit = sum(os.path.getsize(s) for s in self.segments()) + 10
        resource.prlimit(self.proc.pid, resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))

    def free_disk(self):
        resource.prlimit(self.proc.pid, resource.RLIMIT_FSIZE,
                         (resource.RLIM_INFINITY, resource.RLIM_INFINITY))

    def info(self, section="persistence"):
        c = self.client()
        try:
            return c.info(section)
        finally:
            c.close()


def digest(srv):
    """DEBUG DIGEST of a running Server."""
    c = srv.client()
    try:
        return c.execute_command("DEBUG", "DIGEST")
    finally:
        c.close()


def command_available(client, *probe):
    """False if the server answers 'unknown command' to `probe`."""
    try:
        client.execute_command(*probe)
    except redis.ResponseError as e:
        if "unknown command" in str(e):
            return False
    return True


def run_tool(name, *args):
    return subprocess.run([tool(name)] + list(args), capture_output=True, text=True, timeout=120)
