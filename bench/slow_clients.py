"""2,000 idle and slow connections held open against toursd while one client keeps working:
its requests' latencies beside the same client's with no crowd, measured in the same run.
The working client runs in a process of its own, so the crowd's event loop never delays it.
usage: slow_clients.py PORT TOKEN CONNECTIONS SECONDS
       slow_clients.py work PORT TOKEN SECONDS   (the working client: prints its figures as JSON)"""
import asyncio, json, statistics, sys, time, uuid

working = sys.argv[1] == "work"
if working:
    port, token, seconds = int(sys.argv[2]), sys.argv[3], float(sys.argv[4])
else:
    port, token, crowd, seconds = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
held = {"open": 0, "opened": 0, "closed_by_server": 0}


async def hold(stop, behave):
    """Keeps one crowd connection open, behaving as told; reconnects when the server lets it go."""
    while not stop.is_set():
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            await asyncio.sleep(0.2)
            continue
        held["open"] += 1
        held["opened"] += 1
        try:
            await behave(reader, writer, stop)
        except OSError:
            pass
        finally:
            held["open"] -= 1
            writer.close()
        if not stop.is_set():
            held["closed_by_server"] += 1


async def idle(reader, writer, stop):
    """Says nothing until the server closes or the run ends."""
    await asyncio.wait([asyncio.ensure_future(reader.read()), asyncio.ensure_future(stop.wait())], return_when=asyncio.FIRST_COMPLETED)


async def slow(reader, writer, stop):
    """Slowloris: a request head one header line a second, never finished."""
    writer.write(b"GET /healthz HTTP/1.1\r\nHost: slow\r\n")
    for i in range(10_000):
        if stop.is_set() or reader.at_eof():
            return
        writer.write(b"X-Slow-%d: x\r\n" % i)
        await writer.drain()
        await asyncio.sleep(1)


async def request(method, path, body=b""):
    """One request on a fresh connection; its status."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    head = f"{method} {path} HTTP/1.1\r\nHost: bench\r\nAuthorization: Bearer {token}\r\nConnection: close\r\nContent-Length: {len(body)}\r\n\r\n"
    writer.write(head.encode() + body)
    await writer.drain()
    answer = await asyncio.wait_for(reader.read(), timeout=10)
    writer.close()
    return int(answer.split(b" ", 2)[1])


async def work(duration):
    """The working client: a health check and a new property, over and over; latencies in ms."""
    latencies, failures = [], 0
    end = time.monotonic() + duration
    while time.monotonic() < end:
        for method, path, body in (("GET", "/healthz", b""),
                                   ("PUT", f"/v1/properties/{uuid.uuid4()}", b'{"name":"Busy","floorCount":1}')):
            start = time.monotonic()
            try:
                status = await request(method, path, body)
                ok = status in (200, 201)
            except (OSError, asyncio.TimeoutError):
                ok = False
            latencies.append((time.monotonic() - start) * 1000)
            failures += 0 if ok else 1
        await asyncio.sleep(0.01)
    return latencies, failures


def p99(values):
    return sorted(values)[int(len(values) * 0.99) - 1]


async def worker(duration):
    """The working client's latencies and failures, from its own process."""
    process = await asyncio.create_subprocess_exec(sys.executable, __file__, "work", str(port), token, str(duration),
                                                   stdout=asyncio.subprocess.PIPE)
    out, _ = await process.communicate()
    figures = json.loads(out)
    return figures["latencies"], figures["failures"]


async def main():
    alone, alone_failures = await worker(3)
    stop = asyncio.Event()
    crowd_tasks = [asyncio.ensure_future(hold(stop, idle if i % 2 else slow)) for i in range(crowd)]
    for _ in range(100):  # until the crowd is in (bounded: 10 s)
        if held["open"] >= crowd * 0.95:
            break
        await asyncio.sleep(0.1)
    in_crowd = held["open"]
    crowded, crowded_failures = await worker(seconds)
    still_open = held["open"]
    stop.set()
    await asyncio.gather(*crowd_tasks, return_exceptions=True)
    print(f"{in_crowd} {still_open} {held['opened']} {held['closed_by_server']} "
          f"{statistics.median(alone):.2f} {p99(alone):.2f} {alone_failures} "
          f"{statistics.median(crowded):.2f} {p99(crowded):.2f} {crowded_failures} {len(crowded)}")


async def work_alone():
    latencies, failures = await work(seconds)
    print(json.dumps({"latencies": latencies, "failures": failures}))


asyncio.run(work_alone() if working else main())
