"""Times an 8192 x 4096 HEIC's 1024 preview in toursd beside heif-convert plus a Pillow
resize, and the JPEG of the same scene's preview (bench/heic.sh)."""
import io, json, os, statistics, subprocess, sys, time, urllib.request, uuid

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Tests", "browser"))
import tourfixture  # noqa: E402
from PIL import Image  # noqa: E402

work, port, rounds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
token = open(os.path.join(work, "data", "admin.token")).read().strip()


def call(method, path, body=None, content_type="application/json"):
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=body, method=method,
                                     headers={"Authorization": f"Bearer {token}", "Content-Type": content_type})
    with urllib.request.urlopen(request, timeout=600) as response:
        return response.read()


jpeg = tourfixture.panorama_jpeg(8192, grain=20, quality=90)
Image.open(io.BytesIO(jpeg)).save(os.path.join(work, "scene.png"))
subprocess.run(["heif-enc", "-q", "90", "-o", os.path.join(work, "scene.heic"), os.path.join(work, "scene.png")], check=True, capture_output=True)
heic = open(os.path.join(work, "scene.heic"), "rb").read()
property_id, floor_id = str(uuid.uuid4()), str(uuid.uuid4())
call("PUT", f"/v1/properties/{property_id}", json.dumps({"name": "Phone", "floorCount": 1}).encode())
call("PUT", f"/v1/properties/{property_id}/floors/{floor_id}", b'{"number": 0}')


def toursd_preview(image, media_type):
    """Seconds from a new panorama's upload answer to its processing done (every preview width,
    320, 1024 and 4096, made from one decode; the bench's daemon makes no tiles), then checks
    its 1024 preview."""
    panorama = str(uuid.uuid4())
    call("PUT", f"/v1/panoramas/{panorama}?floorId={floor_id}", image, media_type)
    start = time.monotonic()
    deadline = start + 600
    while json.loads(call("GET", f"/v1/panoramas/{panorama}"))["state"] == "processing" and time.monotonic() < deadline:
        time.sleep(0.005)
    seconds = time.monotonic() - start
    made = Image.open(io.BytesIO(call("GET", f"/v1/panoramas/{panorama}/preview?width=1024")))
    assert made.size == (1024, 512), "toursd's preview is 1024 x 512"
    # Not the flat placeholder that stands in for an image over the budgets.
    assert any(low != high for low, high in made.getextrema()), f"toursd answered the placeholder for the {media_type}"
    return seconds


def convert_and_resize():
    start = time.monotonic()
    subprocess.run(["heif-convert", os.path.join(work, "scene.heic"), os.path.join(work, "converted.png")], check=True, capture_output=True)
    Image.open(os.path.join(work, "converted.png")).resize((1024, 512), Image.BOX).save(os.path.join(work, "resized.jpg"), quality=85)
    return time.monotonic() - start


figures = {"toursd HEIC, 3 widths": [], "heif-convert + Pillow": [], "toursd JPEG, 3 widths": []}
for _ in range(rounds):
    figures["toursd HEIC, 3 widths"].append(toursd_preview(heic, "image/heic"))
    figures["heif-convert + Pillow"].append(convert_and_resize())
    figures["toursd JPEG, 3 widths"].append(toursd_preview(jpeg, "image/jpeg"))
median = {name: statistics.median(values) for name, values in figures.items()}
print(f"An 8192 x 4096 panorama's previews ({len(heic) >> 10} KiB HEIC, {len(jpeg) >> 10} KiB JPEG), median of {rounds}: toursd from its upload's")
print("answer to processed (320, 1024 and 4096 from one decode), heif-convert + Pillow to one 1024 JPEG")
print(f"  {'made by':<28}{'seconds':>10}")
for name, seconds in median.items():
    print(f"  {name:<28}{seconds:>10.3f}")
print(f"  ratio heif-convert+Pillow / toursd HEIC: {median['heif-convert + Pillow'] / median['toursd HEIC, 3 widths']:.2f}x (target >= 1.0x); "
      f"HEIC / JPEG in toursd: {median['toursd HEIC, 3 widths'] / median['toursd JPEG, 3 widths']:.1f}x (a JPEG decodes at 1/2 scale for its 4096, a HEIC whole)")
