"""Three attacks against one toursd, one after another, while a prober asks for /healthz:
1,000 early-answered chunked requests with a malformed chunk (the connection leak), 20,000
upload creations (descriptors, quotas), 300 connections pipelining 64 KiB of GET /metrics
without reading (answer queues). Checks: /healthz answers throughout (within HANG_SECONDS: a
bound that tells a hang from slowness on a busy machine; its latency is printed, and make
bench measures it: slow_clients, mixed_load), the daemon never exits, and its descriptors and
memory are back near idle within 10 s of the end.

usage: attack.py PORT PID TOKEN FLOOR_ID
"""
import base64
import os
import socket
import sys
import threading
import time
import uuid

PORT, PID, TOKEN, FLOOR = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
HANG_SECONDS = 10


def descriptors():
    return len(os.listdir(f"/proc/{PID}/fd"))


def rss_mb():
    with open(f"/proc/{PID}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def alive():
    return os.path.exists(f"/proc/{PID}") and open(f"/proc/{PID}/stat").read().split()[2] != "Z"


# The slowest /healthz answer in each phase: before the attacks (the reference), then each attack.
phase = ["idle"]
worst = {}
failures = []
stop = threading.Event()


def probe():
    """/healthz on a fresh connection every 100 ms: the slowest answer is the figure."""
    while not stop.is_set():
        start = time.monotonic()
        try:
            # From another loopback address: the attackers' address has used up its share.
            with socket.create_connection(("127.0.0.1", PORT), timeout=HANG_SECONDS, source_address=("127.0.0.2", 0)) as s:
                s.sendall(b"GET /healthz HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
                answer = s.recv(4096)
                if not answer.startswith(b"HTTP/1.1 200"):
                    failures.append(f"/healthz answered {answer[:40]!r}")
        except OSError as error:
            failures.append(f"/healthz failed: {error}")
        worst[phase[0]] = max(worst.get(phase[0], 0.0), time.monotonic() - start)
        time.sleep(0.1)


def leak_pattern(count=1000):
    for _ in range(count):
        try:
            with socket.create_connection(("127.0.0.1", PORT), timeout=5) as s:
                s.sendall(b"POST /nope HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n")
                s.recv(4096)
        except OSError:
            pass


def creations(count=20000):
    metadata_of = lambda: ",".join(f"{k} {base64.b64encode(v.encode()).decode()}" for k, v in
                                   (("panoramaId", str(uuid.uuid4())), ("floorId", FLOOR), ("contentType", "image/jpeg")))
    s = socket.create_connection(("127.0.0.1", PORT), timeout=10)
    reader = s.makefile("rb")
    statuses = {}
    for _ in range(count):
        request = (f"POST /v1/uploads HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer {TOKEN}\r\nTus-Resumable: 1.0.0\r\n"
                   f"Upload-Length: 1000\r\nUpload-Metadata: {metadata_of()}\r\n\r\n")
        s.sendall(request.encode())
        status = int(reader.readline().split()[1])
        statuses[status] = statuses.get(status, 0) + 1
        length = 0
        while True:
            line = reader.readline()
            if line in (b"\r\n", b""):
                break
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        reader.read(length)
    s.close()
    return statuses


def pipelining(connections=300):
    payload = b"GET /metrics HTTP/1.1\r\nHost: t\r\n\r\n" * (65536 // 34)
    sockets = []
    for _ in range(connections):
        try:
            s = socket.create_connection(("127.0.0.1", PORT), timeout=2)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            try:
                s.sendall(payload)
            except OSError:
                pass
            sockets.append(s)
        except OSError:
            pass
    time.sleep(2)
    for s in sockets:
        s.close()


def main():
    time.sleep(0.5)
    idle_fds, idle_rss = descriptors(), rss_mb()
    prober = threading.Thread(target=probe)
    prober.start()
    time.sleep(1)
    phase[0] = "leak pattern"
    leak_pattern()
    phase[0] = "creations"
    statuses = creations()
    phase[0] = "pipelining"
    pipelining()
    phase[0] = "settling"
    ended = time.monotonic()
    settled = False
    while time.monotonic() - ended < 10:
        # The margin: 1,000 live upload sessions (the tenant's quota of unfinished uploads)
        # and SQLite's page caches stay, as they should.
        if descriptors() <= idle_fds + 8 and rss_mb() <= idle_rss + 12:
            settled = True
            break
        time.sleep(0.2)
    stop.set()
    prober.join()
    print(f"attack: leak pattern x1000, 20000 creations {dict(sorted(statuses.items()))}, 300 pipelining connections")
    slowest = max(seconds for name, seconds in worst.items() if name != "idle")
    each = ", ".join(f"{name} {seconds * 1000:.0f}" for name, seconds in worst.items() if name != "idle")
    print(f"  /healthz slowest {slowest * 1000:.0f} ms under attack ({each}), {worst['idle'] * 1000:.1f} ms before"
          f" (a hang past {HANG_SECONDS} s fails), failures {len(failures)}; daemon alive: {alive()}")
    print(f"  descriptors idle {idle_fds}, after {descriptors()}; RSS idle {idle_rss:.1f} MB, after {rss_mb():.1f} MB;"
          f" back near idle within 10 s: {settled}")
    ok = slowest < HANG_SECONDS and not failures and alive() and settled
    for failure in failures[:5]:
        print("  " + failure)
    print("attack: PASS" if ok else "attack: FAIL")
    sys.exit(0 if ok else 1)


main()
