"""benchlib: the plumbing the bench/ comparison scripts share (stdlib only).

bench/compare-redis, bench/compare-counters, bench/compare-longset and
bench/persistence-compare all start feedkv and Debian's redis-server 7 side by
side and read the same figures from them; this module is that common part:

  free_port, resp_cmd        a free 127.0.0.1 port; one command in RESP
  Conn                       a minimal blocking RESP client (one connection)
  Server                     start a server on 127.0.0.1 with its own data dir,
                             optionally pinned with taskset; wait for PING
                             (tolerating -LOADING, and timing it); stop with
                             SIGTERM then SIGKILL, or kill -9; INFO sections
                             as dicts, server CPU seconds (INFO cpu), RSS from
                             /proc, usec_per_call from INFO commandstats
  pinned, pipe_file,         taskset argv prefix; redis-cli --pipe of a file;
  redis_benchmark, csv_rps   a redis-benchmark run and its --csv requests/s
  fmt_num, ratio             the number formats of the report tables

The scripts add their own server options (persistence settings, Redis
tunables) as Server arguments; scripts that use redis-py (compare-longset)
keep it and build their client on top of Server.

Import it from a script in bench/ with
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
    import benchlib
"""

import os
import pathlib
import re
import signal
import socket
import subprocess
import threading
import time

HOST = "127.0.0.1"


def free_port():
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def resp_cmd(*args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


class Conn:
    """A minimal blocking RESP client (fast enough for a latency probe).

    call() returns simple and bulk strings as str (nil bulk: None), integers as
    int, arrays as lists; an error reply raises RuntimeError, or with
    raise_errors=False comes back as the string "-<message>"."""

    def __init__(self, port, timeout=None):
        self.s = socket.create_connection((HOST, port), timeout=timeout)
        self.s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""

    def _fill(self):
        chunk = self.s.recv(1 << 16)
        if not chunk:
            raise ConnectionError("connection closed")
        self.buf += chunk

    def _line(self):
        while b"\r\n" not in self.buf:
            self._fill()
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def _read(self, raise_errors):
        line = self._line()
        t = line[:1]
        if t == b"+":
            return line[1:].decode()
        if t == b":":
            return int(line[1:])
        if t == b"-":
            if raise_errors:
                raise RuntimeError(line[1:].decode())
            return line.decode()
        if t == b"$":
            n = int(line[1:])
            if n < 0:
                return None
            while len(self.buf) < n + 2:
                self._fill()
            v, self.buf = self.buf[:n], self.buf[n + 2:]
            return v.decode(errors="replace")
        if t == b"*":
            return [self._read(raise_errors) for _ in range(int(line[1:]))]
        raise RuntimeError(f"bad reply {line!r}")

    def call(self, *args, raise_errors=True):
        self.s.sendall(resp_cmd(*args))
        return self._read(raise_errors)

    def close(self):
        self.s.close()


def parse_info(text):
    """INFO text -> {field: value} (section headers and blank lines skipped)."""
    out = {}
    for line in text.splitlines():
        if ":" in line and not line.startswith("#"):
            k, _, v = line.partition(":")
            out[k] = v
    return out


def is_redis(binary):
    return os.path.basename(str(binary)).startswith("redis-server")


def pinned(argv, cpu):
    """argv under taskset -c cpu, or argv itself when cpu is None."""
    return argv if cpu is None else ["taskset", "-c", str(cpu)] + argv


class Server:
    """One feedkv or redis-server process on 127.0.0.1, data in workdir/name.

    Started with --port --bind --dir --save "" plus `persistence` (default: no
    AOF) plus `extra`; a redis-server also gets --daemonize no --protected-mode
    no --logfile "" (`redis` says which kind it is; default: by the binary's
    name). `cpu` pins it with taskset. Output goes to server.log in its dir."""

    def __init__(self, name, binary, workdir, cpu=None, extra=(),
                 persistence=("--appendonly", "no"), redis=None,
                 new_session=True, stop_timeout=30):
        self.name = name
        self.binary = binary
        self.dir = pathlib.Path(workdir) / name
        self.dir.mkdir(parents=True, exist_ok=True)
        self.cpu = cpu
        self.extra = list(extra)
        self.persistence = list(persistence)
        self.redis = is_redis(binary) if redis is None else redis
        self.new_session = new_session
        self.stop_timeout = stop_timeout
        self.port = None
        self.proc = None
        self.logf = None
        self.log = self.dir / "server.log"
        self.ready_s = None

    def start(self, timeout=30, interval=0.05):
        """Starts it on a fresh free port and waits until PING answers PONG
        (-LOADING and refused connections mean: not yet). Sets ready_s, the
        seconds from launch to the first PONG. Returns self."""
        self.port = free_port()
        args = [self.binary, "--port", str(self.port), "--bind", HOST,
                "--dir", str(self.dir), "--save", ""] + self.persistence + self.extra
        if self.redis:
            args += ["--daemonize", "no", "--protected-mode", "no", "--logfile", ""]
        self.logf = open(self.log, "ab")
        t0 = time.monotonic()
        self.proc = subprocess.Popen(pinned(args, self.cpu), stdout=self.logf,
                                     stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                     start_new_session=self.new_session)
        deadline = t0 + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.name} exited at start-up ({self.log}):\n"
                                   f"{self.log.read_text(errors='replace')}")
            try:
                if self.cmd("PING") == "PONG":
                    self.ready_s = time.monotonic() - t0
                    return self
            except OSError:
                pass
            time.sleep(interval)
        raise RuntimeError(f"{self.name} did not answer PING in {timeout:g} s")

    def kill9(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def stop(self):
        """SIGTERM, then SIGKILL if it has not exited after stop_timeout s."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=self.stop_timeout)
            except subprocess.TimeoutExpired:
                self.kill9()
        if self.logf is not None:
            self.logf.close()

    def cmd(self, *args, timeout=60):
        """One command over a fresh connection; returns the decoded reply
        (see Conn; an error reply comes back as a '-ERR...' str)."""
        c = Conn(self.port, timeout=timeout)
        try:
            return c.call(*args, raise_errors=False)
        finally:
            c.close()

    def info(self, section):
        """INFO section as a dict ({} when the server answers an error)."""
        text = self.cmd("INFO", section)
        if not isinstance(text, str) or text.startswith("-"):
            return {}
        return parse_info(text)

    def used_memory(self):
        return int(self.info("memory")["used_memory"])

    def cpu_seconds(self):
        """(seconds, source): INFO cpu used_cpu_user+used_cpu_sys, or the
        process's utime+stime from /proc when INFO does not have them."""
        i = self.info("cpu")
        try:
            return float(i["used_cpu_user"]) + float(i["used_cpu_sys"]), "info"
        except (KeyError, ValueError):
            pass
        try:
            with open(f"/proc/{self.server_pid()}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            ticks = os.sysconf("SC_CLK_TCK")
            return (int(fields[11]) + int(fields[12])) / ticks, "proc"
        except (OSError, IndexError, ValueError):
            return None, None

    def rss_bytes(self):
        try:
            with open(f"/proc/{self.server_pid()}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        return int(line.split()[1]) * 1024
        except OSError:
            return None
        return None

    def usec_per_call(self, command):
        """INFO commandstats usec / calls of `command`; None if never called."""
        st = self.info("commandstats").get(f"cmdstat_{command.lower()}")
        if st is None:
            return None
        fields = dict(kv.split("=", 1) for kv in st.split(","))
        return float(fields["usec"]) / max(1, int(fields["calls"]))

    def server_pid(self):
        # with taskset, Popen's pid is taskset, which exec()s the server: same pid
        return self.proc.pid


def load_counter_ids(port, space, field, ids, value, batch=20000):
    """COUNTER.SET <space> <id> <field> <value(id)> for each id of `ids`, pipelined
    on one connection (at most 20 batches in flight); raises on an error reply."""
    ids = list(ids) if not isinstance(ids, range) else ids
    total = len(ids)
    s = socket.create_connection((HOST, port))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    got = [0]
    error = []
    done = threading.Event()

    def reader():
        buf = b""
        while got[0] < total:
            chunk = s.recv(1 << 20)
            if not chunk:
                break
            buf += chunk
            if b"\r\n-" in b"\r\n" + buf:
                error.append(buf[:200].decode(errors="replace"))
                break
            got[0] += buf.count(b"\r\n")
            buf = buf[buf.rfind(b"\r\n") + 2:]
        done.set()

    t = threading.Thread(target=reader, daemon=True)
    t.start()
    head = f"$11\r\nCOUNTER.SET\r\n${len(space)}\r\n{space}\r\n"
    fld = f"${len(field)}\r\n{field}\r\n"
    sent = 0
    for start in range(0, total, batch):
        parts = []
        for i in ids[start:start + batch]:
            si, sv = str(i), str(value(i))
            parts.append(f"*5\r\n{head}${len(si)}\r\n{si}\r\n{fld}${len(sv)}\r\n{sv}\r\n")
        s.sendall("".join(parts).encode())
        sent += len(parts)
        while sent - got[0] > 20 * batch and not done.is_set():
            time.sleep(0.001)
    done.wait()
    s.close()
    if error:
        raise RuntimeError("error reply during load: " + error[0])


def pipe_file(port, path, timeout):
    """Feeds the RESP commands in `path` to redis-cli --pipe; returns
    (exit status, its output with stderr)."""
    with open(path, "rb") as f:
        p = subprocess.run(["redis-cli", "-h", HOST, "-p", str(port), "--pipe"], stdin=f,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout)
    return p.returncode, p.stdout.decode(errors="replace")


def redis_benchmark(port, args, cpu=None, timeout=600):
    """Runs redis-benchmark -h 127.0.0.1 -p port *args (pinned to cpu if given);
    returns the CompletedProcess with stdout and stderr as str. Raises
    subprocess.TimeoutExpired after `timeout` s."""
    argv = ["redis-benchmark", "-h", HOST, "-p", str(port)] + [str(a) for a in args]
    p = subprocess.run(pinned(argv, cpu), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=timeout)
    p.stdout = p.stdout.decode(errors="replace")
    p.stderr = p.stderr.decode(errors="replace")
    return p


def csv_rps(text, label=None):
    """requests/s of the last redis-benchmark --csv row (of the row named
    `label` if given); None if there is none."""
    rps = None
    for ln in text.splitlines():
        m = re.match(r'"([^"]+)","([\d.]+)"', ln)
        if m and (label is None or m.group(1) == label):
            rps = float(m.group(2))
    return rps


def fmt_num(v, digits=0):
    if v is None:
        return "n/a"
    return f"{v:,.{digits}f}"


def ratio(a, b):
    if a is None or b is None or b == 0:
        return "n/a"
    return f"{a / b:.2f}"
