"""The restore drill (issue 47, docs/scale-out.md "Backup and restore"): a daemon on PostgreSQL
and a versioned bucket serves panoramas and a webhook endpoint; `toursd backup` is taken while
it serves; a panorama is deleted and another stored after it; the backup is restored into a
fresh database as the docs say, beside the deployment, which still serves. The restored
database is a deployment of its own: a daemon started on it refuses the live one's bucket, and
nothing of the live one is removed (the fourth edge: a restore beside it swept the live one's
newer panorama). Once the live daemon is stopped and `toursd deployment adopt` says the restore
replaces it, a daemon on it refuses while the deleted panorama's object is missing, starts once
its version is restored, serves every panorama of the backup byte for byte (and not the later
one), and delivers to the endpoint signed with its restored secret.

  restore_drill.py TOURSD WORK SUPERUSER_URL

The bucket: the environment's AWS_* (a moto of Tests/s3/store.sh); the cluster's superuser
makes the role and the databases."""
import base64
import hashlib
import hmac
import io
import json
import os
import subprocess
import sys
import time
import uuid

import boto3
from PIL import Image

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "webhooks"))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from receiver import Receiver  # noqa: E402
from toursd_api import request, start_toursd  # noqa: E402


def fail(message):
    print("FAIL: restore drill: " + message)
    sys.exit(1)


def psql(url, *statements):
    for statement in statements:
        subprocess.run(["psql", url, "-q", "-v", "ON_ERROR_STOP=1", "-c", statement], check=True)


class Daemon:
    """toursd on `data_dir`; `base` is None when it stopped before it listened."""

    def __init__(self, toursd, data_dir, environment):
        self.process, self.base, self.log = start_toursd(toursd, data_dir, environment)

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
        self.process.wait(30)


def jpeg(seed):
    image = Image.new("RGB", (512, 256), (seed * 40 % 256, 90, 160))
    out = io.BytesIO()
    image.save(out, "JPEG", quality=80)
    return out.getvalue()


def signed_by(secret, headers, body):
    key = base64.b64decode(secret.removeprefix("whsec_"))
    content = f"{headers['webhook-id']}.{headers['webhook-timestamp']}.".encode() + body
    expected = base64.b64encode(hmac.new(key, content, hashlib.sha256).digest()).decode()
    return any(part == "v1," + expected for part in headers.get("webhook-signature", "").split(" "))


def main():
    toursd, work, superuser = sys.argv[1], sys.argv[2], sys.argv[3]
    password = "restore-" + uuid.uuid4().hex
    subprocess.run(["psql", superuser + "/postgres", "-q", "-v", f"password='{password}'", "-f", "config/postgresql/toursd-database.sql"], check=True)
    database = superuser.replace("postgres@", f"toursd:{password}@") + "/tours"
    s3 = boto3.client("s3")
    s3.create_bucket(Bucket="tours")
    s3.put_bucket_versioning(Bucket="tours", VersioningConfiguration={"Status": "Enabled"})
    # bucketSweepSeconds 1, orphanGraceSeconds 0: a sweep that may remove anything does so at once.
    common = {"TOURSD_blobStore": "s3://tours/drill", "TOURSD_webhookAllowPrivateTargets": "true", "TOURSD_webhookPollMs": "100",
              "TOURSD_bucketSweepSeconds": "1", "TOURSD_orphanGraceSeconds": "0"}
    live_key = os.path.join(work, "live.key")
    with open(live_key, "wb") as key:
        key.write(os.urandom(32))
    os.chmod(live_key, 0o600)

    first = Daemon(toursd, os.path.join(work, "first"), {**common, "TOURSD_databaseUrl": database, "TOURSD_webhookKeyFile": live_key})
    if first.base is None:
        fail("the first daemon did not start: " + open(first.log).read()[-1500:])
    token = open(os.path.join(work, "first", "admin.token")).read().strip()
    property_id, floor_id = str(uuid.uuid4()), str(uuid.uuid4())
    for method, path, body in [("PUT", f"/v1/properties/{property_id}", {"name": "Restored villa", "floorCount": 1}),
                               ("PUT", f"/v1/properties/{property_id}/floors/{floor_id}", {"number": 0, "name": None})]:
        status, _, said = request(first.base, method, path, token, json.dumps(body), {"Content-Type": "application/json"})
        if status >= 300:
            fail(f"{method} {path}: {status} {said[:200]}")
    panoramas = {str(uuid.uuid4()): jpeg(n) for n in range(3)}
    for id, data in panoramas.items():
        status, _, said = request(first.base, "PUT", f"/v1/panoramas/{id}?floorId={floor_id}", token, data, {"Content-Type": "image/jpeg"})
        if status != 201:
            fail(f"a panorama: {status} {said[:200]}")
    receiver = Receiver()
    status, _, said = request(first.base, "POST", "/v1/webhooks", token, json.dumps({"url": receiver.url, "events": ["property.updated"]}),
                              {"Content-Type": "application/json"})
    if status != 201:
        fail(f"the endpoint: {status} {said[:200]}")
    secret = json.loads(said)["secret"]

    def back_up(into):
        return subprocess.run([toursd, "backup", into, "--data-dir", os.path.join(work, "first")], capture_output=True, text=True,
                              env={**os.environ, **common, "TOURSD_databaseUrl": database, "TOURSD_webhookKeyFile": live_key})

    # A backup whose rows name an object the bucket lacks fails, and leaves nothing behind.
    missing = f"drill/1/panoramas/{list(panoramas)[2]}"
    marker = s3.delete_object(Bucket="tours", Key=missing)["VersionId"]
    failed = back_up(os.path.join(work, "failed"))
    if failed.returncode == 0 or missing.removeprefix("drill/") not in failed.stderr or os.listdir(os.path.join(work, "failed")):
        fail(f"a backup without an object: {failed.returncode} {failed.stderr[-500:]} {os.listdir(os.path.join(work, 'failed'))}")
    s3.delete_object(Bucket="tours", Key=missing, VersionId=marker)

    # The backup, while the daemon serves.
    backup = os.path.join(work, "backup")
    made = back_up(backup)
    if made.returncode != 0:
        fail(f"toursd backup: {made.returncode} {made.stderr[-1500:]}")
    for name in ["toursd.dump", "blobs.manifest", "webhook.key"]:
        path = os.path.join(backup, name)
        if not os.path.exists(path) or os.stat(path).st_mode & 0o777 != 0o600:
            fail(f"the backup's {name} is missing or not private")
    manifest = [line.split("\t") for line in open(os.path.join(backup, "blobs.manifest")) if not line.startswith("#")]
    if sorted(line[0].split("/")[-1] for line in manifest) != sorted(panoramas):
        fail(f"the manifest names {manifest}, not the three panoramas")
    print(f"restore drill: {made.stdout.strip().splitlines()[0]}")

    # After the backup: one panorama deleted (its object goes), another stored.
    deleted = list(panoramas)[0]
    if request(first.base, "DELETE", f"/v1/panoramas/{deleted}", token)[0] != 204:
        fail("the deletion after the backup")
    later = str(uuid.uuid4())
    if request(first.base, "PUT", f"/v1/panoramas/{later}?floorId={floor_id}", token, jpeg(9), {"Content-Type": "image/jpeg"})[0] != 201:
        fail("the panorama after the backup")
    objects = lambda: sorted(o["Key"] for o in s3.list_objects_v2(Bucket="tours", Prefix="drill/").get("Contents", []))
    live_objects = objects()

    # The restore: a fresh database, pg_restore as the role, the key and the manifest in place.
    psql(superuser + "/postgres", "CREATE DATABASE tours_restored OWNER toursd LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0")
    restored = database.removesuffix("/tours") + "/tours_restored"
    subprocess.run(["pg_restore", "--no-owner", "--exit-on-error", f"--dbname={restored}", os.path.join(backup, "toursd.dump")], check=True)
    second_dir = os.path.join(work, "second")
    os.makedirs(second_dir)
    for name in ["webhook.key", "blobs.manifest"]:
        with open(os.path.join(backup, name), "rb") as source, open(os.path.join(second_dir, name), "wb") as target:
            target.write(source.read())
        os.chmod(os.path.join(second_dir, name), 0o600)
    environment = {**common, "TOURSD_databaseUrl": restored, "TOURSD_webhookKeyFile": os.path.join(second_dir, "webhook.key")}

    # Beside the live deployment, which still serves: the restore is a deployment of its own,
    # refused the live one's bucket, and nothing of the live one goes.
    beside = Daemon(toursd, second_dir, environment)
    stopped = beside.process.wait(30)
    said = open(beside.log).read()
    if stopped == 0 or "toursd deployment adopt" not in said:
        fail(f"the restore beside the live deployment started on its bucket: {said[-1500:]}")
    time.sleep(2)  # two rounds of the live daemon's sweep, which must not mind the restore either
    # (It may add previews of its own meanwhile; it removes nothing, and neither does the restore.)
    if not set(live_objects) <= set(objects()):
        fail(f"the live deployment lost objects beside the restore: {sorted(set(live_objects) - set(objects()))}")
    status, _, body = request(first.base, "GET", f"/v1/panoramas/{later}/content", token)
    if status != 200 or body != jpeg(9):
        fail(f"the live deployment's newer panorama beside the restore: {status}")
    print("restore drill: beside the serving deployment, the restore refused its bucket and nothing of it was removed")

    # The restore replaces the deployment: the live one stops for good, and the operator says so.
    first.stop()
    adopted = subprocess.run([toursd, "deployment", "adopt", "--data-dir", second_dir], capture_output=True, text=True,
                             env={**os.environ, **environment})
    if adopted.returncode != 0 or "the database is now deployment" not in adopted.stdout:
        fail(f"toursd deployment adopt: {adopted.returncode} {adopted.stderr[-800:]}")

    refused = Daemon(toursd, second_dir, environment)
    if refused.process.wait(30) == 0 or deleted not in open(refused.log).read():
        fail(f"the restored daemon started without the deleted panorama's object: {open(refused.log).read()[-1500:]}")
    print("restore drill: the restored daemon refused to start, naming the object deleted since the backup")
    key = f"drill/1/panoramas/{deleted}"
    markers = [marker for marker in s3.list_object_versions(Bucket="tours", Prefix=key).get("DeleteMarkers", []) if marker["Key"] == key]
    if len(markers) != 1:
        fail(f"the deleted object's versions: {markers}")
    s3.delete_object(Bucket="tours", Key=key, VersionId=markers[0]["VersionId"])

    second = Daemon(toursd, second_dir, environment)
    try:
        if second.base is None:
            fail("the restored daemon did not start once the object was back: " + open(second.log).read()[-1500:])
        if os.path.exists(os.path.join(second_dir, "blobs.manifest")) or not os.path.exists(os.path.join(second_dir, "blobs.manifest.checked")):
            fail("the manifest was not marked checked")
        for id, data in panoramas.items():
            status, _, body = request(second.base, "GET", f"/v1/panoramas/{id}/content", token)
            if status != 200 or body != data:
                fail(f"panorama {id} after the restore: {status}, {len(body)} bytes")
        if request(second.base, "GET", f"/v1/panoramas/{later}", token)[0] != 404:
            fail("a panorama stored after the backup is in the restore")
        status, _, said = request(second.base, "PUT", f"/v1/properties/{property_id}", token,
                                  json.dumps({"name": "Restored villa, again", "floorCount": 1}), {"Content-Type": "application/json"})
        if status != 200:
            fail(f"a change after the restore: {status} {said[:200]}")
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not receiver.requests:
            time.sleep(0.1)
        if not receiver.requests:
            fail("the endpoint got nothing after the restore")
        headers, body = receiver.requests[-1]
        if not signed_by(secret, headers, body):
            fail("the delivery after the restore is not signed with the endpoint's secret")
    finally:
        second.stop()
        receiver.stop()
    print(f"restore drill: {len(panoramas)} panoramas back byte for byte, the later one absent, "
          "the endpoint's deliveries signed with its restored secret: PASS")


if __name__ == "__main__":
    main()
