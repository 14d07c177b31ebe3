"""Times a share link's first frame and a move in place beside a move by page load, over a
throttled link (bench/walk.sh)."""
import json, os, statistics, sys, time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Tests", "browser"))
import tourfixture  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402

toursd, work, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
daemon = tourfixture.Daemon(toursd, work)
token = open(os.path.join(daemon.data, "admin.token")).read().strip()
house = tourfixture.build_walk_tour(daemon, token, width=2048)
ids = [panorama_id for _, _, panorama_id in house["panoramas"]]
# Timed once the panoramas' previews are made (their processing), as a buyer finds them.
deadline = time.monotonic() + 300
while time.monotonic() < deadline and any(
        json.loads(daemon.request("GET", f"/v1/panoramas/{panorama}", token=token)[2])["state"] == "processing" for panorama in ids):
    time.sleep(0.1)
link = daemon.base + daemon.api("POST", f"/v1/tours/{house['tour']}/shares", {"expiresInSeconds": 3600}, token)["url"]
# The link itself opens into the first panorama (its cover); the next is the living room.
first, second = link, f"{link}/panoramas/{ids[1]}"

driver = tourfixture.chromium(120)
driver.execute_cdp_cmd("Network.enable", {})
driver.execute_cdp_cmd("Network.emulateNetworkConditions", {"offline": False, "latency": 40, "downloadThroughput": 10e6 / 8, "uploadThroughput": 10e6 / 8})


def drawn(timeout=60):
    """The first frame's time on the page's clock (ms after its navigation began)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = driver.execute_script("const c = document.querySelector('#viewer canvas'); return c && c.dataset.firstFrame")
        if value:
            return float(value)
        time.sleep(0.005)
    raise SystemExit("bench: the panorama was never drawn")


figures = {"first frame, cold": [], "move in place": [], "move by page load": []}
for round in range(rounds + 1):
    counted = round > 0  # a round first that is not counted: the browser's own start
    driver.execute_cdp_cmd("Network.setCacheDisabled", {"cacheDisabled": True})
    driver.get("about:blank")
    driver.get(first)
    cold = drawn()
    driver.execute_cdp_cmd("Network.setCacheDisabled", {"cacheDisabled": False})
    end = time.monotonic() + 60
    while time.monotonic() < end and not driver.execute_script("const b = document.body.dataset; return Number(b.aheadTotal) > 0 && b.ahead === b.aheadTotal"):
        time.sleep(0.01)
    driver.execute_script("document.addEventListener('click', () => { window.__clickedAt = performance.now(); }, true);"
                          "document.querySelector('#viewer canvas').dataset.firstFrame = '';")
    driver.find_element(By.CSS_SELECTOR, "main a[rel=next]").click()
    moved = drawn() - driver.execute_script("return window.__clickedAt")
    driver.get("about:blank")
    driver.get(first)
    drawn()
    driver.get(second)
    loaded = drawn()  # on the new page's clock: from its navigation
    if counted:
        figures["first frame, cold"].append(cold)
        figures["move in place"].append(moved)
        figures["move by page load"].append(loaded)
driver.quit()
daemon.stop()

median = {name: statistics.median(values) for name, values in figures.items()}
print(f"A share link of the walk house over 10 Mbit/s and 40 ms (Chromium's emulation), median of {rounds}")
print(f"  {'':<28}{'ms':>8}")
for name, ms in median.items():
    print(f"  {name:<28}{ms:>8.0f}")
print(f"  a move in place / by page load: {median['move in place'] / median['move by page load']:.2f}x; "
      f"in place, the click to the next panorama drawn: {median['move in place']:.0f} ms (target < 300 ms)")
