"""tus PATCHes in the sizes clients send, beside the floor of their durable work.

The floor: the same pieces appended to a file on the same disk, each SHA-256-hashed and
fdatasync'ed, no network, no database. toursd: one upload, a creation then its PATCHes in
order on one keep-alive connection, each answered 204 only once durable. Best of `rounds`
for each, alternating. Usage: patches.py PORT TOKEN FLOOR_ID BODY_FILE ROUNDS (the floor's
file beside BODY_FILE, on its disk).
"""
import hashlib
import http.client
import base64
import os
import sys
import time
import uuid

port, token, floor_id, body = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
rounds = int(sys.argv[5])
directory = os.path.dirname(os.path.abspath(body))
with open(body, "rb") as file:
    data = file.read()
total = len(data)


def floor(piece):
    path = os.path.join(directory, "floor.bin")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        start = time.perf_counter()
        digest = hashlib.sha256()
        for offset in range(0, total, piece):
            chunk = data[offset:offset + piece]
            os.write(fd, chunk)
            digest.update(chunk)
            os.fdatasync(fd)
        return time.perf_counter() - start
    finally:
        os.close(fd)
        os.unlink(path)


def b64(text):
    return base64.b64encode(text.encode()).decode()


def toursd(piece):
    connection = http.client.HTTPConnection("127.0.0.1", port)
    auth = {"Authorization": f"Bearer {token}", "Tus-Resumable": "1.0.0"}
    metadata = f"panoramaId {b64(str(uuid.uuid4()))},floorId {b64(floor_id)},contentType {b64('image/jpeg')}"
    start = time.perf_counter()
    connection.request("POST", "/v1/uploads", headers={**auth, "Upload-Length": str(total), "Upload-Metadata": metadata})
    answer = connection.getresponse()
    answer.read()
    if answer.status != 201:
        sys.exit(f"bench: the creation answered {answer.status}")
    location = answer.getheader("Location")
    for offset in range(0, total, piece):
        chunk = data[offset:offset + piece]
        connection.request("PATCH", location, body=chunk, headers={
            **auth, "Content-Type": "application/offset+octet-stream", "Upload-Offset": str(offset)})
        answer = connection.getresponse()
        answer.read()
        if answer.status != 204:
            sys.exit(f"bench: a PATCH at {offset} answered {answer.status}")
    elapsed = time.perf_counter() - start
    connection.close()
    return elapsed


print(f"tus PATCHes beside their floor (the same pieces appended to a file, each SHA-256-hashed and fdatasync'ed; "
      f"no network, no database): one {total >> 20} MB upload on one keep-alive connection, best of {rounds} alternating rounds")
for piece, target in ((5 << 20, 0.85), (512 << 10, 0.60)):
    floors, ours = [], []
    for _ in range(rounds):
        floors.append(floor(piece))
        ours.append(toursd(piece))
    best_floor, best_ours = min(floors), min(ours)
    count = total // piece
    label = f"{piece >> 20} MiB" if piece >= 1 << 20 else f"{piece >> 10} KiB"
    print(f"  PATCHes of {label:>7}: floor {best_floor / count * 1000:6.2f} ms a piece, toursd {best_ours / count * 1000:6.2f} ms a PATCH: "
          f"{best_floor / best_ours:.2f}x the floor's rate (target >= {target:.2f}x)")
