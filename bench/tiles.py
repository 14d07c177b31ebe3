"""Times a 16384 × 8192 panorama's first frame with tiles and as a single image, and its
tiling's CPU time beside nona's and Pillow's (bench/tiles.sh)."""
import json, os, resource, statistics, subprocess, sys, time, urllib.request, uuid

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Tests", "browser"))
import tourfixture  # noqa: E402
from PIL import Image  # noqa: E402

work, ports = sys.argv[1], {"tiles": int(sys.argv[2]), "single": int(sys.argv[3]), "fallback": int(sys.argv[4])}
ROUNDS = 7


def api(port, token, method, path, body=None, content_type="application/json"):
    data = body if isinstance(body, bytes) or body is None else json.dumps(body).encode()
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=data, method=method,
                                     headers={"Authorization": f"Bearer {token}", "Content-Type": content_type})
    with urllib.request.urlopen(request, timeout=600) as response:
        return json.loads(response.read() or b"null")


def metric(port, name):
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=60).read().decode()
    return next(float(line.split()[1]) for line in text.splitlines() if line.startswith(name + " "))


source = os.path.join(work, "panorama.jpg")
with open(source, "wb") as file:
    file.write(tourfixture.panorama_jpeg(16384, grain=20, quality=90))

# The same panorama in each toursd, behind a share link; each page opened once (its previews
# made and cached: what is timed is the visitor's load, not the server's first making).
pages = {}
for variant, port in ports.items():
    token = open(os.path.join(work, variant, "data", "admin.token")).read().strip()
    property_id, floor_id, panorama_id = str(uuid.uuid4()), str(uuid.uuid4()), str(uuid.uuid4())
    tour = api(port, token, "PUT", f"/v1/properties/{property_id}", {"name": "Wide Barn", "floorCount": 1})
    api(port, token, "PUT", f"/v1/properties/{property_id}/floors/{floor_id}", {"number": 0})
    api(port, token, "PUT", f"/v1/panoramas/{panorama_id}?floorId={floor_id}", open(source, "rb").read(), "image/jpeg")
    share = api(port, token, "POST", f"/v1/tours/{tour['tourId']}/shares", {"expiresInSeconds": 3600})
    pages[variant] = f"http://127.0.0.1:{port}/t/{share['url'].split('/t/')[1]}/panoramas/{panorama_id}"
deadline = time.monotonic() + 600
while metric(ports["tiles"], "toursd_tile_sets_made_total") < 1 and time.monotonic() < deadline:
    time.sleep(0.5)
tile_cpu = metric(ports["tiles"], "toursd_tile_cpu_seconds_total")
for variant, url in pages.items():
    page = urllib.request.urlopen(url, timeout=600).read().decode()
    assert ("data-tiles=" in page) == (variant == "tiles"), f"{variant}: tiles named {('data-tiles=' in page)}"
    for image in [part.split('"')[0] for part in page.split('src="')[1:] if "/preview?" in part.split('"')[0]]:
        urllib.request.urlopen(f"http://127.0.0.1:{ports[variant]}{image.replace('&amp;', '&')}", timeout=600).read()

driver = tourfixture.chromium(600)
driver.execute_cdp_cmd("Network.enable", {})
driver.execute_cdp_cmd("Network.setCacheDisabled", {"cacheDisabled": True})
timings = {variant: [] for variant in pages}
sharp = {"tiles": [], "fallback": []}
# A round first that is not counted: the browser's own start (its GPU process, shader cache).
for attempt in range(ROUNDS + 1):
    for variant, url in pages.items():
        driver.get("about:blank")
        driver.get(url)
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline:
            canvas = driver.find_element("css selector", "#viewer canvas")
            first, done = canvas.get_attribute("data-first-frame"), canvas.get_attribute("data-sharp")
            if first and (variant not in sharp or done):
                break
            time.sleep(0.02)
        if attempt == 0:
            continue
        timings[variant].append(float(first))
        if variant in sharp:
            sharp[variant].append(float(done))
driver.quit()
first = {variant: statistics.median(values) for variant, values in timings.items()}

# Pannellum's tool chain on the same image: nona cuts the six faces (one run, TIFF per face),
# then each face is resized to each level and cut into 512-px JPEG tiles with Pillow, as its
# generate.py does. Faces of 5120, as toursd cuts.
face_size, levels = 5120, 5
pto = os.path.join(work, "cube.pto")
lines = [f'p E0 R0 f0 h{face_size} w{face_size} n"TIFF_m" u0 v90', "m g1 i0 m2 p0.00784314"]
for yaw, pitch in [(0, 0), (-90, 0), (180, 0), (90, 0), (0, -90), (0, 90)]:
    lines.append(f'i w16384 h8192 f4 v360 Ra0 Rb0 Rc0 Rd0 Re0 Eev0 Er1 Eb1 r0 p{pitch} y{yaw} TrX0 TrY0 TrZ0 j0 a0 b0 c0 d0 e0 g0 t0 '
                 f'Va1 Vb0 Vc0 Vd0 Vx0 Vy0 Vm5 n"{source}"')
open(pto, "w").write("\n".join(lines) + "\n")
before = resource.getrusage(resource.RUSAGE_CHILDREN)
subprocess.run(["nona", "-o", os.path.join(work, "face"), pto], check=True, stdout=subprocess.DEVNULL)
after = resource.getrusage(resource.RUSAGE_CHILDREN)
nona_cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
start = time.process_time()
tiles_made = 0
for index in range(6):
    face = Image.open(os.path.join(work, f"face{index:04d}.tif")).convert("RGB")
    for level in reversed(range(levels)):
        size = face_size >> (levels - 1 - level)
        scaled = face if size == face_size else face.resize((size, size), Image.LANCZOS)
        for top in range(0, size, 512):
            for left in range(0, size, 512):
                tile = scaled.crop((left, top, min(size, left + 512), min(size, top + 512)))
                tile.save(os.path.join(work, "tile.jpg"), quality=75)
                tiles_made += 1
pillow_cpu = time.process_time() - start
reference_cpu = nona_cpu + pillow_cpu

print(f"Huge panoramas: a 16384 × 8192 JPEG ({os.path.getsize(source) / 1e6:.0f} MB), same run")
print(f"  time to the first drawn frame in headless Chromium (1280 × 900, no cache, median of {ROUNDS} after one not counted):")
print(f"    tiles (the 1024 preview, then the tiles in view): {first['tiles']:.0f} ms (target <= 0.25x the single image); "
      f"single image, one 8192 × 4096 texture: {first['single']:.0f} ms ({first['tiles'] / first['single']:.2f}x); "
      f"without tiles (the 1024 preview, then the 4096): {first['fallback']:.0f} ms ({first['tiles'] / first['fallback']:.2f}x)")
print(f"    sharp: every tile in view drawn at the level the view needs: {statistics.median(sharp['tiles']):.0f} ms "
      f"({statistics.median(sharp['tiles']) / first['single']:.2f}x the single image's first frame); "
      f"without tiles, the 4096 preview drawn: {statistics.median(sharp['fallback']):.0f} ms")
print(f"  CPU time to cut it into six faces of {face_size} and {tiles_made} tiles: toursd {tile_cpu:.1f} s; "
      f"nona {nona_cpu:.1f} s + Pillow tiling {pillow_cpu:.1f} s = {reference_cpu:.1f} s ({tile_cpu / reference_cpu:.2f}x)")
