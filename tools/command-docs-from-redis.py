#!/usr/bin/python3
"""Writes server/command_docs/redis_*.cc: the COMMAND DOCS facts (since,
complexity, history, doc flags, argument trees) of every command feedkv shares
with Redis 7, read from a running Redis 7 server.

    tools/command-docs-from-redis.py [--redis-port 7999] [--feedkv build/feedkv-server]

Which commands to write comes from feedkv's own table (--commands-markdown);
commands only feedkv has (LS*, COUNTER.*, FEED.*, BF.*, ...) are written by
hand in server/command_docs/feedkv.cc. The argument tree is stored in the
compact notation server/command_docs.h describes; the e2e test
test_command_docs.py compares the server's COMMAND DOCS with Redis's.
"""
import argparse
import os
import re
import socket
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT_DIR = os.path.join(ROOT, "server", "command_docs")
MAX_LINES = 700  # a file is split before it passes this


def resp_read(f):
    line = f.readline()
    kind, rest = line[:1], line[1:-2]
    if kind in (b"+", b"-"):
        return rest.decode()
    if kind == b":":
        return int(rest)
    if kind == b"$":
        n = int(rest)
        if n < 0:
            return None
        data = f.read(n + 2)[:-2]
        return data.decode()
    if kind in (b"*", b"%"):
        n = int(rest) * (2 if kind == b"%" else 1)
        return [resp_read(f) for _ in range(n)]
    raise ValueError(f"unexpected reply {line!r}")


def redis_docs(port):
    sock = socket.create_connection(("127.0.0.1", port))
    sock.sendall(b"*2\r\n$7\r\nCOMMAND\r\n$4\r\nDOCS\r\n")
    reply = resp_read(sock.makefile("rb"))
    docs = {}

    def walk(flat):
        for i in range(0, len(flat), 2):
            body = dict(zip(flat[i + 1][::2], flat[i + 1][1::2]))
            docs[flat[i]] = body
            if "subcommands" in body:
                walk(body["subcommands"])

    walk(reply)
    return docs


def feedkv_rows(server):
    md = subprocess.run([server, "--commands-markdown"], check=True, capture_output=True,
                        text=True).stdout
    groups = {}
    group = None
    for line in md.splitlines():
        if line.startswith("## "):
            group = line[3:].strip()
        elif line.startswith("| ") and not line.startswith("| command"):
            groups[line.split("|")[1].strip().lower().replace(" ", "|", 1)] = group
    return list(groups), groups


PLAIN = re.compile(r"[a-z0-9_-]+\Z")
PLAIN_TOKEN = re.compile(r"[A-Za-z0-9_-]+\Z")


def quoted(text, plain):
    if plain.match(text):
        return text
    assert '"' not in text and " " not in text, text
    return f'"{text}"'


def notation(args):
    """The compact argument notation (see server/command_docs.h)."""
    out = []
    for a in args:
        a = dict(zip(a[::2], a[1::2]))
        name, kind, token = a["name"], a["type"], a.get("token")
        if kind == "pure-token" and token is not None and token != "" and name == token.lower() \
                and PLAIN_TOKEN.match(token):
            text = "=" + token
        else:
            text = quoted(name, PLAIN) + ":" + kind
            if token is not None:
                text += "=" + quoted(token, PLAIN_TOKEN)
        if "key_spec_index" in a:
            text += f"#{a['key_spec_index']}"
        if "since" in a:
            text += "@" + a["since"]
        if "deprecated_since" in a:
            text += "!" + a["deprecated_since"]
        flags = a.get("flags", [])
        text += "".join({"optional": "?", "multiple": "*", "multiple_token": "+"}[f] for f in flags)
        if "arguments" in a:
            text += "(" + notation(a["arguments"]) + ")"
        out.append(text)
    return " ".join(out)


def c_string(text):
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def c_lines(text, indent, width=96):
    """A C string literal split at spaces into adjacent literals of <= width."""
    if text == "":
        return [indent + '""']
    pieces, cur = [], ""
    for word in re.split(r"(?<= )", text):
        if cur and len(indent) + len(c_string(cur + word)) > width:
            pieces.append(cur)
            cur = ""
        cur += word
    pieces.append(cur)
    return [indent + c_string(p) for p in pieces]


def entry(name, d):
    lines = ["    {" + c_string(name) + ", " + c_string(d["since"]) + ","]
    fields = [
        ("complexity", d.get("complexity", "")),
        ("arguments", notation(d["arguments"]) if "arguments" in d else ""),
        ("history", "\n".join(f"{v} {t}" for v, t in d.get("history", []))),
        ("doc_flags", " ".join(d.get("doc_flags", []))),
        ("deprecated_since", d.get("deprecated_since", "")),
        ("replaced_by", d.get("replaced_by", "")),
    ]
    while fields and fields[-1][1] == "" and fields[-1][0] not in ("complexity", "arguments"):
        fields.pop()
    for i, (_, value) in enumerate(fields):
        chunk = c_lines(value, "     ")
        chunk[-1] += "}," if i == len(fields) - 1 else ","
        lines += chunk
    return lines


HEADER = """\
// Generated by tools/command-docs-from-redis.py from Redis 7's COMMAND DOCS:
// {what}. Edit by hand or regenerate; the notation is in server/command_docs.h.
#include "server/command_docs/doc_entries.h"

namespace feedkv::server::command_docs {{

namespace {{

const CommandDocEntry kEntries[] = {{
"""

FOOTER = """\
}};

}}  // namespace

std::span<const CommandDocEntry> {func}() {{ return kEntries; }}

}}  // namespace feedkv::server::command_docs
"""


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--redis-port", type=int, default=7999)
    parser.add_argument("--feedkv", default=os.path.join(ROOT, "build", "feedkv-server"))
    opts = parser.parse_args()
    docs = redis_docs(opts.redis_port)
    rows, groups = feedkv_rows(opts.feedkv)
    shared = [r for r in rows if r in docs]
    by_group = {}
    for name in shared:
        by_group.setdefault(groups[name], []).append(name)
    files = []
    for group, names in sorted(by_group.items()):
        chunks, cur = [], []
        for name in sorted(names):
            lines = entry(name, docs[name])
            if cur and sum(len(x) for x in cur) + len(lines) > MAX_LINES:
                chunks.append(cur)
                cur = []
            cur.append(lines)
        chunks.append(cur)
        for i, chunk in enumerate(chunks):
            stem = group.replace("-", "_") + (f"_{i + 1}" if len(chunks) > 1 else "")
            func = "Redis" + "".join(p.capitalize() for p in stem.split("_")) + "Docs"
            files.append((stem, func))
            what = f"the {group} group" + (f", part {i + 1}" if len(chunks) > 1 else "")
            with open(os.path.join(OUT_DIR, f"redis_{stem}.cc"), "w") as f:
                f.write(HEADER.format(what=what))
                for lines in chunk:
                    f.write("\n".join(lines) + "\n")
                f.write(FOOTER.format(func=func))
    with open(os.path.join(OUT_DIR, "redis_files.inc"), "w") as f:
        f.write("// Generated by tools/command-docs-from-redis.py: one line per redis_*.cc.\n")
        for _, func in files:
            f.write(f"FEEDKV_DOCS_FILE({func})\n")
    missing = [r for r in rows if r not in docs]
    print(f"{len(shared)} commands from Redis in {len(files)} files; by hand: {' '.join(missing)}",
          file=sys.stderr)


if __name__ == "__main__":
    main()
