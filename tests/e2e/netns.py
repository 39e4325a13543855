"""A network namespace a test makes for itself, so a server can be reached
from a non-loopback address without any traffic leaving this machine's own
loopback: inside the namespace the loopback interface also holds 192.0.2.1
(TEST-NET-1, a documentation address), which is not a loopback address to the
server (Redis's and feedkv's "local" means 127.0.0.0/8 or ::1). The namespace
has no other interface, so nothing routes in or out of it. (A dummy interface
would do as well, but needs a kernel module this sandbox may not load.)

    with NetNamespace() as ns:          # skips the test where one cannot be made
        proc = ns.popen([binary, "--bind", "0.0.0.0", ...])
        sock = ns.connect(ns.OUTSIDE_ADDR, port)   # the server sees 192.0.2.1

Sockets are made inside the namespace by a short-lived thread that enters it
(setns applies to the calling thread only), and a socket stays in the
namespace it was made in. Needs root and iproute2 (`ip netns`).
"""

import ctypes
import itertools
import os
import socket
import subprocess
import threading

import pytest

CLONE_NEWNET = 0x40000000
_counter = itertools.count()


def _ip(*args):
    return subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30)


class NetNamespace:
    OUTSIDE_ADDR = "192.0.2.1"

    def __init__(self):
        self.name = f"feedkv-test-{os.getpid()}-{next(_counter)}"
        self.made = False

    def __enter__(self):
        if os.geteuid() != 0:
            pytest.skip("making a network namespace needs root")
        r = _ip("netns", "add", self.name)
        if r.returncode != 0:
            pytest.skip(f"cannot make a network namespace here: {r.stderr.strip()}")
        self.made = True
        for cmd in (["link", "set", "lo", "up"],
                    ["addr", "add", f"{self.OUTSIDE_ADDR}/32", "dev", "lo"]):
            r = _ip("-n", self.name, *cmd)
            if r.returncode != 0:
                self.close()
                pytest.skip(f"cannot set up the namespace ({' '.join(cmd)}): {r.stderr.strip()}")
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        if self.made:
            _ip("netns", "del", self.name)
            self.made = False

    def popen(self, argv, **kw):
        """Starts argv inside the namespace."""
        return subprocess.Popen(["ip", "netns", "exec", self.name, *argv], **kw)

    def socket(self, family=socket.AF_INET):
        """A TCP socket that lives in the namespace."""
        out, err = [], []

        def make():
            libc = ctypes.CDLL(None, use_errno=True)
            fd = os.open(f"/var/run/netns/{self.name}", os.O_RDONLY)
            try:
                if libc.setns(fd, CLONE_NEWNET) != 0:
                    err.append(OSError(ctypes.get_errno(), "setns"))
                    return
                out.append(socket.socket(family, socket.SOCK_STREAM))
            finally:
                os.close(fd)

        # The thread ends inside the namespace; nothing else runs on it.
        t = threading.Thread(target=make)
        t.start()
        t.join()
        if err:
            raise err[0]
        return out[0]

    def connect(self, host, port, timeout=10.0):
        s = self.socket()
        s.settimeout(timeout)
        s.connect((host, port))
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return s
