"""toursd for the Python drills: one request to it, and one started."""
import atexit
import http.client
import os
import re
import subprocess
import time
import urllib.parse


def request(base, method, path, token=None, body=None, headers=None, timeout=30):
    """(status, headers with their names lowercased, body)."""
    target = urllib.parse.urlsplit(base)
    connection = http.client.HTTPConnection(target.hostname, target.port, timeout=timeout)
    all_headers = dict(headers or {})
    if token:
        all_headers["Authorization"] = f"Bearer {token}"
    connection.request(method, path, body=body, headers=all_headers)
    response = connection.getresponse()
    content = response.read()
    connection.close()
    return response.status, {k.lower(): v for k, v in response.getheaders()}, content


def start_toursd(toursd, data_dir, environment, arguments=()):
    """`toursd serve` on a port the OS picks, with `environment` over this one's, its log at
    DATA_DIR.log: (the process, its base URL, the log's path); the URL is None when it stopped
    before it listened. Bounded: 30 s. Killed at exit if still running."""
    os.makedirs(data_dir, exist_ok=True)
    log = data_dir + ".log"
    process = subprocess.Popen([toursd, "serve", *arguments, "--port", "0", "--data-dir", data_dir],
                               stdout=subprocess.DEVNULL, stderr=open(log, "w"), env={**os.environ, **environment})
    # A drill that fails half-way leaves no daemon behind.
    atexit.register(lambda: process.poll() is None and process.kill())
    for _ in range(300):
        # A whole line: a read may see the line half written.
        found = re.search(r"listening on http://[^ ]*:(\d+)\n", open(log).read())
        if found:
            return process, f"http://127.0.0.1:{found.group(1)}", log
        if process.poll() is not None:
            return process, None, log
        time.sleep(0.1)
    process.kill()
    raise RuntimeError(f"{data_dir}: toursd neither listened nor stopped in 30 s: {open(log).read()[-1500:]}")
