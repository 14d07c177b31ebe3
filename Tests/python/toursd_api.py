"""One request to toursd, for the Python drills: (status, headers lowercased, body)."""
import http.client
import urllib.parse


def request(base, method, path, token=None, body=None, headers=None, timeout=30):
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
