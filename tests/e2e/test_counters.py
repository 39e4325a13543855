"""Schema counters end to end through redis-py (issue 4)."""

import pytest
import redis

pytestmark = pytest.mark.server_args("--counter-table-size", "4kb")


def create(r):
    assert r.execute_command("COUNTER.CREATE", "post", "repost:20", "comment:20",
                             "like:24", "read:32") in (b"OK", "OK", True)


def test_incr_get_and_clamp(r):
    create(r)
    assert r.execute_command("COUNTER.INCRBY", "post", 1001, "like", 5) == 5
    assert r.execute_command("COUNTER.INCRBY", "post", 1001, "like", -9) == 0
    assert r.execute_command("COUNTER.INCRBY", "post", 1001, "read", 42) == 42
    flat = r.execute_command("COUNTER.GET", "post", 1001)
    assert list(flat) == ["repost", 0, "comment", 0, "like", 0, "read", 42]
    assert r.execute_command("COUNTER.GET", "post", 1001, "read", "like") == [42, 0]


def test_timeline_page_mget_in_a_pipeline(r):
    create(r)
    with r.pipeline(transaction=True) as p:
        for post in range(50):
            p.execute_command("COUNTER.INCRBY", "post", 5000 + post, "like", post + 1)
        p.execute()
    page = r.execute_command("COUNTER.MGET", "post", *range(5000, 5050), "FIELDS", "like")
    assert [row[0] for row in page] == list(range(1, 51))


def test_rolls_tables_and_overflows_to_aux(r):
    create(r)
    for i in range(3000):
        r.execute_command("COUNTER.INCRBY", "post", i, "read", 1)
    r.execute_command("COUNTER.SET", "post", 7, "like", 2**24 - 1)
    assert r.execute_command("COUNTER.INCRBY", "post", 7, "like", 1) == 2**24
    info = r.execute_command("COUNTER.INFO", "post")
    fields = dict(zip(info[::2], info[1::2]))
    assert fields["keys"] == 3000
    assert fields["aux_keys"] == 1
    assert len(fields["tables"]) > 1
    assert r.info("counters")["counter_keys"] == 3000


def test_errors_change_nothing(r):
    create(r)
    with pytest.raises(redis.ResponseError, match="no such counter space"):
        r.execute_command("COUNTER.INCRBY", "nope", 1, "like", 1)
    with pytest.raises(redis.ResponseError, match="no such field"):
        r.execute_command("COUNTER.INCRBY", "post", 1, "nope", 1)
    with pytest.raises(redis.ResponseError, match="not an integer"):
        r.execute_command("COUNTER.INCRBY", "post", "abc", "like", 1)
    r.execute_command("COUNTER.SET", "post", 1, "read", 2**64 - 1)
    with pytest.raises(redis.ResponseError, match="overflow"):
        r.execute_command("COUNTER.INCRBY", "post", 1, "read", 1)
    assert r.execute_command("COUNTER.GET", "post", 1, "read") == [str(2**64 - 1)]
    with pytest.raises(redis.ResponseError, match="different schema"):
        r.execute_command("COUNTER.CREATE", "post", "like:8")
