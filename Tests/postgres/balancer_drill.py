"""The balancer drill (issue 47): HAProxy on the docs' own file (config/haproxy/toursd.cfg)
checking /readyz in front of three toursd on the docs' scale-out file. One daemon reaches the
database through a relay this drill cuts and mends; another is stopped with SIGTERM while
clients keep sending. HAProxy must take each out while it cannot serve and put the first back
once it can, and clients must see no 5xx but for requests in flight at a cut or at the
SIGTERM.

  balancer_drill.py TOURSD WORK DATABASE_URL TOKEN STAY_PORT

STAY_PORT: a daemon of the scale-out drill that stays up. The two others are started here, on
the environment's blob store (the caller's TOURSD_blobStore, TOURSD_blobDir, AWS_*)."""
import csv
import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.parse
import uuid

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from relaying import pipe  # noqa: E402
import toursd_api  # noqa: E402


def fail(message):
    print("FAIL: balancer drill: " + message)
    sys.exit(1)


def wait_for(what, predicate, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.1)
    fail(f"{what}: not within {seconds} s")


class Relay:
    """A TCP relay on a loopback port: cut closes its listener and every connection through it
    (the daemon's path to the database gone), mend listens again on the same port."""

    def __init__(self, target):
        self.target = target
        self.lock = threading.Lock()
        self.sockets = []
        self.listener = None
        self.port = 0
        self.mend()

    def mend(self):
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(64)
        self.port = listener.getsockname()[1]
        self.listener = listener
        threading.Thread(target=self.accept, args=(listener,), daemon=True).start()

    def cut(self):
        with self.lock:
            # shutdown first: close alone does not wake a thread blocked in accept, which
            # would take one more connection.
            try:
                self.listener.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            self.listener.close()
            for sock in self.sockets:
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                sock.close()
            self.sockets = []

    def accept(self, listener):
        for _ in range(500):  # bounded: a daemon opens a few tens of database connections
            try:
                client, _ = listener.accept()
            except OSError:
                return  # cut
            try:
                server = socket.create_connection(self.target)
            except OSError:
                client.close()
                continue
            with self.lock:
                self.sockets += [client, server]
            for source, sink in ((client, server), (server, client)):
                threading.Thread(target=pipe, args=(source, sink), daemon=True).start()


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_toursd(toursd, work, name, environment):
    """A daemon on the docs' scale-out file: (process, port)."""
    process, base, log = toursd_api.start_toursd(toursd, os.path.join(work, name), environment, ["--config", "config/toursd-scale-out.json"])
    if base is None:
        fail(f"{name} did not start: {open(log).read()[-2000:]}")
    return process, int(base.rsplit(":", 1)[1])


class Balancer:
    """HAProxy on the docs' file, with a stats socket of the drill's own (a second file)."""

    def __init__(self, work, ports):
        self.socket_path = os.path.join(work, "haproxy.sock")
        extra = os.path.join(work, "haproxy-stats.cfg")
        with open(extra, "w") as file:
            file.write(f"global\n    stats socket {self.socket_path} mode 600 level admin\n")
        self.port = free_port()
        log = open(os.path.join(work, "haproxy.log"), "w")
        environment = {**os.environ, "TOURSD_BALANCER_BIND": f"127.0.0.1:{self.port}"}
        for index, port in enumerate(ports, 1):
            environment[f"TOURSD_{index}"] = f"127.0.0.1:{port}"
        self.process = subprocess.Popen(["haproxy", "-db", "-f", "config/haproxy/toursd.cfg", "-f", extra],
                                        env=environment, stdout=log, stderr=log)
        wait_for("HAProxy's stats socket", lambda: os.path.exists(self.socket_path), 20)

    def servers(self):
        """Each server's status (UP, DOWN, ...) and the requests HAProxy sent it (stot)."""
        with socket.socket(socket.AF_UNIX) as sock:
            sock.connect(self.socket_path)
            sock.sendall(b"show stat\n")
            text = b""
            while chunk := sock.recv(65536):
                text += chunk
        rows = csv.DictReader(text.decode().lstrip("# ").splitlines())
        return {row["svname"]: (row["status"], int(row["stot"] or 0)) for row in rows if row["svname"].startswith("toursd")}

    def status(self, server):
        return self.servers()[server][0].split(" ")[0]

    def stop(self):
        self.process.terminate()
        self.process.wait(10)


class Clients:
    """Clients sending through the balancer until stopped: GETs of the property list and PUTs
    of a property, each on a new connection, every answer kept with when it began and ended."""

    def __init__(self, port, token, count=4):
        self.port, self.token = port, token
        self.answers = []
        self.lock = threading.Lock()
        self.running = True
        self.threads = [threading.Thread(target=self.run, args=(n,)) for n in range(count)]
        for thread in self.threads:
            thread.start()

    def run(self, n):
        sent = 0
        while self.running and sent < 100_000:  # bounded: the drill lasts some seconds
            sent += 1
            began = time.monotonic()
            connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
            headers = {"Authorization": f"Bearer {self.token}", "Content-Type": "application/json"}
            method = "PUT" if sent % 4 == 0 else "GET"
            said = b""
            try:
                if method == "PUT":
                    body = json.dumps({"name": f"Balanced {n}-{sent}", "floorCount": 1})
                    connection.request("PUT", f"/v1/properties/{uuid.uuid4()}", body=body, headers=headers)
                else:
                    connection.request("GET", "/v1/properties?limit=5", headers=headers)
                response = connection.getresponse()
                status, said = response.status, response.read()
            except OSError as error:
                status = f"{type(error).__name__}"
            finally:
                connection.close()
            with self.lock:
                self.answers.append((began, time.monotonic(), status, f"{method} {said[:120]!r}"))

    def stop(self):
        self.running = False
        for thread in self.threads:
            thread.join(60)
        return self.answers


def check_any_number_of_daemons():
    """The docs' file for one daemon, two, or eight (the fourth edge: it parsed with three only)."""
    for count in (1, 2, 8):
        environment = {key: value for key, value in os.environ.items() if not key.startswith("TOURSD_")}
        environment["TOURSD_BALANCER_BIND"] = "127.0.0.1:1"
        for index in range(1, count + 1):
            environment[f"TOURSD_{index}"] = f"127.0.0.1:{index + 1}"
        checked = subprocess.run(["haproxy", "-c", "-f", "config/haproxy/toursd.cfg"], env=environment, capture_output=True, text=True)
        if checked.returncode != 0:
            fail(f"the HAProxy file with {count} daemons: {checked.stdout[-500:]} {checked.stderr[-500:]}")


def main():
    toursd, work, database, token, stay = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
    check_any_number_of_daemons()
    address = urllib.parse.urlsplit(database)
    relay = Relay((address.hostname, address.port))
    relayed = database.replace(f"@{address.hostname}:{address.port}/", f"@127.0.0.1:{relay.port}/")
    cut_daemon, cut_port = start_toursd(toursd, work, "relayed", {"TOURSD_databaseUrl": relayed})
    drained, drained_port = start_toursd(toursd, work, "drained", {"TOURSD_databaseUrl": database})
    balancer = Balancer(work, [stay, cut_port, drained_port])
    try:
        wait_for("every daemon UP", lambda: all(status == "UP" for status, _ in balancer.servers().values()), 20)
        # /metrics stays inside: not through the balancer's address.
        connection = http.client.HTTPConnection("127.0.0.1", balancer.port, timeout=10)
        connection.request("GET", "/metrics")
        if (status := connection.getresponse().status) != 404:
            fail(f"/metrics through HAProxy answered {status}, not 404")
        connection.close()
        clients = Clients(balancer.port, token)
        time.sleep(1)  # traffic on all three before anything breaks
        instants = {}

        # The relayed daemon's path to the database cut: out, then back once it is mended.
        instants["cut"] = time.monotonic()
        relay.cut()
        wait_for("HAProxy to take out the daemon that lost its database", lambda: balancer.status("toursd2") == "DOWN", 20)
        out = balancer.servers()["toursd2"][1]
        time.sleep(1)
        if balancer.servers()["toursd2"][1] != out:
            fail("HAProxy still sent requests to the daemon it took out")
        relay.mend()
        wait_for("HAProxy to put the daemon back once its database is", lambda: balancer.status("toursd2") == "UP", 30)
        back = balancer.servers()["toursd2"][1]
        wait_for("the mended daemon to get requests again", lambda: balancer.servers()["toursd2"][1] > back, 10)

        # The third daemon stopped: drained (readiness 503 for drainMs) and gone.
        instants["SIGTERM"] = time.monotonic()
        drained.send_signal(signal.SIGTERM)
        wait_for("HAProxy to take out the draining daemon", lambda: balancer.status("toursd3") == "DOWN", 20)
        if drained.poll() is not None:
            fail("the daemon stopped before HAProxy took it out: drainMs is too short for the checks")
        drained.wait(30)
        instants["gone"] = time.monotonic()
        time.sleep(1)
        answers = clients.stop()
    finally:
        balancer.stop()
        for process in (cut_daemon, drained):
            if process.poll() is None:
                process.kill()
            process.wait(30)

    failed = [answer for answer in answers if not (isinstance(answer[2], int) and answer[2] < 500)]
    in_flight = [answer for answer in failed if any(answer[0] <= at <= answer[1] for at in instants.values())]
    counts = {}
    for _, _, status, _ in answers:
        counts[status] = counts.get(status, 0) + 1
    # HAProxy's log: a request's line ends its connection counts with its retries, "+1" when it
    # was sent on to another daemon (here: after a 503 of the daemon without its database).
    logged = [line.split() for line in open(os.path.join(work, "haproxy.log")) if line.startswith("127.0.0.1:")]
    sent_on = sum(1 for fields in logged if len(fields) > 10 and fields[10].split("/")[-1] != "0")
    print(f"balancer drill: {len(answers)} requests through HAProxy: {counts}; "
          f"{len(failed)} failed, {len(in_flight)} of them in flight at a cut or a stop; "
          f"{sent_on} sent on to another daemon by HAProxy")
    outside = [(round(answer[0] - instants["cut"], 2), answer[2], answer[3]) for answer in failed if answer not in in_flight]
    if outside:
        fail(f"clients saw failures outside the moments of a cut or a stop (seconds after the cut, status, what): {outside[:10]}")
    if sent_on == 0:
        fail("HAProxy sent no request on: none met the daemon without its database, so the drill tried nothing")
    if len(answers) < 50:
        fail(f"only {len(answers)} requests were sent")
    print("balancer drill: a daemon that lost its database, then one that drained, were taken out and the first put back: PASS")


if __name__ == "__main__":
    main()
