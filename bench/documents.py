"""Seeds toursd and times its documents beside nginx serving the same bytes (bench/documents.sh)."""
import http.client, json, statistics, sys, time, uuid
from concurrent.futures import ThreadPoolExecutor

port, token, nginx_port, nginx_root = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), sys.argv[4]
auth = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}

def connection(p=port):
    return http.client.HTTPConnection("127.0.0.1", p, timeout=30)

def call(conn, method, path, body=None, headers=auth):
    conn.request(method, path, body=body, headers=headers)
    response = conn.getresponse()
    data = response.read()
    if response.status >= 300:
        raise SystemExit(f"{method} {path}: {response.status} {data[:200]!r}")
    return data

# 20,000 properties, 16 connections at a time.
def seed(chunk):
    conn = connection()
    for index in chunk:
        call(conn, "PUT", f"/v1/properties/{uuid.uuid4()}", json.dumps({"name": f"Property {index}", "floorCount": 2, "metadata": {"ref": f"R-{index}"}}))
chunks = [range(start, min(start + 1250, 20000)) for start in range(0, 20000, 1250)]
with ThreadPoolExecutor(16) as pool:
    list(pool.map(seed, chunks))

# The measured tour: a floor of 30 rooms (with capture output) and 200 panoramas.
conn = connection()
property_id, floor_id = str(uuid.uuid4()), str(uuid.uuid4())
property = json.loads(call(conn, "PUT", f"/v1/properties/{property_id}", json.dumps({"name": "Measured", "floorCount": 1})))
call(conn, "PUT", f"/v1/properties/{property_id}/floors/{floor_id}", json.dumps({"number": 0, "name": "Ground floor"}))
rooms = [{"id": str(uuid.uuid4()), "name": f"Room {i}", "outline": [[i, 0], [i + 4.25, 0], [i + 4.25, 3.5], [i, 3.5]], "height": 2.6,
          "capture": {"walls": [{"length": 4.25, "height": 2.6}] * 4, "confidence": 0.93}} for i in range(30)]
call(conn, "PUT", f"/v1/floors/{floor_id}/plan", json.dumps({"planId": str(uuid.uuid4()), "mode": "newScan", "rooms": rooms,
                                                          "structure": {"walls": 120, "doors": 31}}))
for index in range(200):
    conn.request("PUT", f"/v1/panoramas/{uuid.uuid4()}?floorId={floor_id}&roomId={rooms[index % 30]['id']}", body=b"\xff\xd8\xff\xe0" + bytes([index % 256]) * 60,
                 headers={"Authorization": f"Bearer {token}", "Content-Type": "image/jpeg"})
    response = conn.getresponse(); response.read()
    assert response.status == 201, response.status

def timed(conn, path, headers, samples=300):
    times, body = [], b""
    for _ in range(20):
        body = call(conn, "GET", path, headers=headers)
    for _ in range(samples):
        start = time.perf_counter()
        body = call(conn, "GET", path, headers=headers)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times), body

tour_path = f"/v1/tours/{property['tourId']}"
tour_ms, tour_body = timed(connection(), tour_path, auth)
page_ms, page_body = timed(connection(), "/v1/properties?limit=50", auth)
# The same bytes from nginx, as static files, over keep-alive too.
open(f"{nginx_root}/tour.json", "wb").write(tour_body)
open(f"{nginx_root}/page.json", "wb").write(page_body)
nginx_tour_ms, _ = timed(connection(nginx_port), "/tour.json", {})
nginx_page_ms, _ = timed(connection(nginx_port), "/page.json", {})
print("JSON documents, 20,000 properties in the store, one keep-alive connection, median of 300, same run")
print(f"  GET /v1/tours/{{tourId}} ({len(tour_body) / 1000:.0f} KB: 30 rooms, 200 panoramas): {tour_ms:.2f} ms (target <= 2 ms); "
      f"nginx, the same bytes: {nginx_tour_ms:.2f} ms ({tour_ms / nginx_tour_ms:.1f}x)")
print(f"  GET /v1/properties?limit=50 ({len(page_body) / 1000:.0f} KB): {page_ms:.2f} ms (target <= 1 ms); "
      f"nginx, the same bytes: {nginx_page_ms:.2f} ms ({page_ms / nginx_page_ms:.1f}x)")
