// The viewer's script, part 2 of 6: the 360° view of the page's panorama.
  // The viewer of the page's panorama: its controller (`view`, `stop`, `snapshot`, `fadeFrom`),
  // or null where there is none to run (no viewer, no WebGL: the plain image stays). `ready`:
  // its small preview, decoded already (a move's, fetched ahead), drawn at once; `walked`:
  // arrived at by a move (no idle turning).
  function startViewer(ready, walked) {
    const root = document.getElementById("viewer"), controls = document.getElementById("view-controls");
    if (!root) return null;
    visits.shown(root.dataset.panorama);
    // What it listens to outside its own elements, let go when it stops.
    const events = new AbortController();
    let stopped = false;
    const image = root.querySelector("img.fallback");
    const canvas = root.querySelector("canvas");
    const gl = canvas.getContext("webgl", { preserveDrawingBuffer: true, antialias: false });
    if (!gl) {
      // The plain image stays, on the page as a page: the largest preview, rather than the small
      // one the view starts from.
      if (root.dataset.full) image.src = root.dataset.full;
      document.body.classList.remove("tour");
      return null;
    }

    const vertexSource = "attribute vec2 p; varying vec2 v; void main() { v = p; gl_Position = vec4(p, 0.0, 1.0); }";
    const fragmentSource = [
      "precision highp float;",
      "varying vec2 v;",
      "uniform sampler2D image;",
      "uniform float yaw, pitch, focal, aspect;",
      "const float PI = 3.141592653589793;",
      "void main() {",
      "  vec3 d = normalize(vec3(v.x * focal * aspect, v.y * focal, -1.0));",
      "  float cp = cos(pitch), sp = sin(pitch);",
      "  d = vec3(d.x, d.y * cp - d.z * sp, d.y * sp + d.z * cp);",
      "  float cy = cos(yaw), sy = sin(yaw);",
      "  d = vec3(d.x * cy - d.z * sy, d.y, d.x * sy + d.z * cy);",
      "  float longitude = atan(d.x, -d.z);",
      "  float latitude = asin(clamp(d.y, -1.0, 1.0));",
      "  gl_FragColor = texture2D(image, vec2(longitude / (2.0 * PI) + 0.5, 0.5 - latitude / PI));",
      "}"
    ].join("\n");

    const program = linkProgram(gl, vertexSource, fragmentSource);
    if (!program) return null; // the plain image stays
    gl.useProgram(program);
    const buffer = gl.createBuffer();
    gl.bindBuffer(gl.ARRAY_BUFFER, buffer);
    gl.bufferData(gl.ARRAY_BUFFER, new Float32Array([-1, -1, 3, -1, -1, 3]), gl.STATIC_DRAW);
    const position = gl.getAttribLocation(program, "p");
    gl.enableVertexAttribArray(position);
    gl.vertexAttribPointer(position, 2, gl.FLOAT, false, 0, 0);
    const uniform = {
      yaw: gl.getUniformLocation(program, "yaw"),
      pitch: gl.getUniformLocation(program, "pitch"),
      focal: gl.getUniformLocation(program, "focal"),
      aspect: gl.getUniformLocation(program, "aspect")
    };

    // The cube tiles: each a quad on its face of the cube, projected like the preview's rays.
    const tiled = root.dataset.tiles ? {
      base: root.dataset.tiles,
      faceSize: Number.parseInt(root.dataset.faceSize, 10),
      levels: Number.parseInt(root.dataset.levels, 10),
      tileSize: Number.parseInt(root.dataset.tileSize, 10)
    } : null;
    let tileProgram = null;
    const tileBuffer = gl.createBuffer();
    const tileUniform = {};
    let tilePosition = -1;
    // Linked once the preview is drawn: the first frame waits for no more than it needs.
    let tilesPrepared = !(tiled && tiled.faceSize > 0 && tiled.levels > 0 && tiled.tileSize > 0);
    function prepareTiles() {
      tilesPrepared = true;
      const tileVertex = [
        "attribute vec2 q;",
        "uniform mat3 face, rotation;",
        "uniform vec4 bounds;",
        "uniform float focal, aspect;",
        "varying vec2 t;",
        "void main() {",
        "  t = q;",
        "  vec3 c = rotation * (face * vec3(mix(bounds.x, bounds.z, q.x), mix(bounds.y, bounds.w, q.y), 1.0));",
        "  gl_Position = vec4(c.x / (focal * aspect), c.y / focal, -1.0202 * c.z - 0.2020, -c.z);",
        "}"
      ].join("\n");
      const tileFragment = "precision mediump float; varying vec2 t; uniform sampler2D tile; void main() { gl_FragColor = texture2D(tile, t); }";
      // Null when it cannot link: the preview stays what is drawn.
      tileProgram = linkProgram(gl, tileVertex, tileFragment);
      if (tileProgram) {
        for (const name of ["face", "rotation", "bounds", "focal", "aspect"]) tileUniform[name] = gl.getUniformLocation(tileProgram, name);
        tilePosition = gl.getAttribLocation(tileProgram, "q");
        gl.bindBuffer(gl.ARRAY_BUFFER, tileBuffer);
        gl.bufferData(gl.ARRAY_BUFFER, new Float32Array([0, 0, 1, 0, 0, 1, 0, 1, 1, 0, 1, 1]), gl.STATIC_DRAW);
        redraw();
      }
    }

    // A face's point (a, b), both from -1 to 1 (left to right, top to bottom), as a direction
    // with x right of the image's centre, y up and z behind: as the server cuts the faces.
    // Each is the matrix, by columns, taking (a, b, 1) to that direction.
    const faces = {
      f: [1, 0, 0, 0, -1, 0, 0, 0, -1],
      r: [0, 0, 1, 0, -1, 0, 1, 0, 0],
      b: [-1, 0, 0, 0, -1, 0, 0, 0, 1],
      l: [0, 0, -1, 0, -1, 0, -1, 0, 0],
      u: [1, 0, 0, 0, 0, -1, 0, 1, 0],
      d: [1, 0, 0, 0, 0, 1, 0, -1, 0]
    };

    // The face and point a direction shows.
    function facePoint(x, y, z) {
      const ax = Math.abs(x), ay = Math.abs(y), az = Math.abs(z);
      if (ax >= ay && ax >= az) return x > 0 ? { face: "r", a: z / ax, b: -y / ax } : { face: "l", a: -z / ax, b: -y / ax };
      if (ay >= az) return y > 0 ? { face: "u", a: x / ay, b: -z / ay } : { face: "d", a: x / ay, b: z / ay };
      return z < 0 ? { face: "f", a: x / az, b: -y / az } : { face: "b", a: -x / az, b: -y / az };
    }

    const tileTextures = new Map();
    let tileLoads = 0;
    const tileQueue = [];
    // 128 tiles of 512 px: about 100 MB of textures, within what a phone's GPU gives a page.
    const tileBudget = 128;

    function levelSize(level) { return tiled.faceSize >> (tiled.levels - 1 - level); }

    // The tiles a frame needs, nearest the centre first: those at `level` the view's centre,
    // corners and edges look through, and those whose points (a 5 × 5 grid) fall in the view.
    function tilesInView(level, rotation, focal, aspect) {
      const size = levelSize(level), across = Math.ceil(size / tiled.tileSize), span = 2 * tiled.tileSize / size;
      const seen = new Map();
      function add(face, row, column) {
        if (row < 0 || column < 0 || row >= across || column >= across) return;
        const key = level + "/" + face + row + "_" + column;
        if (!seen.has(key)) seen.set(key, { key: key, level: level, face: face, row: row, column: column });
      }
      for (const [sx, sy] of [[0, 0], [-1, -1], [1, -1], [-1, 1], [1, 1], [0, -1], [0, 1], [-1, 0], [1, 0]]) {
        // The camera's ray through (sx, sy), into the panorama's frame (the rotation's transpose).
        const rx = sx * focal * aspect, ry = sy * focal, rz = -1;
        const wx = rotation[0] * rx + rotation[1] * ry + rotation[2] * rz;
        const wy = rotation[3] * rx + rotation[4] * ry + rotation[5] * rz;
        const wz = rotation[6] * rx + rotation[7] * ry + rotation[8] * rz;
        const point = facePoint(wx, wy, wz);
        add(point.face, Math.floor((point.b + 1) / span), Math.floor((point.a + 1) / span));
      }
      for (const face of Object.keys(faces)) {
        const m = faces[face];
        for (let row = 0; row < across; row += 1) {
          for (let column = 0; column < across; column += 1) {
            let shown = false;
            for (let i = 0; i <= 4 && !shown; i += 1) {
              for (let j = 0; j <= 4 && !shown; j += 1) {
                const a = Math.min(1, -1 + (column + i / 4) * span), b = Math.min(1, -1 + (row + j / 4) * span);
                const wx = m[0] * a + m[3] * b + m[6], wy = m[1] * a + m[4] * b + m[7], wz = m[2] * a + m[5] * b + m[8];
                const cx = rotation[0] * wx + rotation[3] * wy + rotation[6] * wz;
                const cy = rotation[1] * wx + rotation[4] * wy + rotation[7] * wz;
                const cz = rotation[2] * wx + rotation[5] * wy + rotation[8] * wz;
                shown = cz < 0 && Math.abs(cx / -cz / (focal * aspect)) <= 1.05 && Math.abs(cy / -cz / focal) <= 1.05;
              }
            }
            if (shown) add(face, row, column);
          }
        }
      }
      return Array.from(seen.values());
    }

    function loadTile(tile) {
      const entry = { texture: null, used: 0 };
      tileTextures.set(tile.key, entry);
      tileLoads += 1;
      const picture = new Image();
      picture.onload = function () {
        tileLoads -= 1;
        if (stopped) return;
        entry.texture = gl.createTexture();
        gl.bindTexture(gl.TEXTURE_2D, entry.texture);
        gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_WRAP_S, gl.CLAMP_TO_EDGE);
        gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_WRAP_T, gl.CLAMP_TO_EDGE);
        gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MIN_FILTER, gl.LINEAR);
        gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MAG_FILTER, gl.LINEAR);
        gl.texImage2D(gl.TEXTURE_2D, 0, gl.RGB, gl.RGB, gl.UNSIGNED_BYTE, picture);
        pump();
        redraw();
      };
      picture.onerror = function () {
        tileLoads -= 1;
        tileTextures.delete(tile.key); // asked again when next in view
        pump();
      };
      picture.src = tiled.base + tile.level + "/" + tile.face + tile.row + "_" + tile.column + ".jpg";
    }

    // At most six tiles on their way at once, the nearest the view's centre first.
    function pump() {
      while (tileLoads < 6 && tileQueue.length > 0) {
        const tile = tileQueue.shift();
        if (!tileTextures.has(tile.key)) loadTile(tile);
      }
    }

    // Textures past the budget go, those drawn longest ago first.
    function evict() {
      if (tileTextures.size <= tileBudget) return;
      const loaded = Array.from(tileTextures.entries()).filter(function (item) { return item[1].texture; });
      loaded.sort(function (x, y) { return x[1].used - y[1].used; });
      for (const [key, entry] of loaded.slice(0, tileTextures.size - tileBudget)) {
        gl.deleteTexture(entry.texture);
        tileTextures.delete(key);
      }
    }

    let sharpAt = 0;
    function drawTiles(focal, aspect, height) {
      const cy = Math.cos(view.yaw * Math.PI / 180), sy = Math.sin(view.yaw * Math.PI / 180);
      const cp = Math.cos(view.pitch * Math.PI / 180), sp = Math.sin(view.pitch * Math.PI / 180);
      // From the panorama's frame into the camera's (yaw, then pitch, undone), by columns.
      const rotation = [cy, -sy * sp, -sy * cp, 0, cp, -sp, sy, cy * sp, cy * cp];
      // The smallest level with a face pixel for each screen pixel at the view's centre.
      let level = 0;
      while (level < tiled.levels - 1 && levelSize(level) < height / focal) level += 1;
      gl.useProgram(tileProgram);
      gl.bindBuffer(gl.ARRAY_BUFFER, tileBuffer);
      gl.enableVertexAttribArray(tilePosition);
      gl.vertexAttribPointer(tilePosition, 2, gl.FLOAT, false, 0, 0);
      gl.uniformMatrix3fv(tileUniform.rotation, false, rotation);
      gl.uniform1f(tileUniform.focal, focal);
      gl.uniform1f(tileUniform.aspect, aspect);
      let drawn = 0, wanted = 0;
      tileQueue.length = 0;
      for (let current = 0; current <= level; current += 1) {
        const size = levelSize(current);
        for (const tile of tilesInView(current, rotation, focal, aspect)) {
          const entry = tileTextures.get(tile.key);
          if (current === level) wanted += 1;
          if (!entry) {
            if (current === level) tileQueue.push(tile);
            continue;
          }
          if (!entry.texture) continue;
          entry.used = frames;
          const a0 = -1 + 2 * tile.column * tiled.tileSize / size, b0 = -1 + 2 * tile.row * tiled.tileSize / size;
          const a1 = Math.min(1, a0 + 2 * tiled.tileSize / size), b1 = Math.min(1, b0 + 2 * tiled.tileSize / size);
          gl.uniformMatrix3fv(tileUniform.face, false, faces[tile.face]);
          gl.uniform4f(tileUniform.bounds, a0, b0, a1, b1);
          gl.bindTexture(gl.TEXTURE_2D, entry.texture);
          gl.drawArrays(gl.TRIANGLES, 0, 6);
          if (current === level) drawn += 1;
        }
      }
      pump();
      evict();
      canvas.dataset.level = String(level);
      canvas.dataset.tilesDrawn = String(drawn);
      if (drawn === wanted && !sharpAt) {
        sharpAt = performance.now();
        canvas.dataset.sharp = sharpAt.toFixed(1);
      }
    }

    const view = { yaw: 0, pitch: 0, fov: 75 };
    let texture = null;
    let pending = false;
    let frames = 0;

    function clampView() {
      view.yaw = ((view.yaw % 360) + 360) % 360;
      view.pitch = Math.max(-85, Math.min(85, view.pitch));
      view.fov = Math.max(30, Math.min(100, view.fov));
    }

    // A deep link: the view it names, where it reads; again when the visitor changes it.
    function restore() {
      const fields = new URLSearchParams(window.location.hash.slice(1));
      for (const key of ["yaw", "pitch", "fov"]) {
        const value = Number.parseFloat(fields.get(key));
        if (Number.isFinite(value)) view[key] = value;
      }
      clampView();
    }
    restore();

    // The fragment follows the view, unless the visitor changed it meanwhile (then it is read).
    let linkTimer = 0;
    function viewLink() {
      return "#panorama=" + root.dataset.panorama + "&yaw=" + view.yaw.toFixed(1) + "&pitch=" + view.pitch.toFixed(1) + "&fov=" + view.fov.toFixed(1);
    }
    let written = window.location.hash;
    function keepLink() {
      if (linkTimer) return;
      linkTimer = window.setTimeout(function () {
        linkTimer = 0;
        const hash = viewLink();
        if (window.location.hash !== written || hash === written) return;
        window.history.replaceState(null, "", hash);
        written = hash;
      }, 200);
    }
    window.addEventListener("hashchange", function () {
      if (follow()) return;
      interrupt();
      restore();
      written = window.location.hash;
      redraw();
    }, { signal: events.signal });

    // The ways on whose direction is known, as markers on the floor where each stands (its
    // distance known: below the horizon, by the height a capture is taken at; else on the
    // horizon), sized by how far it is, each with its label above it. Labels that would
    // cover one another are lifted, the nearer way's staying lowest.
    const eyeHeight = Number.parseFloat(root.dataset.height) || 1.5; // metres: the capture's, else panoramaHeightMetres
    const markRadius = 0.3; // metres on the floor
    const layer = root.querySelector(".hotspots");
    const hotspots = [];
    document.querySelectorAll(".ways a[data-longitude]").forEach(function (link) {
      const longitude = Number.parseFloat(link.dataset.longitude), distance = Number.parseFloat(link.dataset.distance);
      if (!layer || !Number.isFinite(longitude)) return;
      const spot = document.createElement("a");
      spot.className = "hotspot hidden";
      spot.href = link.href;
      spot.textContent = link.textContent;
      const mark = document.createElement("span");
      mark.className = "mark";
      mark.setAttribute("aria-hidden", "true");
      spot.appendChild(mark);
      spot.tabIndex = -1; // the list of ways on is the keyboard's; focusing one there turns the view to it
      spot.addEventListener("click", function () { dismissHint(); });
      layer.appendChild(spot);
      const away = Number.isFinite(distance) && distance > 0 ? Math.hypot(distance, eyeHeight) : null;
      hotspots.push({ element: spot, mark: mark, longitude: longitude * Math.PI / 180, away: away,
                      elevation: away ? -Math.atan2(eyeHeight, distance) : 0 });
      link.addEventListener("focus", function () {
        interrupt();
        view.yaw = longitude;
        view.pitch = 0;
        clampView();
        spot.classList.add("focused");
        redraw();
      });
      link.addEventListener("blur", function () { spot.classList.remove("focused"); });
    });
    // Nearest first: the order labels are laid out in.
    hotspots.sort(function (a, b) { return (a.away || Infinity) - (b.away || Infinity); });

    function placeHotspots(focal, aspect) {
      const cy = Math.cos(view.yaw * Math.PI / 180), sy = Math.sin(view.yaw * Math.PI / 180);
      const cp = Math.cos(view.pitch * Math.PI / 180), sp = Math.sin(view.pitch * Math.PI / 180);
      const shown = [];
      for (const spot of hotspots) {
        // Its direction, from the image into the camera's frame: yaw, then pitch, undone.
        const ce = Math.cos(spot.elevation);
        const wx = ce * Math.sin(spot.longitude), wy = Math.sin(spot.elevation), wz = -ce * Math.cos(spot.longitude);
        const x = wx * cy + wz * sy, zYaw = -wx * sy + wz * cy;
        const y = wy * cp + zYaw * sp, z = -wy * sp + zYaw * cp;
        const sx = z < 0 ? x / -z / (focal * aspect) : 2, sv = z < 0 ? y / -z / focal : 2;
        const visible = Math.abs(sx) <= 1 && Math.abs(sv) <= 1;
        spot.element.classList.toggle("hidden", !visible);
        if (!visible) continue;
        spot.element.style.left = ((sx + 1) / 2 * 100).toFixed(2) + "%";
        spot.element.style.top = ((1 - sv) / 2 * 100).toFixed(2) + "%";
        // The mark as the floor shows it: narrower with distance, flattened by the angle it is seen at.
        const across = spot.away ? Math.max(10, Math.min(140, markRadius / spot.away / focal * canvas.clientHeight)) : 14;
        spot.element.style.setProperty("--mark", across.toFixed(1) + "px");
        spot.element.style.setProperty("--flat", spot.away ? (eyeHeight / spot.away).toFixed(3) : "1");
        spot.element.style.setProperty("--lift", "0px");
        spot.element.style.setProperty("--nudge", "0px");
        shown.push(spot);
      }
      // Each label kept inside the view's sides (its mark stays where the way is), and lifted
      // above the page's pieces over the view's foot (the controls, the hint, the steps) and
      // the labels already laid out that it would cover: none lies under another.
      const sides = root.getBoundingClientRect();
      const placed = Array.from(document.querySelectorAll("#view-controls > :not(.hidden), nav.walk a"))
        .map(function (element) { return element.getBoundingClientRect(); }).filter(function (r) { return r.width > 0; });
      for (const spot of shown) {
        const seen = spot.element.getBoundingClientRect();
        const nudge = Math.max(sides.left + 4 - seen.left, Math.min(0, sides.right - 4 - seen.right));
        if (nudge !== 0) spot.element.style.setProperty("--nudge", nudge.toFixed(1) + "px");
        const box = { left: seen.left + nudge, right: seen.right + nudge, top: seen.top, bottom: seen.bottom };
        let lift = 0;
        for (let tries = 0; tries <= placed.length; tries += 1) {
          const top = box.top - lift, bottom = box.bottom - lift;
          const covered = placed.find(function (other) {
            return box.left < other.right + 4 && other.left < box.right + 4 && top < other.bottom + 4 && other.top < bottom + 4;
          });
          if (!covered) break;
          lift = box.bottom - covered.top + 4;
        }
        if (lift > 0) spot.element.style.setProperty("--lift", lift.toFixed(1) + "px");
        placed.push({ left: box.left, right: box.right, top: box.top - lift, bottom: box.bottom - lift });
      }
    }

    // The minimap's cone: the panorama's heading turned by the view, as wide as the view.
    const cone = document.querySelector("svg.plan .spot.current .cone");
    const heading = Number.parseFloat(root.dataset.heading);
    function turnCone(focal, aspect) {
      if (!cone || !Number.isFinite(heading)) return;
      const half = Math.atan(focal * aspect), radius = Number.parseFloat(cone.dataset.radius) || 90;
      const x = radius * Math.sin(half), y = -radius * Math.cos(half);
      cone.setAttribute("d", "M0 0L" + (-x).toFixed(1) + " " + y.toFixed(1) + "A" + radius + " " + radius + " 0 0 1 " + x.toFixed(1) + " " + y.toFixed(1) + "Z");
      cone.setAttribute("transform", "rotate(" + ((heading + view.yaw) % 360).toFixed(1) + ")");
      cone.dataset.bearing = ((heading + view.yaw) % 360).toFixed(1);
    }

    function draw() {
      pending = false;
      if (stopped) return;
      const ratio = window.devicePixelRatio || 1;
      const width = Math.max(1, Math.round(canvas.clientWidth * ratio));
      const height = Math.max(1, Math.round(canvas.clientHeight * ratio));
      if (canvas.width !== width || canvas.height !== height) {
        canvas.width = width;
        canvas.height = height;
      }
      gl.viewport(0, 0, width, height);
      // The field of view spans the shorter side: upright on a phone, the view is as wide as it is tall on a desktop.
      const aspect = width / height, focal = Math.tan(view.fov * Math.PI / 360) / Math.min(1, aspect);
      gl.useProgram(program);
      gl.bindBuffer(gl.ARRAY_BUFFER, buffer);
      gl.enableVertexAttribArray(position);
      gl.vertexAttribPointer(position, 2, gl.FLOAT, false, 0, 0);
      gl.bindTexture(gl.TEXTURE_2D, texture);
      gl.uniform1f(uniform.yaw, view.yaw * Math.PI / 180);
      gl.uniform1f(uniform.pitch, view.pitch * Math.PI / 180);
      gl.uniform1f(uniform.focal, focal);
      gl.uniform1f(uniform.aspect, aspect);
      gl.drawArrays(gl.TRIANGLES, 0, 3);
      if (tileProgram) drawTiles(focal, aspect, height);
      if (frames === 0) canvas.dataset.firstFrame = performance.now().toFixed(1);
      if (!tilesPrepared) window.setTimeout(prepareTiles, 0);
      if (frames === 0 && root.dataset.full) window.setTimeout(sharpen, 0);
      placeHotspots(focal, aspect);
      turnCone(focal, aspect);
      keepLink();
      frames += 1;
      canvas.dataset.frames = String(frames);
      canvas.dataset.yaw = view.yaw.toFixed(2);
      canvas.dataset.fov = view.fov.toFixed(2);
    }

    function redraw() {
      if (texture && !pending && !stopped) {
        pending = true;
        window.requestAnimationFrame(draw);
      }
    }

    function look(yaw, pitch) {
      view.yaw += yaw;
      view.pitch += pitch;
      clampView();
      redraw();
    }

    function zoom(factor) {
      view.fov *= factor;
      clampView();
      redraw();
    }

    // A first-use hint, until the visitor first looks around (remembered where storage allows).
    const hint = controls && controls.querySelector(".hint");
    function seen() {
      try { return window.localStorage.getItem("noughtytours.hint") === "seen"; } catch (error) { return false; }
    }
    function dismissHint() {
      if (!hint || hint.classList.contains("hidden")) return;
      hint.classList.add("hidden");
      try { window.localStorage.setItem("noughtytours.hint", "seen"); } catch (error) { /* private mode: shown again next time */ }
    }

    // Full screen, where the browser offers it: the whole page (a frame's whole page in an
    // embed), so the title, the steps, the panel and these controls stay in their places.
    const fullscreen = controls && controls.querySelector("button.fullscreen");
    const screened = document.documentElement;
    if (fullscreen && screened.requestFullscreen && document.fullscreenEnabled) {
      fullscreen.addEventListener("click", function () {
        if (document.fullscreenElement) {
          document.exitFullscreen();
        } else {
          screened.requestFullscreen().catch(function () { /* refused: the page stays as it is */ });
        }
      });
      document.addEventListener("fullscreenchange", function () {
        const on = document.fullscreenElement === screened;
        fullscreen.setAttribute("aria-pressed", on ? "true" : "false");
        fullscreen.textContent = on ? "Exit full screen" : "Full screen";
        redraw();
      }, { signal: events.signal });
    }

    function textureSource(picture) {
      const largest = gl.getParameter(gl.MAX_TEXTURE_SIZE);
      if (picture.naturalWidth <= largest && picture.naturalHeight <= largest) return picture;
      const scaled = document.createElement("canvas");
      const scale = largest / Math.max(picture.naturalWidth, picture.naturalHeight);
      scaled.width = Math.floor(picture.naturalWidth * scale);
      scaled.height = Math.floor(picture.naturalHeight * scale);
      scaled.getContext("2d").drawImage(picture, 0, 0, scaled.width, scaled.height);
      return scaled;
    }

    // The largest preview, once the small one is drawn: the view sharpens when it has come.
    function sharpen() {
      const full = new Image();
      full.onload = function () {
        if (stopped) return;
        gl.bindTexture(gl.TEXTURE_2D, texture);
        gl.texImage2D(gl.TEXTURE_2D, 0, gl.RGB, gl.RGB, gl.UNSIGNED_BYTE, textureSource(full));
        canvas.dataset.sharp = performance.now().toFixed(1);
        redraw();
      };
      full.src = root.dataset.full;
    }

    function start(picture) {
      if (stopped) return;
      texture = gl.createTexture();
      gl.bindTexture(gl.TEXTURE_2D, texture);
      gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_WRAP_S, gl.CLAMP_TO_EDGE);
      gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_WRAP_T, gl.CLAMP_TO_EDGE);
      gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MIN_FILTER, gl.LINEAR);
      gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MAG_FILTER, gl.LINEAR);
      gl.texImage2D(gl.TEXTURE_2D, 0, gl.RGB, gl.RGB, gl.UNSIGNED_BYTE, textureSource(picture));
      image.classList.add("hidden");
      canvas.classList.remove("hidden");
      root.classList.add("live");
      if (fullscreen && screened.requestFullscreen && document.fullscreenEnabled) fullscreen.classList.remove("hidden");
      if (hint && !seen() && !playing) hint.classList.remove("hidden");
      if (play && (playing || document.querySelector("main a[rel=next]"))) play.classList.remove("hidden");
      if (motion && "DeviceOrientationEvent" in window && window.matchMedia("(pointer: coarse)").matches) motion.classList.remove("hidden");
      // The first frame at once, not at the next animation frame: a move's view is ready now.
      draw();
      // A first visit turns slowly until the visitor does anything; a play goes on.
      if (playing) {
        playStep();
      } else if (!walked && !reduced && !new URLSearchParams(window.location.hash.slice(1)).has("yaw")) {
        turnBy(idleSpeed, null);
      }
    }

    // Turning by itself, `speed` degrees a second: idle, until any input, or a play's full turn
    // (then `turned`). `data-spinning` on the canvas says whether it is.
    const idleSpeed = 6, playSpeed = 30;
    const spin = { speed: 0, turned: 0, last: 0, then: null };
    function turnBy(speed, turned) {
      Object.assign(spin, { speed: speed, turned: 0, last: 0, then: turned });
      canvas.dataset.spinning = "1";
      window.requestAnimationFrame(turning);
    }
    function stopTurning() {
      Object.assign(spin, { speed: 0, then: null });
      canvas.dataset.spinning = "0";
    }
    function turning(now) {
      if (stopped || spin.speed === 0) return;
      if (spin.last) {
        const step = spin.speed * Math.min(100, now - spin.last) / 1000;
        view.yaw += step;
        spin.turned += step;
        clampView();
        redraw();
      }
      spin.last = now;
      if (spin.then && spin.turned >= 360) {
        const then = spin.then;
        stopTurning();
        then();
        return;
      }
      window.requestAnimationFrame(turning);
    }

    // The guided play: a full turn (a pause under reduced motion), then on to the next panorama.
    const play = controls && controls.querySelector("button.play");
    let pause = 0;
    function playStep() {
      setPlaying(true);
      if (reduced) {
        pause = window.setTimeout(walkOn, 4000);
      } else {
        turnBy(playSpeed, walkOn);
      }
    }
    function walkOn() {
      const next = document.querySelector("main a[rel=next]");
      if (!playing || !next) return setPlaying(false);
      next.click();
    }
    function setPlaying(on) {
      playing = on;
      // A play turns the view itself: the hint to drag would only cover it.
      if (on && hint) hint.classList.add("hidden");
      if (!play) return;
      play.setAttribute("aria-pressed", on ? "true" : "false");
      play.textContent = on ? "Stop the tour" : "Play the tour";
    }
    if (play) {
      play.addEventListener("click", function () {
        if (playing) {
          interrupt();
        } else {
          stopTurning();
          playStep();
        }
      });
    }
    // Looking around by turning the phone (offered where there is a touch screen and the
    // sensors; iOS asks the visitor first): the view follows the device's turn and tilt from
    // where it faced when asked. Its button or a drag ends it.
    const motion = controls && controls.querySelector("button.motion");
    let following = null;
    function followDevice(event) {
      if (event.alpha === null || event.beta === null) return;
      // alpha grows as the device turns left; beta is 90 held upright.
      if (following.alpha === null) following.alpha = event.alpha;
      view.yaw = following.yaw + following.alpha - event.alpha;
      view.pitch = event.beta - 90;
      clampView();
      redraw();
    }
    function setFollowing(on) {
      if (on === Boolean(following)) return;
      if (on) {
        following = { yaw: view.yaw, alpha: null };
        window.addEventListener("deviceorientation", followDevice, { signal: events.signal });
      } else {
        window.removeEventListener("deviceorientation", followDevice);
        following = null;
      }
      motion.setAttribute("aria-pressed", on ? "true" : "false");
      motion.textContent = on ? "Stop following the phone" : "Look by moving the phone";
    }
    if (motion) {
      motion.addEventListener("click", function () {
        interrupt();
        if (following) return setFollowing(false);
        const ask = window.DeviceOrientationEvent.requestPermission;
        const asked = typeof ask === "function" ? ask.call(window.DeviceOrientationEvent) : Promise.resolve("granted");
        asked.then(function (answer) { if (answer === "granted" && !stopped) setFollowing(true); }).catch(function () { /* refused: the drag stays */ });
      });
    }

    // Any input stops the turning and the play.
    function interrupt() {
      stopTurning();
      window.clearTimeout(pause);
      if (playing) setPlaying(false);
    }

    // One pointer drags the view; two (a pinch) zoom it by the change of their distance.
    const pointers = new Map();
    function spread() {
      const [a, b] = Array.from(pointers.values());
      return Math.hypot(a.x - b.x, a.y - b.y);
    }
    let pinch = 0;
    canvas.addEventListener("pointerdown", function (event) {
      dismissHint();
      interrupt();
      if (following) setFollowing(false);
      pointers.set(event.pointerId, { x: event.clientX, y: event.clientY });
      if (pointers.size === 2) pinch = spread();
      canvas.setPointerCapture(event.pointerId);
      canvas.focus();
    }, { signal: events.signal });
    canvas.addEventListener("pointermove", function (event) {
      const last = pointers.get(event.pointerId);
      if (!last) return;
      pointers.set(event.pointerId, { x: event.clientX, y: event.clientY });
      if (pointers.size === 1) {
        const degreesPerPixel = view.fov / Math.max(1, Math.min(canvas.clientWidth, canvas.clientHeight));
        look(-(event.clientX - last.x) * degreesPerPixel, (event.clientY - last.y) * degreesPerPixel);
      } else if (pointers.size === 2) {
        const now = spread();
        if (pinch > 0 && now > 0) zoom(pinch / now);
        pinch = now;
      }
    }, { signal: events.signal });
    function release(event) {
      pointers.delete(event.pointerId);
      pinch = 0;
    }
    canvas.addEventListener("pointerup", release, { signal: events.signal });
    canvas.addEventListener("pointercancel", release, { signal: events.signal });
    canvas.addEventListener("wheel", function (event) {
      event.preventDefault();
      interrupt();
      zoom(Math.exp(event.deltaY * 0.001));
    }, { passive: false, signal: events.signal });
    canvas.addEventListener("keydown", function (event) {
      const step = 5;
      switch (event.key) {
        case "ArrowLeft": look(-step, 0); break;
        case "ArrowRight": look(step, 0); break;
        case "ArrowUp": look(0, step); break;
        case "ArrowDown": look(0, -step); break;
        case "+": case "=": zoom(0.9); break;
        case "-": zoom(1 / 0.9); break;
        default: return;
      }
      dismissHint();
      interrupt();
      event.preventDefault();
    }, { signal: events.signal });
    window.addEventListener("resize", redraw, { signal: events.signal });

    if (ready && ready.src === image.src) {
      start(ready);
    } else if (image.complete && image.naturalWidth > 0) {
      start(image);
    } else {
      image.addEventListener("load", function () { start(image); }, { once: true });
    }

    return {
      root: root,
      view: view,
      viewLink: viewLink,
      // The view as last drawn, as a picture of its own.
      snapshot: function () {
        const copy = document.createElement("canvas");
        copy.width = canvas.width;
        copy.height = canvas.height;
        copy.getContext("2d").drawImage(canvas, 0, 0);
        return copy;
      },
      // The panorama left behind over this one's first frames: a short zoom toward the way
      // taken and a cross-fade, then gone.
      fadeFrom: function (leaving) {
        leaving.className = "leaving";
        leaving.setAttribute("aria-hidden", "true");
        root.appendChild(leaving);
        window.requestAnimationFrame(function () { window.requestAnimationFrame(function () { leaving.classList.add("gone"); }); });
        window.setTimeout(function () { leaving.remove(); }, 600);
      },
      canvas: canvas,
      // `reuse`: its canvas (and WebGL context) goes on to the next viewer, freed of this one's
      // textures and buffers (its programs stay, linked, for the next); else the context is let go.
      stop: function (reuse) {
        stopped = true;
        window.clearTimeout(pause);
        events.abort();
        window.clearTimeout(linkTimer);
        if (reuse) {
          for (const entry of tileTextures.values()) if (entry.texture) gl.deleteTexture(entry.texture);
          gl.deleteTexture(texture);
          gl.deleteBuffer(buffer);
          gl.deleteBuffer(tileBuffer);
        } else {
          const context = gl.getExtension("WEBGL_lose_context");
          if (context) context.loseContext();
        }
      }
    };
  }

