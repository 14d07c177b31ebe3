// The viewer's script, part 6 of 6: the page's viewer started, and moves in place.
  let current = startViewer();
  if (current && document.body.classList.contains("visitor") && window.matchMedia("(pointer: coarse)").matches && document.fullscreenEnabled) {
    // A share link on a phone goes full screen at the first touch of its view (a browser asks
    // for a gesture first); leaving full screen is the visitor's to choose.
    document.addEventListener("pointerup", function entered(event) {
      if (!event.target.closest || !event.target.closest("#viewer")) return;
      document.removeEventListener("pointerup", entered);
      if (!document.fullscreenElement) document.documentElement.requestFullscreen().catch(function () { /* refused: the page fills the window */ });
    });
  }
  if (current) {
    document.querySelectorAll("button.dollhouse").forEach(function (button) { button.classList.remove("hidden"); });
    document.addEventListener("click", function (event) {
      const button = event.target.closest && event.target.closest("button.dollhouse");
      if (button) openDollhouse(JSON.parse(button.dataset.house), button);
    });
  }
  if (!current || !pages) return;

  // Moving to another panorama of the tour happens in place: its page fetched (ahead, for every
  // way on from here), its small preview decoded before the move, then its main content put
  // in this one's, its viewer started facing the same way in the room (the view's compass
  // direction kept where both headings are known), the panorama left behind fading out over
  // it (not under reduced motion); the URL and the history follow, and back goes back to the
  // view that was left. A page that cannot be had so is opened as any link.
  let ahead = new Map();
  const previews = new Map();
  let moving = false;
  // The page's own path: a history step within it (a fragment) is the view's, not a move.
  let here = window.location.pathname;

  // The panorama page a link opens, as a URL; null for any other link.
  function panoramaPage(link) {
    if (!link || link.target || link.hasAttribute("download")) return null;
    const url = new URL(link.getAttribute("href") || "", window.location.href);
    return url.origin === window.location.origin && url.pathname.startsWith(pages) && url.pathname.length > pages.length ? url : null;
  }

  // A picture decoded (once per source; null when it cannot be): what a move waits for, and
  // then draws at once.
  function decoded(source) {
    if (!previews.has(source)) {
      // The oldest let go past 48: a long walk holds no more pictures than a few moves need.
      if (previews.size >= 48) previews.delete(previews.keys().next().value);
      const picture = new Image();
      picture.src = source;
      previews.set(source, picture.decode().then(function () { return picture; }, function () { return null; }));
    }
    return previews.get(source);
  }

  // A panorama page as a document, its small preview asked for at once; null when it cannot be had.
  function fetchPage(path) {
    return window.fetch(path, { credentials: "same-origin", headers: { Accept: "text/html" } }).then(function (response) {
      return response.ok ? response.text() : null;
    }).then(function (text) {
      if (!text) return null;
      const page = new DOMParser().parseFromString(text, "text/html");
      const cover = page.querySelector("#viewer img.fallback");
      if (cover) decoded(cover.getAttribute("src"));
      return page;
    }).catch(function () { return null; });
  }

  // Every way on from here (at most 12), fetched ahead; the body's `data-ahead` counts those
  // whose preview is decoded, of `data-ahead-total`.
  let looks = 0;
  function lookAhead() {
    const next = new Map(), look = ++looks;
    document.querySelectorAll("main .ways a, main nav.walk a, main svg.plan a").forEach(function (link) {
      const url = panoramaPage(link);
      if (url && next.size < 12 && !next.has(url.pathname)) next.set(url.pathname, ahead.get(url.pathname) || fetchPage(url.pathname));
    });
    ahead = next;
    let ready = 0;
    document.body.dataset.aheadTotal = String(next.size);
    document.body.dataset.ahead = "0";
    next.forEach(function (arriving) {
      arriving.then(function (page) {
        const cover = page && page.querySelector("#viewer img.fallback");
        return cover ? decoded(cover.getAttribute("src")) : null;
      }).then(function () {
        if (look === looks) document.body.dataset.ahead = String(++ready);
      });
    });
  }

  function move(url, push) {
    if (moving) return;
    moving = true;
    const arrived = ahead.get(url.pathname) || fetchPage(url.pathname);
    arrived.then(function (page) {
      const main = page && page.querySelector("main"), next = page && page.getElementById("viewer");
      const cover = next && next.querySelector("img.fallback");
      if (!main || !cover) return window.location.assign(url.href);
      // Where a move travels through the room (not under reduced motion): the plan and the
      // places on it (the dollhouse's), and the picture left behind.
      const houseData = reduced ? null : document.querySelector("main [data-house]");
      const leftPicture = houseData && current.root.querySelector("img.fallback");
      return Promise.all([decoded(cover.getAttribute("src")), leftPicture ? decoded(leftPicture.getAttribute("src")) : null]).then(function (pictures) {
        const picture = pictures[0], fromPicture = pictures[1], fromId = current.root.dataset.panorama;
        let house = null;
        try { house = houseData ? JSON.parse(houseData.dataset.house) : null; } catch (error) { house = null; }
        const view = current.view, was = Number.parseFloat(current.root.dataset.heading), heading = Number.parseFloat(next.dataset.heading);
        const yaw = Number.isFinite(was) && Number.isFinite(heading) ? view.yaw + was - heading : view.yaw;
        const hash = !push && url.hash ? url.hash
          : "#panorama=" + next.dataset.panorama + "&yaw=" + yaw.toFixed(1) + "&pitch=" + view.pitch.toFixed(1) + "&fov=" + view.fov.toFixed(1);
        const leaving = reduced ? null : current.snapshot();
        // The view left, kept in its history entry: back returns to it.
        if (push) window.history.replaceState(null, "", here + current.viewLink());
        // Its canvas, with its WebGL context, stands in for the new page's (a new context
        // costs more than the whole first frame).
        const kept = current.canvas;
        current.stop(true);
        const arriving = document.importNode(main, true), fresh = arriving.querySelector("#viewer canvas");
        if (fresh) {
          // Its drawing buffer's size stays (a new one at each move costs a frame's time).
          for (const name of kept.getAttributeNames()) if (name !== "width" && name !== "height") kept.removeAttribute(name);
          for (const name of fresh.getAttributeNames()) kept.setAttribute(name, fresh.getAttribute(name));
          fresh.replaceWith(kept);
        }
        document.querySelector("main").replaceWith(arriving);
        document.title = page.title;
        window.history[push ? "pushState" : "replaceState"](null, "", url.pathname + hash);
        here = url.pathname;
        current = startViewer(picture, true);
        if (!current) return window.location.reload();
        if (leaving && !travel(house, fromId, next.dataset.panorama, fromPicture, picture, view, current.root)) current.fadeFrom(leaving);
        // As a page load would: at the top, the new title focused (and so read out).
        if (push) window.scrollTo(0, 0);
        const title = document.querySelector("main h1");
        if (title) {
          title.tabIndex = -1;
          title.focus({ preventScroll: true });
        }
        setUpPanel();
        document.querySelectorAll("button.dollhouse").forEach(function (button) { button.classList.remove("hidden"); });
        lookAhead();
      });
    }).finally(function () { moving = false; });
  }

  document.addEventListener("click", function (event) {
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    const url = panoramaPage(event.target.closest("a"));
    if (!url) return;
    event.preventDefault();
    // The visitor's own move ends a guided play (its own steps are not the visitor's clicks).
    if (event.isTrusted) playing = false;
    move(url, true);
  });
  window.addEventListener("popstate", function () {
    if (window.location.pathname !== here) move(new URL(window.location.href), false);
  });
  lookAhead();
