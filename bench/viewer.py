"""Seeds toursd and times the viewer's floor page and previews beside their references (bench/viewer.sh)."""
import glob, http.client, io, json, os, re, statistics, sys, time, urllib.parse, uuid

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Tests", "browser"))
import tourfixture  # noqa: E402
from PIL import Image  # noqa: E402

port, token, nginx_port, nginx_root, data_dir = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
bearer = {"Authorization": f"Bearer {token}"}


def connection(p=port):
    return http.client.HTTPConnection("127.0.0.1", p, timeout=60)


def call(conn, method, path, body=None, headers=None, expect=(200, 201, 303)):
    conn.request(method, path, body=body, headers=headers or {})
    response = conn.getresponse()
    data = response.read()
    if response.status not in expect:
        raise SystemExit(f"{method} {path}: {response.status} {data[:200]!r}")
    return response, data


def timed(conn, path, headers, samples=300):
    times, body = [], b""
    for _ in range(20):
        _, body = call(conn, "GET", path, headers=headers)
    for _ in range(samples):
        start = time.perf_counter()
        _, body = call(conn, "GET", path, headers=headers)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times), body


# A floor of 30 rooms and 200 panoramas (small JPEGs: the page does not read them).
conn = connection()
property_id, floor_id = str(uuid.uuid4()), str(uuid.uuid4())
json_headers = dict(bearer, **{"Content-Type": "application/json"})
call(conn, "PUT", f"/v1/properties/{property_id}", json.dumps({"name": "Measured", "floorCount": 1}), json_headers)
call(conn, "PUT", f"/v1/properties/{property_id}/floors/{floor_id}", json.dumps({"number": 0}), json_headers)
rooms = tourfixture.room_grid(30, columns=6)
call(conn, "PUT", f"/v1/floors/{floor_id}/plan", json.dumps({"planId": str(uuid.uuid4()), "mode": "newScan", "rooms": rooms}), json_headers)
small = tourfixture.panorama_jpeg(256)
for index in range(200):
    call(conn, "PUT", f"/v1/panoramas/{uuid.uuid4()}?floorId={floor_id}&roomId={rooms[index % 30]['id']}", small,
         dict(bearer, **{"Content-Type": "image/jpeg"}))

# Signed in as a browser is.
_, form = call(conn, "GET", "/app/login")
csrf = re.search(rb'name="csrf" value="([^"]+)"', form).group(1).decode()
response, _ = call(conn, "POST", "/app/login", urllib.parse.urlencode({"csrf": csrf, "token": token}),
                   {"Cookie": f"nt_signin={csrf}", "Content-Type": "application/x-www-form-urlencoded"})
session = re.search(r"nt_session=([^;]+)", response.getheader("Set-Cookie")).group(1)
cookie = {"Cookie": f"nt_session={session}"}

floor_ms, floor_page = timed(connection(), f"/app/floors/{floor_id}", cookie)
open(f"{nginx_root}/floor.html", "wb").write(floor_page)
nginx_floor_ms, _ = timed(connection(nginx_port), "/floor.html", {})

# A share link's opening writes its visit (the day's salt, the visitor's hash, the event's
# window): timed beside the same link's floor page, which only reads, and nginx with its bytes.
share = json.loads(call(conn, "POST", f"/v1/tours/{json.loads(call(conn, 'GET', f'/v1/properties/{property_id}', headers=bearer)[1])['tourId']}/shares",
                        json.dumps({"label": "Bench"}), json_headers)[1])
visitor = {"User-Agent": "bench", "X-Forwarded-For": "198.51.100.7"}
opening_ms, opening_page = timed(connection(), share["url"], visitor)
shared_floor_ms, _ = timed(connection(), f"{share['url']}/floors/{floor_id}", visitor)
open(f"{nginx_root}/opening.html", "wb").write(opening_page)
nginx_opening_ms, _ = timed(connection(nginx_port), "/opening.html", {})



def processed(panorama):
    """Waits for a panorama's processing (its previews and tiles made in the background)."""
    deadline = time.monotonic() + 600
    while json.loads(call(conn, "GET", f"/v1/panoramas/{panorama}", headers=bearer)[1])["state"] == "processing" and time.monotonic() < deadline:
        time.sleep(0.01)


# Previews of an 8192 × 4096 camera-like JPEG: made once (the first GET), then from the cache.
# Each panorama's processing makes them once it is stored; its previews are then taken from
# the cache (as on a daemon whose cache was lost), so that the first GET makes its own.
big = tourfixture.panorama_jpeg(8192, grain=20, quality=90)
made = {}
for width in (320, 1024, 4096):
    panorama = str(uuid.uuid4())
    call(conn, "PUT", f"/v1/panoramas/{panorama}?floorId={floor_id}", big, dict(bearer, **{"Content-Type": "image/jpeg"}))
    processed(panorama)
    for folder in glob.glob(f"{data_dir}/previews/*/{panorama}"):
        for name in os.listdir(folder):
            if name.endswith(".jpg"):
                os.remove(os.path.join(folder, name))
    start = time.perf_counter()
    _, preview = call(conn, "GET", f"/v1/panoramas/{panorama}/preview?width={width}", headers=bearer)
    made[width] = ((time.perf_counter() - start) * 1000, panorama, preview)


def pillow_preview(width):
    start = time.perf_counter()
    image = Image.open(io.BytesIO(big))
    image.draft("RGB", (width, width // 2))
    image = image.convert("RGB").resize((width, width // 2), Image.BOX)
    image.save(io.BytesIO(), "JPEG", quality=82)
    return (time.perf_counter() - start) * 1000


pillow = {width: statistics.median(pillow_preview(width) for _ in range(3)) for width in made}
_, panorama, preview = made[1024]
cached_ms, _ = timed(connection(), f"/v1/panoramas/{panorama}/preview?width=1024", bearer)
open(f"{nginx_root}/preview.jpg", "wb").write(preview)
nginx_cached_ms, _ = timed(connection(nginx_port), "/preview.jpg", {})

print("Tour viewer, one keep-alive connection, median of 300 unless said, same run")
print(f"  GET /app/floors/{{id}} (30 rooms, 200 panoramas, {len(floor_page) / 1000:.0f} KB of HTML): {floor_ms:.2f} ms "
      f"(target < 5 ms); nginx, the same bytes: {nginx_floor_ms:.2f} ms ({floor_ms / nginx_floor_ms:.1f}x)")
print(f"  GET /t/{{secret}}, a share link's opening (its visit written; {len(opening_page) / 1000:.0f} KB): {opening_ms:.2f} ms; "
      f"the link's floor page (a read): {shared_floor_ms:.2f} ms; nginx, the opening's bytes: {nginx_opening_ms:.2f} ms ({opening_ms / nginx_opening_ms:.1f}x)")
for width, (ms, _, body) in made.items():
    print(f"  preview of an 8192 × 4096 JPEG ({len(big) / 1e6:.1f} MB) at width {width}, made on the first GET: {ms:.0f} ms"
          + (" (target < 150 ms)" if width == 1024 else "")
          + f"; Pillow (libjpeg-turbo draft mode) the same: {pillow[width]:.0f} ms ({ms / pillow[width]:.2f}x); {len(body) / 1000:.0f} KB")
print(f"  the 1024 preview again, from its cache: {cached_ms:.2f} ms; nginx, the same file: {nginx_cached_ms:.2f} ms "
      f"({cached_ms / nginx_cached_ms:.1f}x)")
