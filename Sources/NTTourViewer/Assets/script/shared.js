// The viewer's script, part 1 of 6 (shared.js, view.js, dollhouse.js, travel.js, panel.js, walk.js): one
// function's body, in this order (ViewerScript.swift). What every part uses: deep links, the
// visit's statistics, reduced motion, the guided play's state.
  const pages = document.body.dataset.panoramas;
  // A deep link names its panorama (`#panorama=…&yaw=…`): opened on another page of the tour
  // (its first page, say, or another panorama's), it goes to that panorama's page.
  function follow() {
    const named = new URLSearchParams(window.location.hash.slice(1)).get("panorama");
    const root = document.getElementById("viewer");
    if (!named || !pages || !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(named)) return false;
    if (root && root.dataset.panorama === named) return false;
    window.location.replace(pages + named + window.location.hash);
    return true;
  }
  if (follow()) return;
  // Who looked (a share link's statistics): how long each panorama is on screen in this visit,
  // reported by beacon when the visitor moves on, leaves or hides the page, and each minute.
  // The visit is the link's opening (`data-visit` on its first page), kept in the tab across
  // its pages with the time counted so far (the server keeps each panorama's largest report).
  const visits = (function () {
    const link = pages ? pages.split("/").slice(0, 3).join("/") : "";
    const key = "nt-visit " + link;
    let beacon = document.body.dataset.visit || null, spent = {};
    try {
      const kept = JSON.parse(window.sessionStorage.getItem(key) || "null");
      if (beacon) window.sessionStorage.setItem(key, JSON.stringify({ beacon: beacon, spent: {} }));
      else if (kept && link.startsWith("/t/")) ({ beacon, spent } = kept);
    } catch (error) { /* no storage: this page's visit only */ }
    let shown = null, since = 0;
    function settle() {
      if (shown && since) spent[shown] = (spent[shown] || 0) + performance.now() - since;
      since = document.visibilityState === "visible" ? performance.now() : 0;
      try { if (beacon) window.sessionStorage.setItem(key, JSON.stringify({ beacon: beacon, spent: spent })); } catch (error) { /* kept in memory */ }
    }
    function report(id) {
      if (!beacon || !id || !navigator.sendBeacon) return;
      navigator.sendBeacon(beacon, JSON.stringify({ panoramaId: id, seconds: Math.round((spent[id] || 0) / 100) / 10 }));
    }
    document.addEventListener("visibilitychange", function () {
      settle();
      if (document.visibilityState === "hidden") report(shown);
    });
    window.addEventListener("pagehide", function () { settle(); report(shown); });
    if (beacon) window.setInterval(function () { settle(); report(shown); }, 60000);
    return {
      shown: function (id) {
        if (id === shown) return;
        settle();
        const left = shown;
        shown = id;
        report(left);
      }
    };
  })();
  const reduced = window.matchMedia("(prefers-reduced-motion: reduce)").matches;
  // Each WebGL context's linked programs, by their sources.
  const linkedPrograms = new WeakMap();
  // A program of `gl` from its two shaders' sources; null when either does not compile or they
  // do not link. Linked once per context: a move's viewer takes the canvas's programs as they
  // are (asking a new one's status waits for every frame the GPU has yet to draw).
  function linkProgram(gl, vertex, fragment) {
    let programs = linkedPrograms.get(gl);
    if (!programs) linkedPrograms.set(gl, programs = new Map());
    const key = vertex + "\n" + fragment;
    if (programs.has(key)) return programs.get(key);
    const linked = gl.createProgram();
    [[gl.VERTEX_SHADER, vertex], [gl.FRAGMENT_SHADER, fragment]].forEach(function (part) {
      const shader = gl.createShader(part[0]);
      gl.shaderSource(shader, part[1]);
      gl.compileShader(shader);
      gl.attachShader(linked, shader);
    });
    gl.linkProgram(linked);
    if (!gl.getProgramParameter(linked, gl.LINK_STATUS)) return null;
    programs.set(key, linked);
    return linked;
  }
  // A guided play through the tour in plan order (the viewer's Play button), which goes on
  // across moves until the last panorama or any input.
  let playing = false;

