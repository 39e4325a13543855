"""COMMAND DOCS beside Redis 7: every command both servers have is documented
byte for byte as Redis documents it (summary, since, group, complexity, doc
flags, history and the argument tree), in RESP2 and RESP3; the commands only
feedkv has carry the same fields."""
import pytest

from conftest import RawConn, is_real_redis


def raw_reply(c, *args):
    """The reply's bytes as the server sent them."""
    del c.buf[:c.pos]
    c.pos = 0
    c.send_command(*args)
    c.read_reply()
    return bytes(c.buf[:c.pos])


def names(c):
    return {n.decode() for n in c.cmd("COMMAND", "LIST")}


def containers(c, common):
    """{container: [subcommand fullnames]} from COMMAND DOCS."""
    c.cmd("HELLO", "3")
    docs = c.cmd("COMMAND", "DOCS", *sorted(common))
    return {k.decode(): sorted(s.decode() for s in v[b"subcommands"])
            for k, v in docs.items() if b"subcommands" in v}


def test_docs_match_redis_for_every_shared_command(server, redis7_server):
    ours, theirs = RawConn(server.port), RawConn(redis7_server.port)
    common = names(ours) & names(theirs)
    assert len(common) > 200
    ours_subs, theirs_subs = containers(ours, common), containers(theirs, common)
    assert set(ours_subs) == set(theirs_subs)
    rows = [n for n in common if n not in ours_subs]
    for container, subs in ours_subs.items():
        rows += sorted(set(subs) & set(theirs_subs[container]))
    assert len(rows) > 300
    differ = []
    for proto in ("2", "3"):
        ours.cmd("HELLO", proto)
        theirs.cmd("HELLO", proto)
        for name in sorted(rows):
            if raw_reply(ours, "COMMAND", "DOCS", name) != raw_reply(theirs, "COMMAND", "DOCS", name):
                differ.append(f"{name} (RESP{proto})")
        # A container's own fields match too; its subcommands (in Redis's hash
        # order) were compared one by one above.
        for container in ours_subs:
            mine, redis = (c.cmd("COMMAND", "DOCS", container) for c in (ours, theirs))
            if proto == "3":
                mine, redis = (d[container.encode()] for d in (mine, redis))
                mine.pop(b"subcommands")
                redis.pop(b"subcommands")
            else:
                mine, redis = (d[1][:-2] for d in (mine, redis))
            if mine != redis:
                differ.append(f"{container} (RESP{proto})")
    assert not differ, f"{len(differ)} differ: {differ[:20]}"


def test_docs_of_feedkv_commands_have_arguments(server):
    if is_real_redis():
        pytest.skip("feedkv's own commands")
    c = RawConn(server.port)
    c.cmd("HELLO", "3")
    docs = c.cmd("COMMAND", "DOCS", "lsadd", "counter.mget", "feed.timeline", "bf.insert")
    assert set(docs) == {b"lsadd", b"counter.mget", b"feed.timeline", b"bf.insert"}
    for name, doc in docs.items():
        assert doc[b"since"] and doc[b"complexity"] and doc[b"arguments"], name
    key, members = docs[b"lsadd"][b"arguments"]
    assert key == {b"name": b"key", b"type": b"key", b"key_spec_index": 0}
    assert members[b"type"] == b"integer" and members[b"flags"] == ["multiple"]
    cursor = docs[b"feed.timeline"][b"arguments"][1]
    assert cursor[b"type"] == b"oneof" and cursor[b"flags"] == ["optional"]
    assert [a[b"token"] for a in cursor[b"arguments"]] == [b"BEFORE", b"AFTER"]
    # Every row, subcommands too, carries since and group.
    everything = c.cmd("COMMAND", "DOCS")
    for name, doc in everything.items():
        assert doc[b"since"] and doc[b"group"] and doc[b"summary"], name
        for sub, sub_doc in doc.get(b"subcommands", {}).items():
            assert sub_doc[b"since"], sub
