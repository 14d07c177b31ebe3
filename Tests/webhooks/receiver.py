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
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                time.sleep(delay)
                with receiver.lock:
                    receiver.deliveries.append((self.headers.get("webhook-id"), json.loads(body)["id"]))
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
        """Waits until the first deliveries are `expected` (event ids in order); returns the
        first deliveries then (which differ from `expected` when the time ran out or they
        went astray)."""
        deadline = time.monotonic() + seconds
        while True:
            _, firsts = self.received()
            if firsts == expected or time.monotonic() > deadline or firsts != expected[:len(firsts)]:
                return firsts
            time.sleep(0.2)

    def stop(self):
        self.server.shutdown()
