"""Connection set-up and connection commands, as real clients use them:
redis-py handshakes (RESP2 and RESP3), HELLO, AUTH, SELECT, CLIENT *, RESET,
QUIT, READONLY/READWRITE, and Redis's error texts for unknown commands."""

import inspect
import re
import time

import pytest
import redis

from conftest import RespError, Verbatim

PASSWORD = "s3cret-pw"

REDIS_PY_HAS_RESP3 = "protocol" in inspect.signature(redis.Redis.__init__).parameters
REDIS_PY_HAS_LIB_NAME = "lib_name" in inspect.signature(redis.Redis.__init__).parameters


def text(v):
    return v.decode() if isinstance(v, (bytes, bytearray)) else v


def client_info_fields(line):
    line = text(line).strip()
    out = {}
    for tok in line.split(" "):
        k, _, v = tok.partition("=")
        out[k] = v
    return out


def hello_dict(reply):
    """HELLO's reply as {str: value}: a RESP3 map, or a RESP2 flat array."""
    if isinstance(reply, dict):
        return {text(k): (text(v) if isinstance(v, bytes) else v) for k, v in reply.items()}
    assert isinstance(reply, list) and len(reply) % 2 == 0, reply
    return {text(reply[i]): (text(reply[i + 1]) if isinstance(reply[i + 1], bytes) else reply[i + 1])
            for i in range(0, len(reply), 2)}


def check_hello_fields(h, proto, client_id=None):
    for k in ("server", "version", "proto", "id", "mode", "role", "modules"):
        assert k in h, f"HELLO reply lacks '{k}': {h}"
    assert h["proto"] == proto
    assert h["server"] == "redis"  # clients key off this
    assert re.fullmatch(r"\d+\.\d+\.\d+", h["version"]), h["version"]
    assert tuple(int(x) for x in h["version"].split(".")) >= (7, 0, 0)
    assert h["mode"] == "standalone"
    assert h["role"] == "master"
    assert h["modules"] == []
    assert isinstance(h["id"], int)
    if client_id is not None:
        assert h["id"] == client_id


# --- redis-py handshakes -------------------------------------------------------

def test_redis_py_resp2_handshake_with_client_name(server):
    c = server.client(client_name="feed-app", db=0)
    assert c.ping() is True
    assert c.client_getname() == "feed-app"
    me = c.client_id()
    rows = [row for row in c.client_list() if int(row["id"]) == me]
    assert len(rows) == 1
    assert rows[0]["name"] == "feed-app"
    assert rows[0]["db"] == "0"
    assert rows[0]["resp"] == "2"


def test_redis_py_resp3_handshake_with_name_and_lib(server, raw):
    """redis-py >= 5 with protocol=3 sends HELLO 3, CLIENT SETNAME,
    CLIENT SETINFO LIB-NAME/LIB-VER, SELECT. Debian 12 ships redis-py 4.3, which
    cannot speak RESP3, so the same byte sequence is then sent by hand."""
    if REDIS_PY_HAS_RESP3:
        kw = dict(protocol=3, client_name="resp3-app", db=2)
        c = server.client(**kw)
        assert c.ping() is True
        assert c.client_getname() == "resp3-app"
        info = c.client_info()
        assert int(info["db"]) == 2 and int(info["resp"]) == 3
        if REDIS_PY_HAS_LIB_NAME:
            assert info["lib-name"] == "redis-py"
        return
    c = raw()
    h = hello_dict(c.cmd("HELLO", "3"))
    check_hello_fields(h, 3)
    assert c.cmd("CLIENT", "SETNAME", "resp3-app") == "OK"
    assert c.cmd("CLIENT", "SETINFO", "LIB-NAME", "redis-py") == "OK"
    assert c.cmd("CLIENT", "SETINFO", "LIB-VER", "5.0.1") == "OK"
    assert c.cmd("SELECT", "2") == "OK"
    assert c.cmd("PING") == "PONG"
    assert c.cmd("CLIENT", "GETNAME") == b"resp3-app"
    info_reply = c.cmd("CLIENT", "INFO")
    assert isinstance(info_reply, Verbatim), "RESP3 CLIENT INFO is a verbatim string"
    info = client_info_fields(info_reply)
    assert info["id"] == str(h["id"])
    assert info["name"] == "resp3-app"
    assert info["db"] == "2"
    assert info["resp"] == "3"
    assert info["lib-name"] == "redis-py"
    assert info["lib-ver"] == "5.0.1"
    # RESP3 null for a nameless connection's CLIENT GETNAME
    c2 = raw()
    c2.cmd("HELLO", "3")
    c2.send(b"*2\r\n$6\r\nCLIENT\r\n$7\r\nGETNAME\r\n")
    assert c2.sock.recv(16) == b"_\r\n"


def test_hello_without_version_keeps_resp2_and_answers_flat_array(raw):
    c = raw()
    reply = c.cmd("HELLO")
    assert isinstance(reply, list), "RESP2 HELLO is a flat array"
    check_hello_fields(hello_dict(reply), 2, c.cmd("CLIENT", "ID"))


def test_hello_3_then_2_switches_back(raw):
    c = raw()
    assert isinstance(c.cmd("HELLO", "3"), dict)
    reply = c.cmd("HELLO", "2")
    assert isinstance(reply, list)
    assert hello_dict(reply)["proto"] == 2


def test_hello_4_is_noproto_and_connection_stays_usable(raw):
    c = raw()
    assert c.cmd("HELLO", "4") == RespError("NOPROTO unsupported protocol version")
    assert c.cmd("HELLO", "1") == RespError("NOPROTO unsupported protocol version")
    assert c.cmd("PING") == "PONG"
    assert hello_dict(c.cmd("HELLO"))["proto"] == 2


def test_hello_with_setname(raw):
    c = raw()
    h = hello_dict(c.cmd("HELLO", "3", "SETNAME", "hello-named"))
    assert h["proto"] == 3
    assert c.cmd("CLIENT", "GETNAME") == b"hello-named"


def test_hello_bad_option_is_error(raw):
    c = raw()
    reply = c.cmd("HELLO", "3", "BOGUS")
    assert isinstance(reply, RespError)
    assert str(reply).startswith("ERR Syntax error in HELLO option 'BOGUS'")
    assert c.cmd("PING") == "PONG"


# --- AUTH ----------------------------------------------------------------------

def test_auth_without_password_configured(raw):
    c = raw()
    assert c.cmd("AUTH", "whatever") == RespError(
        "ERR AUTH <password> called without any password configured for the default user. "
        "Are you sure your configuration is correct?")
    assert c.cmd("PING") == "PONG"


@pytest.mark.server_args("--requirepass", PASSWORD)
def test_requirepass_gates_commands(server, raw):
    c = raw()
    assert c.cmd("GET", "k") == RespError("NOAUTH Authentication required.")
    assert c.cmd("CLIENT", "ID") == RespError("NOAUTH Authentication required.")
    assert c.cmd("AUTH", "wrong") == RespError(
        "WRONGPASS invalid username-password pair or user is disabled.")
    assert c.cmd("AUTH", "default", "wrong") == RespError(
        "WRONGPASS invalid username-password pair or user is disabled.")
    assert c.cmd("AUTH", "nosuchuser", PASSWORD) == RespError(
        "WRONGPASS invalid username-password pair or user is disabled.")
    assert c.cmd("AUTH", PASSWORD) == "OK"
    assert c.cmd("PING") == "PONG"
    c2 = raw()
    assert c2.cmd("AUTH", "default", PASSWORD) == "OK"
    assert c2.cmd("PING") == "PONG"


@pytest.mark.server_args("--requirepass", PASSWORD)
def test_requirepass_with_redis_py(server):
    good = server.client(password=PASSWORD, client_name="authed")
    assert good.ping() is True
    assert good.client_getname() == "authed"
    good_user = server.client(username="default", password=PASSWORD)
    assert good_user.ping() is True
    with pytest.raises(redis.exceptions.AuthenticationError):
        server.client().ping()
    # redis-py 4 reports a bad password as ResponseError, 5 as AuthenticationError
    with pytest.raises(redis.exceptions.RedisError, match="WRONGPASS|invalid username-password"):
        server.client(password="nope").ping()


@pytest.mark.server_args("--requirepass", PASSWORD)
def test_hello_auth_in_one_round_trip(raw):
    c = raw()
    reply = c.cmd("HELLO", "3")
    assert isinstance(reply, RespError) and str(reply).startswith("NOAUTH"), reply
    reply = c.cmd("HELLO", "3", "AUTH", "default", "bad")
    assert reply == RespError("WRONGPASS invalid username-password pair or user is disabled.")
    h = hello_dict(c.cmd("HELLO", "3", "AUTH", "default", PASSWORD, "SETNAME", "x1"))
    assert h["proto"] == 3
    assert c.cmd("CLIENT", "GETNAME") == b"x1"


# --- SELECT --------------------------------------------------------------------

def test_select_isolates_databases(server):
    c0 = server.client()
    c5 = server.client(db=5)
    c0.set("k", "in-db0")
    c5.set("k", "in-db5")
    assert c0.get("k") == "in-db0"
    assert c5.get("k") == "in-db5"
    assert int(c5.client_info()["db"]) == 5


def test_select_errors(raw):
    c = raw()
    assert c.cmd("SELECT", "15") == "OK"
    assert c.cmd("SELECT", "16") == RespError("ERR DB index is out of range")
    assert c.cmd("SELECT", "-1") == RespError("ERR DB index is out of range")
    assert c.cmd("SELECT", "abc") == RespError("ERR value is not an integer or out of range")
    assert client_info_fields(c.cmd("CLIENT", "INFO"))["db"] == "15"


# --- unknown commands / arity --------------------------------------------------

def test_unknown_command_error_text_and_connection_stays_open(raw):
    c = raw()
    assert c.cmd("FOOBAR", "a", "b c") == RespError(
        "ERR unknown command 'FOOBAR', with args beginning with: 'a' 'b c' ")
    assert c.cmd("nosuchcmd") == RespError(
        "ERR unknown command 'nosuchcmd', with args beginning with: ")
    assert c.cmd("PING") == "PONG"
    assert not c.closed_by_server(timeout=0.2)


def test_unknown_command_with_redis_py(r):
    with pytest.raises(redis.exceptions.ResponseError, match="unknown command 'NOPE'"):
        r.execute_command("NOPE", "x")
    assert r.ping() is True


def test_wrong_arity_error_text(raw):
    c = raw()
    assert c.cmd("PING", "a", "b") == RespError("ERR wrong number of arguments for 'ping' command")
    assert c.cmd("GET") == RespError("ERR wrong number of arguments for 'get' command")
    assert c.cmd("SeLeCt") == RespError("ERR wrong number of arguments for 'select' command")
    assert c.cmd("PING") == "PONG"


def test_ping_echo(raw):
    c = raw()
    assert c.cmd("PING") == "PONG"
    assert c.cmd("PING", "hi there") == b"hi there"
    assert c.cmd("ECHO", "x\r\ny\0z") == b"x\r\ny\0z"
    assert c.cmd("ECHO") == RespError("ERR wrong number of arguments for 'echo' command")


def test_commands_are_case_insensitive(raw):
    c = raw()
    assert c.cmd("pInG") == "PONG"
    assert c.cmd("client", "id") == c.cmd("CLIENT", "ID")


# --- READONLY / READWRITE --------------------------------------------------------

def test_readonly_readwrite_answer_ok(raw):
    # Cluster-aware clients send these on connect; feedkv answers OK.
    c = raw()
    assert c.cmd("READONLY") == "OK"
    assert c.cmd("READWRITE") == "OK"
    assert c.cmd("PING") == "PONG"


# --- CLIENT --------------------------------------------------------------------

def test_client_setname_getname(r, raw):
    assert r.client_getname() is None
    assert r.client_setname("worker-1") is True
    assert r.client_getname() == "worker-1"
    c = raw()
    err = "ERR Client names cannot contain spaces, newlines or special characters."
    assert c.cmd("CLIENT", "SETNAME", "has space") == RespError(err)
    assert c.cmd("CLIENT", "SETNAME", "nl\n") == RespError(err)
    assert c.cmd("CLIENT", "GETNAME") is None
    assert c.cmd("CLIENT", "SETNAME", "ok-name") == "OK"
    assert c.cmd("CLIENT", "SETNAME", "") == "OK"  # empty name clears it
    assert c.cmd("CLIENT", "GETNAME") is None


def test_client_id_unique_and_increasing(server):
    ids = [server.client().client_id() for _ in range(4)]
    assert all(isinstance(i, int) and i > 0 for i in ids)
    assert ids == sorted(ids) and len(set(ids)) == 4


def test_client_list_and_info(server):
    a = server.client(client_name="alpha")
    b = server.client(client_name="beta", db=3)
    a.ping()
    b.ping()
    rows = a.client_list()
    by_name = {row["name"]: row for row in rows}
    assert {"alpha", "beta"} <= set(by_name)
    for row in rows:
        for field in ("id", "addr", "laddr", "fd", "name", "age", "idle", "flags", "db",
                      "sub", "psub", "multi", "qbuf", "obl", "oll", "omem", "tot-mem",
                      "events", "cmd", "user", "resp"):
            assert field in row, f"CLIENT LIST lacks {field}: {row}"
        assert re.fullmatch(r"127\.0\.0\.1:\d+", row["addr"]), row["addr"]
    assert by_name["beta"]["db"] == "3"
    assert by_name["alpha"]["cmd"] == "client|list"
    info = a.client_info()
    assert info["name"] == "alpha"
    assert int(info["id"]) == a.client_id()
    assert info["cmd"] == "client|info"


def test_client_list_filters(server, raw):
    a, b = raw(), raw()
    ida, idb = a.cmd("CLIENT", "ID"), b.cmd("CLIENT", "ID")
    only = text(a.cmd("CLIENT", "LIST", "ID", str(idb))).strip().split("\n")
    assert len(only) == 1 and client_info_fields(only[0])["id"] == str(idb)
    both = text(a.cmd("CLIENT", "LIST", "ID", str(ida), str(idb))).strip().split("\n")
    assert sorted(client_info_fields(x)["id"] for x in both) == sorted([str(ida), str(idb)])
    normal = text(a.cmd("CLIENT", "LIST", "TYPE", "normal")).strip().split("\n")
    assert len(normal) >= 2


def test_client_kill_by_id_closes_victim(server, raw):
    killer, victim = raw(), raw()
    vid = victim.cmd("CLIENT", "ID")
    assert killer.cmd("CLIENT", "KILL", "ID", str(vid)) == 1
    assert victim.closed_by_server(timeout=5)
    assert killer.cmd("CLIENT", "KILL", "ID", str(vid)) == 0
    assert killer.cmd("PING") == "PONG"


def test_client_kill_by_addr_old_form(server, raw):
    killer, victim = raw(), raw()
    addr = client_info_fields(victim.cmd("CLIENT", "INFO"))["addr"]
    assert killer.cmd("CLIENT", "KILL", addr) == "OK"
    assert victim.closed_by_server(timeout=5)
    assert killer.cmd("CLIENT", "KILL", addr) == RespError("ERR No such client")
    assert killer.cmd("CLIENT", "KILL", "ADDR", addr) == 0


def test_client_kill_redis_py(server):
    a = server.client()
    b = server.client()
    bid = b.client_id()
    assert a.client_kill_filter(_id=bid) == 1
    # the killed connection is dead; redis-py reconnects on the next command
    # (or the one after, if it notices the close only when reading)
    try:
        new_id = b.client_id()
    except redis.exceptions.ConnectionError:
        new_id = b.client_id()
    assert new_id != bid


def test_client_kill_skipme(raw):
    c = raw()
    addr = client_info_fields(c.cmd("CLIENT", "INFO"))["addr"]
    assert c.cmd("CLIENT", "KILL", "ADDR", addr) == 0  # SKIPME yes by default
    assert c.cmd("PING") == "PONG"
    assert c.cmd("CLIENT", "KILL", "ADDR", addr, "SKIPME", "no") == 1
    assert c.closed_by_server(timeout=5)


def test_client_setinfo(raw):
    c = raw()
    assert c.cmd("CLIENT", "SETINFO", "LIB-NAME", "go-redis(,go1.21)") == "OK"
    assert c.cmd("CLIENT", "SETINFO", "lib-ver", "9.1.0") == "OK"
    info = client_info_fields(c.cmd("CLIENT", "INFO"))
    assert info["lib-name"] == "go-redis(,go1.21)"
    assert info["lib-ver"] == "9.1.0"
    reply = c.cmd("CLIENT", "SETINFO", "BADATTR", "x")
    assert isinstance(reply, RespError) and str(reply).startswith("ERR Unrecognized option 'BADATTR'")
    reply = c.cmd("CLIENT", "SETINFO", "LIB-NAME", "has space")
    assert isinstance(reply, RespError)
    assert c.cmd("PING") == "PONG"


def test_client_unknown_subcommand(raw):
    c = raw()
    reply = c.cmd("CLIENT", "FROB")
    assert isinstance(reply, RespError)
    assert str(reply).startswith("ERR unknown subcommand 'FROB'. Try CLIENT HELP."), reply
    assert c.cmd("PING") == "PONG"


def test_client_reply_off_skip_on(raw):
    c = raw()
    c.send_command("CLIENT", "REPLY", "OFF")
    c.send_command("ECHO", "hidden1")
    c.send_command("CLIENT", "REPLY", "ON")
    assert c.read_reply() == "OK"
    c.send_command("CLIENT", "REPLY", "SKIP")
    c.send_command("ECHO", "hidden2")
    c.send_command("ECHO", "shown")
    assert c.read_reply() == b"shown"


# --- RESET / QUIT --------------------------------------------------------------

def test_reset_restores_connection_defaults(raw):
    c = raw()
    c.cmd("HELLO", "3")
    assert c.cmd("SELECT", "4") == "OK"
    assert c.cmd("CLIENT", "SETNAME", "before-reset") == "OK"
    assert c.cmd("MULTI") == "OK"
    assert c.cmd("PING") == "QUEUED"
    assert c.cmd("RESET") == "RESET"
    info = client_info_fields(c.cmd("CLIENT", "INFO"))
    assert info["db"] == "0"
    assert info["name"] == ""
    assert info["resp"] == "2"
    assert info["multi"] == "-1"
    assert c.cmd("CLIENT", "GETNAME") is None
    assert c.cmd("EXEC") == RespError("ERR EXEC without MULTI")


@pytest.mark.server_args("--requirepass", PASSWORD)
def test_reset_deauthenticates(raw):
    c = raw()
    assert c.cmd("AUTH", PASSWORD) == "OK"
    assert c.cmd("PING") == "PONG"
    assert c.cmd("RESET") == "RESET"
    assert c.cmd("PING") == RespError("NOAUTH Authentication required.")


def test_quit_replies_ok_and_closes(server, raw):
    c = raw()
    c.send_command("QUIT")
    c.send_command("PING")  # must not be answered
    assert c.read_reply() == "OK"
    assert c.closed_by_server(timeout=5)
    assert c.pending() == b""
    assert server.ping_ok()


def test_many_connections_open_and_close(server):
    conns = [server.raw() for _ in range(100)]
    for c in conns:
        c.send_command("PING")
    assert all(c.read_reply() == "PONG" for c in conns)
    for c in conns:
        c.close()
    c = server.client()
    deadline = time.monotonic() + 10
    while len(c.client_list()) > 1 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert len(c.client_list()) == 1  # closed connections are gone from CLIENT LIST
