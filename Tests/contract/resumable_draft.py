"""Conformance of toursd's resumable uploads to the IETF draft "Resumable Uploads for HTTP",
interop versions 3, 5, 6, 7 and 8, each from its draft's text, on raw sockets read by h11 (a
104 is an interim response Python's http.client cannot read).

usage:
  resumable_draft.py suite BASE TOKEN [--no-interim] [--second BASE2]
      every procedure for every version against a running toursd (BASE; BASE2 another daemon
      on the same database and blobs, for resumption there). --no-interim: toursd was told
      not to send 104s (behind nginx), so an upload is resumed from an explicit creation's
      Location instead.
  resumable_draft.py kill TOURSD DATA_DIR
      a toursd of its own (TOURSD, data in DATA_DIR): an upload cut half-way, its offset
      asked, toursd SIGKILLed and started again; the offset is still there, and the upload
      finishes with the right digest.

Every socket has a timeout and every loop a bound: nothing here can hang.
"""
import base64
import hashlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
import uuid

import h11

socket.setdefaulttimeout(30)
VERSIONS = [3, 5, 6, 7, 8]


def check(condition, message):
    if not condition:
        print("FAIL:", message)
        sys.exit(1)
    print("ok:", message)


def image(size):
    data = b"\xff\xd8\xff\xe0" + os.urandom(size - 4)  # a JPEG's signature: toursd checks it
    return data, hashlib.sha256(data).hexdigest()


class Client:
    """One connection to toursd, spoken through h11."""

    def __init__(self, base, token):
        url = urllib.parse.urlsplit(base)
        self.host, self.port, self.token = url.hostname, url.port, token
        self.sock = socket.create_connection((self.host, self.port), timeout=30)
        self.conn = h11.Connection(h11.CLIENT)

    def start(self, method, target, headers, length=None):
        fields = [("Host", f"{self.host}:{self.port}"), ("Authorization", "Bearer " + self.token)]
        fields += list(headers.items())
        if length is not None:
            fields.append(("Content-Length", str(length)))
        self.sock.sendall(self.conn.send(h11.Request(method=method, target=target, headers=fields)))

    def send(self, data):
        if data:
            self.sock.sendall(self.conn.send(h11.Data(data=data)))

    def end(self):
        self.sock.sendall(self.conn.send(h11.EndOfMessage()))

    def next_event(self):
        for _ in range(100_000):
            event = self.conn.next_event()
            if event is not h11.NEED_DATA:
                return event
            self.conn.receive_data(self.sock.recv(65536))
        raise RuntimeError("no event")

    def interim(self):
        """The next interim response (it must come before the final one)."""
        event = self.next_event()
        assert isinstance(event, h11.InformationalResponse), f"expected a 1xx, got {event!r}"
        return event.status_code, fields(event.headers)

    def response(self):
        """Interim responses, then the final one: (interims, status, fields, body)."""
        interims = []
        for _ in range(100):
            event = self.next_event()
            if isinstance(event, h11.InformationalResponse):
                interims.append((event.status_code, fields(event.headers)))
                continue
            assert isinstance(event, h11.Response), repr(event)
            body = b""
            for _ in range(100_000):
                part = self.next_event()
                if isinstance(part, h11.EndOfMessage):
                    break
                body += part.data
            return interims, event.status_code, fields(event.headers), body
        raise RuntimeError("too many interim responses")

    def request(self, method, target, headers=None, body=b""):
        self.start(method, target, headers or {}, length=len(body) if method not in ("HEAD", "DELETE", "OPTIONS") or body else None)
        self.send(body)
        self.end()
        answer = self.response()
        # A server (or nginx in front) may end the connection after its answer, as HTTP lets
        # it: then the exchange is over and a next request on this client fails at its start.
        if self.conn.our_state is h11.DONE and self.conn.their_state is h11.DONE:
            self.conn.start_next_cycle()
        return answer

    def cut(self):
        """Goes away mid-request, as a phone losing its network does."""
        self.sock.close()

    def close(self):
        self.sock.close()


def fields(headers):
    return {name.decode().lower(): value.decode() for name, value in headers}


def once(base, token, method, target, headers=None, body=b""):
    client = Client(base, token)
    try:
        return client.request(method, target, headers, body)
    finally:
        client.close()


def api(base, token, method, path, body=None):
    headers = {"Content-Type": "application/json"} if body is not None else {}
    _, status, _, data = once(base, token, method, path, headers, json.dumps(body).encode() if body is not None else b"")
    assert status < 300, f"{method} {path}: {status} {data[:200]}"
    return json.loads(data or b"null")


def complete_field(version, complete):
    """The request field saying whether this request's content ends the upload."""
    if version == 3:
        return {"Upload-Incomplete": "?0" if complete else "?1"}
    return {"Upload-Complete": "?1" if complete else "?0"}


def said_complete(version, answer):
    """What an answer says of the upload's completeness (None: it says nothing)."""
    if version == 3:
        value = answer.get("upload-incomplete")
        return None if value is None else value == "?0"
    value = answer.get("upload-complete")
    return None if value is None else value == "?1"


def append_fields(version, offset, complete):
    headers = {"Upload-Draft-Interop-Version": str(version), "Upload-Offset": str(offset)}
    if version >= 6:
        headers["Content-Type"] = "application/partial-upload"
    if version >= 7 or not complete:
        headers.update(complete_field(version, complete))
    return headers


class Suite:
    def __init__(self, base, token, interim, second):
        self.base, self.token, self.interim, self.second = base, token, interim, second
        property_id, self.floor = str(uuid.uuid4()), str(uuid.uuid4())
        api(base, token, "PUT", f"/v1/properties/{property_id}", {"name": "draft uploads", "floorCount": 1})
        api(base, token, "PUT", f"/v1/properties/{property_id}/floors/{self.floor}", {"number": 0})

    def put_target(self, panorama):
        return f"/v1/panoramas/{panorama}?floorId={self.floor}"

    def post_target(self, panorama):
        return f"/v1/uploads?panoramaId={panorama}&floorId={self.floor}"

    def stored(self, panorama, base=None):
        _, status, _, body = once(base or self.base, self.token, "GET", f"/v1/panoramas/{panorama}")
        return json.loads(body) if status == 200 else None

    def creation_fields(self, version, complete, length=None):
        headers = {"Upload-Draft-Interop-Version": str(version), "Content-Type": "image/jpeg"}
        headers.update(complete_field(version, complete))
        if length is not None and version >= 6:
            headers["Upload-Length"] = str(length)
        return headers

    def head(self, version, location, base=None):
        _, status, answer, _ = once(base or self.base, self.token, "HEAD", location, {"Upload-Draft-Interop-Version": str(version)})
        return status, answer

    def whole(self, version):
        """A whole upload in one request, as URLSession sends it: the 104 with Location, then
        the panorama; a re-send of the same bytes is 200."""
        panorama = str(uuid.uuid4())
        data, digest = image(300_000)
        interims, status, answer, body = once(self.base, self.token, "PUT", self.put_target(panorama),
                                              self.creation_fields(version, True, len(data)), data)
        check(status == 201 and json.loads(body)["sha256"] == digest, f"v{version}: a whole upload is the panorama (201)")
        if self.interim:
            check(len(interims) == 1 and interims[0][0] == 104, f"v{version}: one 104 came before the final answer")
            code, fields104 = interims[0]
            check(fields104.get("upload-draft-interop-version") == str(version) and fields104.get("location", "").startswith("/v1/uploads/"),
                  f"v{version}: the 104 names the version and the upload's Location")
            check(("upload-limit" in fields104) == (version >= 6), f"v{version}: the 104 carries Upload-Limit from version 6 on")
            status, head = self.head(version, fields104["location"])
            check(status == 204 and head.get("upload-offset") == str(len(data)) and said_complete(version, head) is True,
                  f"v{version}: HEAD of the finished upload: 204, the whole offset, complete")
        else:
            check(interims == [], f"v{version}: no 104 when interim responses are off")
        check(said_complete(version, answer) is True, f"v{version}: the final answer says complete, never incomplete")
        check(("upload-offset" in answer) == (version < 7), f"v{version}: the final answer carries Upload-Offset only before version 7")
        _, status, _, _ = once(self.base, self.token, "PUT", self.put_target(panorama), self.creation_fields(version, True), data)
        check(status == 200, f"v{version}: the same bytes again are a re-send (200)")

    def cut_and_resume(self, version, base_after=None):
        """A creation cut half-way: its offset asked (on `base_after`, another daemon, when
        given), the rest appended, the panorama's digest right."""
        panorama = str(uuid.uuid4())
        data, digest = image(2_000_000)
        half = len(data) // 2
        client = Client(self.base, self.token)
        if self.interim:
            client.start("PUT", self.put_target(panorama), self.creation_fields(version, True, len(data)), length=len(data))
            code, fields104 = client.interim()
            location = fields104["location"]
            client.send(data[:half])
        else:
            # Without a 104 the client learns the upload resource from an explicit creation.
            _, status, answer, _ = client.request("POST", self.post_target(panorama), self.creation_fields(version, False, len(data)), data[:1000])
            location = answer["location"]
            check(status == 201 and answer.get("upload-offset") == "1000" and said_complete(version, answer) is False,
                  f"v{version}: an explicit incomplete creation: 201, Location, offset, incomplete")
            client.start("PATCH", location, append_fields(version, 1000, True), length=len(data) - 1000)
            client.send(data[1000:half])
        time.sleep(0)  # the bytes are handed to the kernel; the cut follows them
        client.cut()
        where = base_after or self.base
        status, head = self.head(version, location, where)
        offset = int(head.get("upload-offset", "-1"))
        check(status == 204 and 0 <= offset <= half and said_complete(version, head) is False and head.get("cache-control") == "no-store",
              f"v{version}: after the cut HEAD answers 204, offset {offset} of {half} sent, incomplete, no-store"
              + ("" if status == 204 and offset >= 0 else f" (it answered {status} {head})"))
        if self.interim and not base_after:
            # Straight to toursd, a client that closed its connection loses nothing it sent:
            # the transfer ends by itself within uploadTakeoverGraceMs and keeps every byte.
            check(offset == half, f"v{version}: every byte sent before the cut was kept ({offset} of {half})")
        if version >= 6:
            check(head.get("upload-length") == str(len(data)), f"v{version}: HEAD carries the Upload-Length recorded")
        if version >= 8:
            check("upload-limit" in head, f"v{version}: HEAD carries Upload-Limit")
        # Behind a balancer the cut request may still be on its way to a daemon after the HEAD
        # (nginx forwards what it had): arriving, it moves the offset on or ends the append below
        # as the newer request, and that append meets a 409. A client then asks the offset again and resumes from there, as here.
        # Straight to toursd the cut transfer has ended before the HEAD answers: one append.
        attempts = 1 if self.interim else 3
        for attempt in range(1, attempts + 1):
            _, status, answer, body = once(where, self.token, "PATCH", location, append_fields(version, offset, True), data[offset:])
            if status != 409 or attempt == attempts:
                break
            status, head = self.head(version, location, where)
            check(status == 204 and int(head.get("upload-offset", "-1")) >= offset,
                  f"v{version}: after a 409 at {offset} (a late transfer ended it or moved on) HEAD says {head.get('upload-offset')}")
            offset = int(head["upload-offset"])
        check(status == 201 and json.loads(body)["sha256"] == digest and said_complete(version, answer) is True,
              f"v{version}: the rest appended at {offset}: the panorama, digest right (attempt {attempt}, {status})"
              + (" (on another daemon)" if base_after else ""))
        check(self.stored(panorama)["size"] == len(data), f"v{version}: the panorama holds every byte")
        return half - offset

    def wrong_offset(self, version):
        panorama = str(uuid.uuid4())
        data, _ = image(10_000)
        _, status, answer, _ = once(self.base, self.token, "POST", self.post_target(panorama), self.creation_fields(version, False), data[:4000])
        location = answer["location"]
        check(status == 201 and answer.get("upload-offset") == "4000", f"v{version}: an incomplete creation holds 4000")
        _, status, answer, body = once(self.base, self.token, "PATCH", location, append_fields(version, 3000, True), data[3000:])
        check(status == 409 and answer.get("upload-offset") == "4000", f"v{version}: a wrong offset is 409 with the offset held")
        if version >= 7:
            check(said_complete(version, answer) is False, f"v{version}: the 409 says Upload-Complete: ?0")
        if version >= 6:
            problem = json.loads(body)
            check(answer.get("content-type") == "application/problem+json" and problem["type"].endswith("#mismatching-upload-offset")
                  and problem["expected-offset"] == 4000 and problem["provided-offset"] == 3000,
                  f"v{version}: the 409 is a mismatching-upload-offset problem")
        status, head = self.head(version, location)
        check(status == 204 and head.get("upload-offset") == "4000", f"v{version}: the upload is still there after the 409")
        _, status, _, _ = once(self.base, self.token, "PATCH", location, append_fields(version, 4000, True), data[4000:])
        check(status == 201 and self.stored(panorama) is not None, f"v{version}: and finishes from the right offset")
        _, status, answer, body = once(self.base, self.token, "PATCH", location, append_fields(version, 10_000, True), b"")
        check(status == 400, f"v{version}: an append to a completed upload is 400")

    def cancel(self, version):
        panorama = str(uuid.uuid4())
        data, _ = image(5_000)
        _, status, answer, _ = once(self.base, self.token, "POST", self.post_target(panorama), self.creation_fields(version, False), data[:2000])
        location = answer["location"]
        if version < 7:
            _, status, _, _ = once(self.base, self.token, "DELETE", location, {"Upload-Draft-Interop-Version": str(version), "Upload-Offset": "0"})
            check(status == 400, f"v{version}: a cancellation carrying Upload-Offset is 400 (until -05)")
            _, status, _, _ = once(self.base, self.token, "HEAD", location, {"Upload-Draft-Interop-Version": str(version), "Upload-Offset": "0"})
            check(status == 400, f"v{version}: an offset retrieval carrying Upload-Offset is 400 (until -05)")
        _, status, _, _ = once(self.base, self.token, "DELETE", location, {"Upload-Draft-Interop-Version": str(version)})
        check(status == 204, f"v{version}: cancellation is 204")
        status, _ = self.head(version, location)
        check(status == 404, f"v{version}: a cancelled upload is gone (404)")
        check(self.stored(panorama) is None, f"v{version}: nothing of it is stored")

    def in_pieces(self, version):
        """An explicit incomplete creation appended in pieces; the length said last."""
        panorama = str(uuid.uuid4())
        data, digest = image(30_000)
        _, status, answer, _ = once(self.base, self.token, "POST", self.post_target(panorama), self.creation_fields(version, False), b"")
        location = answer["location"]
        check(status == 201 and answer.get("upload-offset") == "0" and said_complete(version, answer) is False,
              f"v{version}: an empty incomplete creation: 201 at offset 0")
        offset = 0
        if version >= 7:
            # -06 on: a request's Content-Digest vouches for its bytes; a corrupted piece adds none.
            headers = append_fields(version, 0, False)
            headers["Content-Digest"] = "sha-256=:" + base64.b64encode(hashlib.sha256(b"not these bytes").digest()).decode() + ":"
            _, status, _, _ = once(self.base, self.token, "PATCH", location, headers, data[:10_000])
            _, head = self.head(version, location)
            check(status == 460 and head.get("upload-offset") == "0", f"v{version}: a piece whose Content-Digest does not match is refused, nothing appended")
        for piece in (data[:10_000], data[10_000:20_000]):
            headers = append_fields(version, offset, False)
            if version >= 7:
                headers["Content-Digest"] = "sha-256=:" + base64.b64encode(hashlib.sha256(piece).digest()).decode() + ":"
            _, status, answer, _ = once(self.base, self.token, "PATCH", location, headers, piece)
            offset += len(piece)
            want = 204 if version >= 7 else 201
            check(status == want and answer.get("upload-offset") == str(offset) and said_complete(version, answer) is False,
                  f"v{version}: an incomplete append: {want}, offset {offset}, incomplete")
        check(self.stored(panorama) is None, f"v{version}: nothing is a panorama before the upload says it is complete")
        _, status, answer, body = once(self.base, self.token, "PATCH", location, append_fields(version, offset, True), data[offset:])
        check(status == 201 and json.loads(body)["sha256"] == digest, f"v{version}: the last piece makes the panorama")

    def digest_mismatch(self, version):
        panorama = str(uuid.uuid4())
        data, _ = image(20_000)
        headers = self.creation_fields(version, True)
        headers["Repr-Digest"] = "sha-256=:" + base64.b64encode(hashlib.sha256(b"other").digest()).decode() + ":"
        _, status, answer, body = once(self.base, self.token, "PUT", self.put_target(panorama), headers, data)
        check(status == 400 and json.loads(body)["error"]["code"] == "digest_mismatch", f"v{version}: a digest mismatch is 400 digest_mismatch")
        check(self.stored(panorama) is None, f"v{version}: and nothing is stored")
        # Cut and resumed: the append that completes it fails the digest. From -06 on (interop
        # 7) the answer to a request that completes the upload says ?1, errors included.
        panorama = str(uuid.uuid4())
        headers = self.creation_fields(version, False)
        headers["Repr-Digest"] = "sha-256=:" + base64.b64encode(hashlib.sha256(b"other").digest()).decode() + ":"
        _, status, created, _ = once(self.base, self.token, "POST", self.post_target(panorama), headers, data[:10_000])
        _, status, answer, body = once(self.base, self.token, "PATCH", created["location"], append_fields(version, 10_000, True), data[10_000:])
        check(status == 400 and json.loads(body)["error"]["code"] == "digest_mismatch", f"v{version}: a resumed upload's digest mismatch is 400")
        if version >= 7:
            check(said_complete(version, answer) is True, f"v{version}: the completing append's refusal says Upload-Complete: ?1, not {answer.get('upload-complete')}")
        check(self.stored(panorama) is None, f"v{version}: and nothing is stored")

    def length_overrun(self, version):
        if version < 6:
            return
        panorama = str(uuid.uuid4())
        data, _ = image(3_000)
        _, status, answer, _ = once(self.base, self.token, "POST", self.post_target(panorama), self.creation_fields(version, False), data[:2000])
        headers = append_fields(version, 2000, False)
        headers["Upload-Length"] = "1000"
        _, status, _, _ = once(self.base, self.token, "PATCH", answer["location"], headers, b"")
        status_after, head = self.head(version, answer["location"])
        check(status == 400 and head.get("upload-offset") == "2000" and "upload-length" not in head,
              f"v{version}: a length short of the bytes held is 400, and not recorded")
        panorama = str(uuid.uuid4())
        data, _ = image(8_000)
        _, status, answer, _ = once(self.base, self.token, "POST", self.post_target(panorama), self.creation_fields(version, False, 5_000), data[:1000])
        location = answer["location"]
        _, status, _, _ = once(self.base, self.token, "PATCH", location, append_fields(version, 1000, False), data[1000:])
        check(status == 400, f"v{version}: an append past the Upload-Length recorded is 400")
        if version < 7:  # from -06 on the overrun ended the upload
            status, head = self.head(version, location)
            check(status == 204 and head.get("upload-offset") == "1000", f"v{version}: and nothing of it was appended")

    def no_interim_to_http10(self, version):
        """RFC 9110 §15.2: no 1xx to an HTTP/1.0 request; the creation still works."""
        panorama = str(uuid.uuid4())
        data, _ = image(5_000)
        client = Client(self.base, self.token)
        try:
            head = f"PUT {self.put_target(panorama)} HTTP/1.0\r\nHost: {client.host}\r\nAuthorization: Bearer {self.token}\r\n"
            head += "".join(f"{name}: {value}\r\n" for name, value in self.creation_fields(version, True).items())
            client.sock.sendall((head + f"Content-Length: {len(data)}\r\n\r\n").encode() + data)
            answer = b""
            for _ in range(10_000):
                part = client.sock.recv(65536)
                if not part:
                    break
                answer += part
        finally:
            client.close()
        first = answer.split(b"\r\n")[0]
        check(answer.startswith(b"HTTP/1.1 201"), f"v{version}: an HTTP/1.0 creation gets no 104, its first line is {first!r}")

    def unknown_version(self):
        panorama = str(uuid.uuid4())
        data, _ = image(5_000)
        interims, status, _, _ = once(self.base, self.token, "PUT", self.put_target(panorama),
                                      {"Upload-Draft-Interop-Version": "4", "Upload-Complete": "?1", "Content-Type": "image/jpeg"}, data)
        check(status == 201 and interims == [], "an unknown interop version is a plain upload: stored, no 104")
        interims, status, _, _ = once(self.base, self.token, "PUT", self.put_target(str(uuid.uuid4())),
                                      {"Upload-Draft-Interop-Version": "4", "Upload-Complete": "?0", "Content-Type": "image/jpeg"}, data)
        check(status == 400 and interims == [], "a part under an unknown version is refused, never stored as a whole panorama")
        _, status, _, body = once(self.base, self.token, "POST", self.post_target(str(uuid.uuid4())),
                                  {"Upload-Draft-Interop-Version": "4", "Upload-Complete": "?1", "Content-Type": "image/jpeg"}, data)
        check(status == 400 and "3, 5, 6, 7, 8" in json.loads(body)["error"]["message"],
              "an explicit creation under an unknown version is 400 naming the versions served")

    def options(self):
        for target in ("/v1/uploads", f"/v1/panoramas/{uuid.uuid4()}"):
            _, status, answer, _ = once(self.base, self.token, "OPTIONS", target)
            check(status == 204 and re.match(r"max-size=\d+", answer.get("upload-limit", "")) is not None
                  and "application/partial-upload" in answer.get("accept-patch", ""),
                  f"OPTIONS {target.split('/')[2]} carries Upload-Limit and Accept-Patch")

    def run(self):
        self.options()
        self.unknown_version()
        resent = []
        for version in VERSIONS:
            self.whole(version)
            resent.append(self.cut_and_resume(version))
            self.wrong_offset(version)
            self.cancel(version)
            self.in_pieces(version)
            self.digest_mismatch(version)
            self.length_overrun(version)
            self.no_interim_to_http10(version)
            if self.second:
                self.cut_and_resume(version, base_after=self.second)
        print(f"draft: bytes sent again after a cut, per version: {resent}")


def kill_and_restart(toursd, data_dir):
    def start():
        log = open(os.path.join(data_dir, "toursd.log"), "a")
        process = subprocess.Popen([toursd, "serve", "--port", "0", "--data-dir", data_dir], stderr=log)
        for _ in range(200):
            text = open(os.path.join(data_dir, "toursd.log")).read()
            ports = re.findall(r"listening on http://[^ ]*:(\d+)\n", text)  # whole lines: a read may see one half written
            if len(ports) > started.count:
                started.count += 1
                return process, f"http://127.0.0.1:{ports[-1]}"
            time.sleep(0.05)
        raise RuntimeError("toursd did not start")

    class started:
        count = 0

    os.makedirs(data_dir, exist_ok=True)
    process, base = start()
    try:
        for _ in range(100):
            if os.path.exists(os.path.join(data_dir, "admin.token")):
                break
            time.sleep(0.05)
        token = open(os.path.join(data_dir, "admin.token")).read().strip()
        suite = Suite(base, token, True, None)
        panorama = str(uuid.uuid4())
        data, digest = image(3_000_000)
        half = len(data) // 2
        client = Client(base, token)
        client.start("PUT", suite.put_target(panorama), suite.creation_fields(8, True, len(data)), length=len(data))
        _, fields104 = client.interim()
        location = fields104["location"]
        client.send(data[:half])
        client.cut()
        status, head = suite.head(8, location, base)
        reported = int(head["upload-offset"])
        check(status == 204 and reported > 0, f"kill: the offset {reported} was reported before the kill")
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
        process, base = start()
        status, head = suite.head(8, location, base)
        check(status == 204 and int(head["upload-offset"]) == reported, f"kill: after SIGKILL and a restart HEAD still answers {reported}")
        _, status, _, body = once(base, token, "PATCH", location, append_fields(8, reported, True), data[reported:])
        check(status == 201 and json.loads(body)["sha256"] == digest, "kill: the upload finishes after the restart, digest right")
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)


def main():
    if len(sys.argv) >= 4 and sys.argv[1] == "suite":
        args = sys.argv[4:]
        second = args[args.index("--second") + 1] if "--second" in args else None
        Suite(sys.argv[2], sys.argv[3], "--no-interim" not in args, second).run()
    elif len(sys.argv) == 4 and sys.argv[1] == "kill":
        kill_and_restart(sys.argv[2], sys.argv[3])
    else:
        print(__doc__)
        sys.exit(2)
    print("draft: PASS")


if __name__ == "__main__":
    main()
