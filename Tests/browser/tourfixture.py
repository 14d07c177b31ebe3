"""A real toursd with real tours in it, for the browser tests, the README's screenshots and
make bench: starts the release daemon on a port the OS picks, and uploads properties, floors,
plans and equirectangular JPEG panoramas (drawn with Pillow) through the HTTP API."""
import io
import json
import math
import os
import shutil
import sys
import subprocess
import threading
import time
import uuid

from PIL import Image, ImageChops, ImageDraw
from selenium import webdriver

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import toursd_api  # noqa: E402

ROOM_NAMES = ["Kitchen", "Living room", "Hall", "Bedroom", "Bathroom", "Study", "Dining room", "Utility", "Porch",
              "Garage", "Pantry", "Nursery", "Office", "Lounge", "Cellar", "Attic", "Laundry", "Studio", "Den",
              "Guest room", "Playroom", "Library", "Gym", "Sunroom", "Workshop", "Closet", "Landing", "Loft",
              "Snug", "Larder"]


class Daemon:
    """toursd serving `data` with `settings` (config keys), stopped by `stop`."""

    def __init__(self, toursd, work, settings=None):
        self.toursd, self.work = toursd, work
        self.data = os.path.join(work, "data")
        self.config = os.path.join(work, "toursd.json")
        with open(self.config, "w") as handle:
            json.dump(settings or {}, handle)
        self.log = open(os.path.join(work, "toursd.log"), "a")
        self.process = subprocess.Popen([toursd, "serve", "--config", self.config, "--port", "0", "--data-dir", self.data],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 30
        self.port = None
        while time.monotonic() < deadline and self.port is None:
            line = self.process.stderr.readline()
            if not line:
                break
            self.log.write(line)
            if "listening on http://" in line:
                self.port = int(line.split("listening on http://")[1].split()[0].split(":")[1])
        if self.port is None:
            self.process.kill()
            raise SystemExit(f"toursd did not start; its log is {self.log.name}")
        threading.Thread(target=self._drain, daemon=True).start()
        with open(os.path.join(self.data, "admin.token")) as handle:
            self.token = handle.read().strip()
        self.base = f"http://127.0.0.1:{self.port}"

    def _drain(self):
        for line in self.process.stderr:
            self.log.write(line)
            self.log.flush()

    def create_token(self, tenant):
        """A token of another tenant, made by `toursd tokens create` on the running daemon's data."""
        output = subprocess.run([self.toursd, "tokens", "create", "--tenant", tenant, "--data-dir", self.data],
                                capture_output=True, text=True, timeout=60, check=True)
        return output.stdout.strip().splitlines()[-1]

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=30)

    def request(self, method, path, body=None, token=None, headers=None):
        """(status, headers with their names lowercased, body)."""
        return toursd_api.request(f"http://127.0.0.1:{self.port}", method, path, token, body, headers, timeout=60)

    def api(self, method, path, document, token):
        status, _, content = self.request(method, path, json.dumps(document).encode(), token, {"Content-Type": "application/json"})
        if status >= 300:
            raise AssertionError(f"{method} {path}: {status} {content[:300]!r}")
        return json.loads(content) if content else None


def hue_colour(hue):
    """The colour the test images give `hue` (0 to 1) at full light."""
    return tuple(int(255 * (0.5 + 0.5 * math.cos(2 * math.pi * (hue - shift)))) for shift in (0, 1 / 3, 2 / 3))


def panorama_jpeg(width=2048, seed=0, quality=85, grain=0, hue=None):
    """An equirectangular test image: hue by longitude (or one `hue` all round), light by
    latitude, a grid every 30°, so that any change of view direction changes the pixels.
    `grain` adds noise of that strength, for the detail (and the file size) of a camera's image."""
    height = width // 2
    hues = [hue_colour(hue if hue is not None else (x / width + seed * 0.13) % 1.0) for x in range(width)]
    row = Image.new("RGB", (width, 1))
    row.putdata(hues)
    column = Image.new("L", (1, height))
    column.putdata([int(255 * (0.35 + 0.5 * math.cos((y / height - 0.5) * math.pi))) for y in range(height)])
    image = ImageChops.multiply(row.resize((width, height)), column.resize((width, height)).convert("RGB"))
    if grain:
        noise = Image.effect_noise((width, height), grain).convert("RGB")
        image = ImageChops.add(image, noise, scale=1.0, offset=-128)
    draw = ImageDraw.Draw(image)
    for step in range(12):
        x = step * width // 12
        draw.line([(x, 0), (x, height)], fill=(255, 255, 255), width=max(1, width // 512))
    for step in range(1, 6):
        y = step * height // 6
        draw.line([(0, y), (width, y)], fill=(255, 255, 255), width=max(1, width // 512))
    output = io.BytesIO()
    image.save(output, "JPEG", quality=quality)
    return output.getvalue()


def room_grid(count, columns=5, width=4.0, depth=3.0):
    """`count` rectangular rooms in rows, outlines in metres."""
    rooms = []
    for index in range(count):
        x, y = (index % columns) * width, (index // columns) * depth
        outline = [[x, y], [x + width, y], [x + width, y + depth], [x, y + depth]]
        rooms.append({"id": str(uuid.uuid4()), "name": ROOM_NAMES[index % len(ROOM_NAMES)], "outline": outline, "height": 2.5})
    return rooms


def build_tour(daemon, token, name, rooms=4, panoramas_per_room=1, loose=1, image=None, floors=1):
    """A property with `floors` floors; the first gets a plan of `rooms` rooms, a world map
    (so it can be continued), panoramas in each room and `loose` on the floor without a room.
    Returns the ids."""
    property_id = str(uuid.uuid4())
    tour = daemon.api("PUT", f"/v1/properties/{property_id}", {"name": name, "floorCount": floors, "metadata": {}}, token)
    floor_ids = []
    for number in range(floors):
        floor_id = str(uuid.uuid4())
        daemon.api("PUT", f"/v1/properties/{property_id}/floors/{floor_id}", {"number": number, "name": None}, token)
        floor_ids.append(floor_id)
    plan = room_grid(rooms)
    daemon.api("PUT", f"/v1/floors/{floor_ids[0]}/plan", {"planId": str(uuid.uuid4()), "mode": "newScan", "rooms": plan}, token)
    status, _, content = daemon.request("PUT", f"/v1/floors/{floor_ids[0]}/worldmap", b"world map " * 100, token,
                                        {"Content-Type": "application/octet-stream"})
    assert status in (200, 201), (status, content)
    image = image or panorama_jpeg()
    panoramas = []
    targets = [room["id"] for room in plan for _ in range(panoramas_per_room)] + [None] * loose
    for room_id in targets:
        panorama_id = str(uuid.uuid4())
        query = f"?floorId={floor_ids[0]}" + (f"&roomId={room_id}" if room_id else "")
        status, _, content = daemon.request("PUT", f"/v1/panoramas/{panorama_id}{query}", image, token, {"Content-Type": "image/jpeg"})
        assert status == 201, (status, content)
        panoramas.append(panorama_id)
    return {"property": property_id, "tour": tour["tourId"], "floors": floor_ids, "rooms": [room["id"] for room in plan],
            "roomNames": [room["name"] for room in plan], "panoramas": panoramas}


# A house to walk through: two floors, an L-shaped living room, each panorama placed on its
# floor's plan (x, y in metres, heading in degrees clockwise from up the plan).
WALK_FLOORS = [
    [("Hall", [[0, 0], [3, 0], [3, 4], [0, 4]], [(1.5, 2.0, 90)]),
     ("Living room", [[3, 0], [9, 0], [9, 3], [6, 3], [6, 6], [3, 6]], [(4.5, 1.5, 90), (4.5, 4.5, 0)]),
     ("Kitchen", [[6, 3], [9, 3], [9, 6], [6, 6]], [(7.5, 4.5, 270)])],
    [("Landing", [[0, 0], [3, 0], [3, 4], [0, 4]], [(1.5, 2.0, 90)]),
     ("Bedroom", [[3, 0], [8, 0], [8, 4], [3, 4]], [(5.5, 2.0, 270)])],
]


def build_walk_tour(daemon, token, name="Dune House", width=1024):
    """The WALK_FLOORS house through the API, each panorama in a hue of its own; returns its
    ids: floors, rooms by name, panoramas as (room name, place, id) in the order a visitor walks
    them, and each panorama's hue."""
    property_id = str(uuid.uuid4())
    tour = daemon.api("PUT", f"/v1/properties/{property_id}", {"name": name, "floorCount": len(WALK_FLOORS), "metadata": {}}, token)
    floors, rooms, panoramas, hues = [], {}, [], {}
    for number, plan in enumerate(WALK_FLOORS):
        floor_id = str(uuid.uuid4())
        daemon.api("PUT", f"/v1/properties/{property_id}/floors/{floor_id}", {"number": number, "name": None}, token)
        floors.append(floor_id)
        outlines = [{"id": str(uuid.uuid4()), "name": room, "outline": outline, "height": 2.5} for room, outline, _ in plan]
        daemon.api("PUT", f"/v1/floors/{floor_id}/plan", {"planId": str(uuid.uuid4()), "mode": "newScan", "rooms": outlines}, token)
        for room, (room_name, _, spots) in zip(outlines, plan):
            rooms[room_name] = room["id"]
            for place, (x, y, heading) in enumerate(spots, start=1):
                panorama_id = str(uuid.uuid4())
                query = f"?floorId={floor_id}&roomId={room['id']}&x={x}&y={y}&heading={heading}"
                # One hue each: the dollhouse's rooms show whose photograph they are drawn with.
                hues[panorama_id] = (len(panoramas) * 0.37) % 1.0
                image = panorama_jpeg(width, seed=len(panoramas), hue=hues[panorama_id])
                status, _, content = daemon.request("PUT", f"/v1/panoramas/{panorama_id}{query}", image, token, {"Content-Type": "image/jpeg"})
                assert status == 201, (status, content)
                panoramas.append((room_name, place, panorama_id))
    return {"property": property_id, "tour": tour["tourId"], "floors": floors, "rooms": rooms, "panoramas": panoramas, "hues": hues}


def chromium(page_load_seconds, without=None):
    """Headless Chromium at 1280×900 drawing WebGL in software (SwiftShader), with its
    performance log (the requests it makes) kept; `without` "webgl" or "javascript": a browser
    that lacks it."""
    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    if without == "webgl":
        options.add_argument("--disable-webgl")
    elif without == "javascript":
        options.add_experimental_option("prefs", {"profile.managed_default_content_settings.javascript": 2})
    for flag in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,900",
                 "--use-angle=swiftshader", "--enable-unsafe-swiftshader", "--ignore-gpu-blocklist",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run",
                 "--disable-features=OptimizationHints,MediaRouter,Translate"]:
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"performance": "ALL"})
    service = webdriver.ChromeService(executable_path=shutil.which("chromedriver") or "/usr/bin/chromedriver")
    driver = webdriver.Chrome(options=options, service=service)
    driver.set_page_load_timeout(page_load_seconds)
    # Views that stay still unless a test turns them (no idle turning, no cross-fades): what
    # pixel checks and timings need. A test of motion asks for it again.
    still(driver, True)
    return driver


def still(driver, reduce):
    """Emulates the visitor's `prefers-reduced-motion` setting, for every page of the tab."""
    driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-reduced-motion", "value": "reduce" if reduce else "no-preference"}]})
