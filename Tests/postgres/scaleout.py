#!/usr/bin/env python3
"""Checks that hold across several toursd on one PostgreSQL (Tests/postgres/scaleout.sh).

--across URL TOKEN TOURSD DATADIR PORT...: every daemon answers the same for ids made through
  the balancer (one tourId each, all distinct; a re-send answered the same by another daemon),
  and a token revoked with `toursd tokens revoke` is refused by every daemon at once.
--kill URL TOKEN PORT PID: a tus upload whose first half went to the daemon on PORT, which is
  then killed with SIGKILL; the upload is completed through the balancer (the other daemons),
  byte for byte, and there is exactly one panorama.
--webhooks URL TOKEN PID: an endpoint made through the balancer and a slow receiver; events
  made through the balancer; the daemon PID killed (SIGKILL) while the daemons deliver; the
  receiver still gets every event of the feed, in order (each first delivery), none the feed
  lacks, and at most a few twice (those in flight at the kill, with their webhook-id)."""
import base64
import hashlib
import json
import os
import signal
import subprocess
import sys
import time
import urllib.parse
import uuid

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "webhooks"))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from receiver import Receiver  # noqa: E402
from toursd_api import request  # noqa: E402


def fail(message):
    print(f"scale-out: FAIL: {message}")
    sys.exit(1)


def across(base, token, toursd, data_dir, ports):
    daemons = [f"http://127.0.0.1:{port}" for port in ports]
    json_headers = {"Content-Type": "application/json"}
    made = {}
    for index in range(30):
        pid = str(uuid.uuid4())
        status, _, content = request(base, "PUT", f"/v1/properties/{pid}", token,
                                     json.dumps({"name": f"Across {index}", "floorCount": 1}).encode(), json_headers)
        if status != 201:
            fail(f"PUT property through the balancer: {status} {content[:200]!r}")
        made[pid] = json.loads(content)["tourId"]
    if len(set(made.values())) != len(made):
        fail("two properties got one tourId")
    for pid, tour in made.items():
        for daemon in daemons:
            status, _, content = request(daemon, "GET", f"/v1/properties/{pid}", token)
            if status != 200 or json.loads(content)["tourId"] != tour:
                fail(f"{daemon} answers {status} for {pid}")
    # A re-send through another daemon is answered the same (200, the same tourId).
    pid, tour = next(iter(made.items()))
    for daemon in daemons:
        status, _, content = request(daemon, "PUT", f"/v1/properties/{pid}", token,
                                     json.dumps({"name": "Across 0", "floorCount": 1}).encode(), json_headers)
        if status != 200 or json.loads(content)["tourId"] != tour:
            fail(f"a re-send to {daemon}: {status}")
    print(f"scale-out: {len(made)} properties made through the balancer, each answered alike by all 3 daemons")

    # A token made and revoked on the command line: every daemon refuses it at once.
    def tokens(*args):
        return subprocess.run([toursd, "tokens", *args, "--data-dir", data_dir], capture_output=True, text=True, timeout=60, check=True).stdout
    other = tokens("create", "--tenant", "scale-out").strip().splitlines()[-1]
    for daemon in daemons:
        if request(daemon, "GET", "/v1/properties", other)[0] != 200:
            fail(f"{daemon} refuses a new token")
    token_id = [line.split()[0] for line in tokens("list").splitlines() if "scale-out" in line][0]
    tokens("revoke", token_id)
    for daemon in daemons:
        if request(daemon, "GET", "/v1/properties", other)[0] != 401:
            fail(f"{daemon} still takes a revoked token")
    print("scale-out: a token revoked on the command line is refused by all 3 daemons at once")

    # A grant revoked on one daemon is refused by the others at once; so is a tenant token
    # revoked over HTTP, and the upload the grant began (its URL).
    status, _, content = request(daemons[0], "POST", "/v1/grants", token, json.dumps(
        {"scopes": ["capture"], "propertyIds": [pid], "expiresInSeconds": 3600}).encode(), json_headers)
    if status != 201:
        fail(f"POST /v1/grants: {status} {content[:200]!r}")
    grant = json.loads(content)
    status, _, content = request(daemons[0], "POST", "/v1/tokens", token)
    if status != 201:
        fail(f"POST /v1/tokens: {status} {content[:200]!r}")
    made_token = json.loads(content)
    status, _, content = request(daemons[0], "PUT", f"/v1/properties/{pid}/floors/{pid}", grant["token"], b'{"number": 0}', json_headers)
    if status not in (200, 201):
        fail(f"a grant's floor: {status} {content[:200]!r}")
    metadata = ",".join(f"{key} {base64.b64encode(value.encode()).decode()}"
                        for key, value in [("panoramaId", str(uuid.uuid4())), ("floorId", pid), ("contentType", "image/jpeg")])
    status, headers, _ = request(daemons[1], "POST", "/v1/uploads", grant["token"], b"",
                                 {"Tus-Resumable": "1.0.0", "Upload-Length": "1000", "Upload-Metadata": metadata})
    location = headers.get("location", "")
    if status != 201 or not location.startswith("/v1/uploads/"):
        fail(f"a grant's tus creation: {status} {location!r}")
    def answers(daemon):
        """What the daemon answers the grant, the token and the grant's upload URL."""
        return (request(daemon, "GET", f"/v1/properties/{pid}", grant["token"])[0],
                request(daemon, "GET", "/v1/properties", made_token["token"])[0],
                request(daemon, "HEAD", location, None, headers={"Tus-Resumable": "1.0.0"})[0])
    for daemon in daemons:
        if answers(daemon) != (200, 200, 200):
            fail(f"{daemon} refuses a new grant, token or upload URL: {answers(daemon)}")
    for path in (f"/v1/grants/{grant['id']}", f"/v1/tokens/{made_token['id']}"):
        if request(daemons[2], "DELETE", path, token)[0] != 204:
            fail(f"DELETE {path} on the third daemon")
    for daemon in daemons:
        if answers(daemon) != (401, 401, 401):
            fail(f"{daemon} still takes a revoked grant, token or upload URL: {answers(daemon)}")
    print("scale-out: a grant and a token revoked on one daemon, and the grant's upload, are refused by all 3 daemons at once")


def kill(base, token, port, pid):
    daemon = f"http://127.0.0.1:{port}"
    tus = {"Tus-Resumable": "1.0.0"}
    floor, prop = str(uuid.uuid4()), str(uuid.uuid4())
    json_headers = {"Content-Type": "application/json"}
    request(base, "PUT", f"/v1/properties/{prop}", token, json.dumps({"name": "Killed", "floorCount": 1}).encode(), json_headers)
    request(base, "PUT", f"/v1/properties/{prop}/floors/{floor}", token, json.dumps({"number": 0}).encode(), json_headers)
    panorama = str(uuid.uuid4())
    data = b"\xff\xd8\xff\xe0" + os.urandom(8 * 1024 * 1024 - 4)  # a JPEG's signature: toursd checks it
    metadata = ",".join(f"{k} {base64.b64encode(v.encode()).decode()}" for k, v in
                        [("panoramaId", panorama), ("floorId", floor), ("contentType", "image/jpeg")])
    status, headers, _ = request(daemon, "POST", "/v1/uploads", token, b"",
                                 dict(tus, **{"Upload-Length": str(len(data)), "Upload-Metadata": metadata}))
    if status != 201:
        fail(f"creation on the first daemon: {status}")
    location = urllib.parse.urlsplit(headers["location"]).path
    half = len(data) // 2
    status, headers, _ = request(daemon, "PATCH", location, token, data[:half],
                                 dict(tus, **{"Upload-Offset": "0", "Content-Type": "application/offset+octet-stream"}))
    if status != 204 or int(headers["upload-offset"]) != half:
        fail(f"the first half on the first daemon: {status}")
    os.kill(pid, signal.SIGKILL)
    # Through the balancer, on the daemons left: HEAD says what was acknowledged, the rest follows.
    deadline = time.monotonic() + 30
    while True:
        status, headers, _ = request(base, "HEAD", location, token, headers=tus)
        if status == 200 or time.monotonic() > deadline:
            break
    offset = int(headers.get("upload-offset", "-1"))
    if status != 200 or offset < half:
        fail(f"HEAD after the kill: {status}, offset {offset} (acknowledged {half})")
    status, headers, _ = request(base, "PATCH", location, token, data[offset:],
                                 dict(tus, **{"Upload-Offset": str(offset), "Content-Type": "application/offset+octet-stream"}))
    if status != 204:
        fail(f"the rest through the other daemons: {status}")
    status, _, content = request(base, "GET", f"/v1/panoramas/{panorama}/content", token)
    if status != 200 or hashlib.sha256(content).digest() != hashlib.sha256(data).digest():
        fail(f"the panorama read back: {status}, {len(content)} bytes")
    status, _, content = request(base, "GET", f"/v1/properties/{prop}/status", token)
    count = json.loads(content)["panoramaCount"]
    if count != 1:
        fail(f"{count} panoramas, not 1")
    print(f"scale-out: a daemon killed after {half} acknowledged bytes of an upload; the others resumed at {offset} "
          f"and completed it byte for byte, one panorama")


def webhooks(base, token, pid):
    receiver = Receiver(delay=0.02)  # a slow receiver: deliveries are under way when the daemon dies
    json_headers = {"Content-Type": "application/json"}
    # Endpoints schemathesis made (random targets) go first: only this receiver's remain.
    status, _, body = request(base, "GET", "/v1/webhooks", token)
    for endpoint in json.loads(body)["items"]:
        request(base, "DELETE", "/v1/webhooks/" + endpoint["id"], token)
    status, _, body = request(base, "POST", "/v1/webhooks", token,
                              json.dumps({"url": receiver.url}).encode(), json_headers)
    if status != 201:
        fail(f"the webhook endpoint: {status} {body!r}")
    status, _, body = request(base, "GET", "/v1/webhooks/" + json.loads(body)["id"], token)
    start = json.loads(body)["after"]
    for _ in range(60):
        status, _, _ = request(base, "PUT", f"/v1/properties/{uuid.uuid4()}", token,
                               json.dumps({"name": "Hooked", "floorCount": 1}).encode(), json_headers)
        if status != 201:
            fail(f"a property through the balancer: {status}")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len(receiver.received()[0]) < 10:
        time.sleep(0.05)
    os.kill(pid, signal.SIGKILL)
    before = len(receiver.received()[0])

    def feed():
        events, after = [], start
        while True:
            status, _, body = request(base, "GET", f"/v1/events?after={after}&limit=200", token)
            page = json.loads(body)
            if not page["items"]:
                return events
            events += [event["id"] for event in page["items"]]
            after = page["next"]
    expected = feed()
    firsts = receiver.wait_for(expected, 120)
    received, _ = receiver.received()
    if firsts[:len(expected)] != expected:
        fail(f"the receiver's first deliveries ({len(firsts)}) do not begin with the feed's {len(expected)} events in order")
    # Events committed since (an earlier step's tour.changed settling) follow, in the feed's order.
    now = feed()
    if not Receiver.follows_feed(firsts, now):
        fail(f"the receiver's first deliveries ({len(firsts)}) are not the feed's events ({len(now)}) in order")
    if not set(event for _, event in received) <= set(now):
        fail("the receiver got an event the feed does not hold")
    twice = len(received) - len(firsts)
    if twice > 3:
        fail(f"{twice} events delivered twice: more than those in flight at the kill")
    receiver.stop()
    print(f"scale-out: webhooks: a daemon killed after {before} of {len(expected)} deliveries; every event reached the receiver "
          f"in order, {twice} twice (in flight at the kill)")


if sys.argv[1] == "--across":
    across(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5], sys.argv[6:])
elif sys.argv[1] == "--webhooks":
    webhooks(sys.argv[2], sys.argv[3], int(sys.argv[4]))
elif sys.argv[1] == "--kill":
    kill(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))
else:
    fail(f"unknown mode {sys.argv[1]}")
