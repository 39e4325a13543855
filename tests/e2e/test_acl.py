"""ACL users, side by side with Redis 7.

One transcript over several connections runs on feedkv and on Redis 7 and both
must reply the same to every command: ACL SETUSER rules and their errors (a
failed SETUSER changes nothing), GETUSER/LIST/USERS descriptions, key patterns
with read/write permissions, channel patterns, first-arg rules (+select|0),
selectors, AUTH as a user, NOPERM refusals at top level, while queueing in MULTI
and again at EXEC, redis.call and redis.acl_check_cmd in scripts, ACL DRYRUN,
ACL LOG entries, ACL DELUSER closing the user's connections, requirepass as the
default user's password. Then: the aclfile (ACL SAVE, ACL LOAD, start-up), the
config file's user lines, and redis-py authenticating as a user.
"""

import re
import subprocess
import time

import pytest
import redis

from conftest import RawConn, RespError, is_real_redis, server_binary
from persist_util import Server, free_port

# (connection, command...). Connections are opened on first use.
TRANSCRIPT = [
    ("admin", "ACL", "WHOAMI"),
    ("admin", "ACL", "USERS"),
    ("admin", "ACL", "LIST"),
    ("admin", "ACL", "GETUSER", "default"),
    ("admin", "ACL", "GETUSER", "nobody"),
    ("admin", "ACL", "SETUSER", "alice", "on", ">p1", "~cached:*", "%R~ro:*", "&chan*", "+get",
     "+@hash", "-hdel", "+config|get", "+select|0"),
    ("admin", "ACL", "GETUSER", "alice"),
    ("admin", "ACL", "LIST"),
    ("admin", "ACL", "SETUSER", "bob"),
    ("admin", "ACL", "GETUSER", "bob"),
    ("admin", "ACL", "SETUSER", "bob", "reset"),
    ("admin", "ACL", "GETUSER", "bob"),
    ("admin", "ACL", "SETUSER", "bob", "on", "nopass", "allkeys", "allchannels", "allcommands", "-flushall"),
    ("admin", "ACL", "LIST"),
    ("admin", "ACL", "SETUSER", "sel", "(+get ~k*)"),
    ("admin", "ACL", "SETUSER", "sel", "(+set", "~w*)"),
    ("admin", "ACL", "GETUSER", "sel"),
    ("admin", "ACL", "SETUSER", "sel", "clearselectors"),
    ("admin", "ACL", "GETUSER", "sel"),
    ("admin", "ACL", "SETUSER", "bad", "(+get"),
    ("admin", "ACL", "SETUSER", "bad", "nosuchrule"),
    ("admin", "ACL", "SETUSER", "bad", "+nosuch"),
    ("admin", "ACL", "SETUSER", "bad", "+@nosuch"),
    ("admin", "ACL", "SETUSER", "bad", "-nosuch"),
    ("admin", "ACL", "SETUSER", "bad", "~*", "~a"),
    ("admin", "ACL", "SETUSER", "bad", "&*", "&a"),
    ("admin", "ACL", "SETUSER", "bad", "<nopw"),
    ("admin", "ACL", "SETUSER", "bad", "#abc"),
    ("admin", "ACL", "SETUSER", "bad", "!abc"),
    ("admin", "ACL", "SETUSER", "bad", "+config|get|x"),
    ("admin", "ACL", "SETUSER", "bad", "+select|"),
    ("admin", "ACL", "SETUSER", "bad", "%X~k"),
    ("admin", "ACL", "SETUSER", "bad", "~a b"),
    ("admin", "ACL", "SETUSER", "a b"),
    ("admin", "ACL", "SETUSER", "alice", "+set", "nosuchrule"),  # changes nothing
    ("admin", "ACL", "USERS"),
    ("admin", "ACL", "GETUSER", "alice"),
    ("admin", "ACL", "SETUSER", "hashy", "#" + "a" * 64, ">x", "<x"),
    ("admin", "ACL", "GETUSER", "hashy"),
    ("admin", "ACL", "SETUSER", "hashy", "!" + "a" * 64, "+@all", "-@hash", "-@slow", "+hget"),
    ("admin", "ACL", "GETUSER", "hashy"),
    ("admin", "ACL", "SETUSER", "hashy", "-@all", "+@read", "-get"),
    ("admin", "ACL", "GETUSER", "hashy"),
    ("admin", "ACL", "SETUSER", "hashy", "+@all", "-@dangerous"),
    ("admin", "ACL", "GETUSER", "hashy"),
    ("admin", "ACL", "SETUSER", "hashy", "resetpass", "nopass", "skip-sanitize-payload"),
    ("admin", "ACL", "GETUSER", "hashy"),
    ("admin", "ACL", "DRYRUN", "alice", "get", "foo"),
    ("admin", "ACL", "DRYRUN", "alice", "get", "cached:1"),
    ("admin", "ACL", "DRYRUN", "alice", "set", "cached:1", "x"),
    ("admin", "ACL", "DRYRUN", "alice", "hdel", "cached:1", "f"),
    ("admin", "ACL", "DRYRUN", "alice", "hget", "ro:1", "f"),
    ("admin", "ACL", "DRYRUN", "alice", "hset", "ro:1", "f", "v"),
    ("admin", "ACL", "DRYRUN", "alice", "select", "0"),
    ("admin", "ACL", "DRYRUN", "alice", "select", "1"),
    ("admin", "ACL", "DRYRUN", "alice", "config", "get", "x"),
    ("admin", "ACL", "DRYRUN", "alice", "config", "set", "x", "y"),
    ("admin", "ACL", "DRYRUN", "nobody", "get", "x"),
    ("admin", "ACL", "DRYRUN", "alice", "nosuch"),
    ("admin", "ACL", "DRYRUN", "alice", "get"),
    ("a", "AUTH", "alice", "wrong"),
    ("a", "AUTH", "nobody", "p1"),
    ("a", "AUTH", "alice", "p1"),
    ("a", "ACL", "WHOAMI"),
    ("a", "PING"),
    ("a", "GET", "cached:1"),
    ("a", "GET", "other"),
    ("a", "SET", "cached:1", "x"),
    ("a", "HSET", "cached:h", "f", "v"),
    ("a", "HGET", "ro:x", "f"),
    ("a", "HSET", "ro:x", "f", "v"),
    ("a", "HDEL", "cached:h", "f"),
    ("a", "HMGET", "cached:h", "other", "f"),
    ("a", "SELECT", "0"),
    ("a", "SELECT", "1"),
    ("a", "CONFIG", "GET", "maxmemory"),
    ("a", "CONFIG", "SET", "maxmemory", "0"),
    ("a", "MULTI"),
    ("a", "GET", "other"),
    ("a", "GET", "cached:1"),
    ("a", "EXEC"),
    ("a", "MULTI"),
    ("a", "GET", "cached:1"),
    ("a", "HGET", "cached:h", "f"),
    ("admin", "ACL", "SETUSER", "alice", "-get"),
    ("a", "EXEC"),
    ("admin", "ACL", "SETUSER", "alice", "+get", "+publish", "+eval", "+ping"),
    ("a", "PUBLISH", "chan1", "m"),
    ("a", "PUBLISH", "other", "m"),
    ("a", "EVAL", "return redis.call('get', KEYS[1])", "1", "cached:1"),
    ("a", "EVAL", "return redis.call('set', KEYS[1], 'v')", "1", "cached:1"),
    ("a", "EVAL", "return redis.call('get', 'zzz')", "0"),
    ("a", "EVAL", "return redis.call('publish', 'zzz', 'm')", "0"),
    ("a", "EVAL", "return redis.pcall('set', 'cached:2', 'v')", "0"),
    ("a", "EVAL", "return {redis.acl_check_cmd('get', 'cached:1'), redis.acl_check_cmd('set', 'cached:1', 'v'), "
                  "redis.acl_check_cmd('get', 'zzz')}", "0"),
    ("a", "EVAL", "return redis.acl_check_cmd('nosuch')", "0"),
    ("admin", "ACL", "LOG", "100"),
    ("admin", "ACL", "LOG", "2"),
    ("admin", "ACL", "LOG", "0"),
    ("admin", "ACL", "LOG", "-5"),
    ("admin", "ACL", "LOG", "x"),
    ("admin", "ACL", "LOG", "RESET"),
    ("admin", "ACL", "LOG"),
    ("admin", "CLIENT", "KILL", "USER", "nobody"),
    ("admin", "ACL", "DELUSER", "alice", "default"),
    ("admin", "ACL", "DELUSER", "alice", "bob", "nobody"),
    ("a", "PING"),
    ("admin", "ACL", "USERS"),
    ("admin", "ACL", "CAT"),
    ("admin", "ACL", "CAT", "nosuch"),
    ("admin", "ACL", "CAT", "read", "x"),
    ("admin", "ACL", "GENPASS", "0"),
    ("admin", "ACL", "GENPASS", "5000"),
    ("admin", "ACL", "GENPASS", "x"),
    ("admin", "ACL", "LOAD"),
    ("admin", "ACL", "SAVE"),
    ("admin", "ACL", "NOSUCH"),
    ("admin", "ACL", "WHOAMI", "x"),
    ("admin", "ACL", "HELP"),
    ("admin", "AUTH", "default", "anything"),
    ("admin", "AUTH", "onlypass"),
    ("admin", "AUTH", "a", "b", "c"),
    ("admin", "CONFIG", "SET", "requirepass", "pw"),
    ("admin", "ACL", "GETUSER", "default"),
    ("n", "GET", "x"),
    ("n", "AUTH", "wrong"),
    ("n", "AUTH", "pw"),
    ("n", "ACL", "WHOAMI"),
    ("admin", "ACL", "SETUSER", "default", "resetpass", ">other"),
    ("admin", "CONFIG", "GET", "requirepass"),
    ("m", "AUTH", "pw"),
    ("m", "AUTH", "other"),
    ("admin", "ACL", "SETUSER", "default", "off"),
    ("o", "PING"),
    ("o", "HELLO", "3", "AUTH", "default", "other"),
    ("admin", "ACL", "SETUSER", "default", "on", "nopass"),
    ("o", "PING"),
    ("admin", "CONFIG", "SET", "requirepass", ""),
    ("admin", "ACL", "LIST"),
    ("admin", "ACL", "SETUSER", "sub", "on", "nopass", "+@all", "~*", "&news.*"),
    ("s", "AUTH", "sub", "x"),
    ("s", "SUBSCRIBE", "news.1"),
    ("admin", "ACL", "SETUSER", "sub", "resetchannels", "&news.1"),
    ("s", "PING"),
    ("admin", "ACL", "SETUSER", "sub", "resetchannels", "&other"),
    ("s", "PING"),
    ("admin", "HELLO", "3"),
    ("admin", "ACL", "GETUSER", "sub"),
    ("admin", "ACL", "LOG", "1"),
]

CLOSED = "<connection closed>"


def sort_single_command_rules(text):
    """Redis emits the single-command rules of a description (after its
    categories) in the order of its command dict, which is random per process;
    runs of such rules are compared as sets."""
    words = text.split(b" ")
    out, run = [], []
    for w in words:
        core = w.lstrip(b"(")
        if re.match(rb"^[+-][a-z]", core) and core == w and not w.endswith(b")"):
            run.append(w)
            continue
        out += sorted(run)
        run = []
        out.append(w)
    out += sorted(run)
    return b" ".join(out)


def normalize(reply):
    """ACL LOG's age and client line vary between runs; rule order as above."""
    if isinstance(reply, bytes) and (reply.startswith(b"user ") or reply[:5] in (b"+@all", b"-@all")):
        return sort_single_command_rules(reply)
    if isinstance(reply, list):
        out = []
        skip = False
        for i, v in enumerate(reply):
            if skip:
                skip = False
                out.append("<varies>")
                continue
            if v in (b"age-seconds", b"client-info"):
                skip = True
            out.append(normalize(v))
        return out
    if isinstance(reply, dict):
        return {k: ("<varies>" if k in (b"age-seconds", b"client-info") else normalize(v))
                for k, v in reply.items()}
    return reply


def run_transcript(srv):
    conns = {}
    out = []
    for step in TRANSCRIPT:
        name, cmd = step[0], step[1:]
        if name not in conns:
            conns[name] = RawConn(srv.port)
        c = conns[name]
        if c is None:
            out.append((step, CLOSED))
            continue
        try:
            reply = c.cmd(*cmd)
        except Exception:  # the server closed the connection
            conns[name] = None
            reply = CLOSED
        if cmd[0] == "HELLO" and isinstance(reply, dict):
            reply = reply[b"proto"]  # versions and ids differ
        if name == "s" and cmd[0] == "PING" and reply != CLOSED:
            # A RESP2 subscriber's PING reply; the check is whether it is still open.
            reply = "open"
        out.append((step, normalize(reply)))
    for c in conns.values():
        if c is not None:
            c.close()
    return out


def test_transcript_matches_redis(server, redis7_server):
    ours, theirs = run_transcript(server), run_transcript(redis7_server)
    assert len(ours) == len(theirs)
    for (step, a), (_, b) in zip(ours, theirs):
        assert a == b, f"{step!r}: feedkv {a!r} != redis {b!r}"


def test_genpass_gives_random_hex_of_the_asked_size(server):
    c = RawConn(server.port)
    a, b = c.cmd("ACL", "GENPASS"), c.cmd("ACL", "GENPASS")
    assert len(a) == 64 and a != b and re.fullmatch(rb"[0-9a-f]+", a)
    assert len(c.cmd("ACL", "GENPASS", "5")) == 2
    assert len(c.cmd("ACL", "GENPASS", "4096")) == 1024


def test_acl_cat_lists_the_commands_of_a_category(server):
    c = RawConn(server.port)
    read = c.cmd("ACL", "CAT", "read")
    assert b"get" in read and b"set" not in read
    if not is_real_redis():
        assert b"lsmembers" in read  # feedkv's own families have categories too
    assert b"config|get" in c.cmd("ACL", "CAT", "admin")
    assert c.cmd("ACL", "CAT", "READ") == read
    info = c.cmd("COMMAND", "INFO", "get")[0]
    assert "@read" in info[6] and "@fast" in info[6]


def test_a_user_with_first_arg_rules_and_selectors(server):
    admin = server.client()
    admin.execute_command("ACL", "SETUSER", "u", "on", ">pw", "-@all", "+select|0", "+select|2",
                          "+get", "~a*", "(+set ~w*)", "(%R~r* +get)")
    u = redis.Redis(host="127.0.0.1", port=server.port, username="u", password="pw", decode_responses=True)
    assert u.select(0) and u.select(2)
    with pytest.raises(redis.exceptions.NoPermissionError):
        u.select(1)
    assert u.get("a1") is None and u.get("r1") is None
    assert u.set("w1", "v")
    with pytest.raises(redis.exceptions.NoPermissionError):
        u.set("a1", "v")  # the root selector allows a* but not SET; the first one SET but not a*
    with pytest.raises(redis.exceptions.NoPermissionError):
        u.get("w1")
    clients = [line for line in admin.client_list() if line["user"] == "u"]
    assert len(clients) == 1


def test_acl_save_and_load_round_trip_through_the_aclfile(tmp_path):
    aclfile = tmp_path / "users.acl"
    aclfile.write_text("user default on nopass ~* &* +@all\nuser ro on >ropw ~* resetchannels -@all +@read\n")
    srv = Server(tmp_path / "srv").start("--aclfile", str(aclfile))
    try:
        c = srv.client()
        assert c.execute_command("ACL", "USERS") == ["default", "ro"]
        ro = redis.Redis(host="127.0.0.1", port=srv.port, username="ro", password="ropw", decode_responses=True)
        assert ro.get("k") is None
        with pytest.raises(redis.exceptions.NoPermissionError):
            ro.set("k", "v")
        assert c.execute_command("ACL", "SETUSER", "w", "on", ">wpw", "~w:*", "+@write")
        assert c.execute_command("ACL", "SAVE")
        text = aclfile.read_text()
        assert "user w on #" in text and "~w:* resetchannels -@all +@write" in text
        # An edit on disk is picked up by ACL LOAD; the users' clients are closed.
        aclfile.write_text(text.replace("user ro on", "user ro off"))
        assert c.execute_command("ACL", "LOAD")
        # The old connection is closed; redis-py reconnects, and AUTH fails.
        with pytest.raises((redis.exceptions.ConnectionError, redis.exceptions.ResponseError)):
            ro.get("k")
        with pytest.raises(redis.exceptions.ResponseError, match="WRONGPASS"):
            redis.Redis(host="127.0.0.1", port=srv.port, username="ro", password="ropw").ping()
        # A broken file changes nothing and says where.
        aclfile.write_text("user a on nosuchrule\nbogus line\n")
        with pytest.raises(redis.exceptions.ResponseError) as e:
            c.execute_command("ACL", "LOAD")
        assert "users.acl:1: Syntax error" in str(e.value) and "users.acl:2 should start with user" in str(e.value)
        assert c.execute_command("ACL", "USERS") == ["default", "ro", "w"]
    finally:
        srv.stop()


@pytest.mark.skipif(is_real_redis(), reason="starts feedkv-server with a config file")
def test_config_file_users_and_the_aclfile_together_refuse_to_start(tmp_path):
    conf = tmp_path / "redis.conf"
    conf.write_text(f"user app on >apppw ~app:* +@all\naclfile {tmp_path / 'x.acl'}\n")
    out = subprocess.run([server_binary(), str(conf), "--port", "0", "--dir", str(tmp_path)],
                         capture_output=True, text=True, timeout=30)
    assert out.returncode != 0
    assert "please define either an ACL file or declare users directly" in out.stdout + out.stderr


@pytest.mark.skipif(is_real_redis(), reason="starts feedkv-server with a config file")
def test_a_missing_aclfile_refuses_to_start(tmp_path):
    out = subprocess.run([server_binary(), "--port", "0", "--dir", str(tmp_path), "--aclfile",
                          str(tmp_path / "missing.acl")], capture_output=True, text=True, timeout=30)
    assert out.returncode != 0
    assert "Error loading ACLs, opening file" in out.stdout + out.stderr


@pytest.mark.skipif(is_real_redis(), reason="the start-up path is feedkv's")
def test_users_from_the_config_file_and_the_command_line(tmp_path):
    conf = tmp_path / "redis.conf"
    conf.write_text("user app on >apppw ~app:* +@all\n")
    port = free_port()
    proc = subprocess.Popen([server_binary(), str(conf), "--port", str(port), "--dir", str(tmp_path),
                             "--save", "", "--user", "ops", "on", ">opspw", "~*", "+@all"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        app = redis.Redis(host="127.0.0.1", port=port, username="app", password="apppw")
        deadline = time.monotonic() + 20
        while True:
            try:
                app.ping()
                break
            except redis.exceptions.ConnectionError:
                assert time.monotonic() < deadline and proc.poll() is None
                time.sleep(0.05)
        assert app.set("app:1", "v")
        with pytest.raises(redis.exceptions.NoPermissionError):
            app.set("other", "v")
        ops = redis.Redis(host="127.0.0.1", port=port, username="ops", password="opspw")
        assert ops.set("other", "v")
    finally:
        proc.terminate()
        assert proc.wait(timeout=30) == 0


def test_passwords_are_redacted_in_slowlog_and_monitor(server):
    c = server.client()
    c.config_set("slowlog-log-slower-than", 0)
    c.slowlog_reset()
    mon = RawConn(server.port)
    assert mon.cmd("MONITOR") == "OK"
    a = RawConn(server.port)
    assert a.cmd("AUTH", "default", "secretpw1") == "OK"  # the default user takes any password
    assert isinstance(a.cmd("HELLO", "2", "AUTH", "default", "secretpw2"), list)
    c.execute_command("CONFIG", "SET", "requirepass", "secretpw3")
    assert a.cmd("AUTH", "secretpw3") == "OK"
    assert a.cmd("ACL", "SETUSER", "u", "on", ">secretpw4") == "OK"
    assert a.cmd("CONFIG", "SET", "requirepass", "") == "OK"
    assert a.cmd("ECHO", "done") == b"done"
    lines = []
    while not lines or b"done" not in lines[-1].encode():
        lines.append(mon.read_reply())
    monitored = "\n".join(lines)
    assert "secretpw" not in monitored
    assert '"auth" "(redacted)" "(redacted)"' in monitored.lower()
    logged = " ".join(str(e["command"]) for e in c.slowlog_get(100))
    assert "secretpw" not in logged
    assert "(redacted)" in logged


def test_config_rewrite_writes_users_into_the_config_file(start_server):
    # As Redis's rewriteConfigUserOption without an aclfile: every user, the
    # default one too, replaces the file's user lines in place.
    srv = start_server(config="# users below\nuser alice on >pw ~* &* +@all\nmaxclients 900\n")
    c = srv.raw()
    assert c.cmd("ACL", "SETUSER", "bob", "on", ">secret", "~k*", "+get") == "OK"
    assert c.cmd("ACL", "SETUSER", "alice", "-@dangerous") == "OK"
    assert c.cmd("CONFIG", "REWRITE") == "OK"
    text = srv.config_path.read_text()
    lines = text.splitlines()
    users = [line for line in lines if line.startswith("user ")]
    assert [u.split()[1] for u in users] == ["alice", "bob", "default"], text
    assert lines.index(users[0]) == lines.index("# users below") + 1, "alice's line kept its place"
    assert "-@dangerous" in users[0] and "secret" not in text and "~k*" in users[1]
    again = start_server(config=text)
    # alice and bob come back as they were (the default user's line is read
    # back with sanitize-payload, by both servers).
    assert again.raw().cmd("ACL", "LIST")[:2] == c.cmd("ACL", "LIST")[:2]
    as_bob = again.raw()
    assert as_bob.cmd("AUTH", "bob", "secret") == "OK"
    assert as_bob.cmd("GET", "kx") is None


def test_key_permissions_that_depend_on_the_arguments_as_redis(server):
    """SORT's BY pattern and GET need read access to every key; BITFIELD with only
    GETs only reads its key; MIGRATE's AUTH password spelled KEYS is no keyword;
    XREAD's keys are checked. Runs against Redis 7 too."""
    c = server.raw()
    assert c.cmd("SET", "v1", "1") == "OK" and c.cmd("LPUSH", "mylist", "1") == 1
    assert c.cmd("ACL", "SETUSER", "sorter", "on", "nopass", "+sort", "~mylist") == "OK"
    u = server.raw()
    assert u.cmd("AUTH", "sorter", "x") == "OK"
    assert u.cmd("SORT", "mylist", "BY", "v*") == RespError(
        "ERR BY option of SORT denied due to insufficient ACL permissions.")
    assert u.cmd("SORT", "mylist", "GET", "#") == RespError(
        "ERR GET option of SORT denied due to insufficient ACL permissions.")
    assert u.cmd("SORT", "mylist", "BY", "nosort") == [b"1"]
    assert c.cmd("ACL", "SETUSER", "sorter", "%R~*") == "OK"
    assert u.cmd("SORT", "mylist", "BY", "v*") == [b"1"]

    assert c.cmd("ACL", "SETUSER", "reader", "on", "nopass", "%R~read*", "+@all") == "OK"
    assert c.cmd("ACL", "DRYRUN", "reader", "BITFIELD", "readstr", "GET", "u4", "0") == "OK"
    denied = c.cmd("ACL", "DRYRUN", "reader", "BITFIELD", "readstr", "GET", "u4", "0", "SET", "u4", "0", "1")
    assert denied == b"This user has no permissions to access the 'readstr' key", denied
    assert c.cmd("ACL", "SETUSER", "mover", "on", "nopass", "+@all", "~rw") == "OK"
    assert c.cmd("ACL", "DRYRUN", "mover", "MIGRATE", "h", "1", "", "0", "5000", "AUTH", "KEYS", "KEYS", "rw") == "OK"
    assert c.cmd("ACL", "DRYRUN", "mover", "XREAD", "STREAMS", "rw", "0") == "OK"
    denied = c.cmd("ACL", "DRYRUN", "mover", "XREAD", "STREAMS", "other", "0")
    assert denied == b"This user has no permissions to access the 'other' key", denied


@pytest.mark.parametrize("grant,subscribe", [("&foo:1", ("SUBSCRIBE", "foo:1")),
                                             ("&foo:1", ("SSUBSCRIBE", "foo:1")),
                                             ("&bar:*", ("PSUBSCRIBE", "bar:*")),
                                             ("allchannels", ("PSUBSCRIBE", "foo"))])
def test_subscribers_are_closed_when_their_channels_are_revoked(server, grant, subscribe):
    """Redis's "Subscribers are killed when revoked of ... permission", the
    allchannels case included (losing allchannels revokes every channel)."""
    admin = RawConn(server.port)
    assert admin.cmd("ACL", "SETUSER", "psuser", "on", ">pspass", "~*", "+@all", "resetchannels", grant) == "OK"
    sub = RawConn(server.port)
    assert sub.cmd("AUTH", "psuser", "pspass") == "OK"
    assert sub.cmd("CLIENT", "SETNAME", "deathrow") == "OK"
    assert sub.cmd(*subscribe)[0].lower() == subscribe[0].lower().encode()
    assert admin.cmd("ACL", "SETUSER", "psuser", "resetchannels") == "OK"
    assert b"deathrow" not in admin.cmd("CLIENT", "LIST")


def test_subscribers_keep_their_connection_when_permissions_grow(server):
    admin = RawConn(server.port)
    assert admin.cmd("ACL", "SETUSER", "psuser", "on", ">pspass", "~*", "+@all", "resetchannels",
                     "&foo:1", "&bar:*") == "OK"
    sub = RawConn(server.port)
    assert sub.cmd("AUTH", "psuser", "pspass") == "OK"
    assert sub.cmd("CLIENT", "SETNAME", "pardoned") == "OK"
    assert sub.cmd("SUBSCRIBE", "foo:1")[0] == b"subscribe"
    assert sub.cmd("PSUBSCRIBE", "bar:*")[0] == b"psubscribe"
    assert admin.cmd("ACL", "SETUSER", "psuser", "resetchannels", "&foo:1", "&bar:*", "&zoo:*") == "OK"
    assert b"pardoned" in admin.cmd("CLIENT", "LIST")
    assert admin.cmd("ACL", "SETUSER", "psuser", "allchannels") == "OK"
    assert b"pardoned" in admin.cmd("CLIENT", "LIST")
