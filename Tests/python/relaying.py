"""What the test scripts' TCP relays share (Tests/contract/tus_interop.py's cutting proxy,
Tests/postgres/balancer_drill.py's database relay)."""
import socket


def pipe(source, sink):
    """Copies what `source` sends to `sink` until either end closes, then shuts both down."""
    try:
        while data := source.recv(65536):
            sink.sendall(data)
    except OSError:
        pass
    for end in (source, sink):
        try:
            end.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
