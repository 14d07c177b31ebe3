"""Power loss under the client library (issue 18): the `tours` storage directory on
powerlossfs, captures (properties, plans with capture output, world maps, panoramas) made
with the command line while `tours sync` drains to a toursd on an ordinary disk; power lost
at random points (every tours process killed, then everything unsynced dropped). Every
capture the command line reported as stored must still be in local storage with its bytes,
and, after a last sync, on the server.

usage: client.py POWERLOSSFS TOURSD TOURS [--rounds N] [--seed S]
"""
import argparse, hashlib, http.client, json, os, random, signal, sqlite3, subprocess, sys, threading, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from powerloss import PowerLossFS  # noqa: E402

# A JPEG's signature and frame header (4096×2048): tours checks an image's content and its
# dimensions before it queues it; random bytes behind it are what a transfer measures.
JPEG_HEAD = bytes.fromhex("ffd8ffc00011080800100003012200021101031101")

parser = argparse.ArgumentParser()
parser.add_argument("fs")
parser.add_argument("toursd")
parser.add_argument("tours")
parser.add_argument("--rounds", type=int, default=4)
parser.add_argument("--seed", type=int, default=int(time.time()))
args = parser.parse_args()
rng = random.Random(args.seed)
print(f"power loss under the client library: {args.rounds} rounds, seed {args.seed}", flush=True)

fs = PowerLossFS(args.fs, "powerloss-client-")
work, mount = fs.work, fs.mount

toursd = subprocess.Popen([args.toursd, "serve", "--port", "0", "--data-dir", os.path.join(work, "toursd")],
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
port = None
for line in toursd.stderr:
    if "listening on http://" in line:
        port = int(line.split("listening on http://")[1].split()[0].split(":")[1])
        break
threading.Thread(target=lambda: [None for _ in toursd.stderr], daemon=True).start()
token = open(os.path.join(work, "toursd", "admin.token")).read().strip()
config = os.path.join(work, "tours.json")
storage = os.path.join(mount, "storage")
running = []  # every tours process started and not yet reaped


def tours(*words, check=True):
    process = subprocess.Popen([args.tours, "--config", config, *words], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    running.append(process)
    out, err = process.communicate(timeout=120)
    running.remove(process)
    if process.returncode != 0:
        with open(os.path.join(work, "tours-failures.log"), "a") as log:
            log.write(f"tours {' '.join(words)}: {process.returncode} {err.strip()}\n")
        if check:
            raise RuntimeError(f"tours {' '.join(words)}: {process.returncode} {err.strip()}")
    return process.returncode, out


tours("init", "--server", f"http://127.0.0.1:{port}", "--token", token, "--storage", storage)
saved = json.load(open(config))
saved.update({"initialBackoffMs": 5, "maxBackoffMs": 50})
json.dump(saved, open(config, "w"))
# What the command line reported as stored: property -> rooms of floor 0, panorama -> sha256.
properties, panoramas = {}, {}
files = os.path.join(work, "files")
os.mkdir(files)


def capture(stop):
    """Captures until stopped; a capture counts once its command said so (exit 0, its id)."""
    try:
        while not stop.is_set():
            code, out = tours("property", "create", "Powerless", "--floors", "1", check=False)
            if code != 0:
                return
            property = out.strip()
            properties[property] = None
            plan = os.path.join(files, f"{property}.plan.json")
            json.dump({"rooms": [{"name": "K", "outline": [[0, 0], [3, 0], [3, 3]], "capture": {"p": property}}], "structure": {"v": 1}}, open(plan, "w"))
            world_map = os.path.join(files, f"{property}.map")
            open(world_map, "wb").write(rng.randbytes(20_000))
            code, out = tours("plan", property, plan, "--worldmap", world_map, "--json", check=False)
            if code != 0:
                return
            properties[property] = [room["id"] for room in json.loads(out.strip().splitlines()[-1])["rooms"]]
            images = []
            for index in range(rng.randint(1, 3)):
                image = os.path.join(files, f"{property}-{index}.jpg")
                # A JPEG's signature first: toursd refuses bytes that are not of their declared type.
                open(image, "wb").write(JPEG_HEAD + rng.randbytes(rng.randint(1000, 300_000)))
                images.append(image)
            code, out = tours("panorama", "add", property, *images, "--json", check=False)
            if code != 0:
                return
            for panorama, image in zip(json.loads(out.strip().splitlines()[-1])["panoramas"], images):
                panoramas[panorama] = hashlib.sha256(open(image, "rb").read()).hexdigest()
    except (RuntimeError, subprocess.TimeoutExpired, json.JSONDecodeError):
        return


def local_problems():
    """Every reported capture is in local storage, its panorama files whole."""
    problems = []
    # Read-write: after a power loss the -shm may be gone, and SQLite rebuilds it (read-only
    # could not). Every tours process is dead by now.
    database = sqlite3.connect(f"{storage}/noughtytours.sqlite")
    for property, rooms in properties.items():
        if not database.execute("SELECT 1 FROM properties WHERE id = ?", (property,)).fetchone():
            problems.append(f"property {property} reported stored, missing locally")
        elif rooms is not None:
            local = [row[0] for row in database.execute(
                "SELECT r.id FROM rooms r JOIN floors f ON f.id = r.floor_id WHERE f.property_id = ? ORDER BY r.position", (property,))]
            if local != rooms:
                problems.append(f"property {property}: rooms {local}, reported {rooms}")
            mapped = database.execute("SELECT world_map_path FROM floors WHERE property_id = ?", (property,)).fetchone()
            if not mapped or not mapped[0] or not os.path.exists(mapped[0]):
                problems.append(f"property {property}: its world map is gone")
    for panorama, sha in panoramas.items():
        row = database.execute("SELECT path, sha256 FROM panoramas WHERE id = ?", (panorama,)).fetchone()
        if not row:
            problems.append(f"panorama {panorama} reported stored, missing locally")
        elif row[1] != sha or not os.path.exists(row[0]) or hashlib.sha256(open(row[0], "rb").read()).hexdigest() != sha:
            problems.append(f"panorama {panorama}: its file is not the bytes captured")
    database.close()
    return problems


def server_problems():
    problems = []
    for panorama, sha in panoramas.items():
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        connection.request("GET", f"/v1/panoramas/{panorama}", headers={"Authorization": f"Bearer {token}"})
        response = connection.getresponse()
        body = response.read()
        if response.status != 200 or json.loads(body)["sha256"] != sha:
            problems.append(f"panorama {panorama}: {response.status} on the server after the last sync")
    return problems


failures = []
try:
    for round_number in range(1, args.rounds + 1):
        stop = threading.Event()
        capturer = threading.Thread(target=capture, args=(stop,), daemon=True)
        capturer.start()
        syncer = subprocess.Popen([args.tours, "--config", config, "sync"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        # Power goes once this round has stored something (bounded: 60 s), at a random moment after.
        before = len(panoramas)
        for _ in range(600):
            if len(panoramas) > before:
                break
            time.sleep(0.1)
        time.sleep(rng.uniform(0, 1.5))
        # Power goes: every process of the client dies at once, then the unsynced is dropped.
        stop.set()
        for process in [syncer] + list(running):
            try:
                process.send_signal(signal.SIGKILL)
            except ProcessLookupError:
                pass
        syncer.wait(timeout=20)
        capturer.join(timeout=120)
        fs.lose_power()
        problems = local_problems()
        print(f"  round {round_number}: reported stored so far: {len(properties)} properties, {len(panoramas)} panoramas; "
              f"problems: {len(problems)}", flush=True)
        for problem in problems[:10]:
            print("    " + problem, flush=True)
        failures += problems
    code, _ = tours("sync", check=False)
    problems = server_problems() if code == 0 else [f"the last tours sync exited {code}"]
    print(f"  after the last sync: {len(panoramas)} panoramas expected on the server; problems: {len(problems)}", flush=True)
    for problem in problems[:10]:
        print("    " + problem, flush=True)
    failures += problems
finally:
    toursd.kill()
    toursd.wait(timeout=20)
    fs.unmount()
if failures:
    print(f"power loss under the client library: FAIL ({len(failures)} problems; seed {args.seed}; files in {work})")
    sys.exit(1)
print("power loss under the client library: PASS")
