"""Power loss under toursd (issue 18): its data directory on powerlossfs, uploads of every kind
acknowledged by clients that keep their own ledger, power lost at random points (the daemon
killed, then everything unsynced dropped), the daemon restarted; every acknowledged item
must be there, byte for byte, with no row without its file and no file without its row.
The events outbox (issue 34) too: every acknowledged change has its event in the feed, no
event names a change that did not happen, and a webhook receiver gets every event of the
feed, in order, across the power losses.

usage: server.py POWERLOSSFS TOURSD [--rounds N] [--seed S]
"""
import argparse, base64, hashlib, http.client, json, os, random, signal, sqlite3, subprocess, sys, threading, time, uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "webhooks"))
from powerloss import PowerLossFS  # noqa: E402
from receiver import Receiver  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument("fs")
parser.add_argument("toursd")
parser.add_argument("--rounds", type=int, default=6)
parser.add_argument("--seed", type=int, default=int(time.time()))
parser.add_argument("--clients", type=int, default=4)
args = parser.parse_args()
rng = random.Random(args.seed)
# Panoramas start as JPEGs do: toursd refuses bytes that are not of their declared type.
JPEG_SIGNATURE = b"\xff\xd8\xff\xe0"
print(f"power loss under toursd: {args.rounds} rounds, {args.clients} clients, seed {args.seed}", flush=True)

fs = PowerLossFS(args.fs, "powerloss-")
work, mount = fs.work, fs.mount
data = os.path.join(mount, "toursd")
config = os.path.join(work, "toursd.json")
json.dump({"maxConnections": 64, "ioThreads": 2, "webhookAllowPrivateTargets": True, "webhookPollMs": 50, "webhookBackoffBaseMs": 50,
           "webhookBackoffMaxMs": 500, "webhookTimeoutMs": 1000, "tourChangedQuietSeconds": 3600}, open(config, "w"))


receiver = Receiver()


class Daemon:
    def __init__(self):
        self.log = open(os.path.join(work, "toursd.log"), "a")
        self.process = subprocess.Popen([args.toursd, "serve", "--config", config, "--port", "0", "--data-dir", data],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        deadline = time.time() + 20
        self.port = None
        while time.time() < deadline:
            line = self.process.stderr.readline()
            if not line:
                break
            self.log.write(line)
            if "listening on http://" in line:
                self.port = int(line.split("listening on http://")[1].split()[0].split(":")[1])
                break
        if self.port is None:
            sys.exit(f"toursd did not start; log in {self.log.name}")
        threading.Thread(target=self.drain, daemon=True).start()

    def drain(self):
        for line in self.process.stderr:
            self.log.write(line)

    def kill(self):
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=20)

    def stop(self):
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(timeout=30)


class Ledger:
    """What the server acknowledged, by client; `pending` is the one request each client had
    in flight when power went (it may or may not have happened)."""
    def __init__(self):
        self.properties = {}   # id -> name
        self.floors = {}       # floor id -> {"plans": [planId...], "rooms": [...], "map": sha or None}
        self.panoramas = {}    # id -> sha256
        self.uploads = {}      # upload location -> (panorama id, acknowledged offset, length, sha256)
        self.lock = threading.Lock()


ledger = Ledger()
pending = {}  # client -> description of its request in flight


class Client:
    def __init__(self, number, port, token, stop):
        self.number, self.port, self.token, self.stop = number, port, token, stop
        self.connection = None

    def request(self, method, path, body=b"", headers=None, what=None):
        headers = dict(headers or {})
        headers["Authorization"] = f"Bearer {self.token}"
        pending[self.number] = what
        if self.connection is None:
            self.connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        self.connection.request(method, path, body=body, headers=headers)
        response = self.connection.getresponse()
        data = response.read()
        return response.status, dict((k.lower(), v) for k, v in response.getheaders()), data

    def json(self, method, path, value, what):
        return self.request(method, path, json.dumps(value).encode(), {"Content-Type": "application/json"}, what)

    def run(self):
        try:
            while not self.stop.is_set():
                self.step()
        except (OSError, http.client.HTTPException):
            pass  # the daemon died: this client's request in flight stays pending

    def step(self):
        with ledger.lock:
            floors = list(ledger.floors.keys())
        mine = [floor for floor in floors if floor.startswith(f"{self.number:08x}")]
        choice = rng.random()
        if not mine or choice < 0.1:
            pid = str(uuid.uuid4())
            floor = f"{self.number:08x}" + str(uuid.uuid4())[8:]
            status, _, _ = self.json("PUT", f"/v1/properties/{pid}", {"name": f"P{self.number}", "floorCount": 1}, ("property", pid))
            assert status in (200, 201), status
            with ledger.lock:
                ledger.properties[pid] = f"P{self.number}"
            status, _, _ = self.json("PUT", f"/v1/properties/{pid}/floors/{floor}", {"number": 0}, ("floor", floor))
            assert status in (200, 201), status
            with ledger.lock:
                ledger.floors[floor] = {"plans": [], "rooms": [], "map": None}
            return
        floor = rng.choice(mine)
        if choice < 0.25:
            plan_id, rooms = str(uuid.uuid4()), [str(uuid.uuid4()) for _ in range(rng.randint(1, 3))]
            body = {"planId": plan_id, "mode": "newScan", "rooms": [{"id": room, "name": "R", "outline": [[0, 0], [3, 0], [3, 3]],
                                                                      "capture": {"k": index}} for index, room in enumerate(rooms)]}
            status, _, _ = self.json("PUT", f"/v1/floors/{floor}/plan", body, ("plan", floor, plan_id, tuple(rooms)))
            assert status == 200, status
            with ledger.lock:
                state = ledger.floors[floor]
                state["plans"].append(plan_id)
                state["rooms"] = rooms
                state["map"] = None  # a newScan clears the world map
        elif choice < 0.35:
            content = rng.randbytes(rng.randint(1, 200_000))
            sha = hashlib.sha256(content).hexdigest()
            status, _, _ = self.request("PUT", f"/v1/floors/{floor}/worldmap", content, {"Content-Type": "application/octet-stream"},
                                        ("worldmap", floor, sha))
            assert status in (200, 201), status
            with ledger.lock:
                ledger.floors[floor]["map"] = sha
        elif choice < 0.7:
            content = JPEG_SIGNATURE + rng.randbytes(rng.randint(1, 400_000))
            panorama, sha = str(uuid.uuid4()), hashlib.sha256(content).hexdigest()
            status, _, _ = self.request("PUT", f"/v1/panoramas/{panorama}?floorId={floor}", content,
                                        {"Content-Type": "image/jpeg", "Repr-Digest": f"sha-256=:{base64.b64encode(bytes.fromhex(sha)).decode()}:"},
                                        ("panorama", panorama, sha))
            assert status in (200, 201), status
            with ledger.lock:
                ledger.panoramas[panorama] = sha
        else:
            content = JPEG_SIGNATURE + rng.randbytes(rng.randint(10, 600_000))
            panorama, sha = str(uuid.uuid4()), hashlib.sha256(content).hexdigest()
            metadata = ",".join(f"{k} {base64.b64encode(v.encode()).decode()}" for k, v in
                                [("panoramaId", panorama), ("floorId", floor), ("contentType", "image/jpeg"), ("sha256", sha)])
            status, headers, _ = self.request("POST", "/v1/uploads", b"", {"Tus-Resumable": "1.0.0", "Upload-Length": str(len(content)),
                                                                             "Upload-Metadata": metadata}, ("creation", panorama))
            assert status == 201, status
            location = headers["location"]
            with ledger.lock:
                ledger.uploads[location] = (panorama, 0, len(content), sha)
            offset = 0
            while offset < len(content) and not self.stop.is_set():
                chunk = content[offset:offset + rng.randint(1, 200_000)]
                status, headers, _ = self.request("PATCH", location, chunk, {"Tus-Resumable": "1.0.0", "Upload-Offset": str(offset),
                                                                             "Content-Type": "application/offset+octet-stream"},
                                                  ("patch", location, offset + len(chunk)))
                assert status == 204, status
                offset = int(headers["upload-offset"])
                with ledger.lock:
                    ledger.uploads[location] = (panorama, offset, len(content), sha)
                    if offset == len(content):
                        ledger.panoramas[panorama] = sha


def get(port, token, path, headers=None):
    """A GET (or "HEAD path"); an answer cut short (a file shorter than its row says) is
    status 0."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.request("GET" if not path.startswith("HEAD ") else "HEAD", path.removeprefix("HEAD "),
                           headers={"Authorization": f"Bearer {token}", **(headers or {})})
        response = connection.getresponse()
        return response.status, dict((k.lower(), v) for k, v in response.getheaders()), response.read()
    except (OSError, http.client.HTTPException):
        return 0, {}, b""
    finally:
        connection.close()


def verify(port, token):
    """Every acknowledged item is there, byte for byte; returns the problems. What was in
    flight may or may not have happened; what did is folded into the ledger, since later
    rounds build on it."""
    problems = []
    in_flight = [value for value in pending.values() if value]
    for pid in ledger.properties:
        status, _, _ = get(port, token, f"/v1/properties/{pid}")
        if status != 200:
            problems.append(f"acknowledged property {pid}: {status}")
    for floor, state in ledger.floors.items():
        status, _, body = get(port, token, f"/v1/floors/{floor}")
        if status != 200:
            problems.append(f"acknowledged floor {floor}: {status}")
            continue
        document = json.loads(body)
        planned = [p for p in in_flight if p[0] == "plan" and p[1] == floor]
        revision, rooms = document["planRevision"], [room["id"] for room in document["rooms"]]
        if planned and revision == len(state["plans"]) + 1 and rooms == list(planned[0][3]):
            # The plan in flight was applied (its answer was lost with the power): it is in the
            # ledger from now on, as the server holds it.
            state["plans"].append(planned[0][2])
            state["rooms"], state["map"] = list(planned[0][3]), None
            continue
        if revision != len(state["plans"]) or rooms != state["rooms"]:
            problems.append(f"floor {floor}: revision {revision} rooms {rooms}, acknowledged {len(state['plans'])} plans, rooms {state['rooms']}")
            continue
        status, headers, content = get(port, token, f"/v1/floors/{floor}/worldmap")
        now = hashlib.sha256(content).hexdigest() if status == 200 else None
        mapped = [p for p in in_flight if p[0] == "worldmap" and p[1] == floor]
        if now != state["map"] and mapped and now == mapped[0][2]:
            state["map"] = now  # the map in flight was stored: from now on it is the floor's
        elif now != state["map"]:
            problems.append(f"floor {floor}: world map {now}, acknowledged {state['map']}")
    for panorama, sha in ledger.panoramas.items():
        status, _, content = get(port, token, f"/v1/panoramas/{panorama}/content")
        if status != 200 or hashlib.sha256(content).hexdigest() != sha:
            problems.append(f"acknowledged panorama {panorama}: {status}, {len(content)} bytes")
    for location, (panorama, offset, length, sha) in ledger.uploads.items():
        if offset == length:
            continue  # a panorama now, checked above
        status, headers, _ = get(port, token, "HEAD " + location, {"Tus-Resumable": "1.0.0"})
        if status != 200 or int(headers.get("upload-offset", -1)) < offset:
            problems.append(f"upload {location}: {status}, offset {headers.get('upload-offset')}, acknowledged {offset}")
    return problems


def feed(port, token):
    """The tenant's whole feed, in order."""
    events, after = [], "0"
    while True:
        status, _, body = get(port, token, f"/v1/events?after={after}&limit=200")
        if status != 200:
            return None
        page = json.loads(body)
        events += page["items"]
        if not page["items"]:
            return events
        after = page["next"]


in_flight_ever = set()


def outbox(port, token):
    """Every acknowledged change has its event; every event's change happened (it is in the
    ledger, or it is what was in flight when power went)."""
    events = feed(port, token)
    if events is None:
        return ["the feed could not be read"]
    problems = []
    # What was in flight at any power loss so far may have happened without a client knowing.
    in_flight_ever.update(value for value in pending.values() if value)
    in_flight = list(in_flight_ever)
    ids = [int(event["id"]) for event in events]
    if ids != sorted(ids) or len(set(ids)) != len(ids):
        problems.append("the feed's ids are not increasing")
    created = {event["propertyId"] for event in events if event["type"] == "property.created"}
    stored = {event["data"]["id"]: event["data"]["sha256"] for event in events if event["type"] == "panorama.stored"}
    plans = {event["data"]["planId"] for event in events if event["type"] == "plan.applied"}
    for pid in ledger.properties:
        if pid not in created:
            problems.append(f"acknowledged property {pid} has no property.created event")
    for panorama, sha in ledger.panoramas.items():
        if stored.get(panorama) != sha:
            problems.append(f"acknowledged panorama {panorama} has no panorama.stored event of its bytes")
    for floor, state in ledger.floors.items():
        for plan in state["plans"]:
            if plan not in plans:
                problems.append(f"acknowledged plan {plan} has no plan.applied event")
    flight_properties = {p[1] for p in in_flight if p[0] == "property"}
    flight_panoramas = {p[1] for p in in_flight if p[0] in ("panorama", "creation")} | \
        {panorama for (panorama, _, _, _) in (ledger.uploads.get(p[1], ("",)*4) for p in in_flight if p[0] == "patch")}
    flight_plans = {p[2] for p in in_flight if p[0] == "plan"}
    for pid in created - set(ledger.properties) - flight_properties:
        problems.append(f"property.created for {pid}, which was never asked for")
    for panorama in set(stored) - set(ledger.panoramas) - flight_panoramas:
        problems.append(f"panorama.stored for {panorama}, which no client saw stored nor had in flight")
    for plan in plans - {plan for state in ledger.floors.values() for plan in state["plans"]} - flight_plans:
        problems.append(f"plan.applied for {plan}, which was never acknowledged nor in flight")
    return problems


def delivered(port, token):
    """The receiver has every event of the feed, each first delivery in the feed's order."""
    expected = [event["id"] for event in feed(port, token) or []]
    firsts = receiver.wait_for(expected, 120)
    now = [event["id"] for event in feed(port, token) or []]
    if firsts[:len(expected)] == expected and Receiver.follows_feed(firsts, now):
        return []
    return [f"the receiver's first deliveries ({len(firsts)}: {firsts[:10]}…) are not the feed's {len(now)} events in order"]


def files_and_rows():
    """With the daemon stopped: no row without its file, no file without its row."""
    problems = []
    database = sqlite3.connect(f"file:{data}/toursd.sqlite?mode=ro", uri=True)
    blobs = os.path.join(data, "blobs")

    def files(kind):
        found = set()
        for tenant in os.listdir(blobs) if os.path.isdir(blobs) else []:
            folder = os.path.join(blobs, tenant, kind)
            for name in os.listdir(folder) if os.path.isdir(folder) else []:
                found.add((int(tenant), name))
        return found

    rows = {(tenant, pid): (size, sha) for tenant, pid, size, sha in database.execute("SELECT tenant_id, id, size, sha256 FROM panoramas")}
    for (tenant, pid), (size, sha) in rows.items():
        path = os.path.join(blobs, str(tenant), "panoramas", pid)
        if not os.path.exists(path):
            problems.append(f"panorama row {pid} without its file")
        elif hashlib.sha256(open(path, "rb").read()).hexdigest() != sha:
            problems.append(f"panorama {pid}: the file is not the row's bytes")
    for key in files("panoramas") - set(rows):
        problems.append(f"panorama file {key} without its row")
    maps = {(tenant, name or fid) for tenant, fid, name in
            database.execute("SELECT tenant_id, id, world_map_file FROM floors WHERE world_map_sha256 IS NOT NULL")}
    for tenant, name in maps - files("worldmaps"):
        problems.append(f"world map row {name} without its file")
    for key in files("worldmaps") - maps:
        problems.append(f"world map file {key} without its row")
    uploads = {(tenant, uid): offset for tenant, uid, offset in
               database.execute("SELECT tenant_id, id, \"offset\" FROM uploads WHERE state = 'receiving'")}
    for (tenant, uid), offset in uploads.items():
        path = os.path.join(blobs, str(tenant), "uploads", uid)
        if not os.path.exists(path) or os.path.getsize(path) < offset:
            problems.append(f"upload {uid}: its file holds less than its recorded offset {offset}")
    database.close()
    return problems


daemon = None


def main():
    global daemon
    daemon = Daemon()
    token = open(os.path.join(data, "admin.token")).read().strip()
    connection = http.client.HTTPConnection("127.0.0.1", daemon.port, timeout=10)
    connection.request("POST", "/v1/webhooks", json.dumps({"url": receiver.url}),
                       {"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    made = connection.getresponse()
    assert made.status == 201, made.read()
    failures = []
    for round_number in range(1, args.rounds + 1):
        stop = threading.Event()
        pending.clear()
        clients = [Client(number, daemon.port, token, stop) for number in range(args.clients)]
        threads = [threading.Thread(target=client.run, daemon=True) for client in clients]
        for thread in threads:
            thread.start()
        time.sleep(rng.uniform(0.3, 2.0))
        daemon.kill()
        fs.lose_power()
        stop.set()
        for thread in threads:
            thread.join(timeout=20)
        daemon = Daemon()
        problems = verify(daemon.port, token)
        problems += outbox(daemon.port, token)
        daemon.stop()
        problems += files_and_rows()
        daemon = Daemon()
        counts = (len(ledger.properties), len(ledger.floors), sum(len(s["plans"]) for s in ledger.floors.values()),
                  sum(1 for s in ledger.floors.values() if s["map"]), len(ledger.panoramas), len(ledger.uploads))
        print(f"  round {round_number}: acknowledged so far: {counts[0]} properties, {counts[1]} floors, {counts[2]} plans, "
              f"{counts[3]} world maps, {counts[4]} panoramas, {counts[5]} tus uploads; problems: {len(problems)}", flush=True)
        for problem in problems[:20]:
            print("    " + problem, flush=True)
        failures += problems
    # Every event of the feed reaches the receiver, in order, across the power losses.
    webhook_problems = delivered(daemon.port, token)
    count = len(receiver.received()[0])
    print(f"  webhooks: {count} deliveries; problems: {len(webhook_problems)}", flush=True)
    for problem in webhook_problems:
        print("    " + problem, flush=True)
    failures += webhook_problems
    if failures:
        print(f"power loss under toursd: FAIL ({len(failures)} problems; seed {args.seed}; logs in {work})")
        sys.exit(1)
    print("power loss under toursd: PASS")


try:
    main()
finally:
    if daemon and daemon.process.poll() is None:
        daemon.process.kill()
        daemon.process.wait(timeout=20)
    fs.unmount()
