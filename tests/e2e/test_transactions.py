"""MULTI / EXEC / DISCARD / WATCH / UNWATCH, through redis-py pipelines and raw
RESP, with Redis's semantics for queue-time and run-time errors."""

import pytest
import redis

from conftest import RespError

EXECABORT = "EXECABORT Transaction discarded because of previous errors."


def test_pipeline_with_transaction(r):
    with r.pipeline(transaction=True) as p:
        p.set("a", "1").incr("a").incrby("a", 10).get("a").mget("a", "missing")
        assert p.execute() == [True, 2, 12, "12", ["12", None]]
    assert r.get("a") == "12"


def test_pipeline_without_transaction(r):
    with r.pipeline(transaction=False) as p:
        for i in range(1000):
            p.set(f"k{i}", i)
        for i in range(1000):
            p.get(f"k{i}")
        res = p.execute()
    assert res[:1000] == [True] * 1000
    assert res[1000:] == [str(i) for i in range(1000)]


def test_large_transaction(r):
    with r.pipeline() as p:
        for i in range(5000):
            p.incr("counter")
        res = p.execute()
    assert res == list(range(1, 5001))
    assert r.get("counter") == "5000"


def test_queued_commands_run_only_at_exec(server, raw):
    c = raw()
    other = server.client()
    assert c.cmd("MULTI") == "OK"
    assert c.cmd("SET", "k", "v") == "QUEUED"
    assert c.cmd("INCR", "n") == "QUEUED"
    assert other.get("k") is None
    assert other.get("n") is None
    assert c.cmd("EXEC") == ["OK", 1]
    assert other.get("k") == "v"


def test_discard(raw):
    c = raw()
    assert c.cmd("MULTI") == "OK"
    assert c.cmd("SET", "k", "v") == "QUEUED"
    assert c.cmd("DISCARD") == "OK"
    assert c.cmd("GET", "k") is None
    assert c.cmd("DISCARD") == RespError("ERR DISCARD without MULTI")
    assert c.cmd("EXEC") == RespError("ERR EXEC without MULTI")


def test_empty_transaction(raw):
    c = raw()
    assert c.cmd("MULTI") == "OK"
    assert c.cmd("EXEC") == []


def test_nested_multi_is_an_error_but_transaction_continues(raw):
    c = raw()
    assert c.cmd("MULTI") == "OK"
    assert c.cmd("MULTI") == RespError("ERR MULTI calls can not be nested")
    assert c.cmd("SET", "k", "v") == "QUEUED"
    assert c.cmd("EXEC") == ["OK"]


def test_watch_inside_multi_is_an_error(raw):
    c = raw()
    assert c.cmd("MULTI") == "OK"
    assert c.cmd("WATCH", "k") == RespError("ERR WATCH inside MULTI is not allowed")
    assert c.cmd("SET", "k", "v") == "QUEUED"
    assert c.cmd("EXEC") == ["OK"]


# --- WATCH ---------------------------------------------------------------------------

def test_watch_conflict_raises_watch_error(server):
    r = server.client()
    other = server.client()
    r.set("balance", 100)
    with r.pipeline() as p:
        p.watch("balance")
        current = int(p.get("balance"))
        other.set("balance", 50)  # a concurrent change
        p.multi()
        p.set("balance", current - 10)
        with pytest.raises(redis.exceptions.WatchError):
            p.execute()
    assert r.get("balance") == "50"


def test_watch_without_conflict_executes(server):
    r = server.client()
    r.set("balance", 100)
    with r.pipeline() as p:
        p.watch("balance")
        current = int(p.get("balance"))
        p.multi()
        p.set("balance", current - 10)
        assert p.execute() == [True]
    assert r.get("balance") == "90"


def test_watch_retry_loop_with_redis_py_transaction_helper(server):
    r = server.client()
    other = server.client()
    r.set("n", 0)
    attempts = []

    def body(pipe):
        v = int(pipe.get("n"))
        attempts.append(v)
        if len(attempts) == 1:
            other.incr("n")  # makes the first attempt fail
        pipe.multi()
        pipe.set("n", v + 100)

    r.transaction(body, "n")
    assert len(attempts) == 2
    assert r.get("n") == "101"


def test_watch_missing_key_then_created(server, raw):
    c = raw()
    other = server.client()
    assert c.cmd("WATCH", "ghost") == "OK"
    other.set("ghost", "boo")
    assert c.cmd("MULTI") == "OK"
    assert c.cmd("SET", "x", "1") == "QUEUED"
    assert c.cmd("EXEC") is None  # nil multi-bulk: aborted
    assert c.cmd("EXISTS", "x") == 0


def test_watch_own_modification_aborts(raw):
    c = raw()
    c.cmd("SET", "k", "1")
    assert c.cmd("WATCH", "k") == "OK"
    c.cmd("SET", "k", "2")
    c.cmd("MULTI")
    c.cmd("SET", "k", "3")
    assert c.cmd("EXEC") is None
    assert c.cmd("GET", "k") == b"2"


def test_watch_sees_delete_expire_and_flush(server, raw):
    other = server.client()
    for change in (lambda: other.delete("k"), lambda: other.expire("k", 100),
                   lambda: other.flushdb(), lambda: other.rename("k", "k2"),
                   lambda: other.incr("k")):
        other.flushdb()
        other.set("k", "5")
        c = raw()
        assert c.cmd("WATCH", "k") == "OK"
        change()
        c.cmd("MULTI")
        c.cmd("PING")
        assert c.cmd("EXEC") is None
        c.close()


def test_watch_other_db_is_independent(server, raw):
    c = raw()
    other = server.client(db=1)
    assert c.cmd("WATCH", "k") == "OK"
    other.set("k", "in-db1")  # same name, other database
    c.cmd("MULTI")
    c.cmd("SET", "k", "mine")
    assert c.cmd("EXEC") == ["OK"]


def test_unwatch_and_exec_clear_watches(server, raw):
    c = raw()
    other = server.client()
    assert c.cmd("WATCH", "k") == "OK"
    assert c.cmd("UNWATCH") == "OK"
    other.set("k", "x")
    c.cmd("MULTI")
    c.cmd("PING")
    assert c.cmd("EXEC") == ["PONG"]
    # after an EXEC (even an aborted one) nothing stays watched
    assert c.cmd("WATCH", "k") == "OK"
    other.set("k", "y")
    c.cmd("MULTI")
    assert c.cmd("EXEC") is None
    other.set("k", "z")
    c.cmd("MULTI")
    c.cmd("PING")
    assert c.cmd("EXEC") == ["PONG"]


def test_discard_unwatches(server, raw):
    c = raw()
    other = server.client()
    c.cmd("WATCH", "k")
    c.cmd("MULTI")
    c.cmd("DISCARD")
    other.set("k", "x")
    c.cmd("MULTI")
    c.cmd("PING")
    assert c.cmd("EXEC") == ["PONG"]


# --- errors --------------------------------------------------------------------------

def test_execabort_on_queued_syntax_error(raw):
    c = raw()
    assert c.cmd("MULTI") == "OK"
    assert c.cmd("SET", "a", "1") == "QUEUED"
    assert c.cmd("SET", "b") == RespError("ERR wrong number of arguments for 'set' command")
    assert c.cmd("SET", "c", "3") == "QUEUED"
    assert c.cmd("EXEC") == RespError(EXECABORT)
    assert c.cmd("EXISTS", "a", "b", "c") == 0
    assert c.cmd("EXEC") == RespError("ERR EXEC without MULTI")


def test_execabort_on_unknown_command(raw):
    c = raw()
    c.cmd("MULTI")
    c.cmd("SET", "a", "1")
    reply = c.cmd("NOSUCHCMD", "x")
    assert isinstance(reply, RespError) and str(reply).startswith("ERR unknown command 'NOSUCHCMD'")
    assert c.cmd("EXEC") == RespError(EXECABORT)
    assert c.cmd("EXISTS", "a") == 0


def test_execabort_with_redis_py(r):
    with r.pipeline() as p:
        p.set("a", 1)
        p.execute_command("SET", "b")  # wrong arity: rejected when queued
        # redis-py reports the queue-time error of the EXECABORTed transaction
        with pytest.raises(redis.exceptions.ResponseError, match="wrong number of arguments"):
            p.execute()
    assert r.exists("a") == 0


def test_runtime_error_reported_per_command(raw):
    c = raw()
    c.cmd("SET", "s", "not-a-number")
    assert c.cmd("MULTI") == "OK"
    assert c.cmd("SET", "a", "1") == "QUEUED"
    assert c.cmd("INCR", "s") == "QUEUED"       # fails at run time
    assert c.cmd("INCR", "a") == "QUEUED"
    assert c.cmd("SETEX", "b", "0", "x") == "QUEUED"  # bad argument: a run-time error too
    res = c.cmd("EXEC")
    assert res == ["OK", RespError("ERR value is not an integer or out of range"), 2,
                   RespError("ERR invalid expire time in 'setex' command")]
    assert c.cmd("GET", "a") == b"2"  # no rollback


def test_runtime_wrongtype_inside_exec(raw):
    c = raw()
    c.cmd("SADD", "set", "m")
    c.cmd("MULTI")
    c.cmd("SET", "a", "1")
    c.cmd("GET", "set")
    c.cmd("INCR", "a")
    assert c.cmd("EXEC") == ["OK", RespError(
        "WRONGTYPE Operation against a key holding the wrong kind of value"), 2]


def test_runtime_error_with_redis_py(r):
    r.set("s", "abc")
    with r.pipeline() as p:
        p.set("a", 1).incr("s").incr("a")
        res = p.execute(raise_on_error=False)
    assert res[0] is True
    assert isinstance(res[1], redis.exceptions.ResponseError)
    assert "not an integer" in str(res[1])
    assert res[2] == 2
    with r.pipeline() as p:
        p.incr("s").set("b", 1)
        with pytest.raises(redis.exceptions.ResponseError):
            p.execute()
    assert r.get("b") == "1"


def test_select_inside_multi(server, raw):
    c = raw()
    c.cmd("MULTI")
    c.cmd("SET", "k", "db0")
    c.cmd("SELECT", "2")
    c.cmd("SET", "k", "db2")
    assert c.cmd("EXEC") == ["OK", "OK", "OK"]
    assert server.client().get("k") == "db0"
    assert server.client(db=2).get("k") == "db2"


def test_multi_state_in_client_list(raw):
    c = raw()
    c.cmd("MULTI")
    c.cmd("PING")
    c.cmd("PING")
    other = raw()
    rows = other.cmd("CLIENT", "LIST").decode().strip().split("\n")
    me = [row for row in rows if " flags=x " in f" {row} "]
    assert len(me) == 1 and " multi=2 " in f" {me[0]} "
    assert c.cmd("EXEC") == ["PONG", "PONG"]
