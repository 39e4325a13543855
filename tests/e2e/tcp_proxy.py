"""A small TCP proxy on loopback for network-fault tests: no iptables, no
NET_ADMIN. Clients connect to proxy.port; bytes go to and from the target.

  blackhole()  - keep the connections but move no bytes either way (a partition)
  heal()       - move bytes again
  cut()        - close every connection now
  cut_after(n) - close a connection once n bytes went from the target to the
                 client (a link cut in the middle of a transfer); one shot
  hold_after(n) - blackhole() once n bytes went from the target to a client
                 (a transfer paused in the middle); one shot, heal() resumes
"""

import select
import socket
import threading


class TcpProxy:
    def __init__(self, target_port, target_host="127.0.0.1"):
        self.target = (target_host, target_port)
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(16)
        self.port = self.listener.getsockname()[1]
        self.lock = threading.Lock()
        self.pairs = []
        self.blocked = False
        self.cut_at = None      # bytes target->client after which to cut (one shot)
        self.hold_at = None     # ... after which to blackhole (one shot)
        self.connections = 0
        self.stopped = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while not self.stopped:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(self.target, timeout=5)
            except OSError:
                client.close()
                continue
            with self.lock:
                self.connections += 1
                pair = [client, upstream]
                self.pairs.append(pair)
            threading.Thread(target=self._pump, args=(pair,), daemon=True).start()

    def _pump(self, pair):
        client, upstream = pair
        down = 0  # bytes target -> client
        try:
            while not self.stopped:
                if self.blocked:
                    select.select([], [], [], 0.05)
                    continue
                r, _, _ = select.select([client, upstream], [], [], 0.05)
                for s in r:
                    data = s.recv(65536)
                    if not data:
                        return
                    if s is upstream:
                        with self.lock:
                            limit = self.cut_at
                        if limit is not None and down + len(data) >= limit:
                            client.sendall(data[:max(0, limit - down)])
                            with self.lock:
                                self.cut_at = None
                            return
                        with self.lock:
                            hold = self.hold_at
                        if hold is not None and down + len(data) >= hold:
                            with self.lock:
                                self.hold_at = None
                                self.blocked = True
                        down += len(data)
                        client.sendall(data)
                        if self.blocked:
                            break
                    else:
                        upstream.sendall(data)
        except OSError:
            return
        finally:
            for s in pair:
                try:
                    s.close()
                except OSError:
                    pass
            with self.lock:
                if pair in self.pairs:
                    self.pairs.remove(pair)

    def blackhole(self):
        self.blocked = True

    def heal(self):
        self.blocked = False

    def cut(self):
        with self.lock:
            pairs = list(self.pairs)
        for pair in pairs:
            for s in pair:
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def cut_after(self, n):
        with self.lock:
            self.cut_at = n

    def hold_after(self, n):
        with self.lock:
            self.hold_at = n

    def close(self):
        self.stopped = True
        self.listener.close()
        self.cut()
