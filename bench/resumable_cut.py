"""A draft upload of FILE cut after half of it is sent, its offset asked, and the rest sent:
prints the bytes sent again (those sent before the cut that toursd did not keep) and the
seconds from the HEAD to the panorama.

usage: resumable_cut.py BASE TOKEN FLOOR FILE
"""
import hashlib
import json
import os
import sys
import time
import uuid

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "Tests", "contract"))
from resumable_draft import Client, append_fields, once  # noqa: E402

base, token, floor, path = sys.argv[1:5]
data = open(path, "rb").read()
half = len(data) // 2
client = Client(base, token)
target = f"/v1/panoramas/{uuid.uuid4()}?floorId={floor}"
client.start("PUT", target, {"Upload-Draft-Interop-Version": "8", "Upload-Complete": "?1", "Content-Type": "image/jpeg",
                             "Upload-Length": str(len(data))}, length=len(data))
_, fields = client.interim()
client.send(data[:half])
client.cut()
start = time.monotonic()
_, status, head, _ = once(base, token, "HEAD", fields["location"], {"Upload-Draft-Interop-Version": "8"})
offset = int(head["upload-offset"])
_, status, _, body = once(base, token, "PATCH", fields["location"], append_fields(8, offset, True), data[offset:])
if status != 201 or json.loads(body)["sha256"] != hashlib.sha256(data).hexdigest():
    print(f"bench: the resumed upload failed: {status} {body[:200]}", file=sys.stderr)
    sys.exit(1)
print(half - offset, f"{time.monotonic() - start:.3f}")
