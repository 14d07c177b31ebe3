"""schemathesis extensions for toursd's contract test.

Generated ids name nothing, so most requests would end in 404 before reaching the logic
behind them; and a tus creation needs metadata naming a real floor. `before_call` puts real
test data in (made by schemathesis.sh, named by ST_* variables): ids that look like UUIDs
become existing ones (malformed ones stay, to test the 400s), a DELETE or a PATCH gets a
resource of its own made just before it, and a declared digest or checksum is the body's.
"""
import base64
import hashlib
import json
import os
import re
import urllib.request
import uuid

import schemathesis

UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
URL = os.environ.get("ST_URL", "")
TOKEN = os.environ.get("ST_TOKEN", "")
EXISTING = {
    "propertyId": os.environ.get("ST_PROPERTY"),
    "floorId": os.environ.get("ST_FLOOR"),
    "panoramaId": os.environ.get("ST_PANORAMA"),
    "uploadId": os.environ.get("ST_UPLOAD"),
    "tourId": os.environ.get("ST_TOUR"),
}


@schemathesis.serializer("application/offset+octet-stream")
def offset_octet_stream(ctx, value):
    """tus PATCH and creation-with-upload bodies: raw bytes, as application/offset+octet-stream."""
    if isinstance(value, bytes):
        return {"data": value}
    return {"data": str(value).encode()}


def _call(method, path, body=b"", headers=None):
    """A request of the test's own to toursd; returns (status, headers, body)."""
    request = urllib.request.Request(URL + path, data=body if method in ("PUT", "POST", "PATCH") else None, method=method,
                                     headers={"Authorization": f"Bearer {TOKEN}", **(headers or {})})
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.status, response.headers, response.read()


def _metadata(panorama_id):
    pairs = {"panoramaId": panorama_id, "floorId": EXISTING["floorId"], "contentType": "image/jpeg"}
    return ",".join(f"{key} {base64.b64encode(value.encode()).decode()}" for key, value in pairs.items())


def _fresh(name):
    """A resource of its own for a DELETE or a PATCH, made now."""
    new = str(uuid.uuid4())
    if name == "propertyId":
        _call("PUT", f"/v1/properties/{new}", json.dumps({"name": "Contract", "floorCount": 1}).encode(),
              {"Content-Type": "application/json"})
    elif name == "panoramaId":
        _call("PUT", f"/v1/panoramas/{new}?floorId={EXISTING['floorId']}", b"\xff\xd8\xffcontract", {"Content-Type": "image/jpeg"})
    elif name == "uploadId":
        _, headers, _ = _call("POST", "/v1/uploads", headers={"Tus-Resumable": "1.0.0", "Upload-Length": "100000000",
                                                               "Upload-Metadata": _metadata(new)})
        return headers["Location"].split("/")[3]  # /v1/uploads/{uploadId}/{capability}
    elif name == "grantId":
        _, _, body = _call("POST", "/v1/grants", json.dumps({"scopes": ["read"], "propertyIds": [EXISTING["propertyId"]],
                                                            "expiresInSeconds": 3600}).encode(), {"Content-Type": "application/json"})
        return json.loads(body)["id"]
    elif name == "tokenId":
        # Never the test's own token: a DELETE gets a token made for it.
        _, _, body = _call("POST", "/v1/tokens")
        return json.loads(body)["id"]
    else:
        return EXISTING.get(name)
    return new


def _body_bytes(case):
    body = case.body
    if isinstance(body, (bytes, bytearray)):
        return bytes(body)
    if isinstance(body, str):
        return body.encode()
    return None


@schemathesis.hook
def before_call(ctx, case, **kwargs):
    method, path = case.operation.method.upper(), case.operation.path
    own = method == "DELETE" or (method == "PATCH" and path == "/v1/uploads/{uploadId}")
    for name, value in list((case.path_parameters or {}).items()):
        if value == "":
            # The stateful phase links an id from an answer that had none (an empty cursor):
            # an empty segment would make another route's path (/app/properties//shares).
            case.path_parameters[name] = value = str(uuid.uuid4())
        if isinstance(value, str) and UUID.match(value) and EXISTING.get(name):
            case.path_parameters[name] = _fresh(name) if own else EXISTING[name]
        elif own and name in ("grantId", "tokenId"):
            case.path_parameters[name] = _fresh(name)
    if case.query and isinstance(case.query.get("floorId"), str) and UUID.match(case.query["floorId"]):
        case.query["floorId"] = EXISTING["floorId"]
        case.query.pop("roomId", None)  # the floor has no rooms
    if path == "/v1/events" and case.query and isinstance(case.query.get("wait"), int) and case.query["wait"] > 1:
        # A long-poll of the feed waits until an event comes: every wait is tried, at most 1 s.
        case.query["wait"] = 1
    headers = case.headers if case.headers is not None else {}
    body = _body_bytes(case)
    if method == "PUT" and path == "/v1/panoramas/{panoramaId}":
        # A new panorama each time (the same id with other bytes is a 409), its digest the body's.
        case.path_parameters["panoramaId"] = str(uuid.uuid4())
        if "Repr-Digest" in headers and body is not None:
            headers["Repr-Digest"] = f"sha-256=:{base64.b64encode(hashlib.sha256(body).digest()).decode()}:"
    if method == "POST" and path == "/v1/uploads" and "Upload-Metadata" in headers:
        headers["Upload-Metadata"] = _metadata(str(uuid.uuid4()))
        length = str(headers.get("Upload-Length", ""))
        if length.isdigit() and body is not None and int(length) < len(body):
            headers["Upload-Length"] = str(len(body))
    if method == "PATCH" and own and "Upload-Offset" in headers:
        headers["Upload-Offset"] = "0"
        if "Upload-Checksum" in headers and body is not None:
            headers["Upload-Checksum"] = f"sha256 {base64.b64encode(hashlib.sha256(body).digest()).decode()}"
