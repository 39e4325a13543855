"""Redis's own tools against feedkv: redis-cli (commands, -n, -a, -3, stdin,
--scan, --bigkeys, --pipe mass insertion) and redis-benchmark."""

import re
import shutil
import subprocess

import pytest

PASSWORD = "tools-pw"


def tool(name):
    path = shutil.which(name)
    assert path, f"{name} not found on PATH (tools/install-deps.sh installs redis-tools)"
    return path


def run(args, timeout=120, input_bytes=None):
    p = subprocess.run(args, input=input_bytes, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=timeout)
    return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")


def cli(server, *args, timeout=60, input_bytes=None):
    return run([tool("redis-cli"), "-h", "127.0.0.1", "-p", str(server.port), *args],
               timeout=timeout, input_bytes=input_bytes)


def test_redis_cli_commands(server):
    assert cli(server, "PING")[1].strip() == "PONG"
    assert cli(server, "SET", "greeting", "hello world")[1].strip() == "OK"
    assert cli(server, "GET", "greeting")[1].strip() == "hello world"
    assert cli(server, "INCR", "counter")[1].strip() == "1"
    assert cli(server, "INCRBY", "counter", "41")[1].strip() == "42"
    assert cli(server, "MSET", "a", "1", "b", "2")[1].strip() == "OK"
    assert cli(server, "MGET", "a", "b", "nokey")[1].split("\n")[:3] == ["1", "2", ""]
    assert cli(server, "DBSIZE")[1].strip() == "4"
    rc, out, err = cli(server, "NOSUCHCOMMAND", "x")
    assert "unknown command 'NOSUCHCOMMAND'" in out + err
    rc, out, _ = cli(server, "INFO", "server")
    assert rc == 0 and "redis_version:" in out


def test_redis_cli_select_db(server):
    assert cli(server, "-n", "3", "SET", "k", "in3")[1].strip() == "OK"
    assert cli(server, "-n", "3", "GET", "k")[1].strip() == "in3"
    assert cli(server, "GET", "k")[1].strip() == ""
    assert server.client(db=3).get("k") == "in3"


@pytest.mark.server_args("--requirepass", PASSWORD)
def test_redis_cli_auth(server):
    rc, out, err = cli(server, "PING")
    assert "NOAUTH" in out + err
    assert cli(server, "-a", PASSWORD, "--no-auth-warning", "PING")[1].strip() == "PONG"
    assert cli(server, "--user", "default", "--pass", PASSWORD, "--no-auth-warning",
               "PING")[1].strip() == "PONG"


def test_redis_cli_resp3(server):
    rc, out, err = cli(server, "-3", "PING")
    assert rc == 0 and out.strip() == "PONG", err
    rc, out, err = cli(server, "-3", "CLIENT", "INFO")
    assert rc == 0 and "resp=3" in out, out + err
    rc, out, err = cli(server, "-3", "CONFIG", "GET", "port")
    assert rc == 0 and out.split() == ["port", str(server.port)], out + err
    rc, out, err = cli(server, "-3", "HELLO", "3")
    assert rc == 0 and "proto" in out and "3" in out


def test_redis_cli_commands_from_stdin(server):
    script = b"SET a 1\nINCR a\nGET a\nCLIENT SETNAME from-stdin\nCLIENT GETNAME\n"
    rc, out, err = cli(server, input_bytes=script)
    assert rc == 0, err
    assert out.split("\n")[:5] == ["OK", "2", "2", "OK", "from-stdin"]


def test_redis_cli_scan_and_bigkeys(server):
    r = server.client()
    r.mset({f"user:{i}": "x" * i for i in range(1, 101)})
    r.mset({f"post:{i}": i for i in range(50)})
    rc, out, err = cli(server, "--scan", "--pattern", "user:*")
    assert rc == 0, err
    assert sorted(out.split()) == sorted(f"user:{i}" for i in range(1, 101))
    rc, out, err = cli(server, "--bigkeys", timeout=120)
    assert rc == 0, out + err
    assert "Biggest string found" in out and "user:100" in out, out
    assert "150 strings" in out, out


def test_redis_cli_pipe_mass_insertion_100k(server, tmp_path):
    n = 100000
    chunks = []
    for i in range(n):
        k = f"key:{i}".encode()
        v = f"value-{i}".encode()
        chunks.append(b"*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n" % (len(k), k, len(v), v))
    data = b"".join(chunks)
    rc, out, err = cli(server, "--pipe", input_bytes=data, timeout=180)
    text = out + err
    assert rc == 0, text
    m = re.search(r"errors: (\d+), replies: (\d+)", text)
    assert m, text
    assert m.group(1) == "0", text
    assert m.group(2) == str(n), text
    r = server.client()
    assert r.dbsize() == n
    assert r.get("key:0") == "value-0"
    assert r.get(f"key:{n - 1}") == f"value-{n - 1}"


def test_redis_cli_pipe_reports_errors(server):
    data = b"SET good 1\r\nINCR good\r\nNOSUCHCMD\r\n*2\r\n$4\r\nINCR\r\n$4\r\ngood\r\n"
    server.client().set("good", "0")
    rc, out, err = cli(server, "--pipe", input_bytes=data, timeout=60)
    text = out + err
    m = re.search(r"errors: (\d+), replies: (\d+)", text)
    assert m, text
    assert m.groups() == ("1", "4"), text
    assert server.client().get("good") == "3"


def test_redis_benchmark_core_commands(server):
    tests = "ping,set,get,incr,mset"
    rc, out, err = run([tool("redis-benchmark"), "-h", "127.0.0.1", "-p", str(server.port),
                        "-t", tests, "-n", "20000", "-q"], timeout=240)
    text = out + err
    assert rc == 0, text
    final = [ln.strip() for ln in re.split(r"[\r\n]", text) if "requests per second" in ln]
    names = {ln.split(":")[0] for ln in final}
    for want in ("PING_INLINE", "PING_MBULK", "SET", "GET", "INCR"):
        assert want in names, f"{want} not reported:\n{text}"
    assert any(n.startswith("MSET") for n in names), text
    for ln in re.split(r"[\r\n]", text):
        low = ln.lower()
        assert "err" not in low and "warning" not in low and "invalid" not in low, ln
    for ln in final:
        rps = float(re.search(r"([\d.]+) requests per second", ln).group(1))
        assert rps > 0, ln
    assert server.client().dbsize() >= 1


def test_redis_benchmark_pipelined(server):
    rc, out, err = run([tool("redis-benchmark"), "-h", "127.0.0.1", "-p", str(server.port),
                        "-t", "set,get", "-n", "50000", "-P", "16", "-q"], timeout=240)
    text = out + err
    assert rc == 0, text
    final = [ln for ln in re.split(r"[\r\n]", text) if "requests per second" in ln]
    assert {ln.strip().split(":")[0] for ln in final} >= {"SET", "GET"}, text
    assert "err" not in text.lower()
