"""Interop with a real tus client (tuspy, from PyPI) against a running toursd.

usage: tus_interop.py BASE_URL TOKEN

Checks: a chunked upload with checksums becomes the panorama; an upload abandoned after two
chunks resumes from the server's offset; an upload whose connection is cut mid-PATCH (by a
proxy) resumes and completes with the right digest.
"""
import hashlib
import json
import os
import socket
import sys
import tempfile
import threading
import urllib.request
import urllib.parse
import uuid

from tusclient import client as tus

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from relaying import pipe  # noqa: E402

# Nothing here may hang: every socket without its own timeout gets this one.
socket.setdefaulttimeout(30)

BASE, TOKEN = sys.argv[1], sys.argv[2]
HEADERS = {"Authorization": "Bearer " + TOKEN}
CHUNK = 256 * 1024


def api(method, path, body=None):
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(BASE + path, data=data, method=method,
                                     headers=dict(HEADERS, **({"Content-Type": "application/json"} if data else {})))
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read() or b"null")


def image(size):
    data = b"\xff\xd8\xff\xe0" + os.urandom(size - 4)  # a JPEG's signature: toursd checks it
    handle = tempfile.NamedTemporaryFile(delete=False)
    handle.write(data)
    handle.close()
    return handle.name, hashlib.sha256(data).hexdigest()


def metadata(panorama, floor, sha=None):
    values = {"panoramaId": panorama, "floorId": floor, "contentType": "image/jpeg"}
    if sha:
        values["sha256"] = sha
    return values


def check(condition, message):
    if not condition:
        print("FAIL:", message)
        sys.exit(1)
    print("ok:", message)


class CuttingProxy:
    """Forwards connections to toursd; one that carries more than `limit` bytes from the
    client is cut there (the creation passes, the big PATCH does not)."""

    def __init__(self, target_port, limit):
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(8)
        self.port = self.listener.getsockname()[1]
        self.target_port, self.limit = target_port, limit
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self):
        for _ in range(8):  # bounded: this test makes two or three connections
            try:
                downstream, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self.serve, args=(downstream,), daemon=True).start()

    def serve(self, downstream):
        upstream = socket.create_connection(("127.0.0.1", self.target_port))
        threading.Thread(target=pipe, args=(upstream, downstream), daemon=True).start()
        forwarded = 0
        while forwarded < self.limit:
            data = downstream.recv(min(65536, self.limit - forwarded))
            if not data:
                break
            upstream.sendall(data)
            forwarded += len(data)
        # The cut: shut down at once. A close alone would wait for the relay thread's recv on
        # the upstream socket (it holds the descriptor), so toursd would see the connection end
        # only when that recv timed out, 30 s later.
        for end in (downstream, upstream):
            try:
                end.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            end.close()


property_id, floor_id = str(uuid.uuid4()), str(uuid.uuid4())
api("PUT", f"/v1/properties/{property_id}", {"name": "tuspy", "floorCount": 1})
api("PUT", f"/v1/properties/{property_id}/floors/{floor_id}", {"number": 0})
client = tus.TusClient(BASE + "/v1/uploads", headers=HEADERS)

# 1. A whole upload in chunks, each with a sha1 Upload-Checksum, and a declared sha256.
path, sha = image(1_500_000)
panorama = str(uuid.uuid4())
client.uploader(file_path=path, chunk_size=CHUNK, metadata=metadata(panorama, floor_id, sha), upload_checksum=True).upload()
check(api("GET", f"/v1/panoramas/{panorama}")["sha256"] == sha, "a chunked upload with checksums is the panorama")

# 2. Abandoned after two chunks; a new uploader on the same URL resumes from the server's offset.
path, sha = image(1_200_000)
panorama = str(uuid.uuid4())
first = client.uploader(file_path=path, chunk_size=CHUNK, metadata=metadata(panorama, floor_id))
first.upload_chunk()
first.upload_chunk()
resumed = client.uploader(file_path=path, chunk_size=CHUNK, url=first.url)
check(resumed.get_offset() == 2 * CHUNK, "the server reports the two chunks it has")
resumed.upload()
check(api("GET", f"/v1/panoramas/{panorama}")["sha256"] == sha, "the resumed upload has the right digest")

# 3. The connection cut in the middle of a PATCH; resumed from whatever the server kept.
path, sha = image(2_000_000)
panorama = str(uuid.uuid4())
target_port = int(BASE.rsplit(":", 1)[1])
cut = CuttingProxy(target_port, limit=700_000)
through_proxy = tus.TusClient(f"http://127.0.0.1:{cut.port}/v1/uploads", headers=HEADERS)
interrupted = through_proxy.uploader(file_path=path, chunk_size=2_000_000, metadata=metadata(panorama, floor_id))
try:
    interrupted.upload()
    check(False, "the cut connection should have failed the upload")
except Exception as error:  # tuspy raises on the broken connection
    print("ok: the upload was interrupted:", type(error).__name__)
location = BASE + urllib.parse.urlsplit(interrupted.url).path  # the same upload, straight to toursd
# The server records what the cut PATCH brought right after the cut; ask until it has. An
# uploader reads the offset when it is made, so the one that resumes is made afterwards.
for _ in range(100):
    offset = client.uploader(file_path=path, chunk_size=CHUNK, url=location).get_offset()
    if offset > 0:
        break
    threading.Event().wait(0.05)
again = client.uploader(file_path=path, chunk_size=CHUNK, url=location)
check(0 <= offset <= 700_000, f"the server kept at most what came through ({offset} bytes)")
again.upload()
check(api("GET", f"/v1/panoramas/{panorama}")["sha256"] == sha, "the interrupted upload completes with the right digest")
print("tus interop: 3 passed, 0 failed")
