"""A webhook receiver on loopback for the Python drills (the power-loss test, scale-out): it
keeps each delivery's webhook-id and event id in the order they came, answering 200 after
`delay` seconds."""
import http.server
import json
import threading
import time


class Receiver:
    def __init__(self, delay=0.0):
        self.deliveries, self.lock = [], threading.Lock()
        # Each delivery's headers (names lowercased) and body, for a signature's check.
        self.requests = []
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                time.sleep(delay)
                with receiver.lock:
                    receiver.deliveries.append((self.headers.get("webhook-id"), json.loads(body)["id"]))
                    receiver.requests.append(({name.lower(): value for name, value in self.headers.items()}, body))
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *_):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"

    def received(self):
        """Every delivery so far, and each message's first delivery's event id, in order."""
        with self.lock:
            received = list(self.deliveries)
        seen, firsts = set(), []
        for message, event in received:
            if message not in seen:
                seen.add(message)
                firsts.append(event)
        return received, firsts

    def wait_for(self, expected, seconds):
        """Waits until the first deliveries begin with `expected` (event ids in order); returns
        the first deliveries then, which do not begin so when the time ran out or they went
        astray. Events committed after `expected` was read (a tour.changed settling) may
        follow: `follows_feed` checks them."""
        deadline = time.monotonic() + seconds
        while True:
            _, firsts = self.received()
            seen = min(len(firsts), len(expected))
            if firsts[:len(expected)] == expected or time.monotonic() > deadline or firsts[:seen] != expected[:seen]:
                return firsts
            time.sleep(0.2)

    @staticmethod
    def follows_feed(firsts, feed):
        """Whether first deliveries are the feed's events in order, from its start: `feed` is
        read after `firsts`, so it holds every event delivered by then."""
        return firsts == feed[:len(firsts)]

    def stop(self):
        self.server.shutdown()
