// The viewer's script, part 3 of 6: the dollhouse.
  // A polygon's triangles, by clipping ears: [[x, z], …] to index triples. An outline that
  // crosses itself leaves a remainder, fanned.
  function triangulate(points) {
    let twice = 0;
    points.forEach(function (p, i) { const q = points[(i + 1) % points.length]; twice += p[0] * q[1] - q[0] * p[1]; });
    const turn = twice > 0 ? 1 : -1, left = points.map(function (_, i) { return i; }), triangles = [];
    function cross(a, b, c) { return (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]); }
    function inside(p, a, b, c) { return cross(a, b, p) * turn > 0 && cross(b, c, p) * turn > 0 && cross(c, a, p) * turn > 0; }
    for (let guard = 0; left.length > 3 && guard < 4 * points.length; guard++) {
      let clipped = false;
      for (let i = 0; i < left.length && !clipped; i++) {
        const ia = left[(i + left.length - 1) % left.length], ib = left[i], ic = left[(i + 1) % left.length];
        const a = points[ia], b = points[ib], c = points[ic], bend = cross(a, b, c) * turn;
        if (bend === 0) { left.splice(i, 1); clipped = true; break; }
        if (bend < 0 || left.some(function (j) { return j !== ia && j !== ib && j !== ic && inside(points[j], a, b, c); })) continue;
        triangles.push([ia, ib, ic]);
        left.splice(i, 1);
        clipped = true;
      }
      if (!clipped) break;
    }
    for (let i = 1; i + 1 < left.length; i++) triangles.push([left[0], left[i], left[i + 1]]);
    return triangles;
  }

  // Column-major 4×4 matrices for the dollhouse's camera.
  function multiply(a, b) {
    const out = new Float32Array(16);
    for (let column = 0; column < 4; column++) {
      for (let row = 0; row < 4; row++) {
        let sum = 0;
        for (let k = 0; k < 4; k++) sum += a[k * 4 + row] * b[column * 4 + k];
        out[column * 4 + row] = sum;
      }
    }
    return out;
  }
  function perspective(fovy, aspect, near, far) {
    const f = 1 / Math.tan(fovy / 2), depth = near - far;
    return new Float32Array([f / aspect, 0, 0, 0, 0, f, 0, 0, 0, 0, (far + near) / depth, -1, 0, 0, 2 * far * near / depth, 0]);
  }
  function lookAt(eye, target) {
    const z = [eye[0] - target[0], eye[1] - target[1], eye[2] - target[2]], zl = Math.hypot(z[0], z[1], z[2]);
    z[0] /= zl; z[1] /= zl; z[2] /= zl;
    const x = [z[2], 0, -z[0]], xl = Math.hypot(x[0], x[2]) || 1;
    x[0] /= xl; x[2] /= xl;
    const y = [z[1] * x[2], z[2] * x[0] - z[0] * x[2], -z[1] * x[0]];
    function dot(v) { return v[0] * eye[0] + v[1] * eye[1] + v[2] * eye[2]; }
    return new Float32Array([x[0], y[0], z[0], 0, x[1], y[1], z[1], 0, x[2], y[2], z[2], 0, -dot(x), -dot(y), -dot(z), 1]);
  }

  // The dollhouse (`data-house` of its button): every floor's rooms in 3D from their outlines
  // and heights, the walls between the camera and a room cut away, each room's name and area on
  // its floor, and the panoramas as dots that walk in (links, so a move in place). A room with
  // photos (`photos`: its panoramas' previews, where on the plan each was taken, how high, its
  // heading, taken as up the plan when unknown) has its floor and walls drawn with them: each point coloured by the nearest
  // panorama's pixel in the direction from its camera to the point, as a projector would; until
  // the previews have come, and without any, flat colours. Drag turns it, the wheel
  // or a pinch zooms; the floors shown are chosen below; Escape or Close leaves.
  function openDollhouse(house, opener) {
    const overlay = document.createElement("div");
    overlay.className = "dollhouse-view";
    overlay.setAttribute("role", "dialog");
    overlay.setAttribute("aria-modal", "true");
    overlay.setAttribute("aria-label", "Dollhouse");
    overlay.innerHTML = "<h2>Dollhouse</h2><canvas tabindex=\"0\" aria-label=\"The home in 3D: drag or use the arrow keys to turn it, the wheel or + and − to zoom\"></canvas>" +
      "<div class=\"marks\"></div><nav aria-label=\"Floors shown\"></nav><button type=\"button\" class=\"close\">Close</button>";
    document.body.appendChild(overlay);
    const canvas = overlay.querySelector("canvas"), marks = overlay.querySelector(".marks"), floorsNav = overlay.querySelector("nav");
    const gl = canvas.getContext("webgl", { preserveDrawingBuffer: true, antialias: true });
    const closer = overlay.querySelector("button.close");
    function close() {
      window.removeEventListener("resize", draw);
      document.removeEventListener("keydown", escape);
      const lost = gl && gl.getExtension("WEBGL_lose_context");
      if (lost) lost.loseContext();
      overlay.remove();
      if (opener.isConnected) opener.focus();
    }
    function escape(event) { if (event.key === "Escape") close(); }
    closer.addEventListener("click", close);
    document.addEventListener("keydown", escape);
    if (!gl) { close(); return; }

    const program = linkProgram(gl, "attribute vec3 position, normal, colour; uniform mat4 camera; varying vec3 p, n, c;" +
      "void main() { p = position; n = normal; c = colour; gl_Position = camera * vec4(position, 1.0); }",
      "precision highp float; uniform vec3 eye; uniform vec4 projectors[4]; uniform float photographed;" +
      " uniform sampler2D photo0, photo1, photo2, photo3; varying vec3 p, n, c;" +
      // The pixel of the panorama taken at `at` (its heading in w) in the direction of the point.
      "vec3 seen(sampler2D image, vec4 at) { vec3 d = normalize(p - at.xyz); float lon = atan(d.x, -d.z) - at.w;" +
      " return texture2D(image, vec2(fract(0.5 + lon / 6.2831853), 0.5 - asin(clamp(d.y, -1.0, 1.0)) / 3.1415927)).rgb; }" +
      // A wall whose outside faces the camera is cut away; the rest lit from above, a little aside.
      "void main() { if (dot(n, eye - p) > 0.0 && n.y == 0.0) discard;" +
      " vec3 inner = n.y == 0.0 ? -n : n; float light = 0.6 + 0.4 * max(dot(inner, normalize(vec3(0.4, 0.8, 0.45))), 0.0);" +
      " vec3 colour = c * light;" +
      // The nearest of the room's `photographed` cameras: its bearing to the point on the plan
      // (clockwise from up, -z) less its image centre's is the longitude across its image; the
      // rise, the latitude.
      " if (photographed > 0.5) { int near = 0; float best = distance(p, projectors[0].xyz);" +
      "  for (int i = 1; i < 4; i++) { float d = distance(p, projectors[i].xyz); if (float(i) < photographed && d < best) { best = d; near = i; } }" +
      "  vec3 picture = near == 0 ? seen(photo0, projectors[0]) : near == 1 ? seen(photo1, projectors[1]) : near == 2 ? seen(photo2, projectors[2]) : seen(photo3, projectors[3]);" +
      "  colour = picture * (0.85 + 0.15 * light); }" +
      " gl_FragColor = vec4(colour, 1.0); }");
    if (!program) { close(); return; } // the plan in the panel stays
    gl.useProgram(program);
    gl.enable(gl.DEPTH_TEST);
    const buffer = gl.createBuffer();
    gl.bindBuffer(gl.ARRAY_BUFFER, buffer);
    ["position", "normal", "colour"].forEach(function (name, index) {
      const at = gl.getAttribLocation(program, name);
      gl.enableVertexAttribArray(at);
      gl.vertexAttribPointer(at, 3, gl.FLOAT, false, 36, index * 12);
    });
    const floorColours = [[0.93, 0.89, 0.82], [0.85, 0.9, 0.95], [0.9, 0.94, 0.86], [0.95, 0.88, 0.88]];
    const wallColour = [0.97, 0.97, 0.96];
    // Floors stacked apart when all are shown, so that each can be seen; the visitor's own first.
    const apart = 4;
    let shown = Math.max(0, house.floors.findIndex(function (floor) { return floor.current; })), centre = [0, 0, 0], extent = 1, radius = 1;
    let labels = [];
    // Each room's triangles in the buffer, with its photo: drawn one room at a time.
    let ranges = [];
    // The photos' textures by URL, each made once it has come (null: not yet, or it failed).
    const photos = new Map();
    function photoTexture(url) {
      if (!photos.has(url)) {
        photos.set(url, null);
        const picture = new Image();
        picture.onload = function () {
          if (!overlay.isConnected) return;
          const texture = gl.createTexture();
          gl.bindTexture(gl.TEXTURE_2D, texture);
          // Any size (WebGL 1 repeats only powers of two): clamped, the seam wrapped in the shader.
          [gl.TEXTURE_WRAP_S, gl.TEXTURE_WRAP_T].forEach(function (wrap) { gl.texParameteri(gl.TEXTURE_2D, wrap, gl.CLAMP_TO_EDGE); });
          gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MIN_FILTER, gl.LINEAR);
          gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MAG_FILTER, gl.LINEAR);
          gl.texImage2D(gl.TEXTURE_2D, 0, gl.RGB, gl.RGB, gl.UNSIGNED_BYTE, picture);
          photos.set(url, texture);
          draw();
        };
        picture.src = url;
      }
      return photos.get(url);
    }

    function build() {
      const data = [], chosen = house.floors.map(function (floor, index) { return { floor: floor, index: index }; })
        .filter(function (item) { return shown < 0 || item.index === shown; });
      let lowest = Infinity, highest = -Infinity, minX = Infinity, maxX = -Infinity, minZ = Infinity, maxZ = -Infinity;
      marks.textContent = "";
      labels = [];
      ranges = [];
      chosen.forEach(function (item, order) {
        const base = item.floor.base + (shown < 0 ? order * apart : 0);
        item.floor.rooms.forEach(function (room, number) {
          const points = room.points, colour = floorColours[number % floorColours.length], start = data.length / 9;
          triangulate(points).forEach(function (triangle) {
            triangle.forEach(function (i) { data.push(points[i][0], base, points[i][1], 0, 1, 0, colour[0], colour[1], colour[2]); });
          });
          let twice = 0;
          points.forEach(function (p, i) { const q = points[(i + 1) % points.length]; twice += p[0] * q[1] - q[0] * p[1]; });
          points.forEach(function (p, i) {
            const q = points[(i + 1) % points.length], dx = q[0] - p[0], dz = q[1] - p[1], length = Math.hypot(dx, dz) || 1;
            const nx = (twice > 0 ? dz : -dz) / length, nz = (twice > 0 ? -dx : dx) / length, top = base + room.height;
            [[p, base], [q, base], [q, top], [p, base], [q, top], [p, top]].forEach(function (corner) {
              data.push(corner[0][0], corner[1], corner[0][1], nx, 0, nz, wallColour[0], wallColour[1], wallColour[2]);
            });
            minX = Math.min(minX, p[0]); maxX = Math.max(maxX, p[0]); minZ = Math.min(minZ, p[1]); maxZ = Math.max(maxZ, p[1]);
            highest = Math.max(highest, top);
          });
          ranges.push({ start: start, count: data.length / 9 - start, photos: room.photos, base: base });
          room.photos.forEach(function (photo) { photoTexture(photo.url); });
          lowest = Math.min(lowest, base);
          const label = document.createElement("div");
          label.className = "label";
          label.textContent = room.name;
          const area = document.createElement("span");
          area.textContent = room.area;
          label.appendChild(area);
          marks.appendChild(label);
          const middle = points.reduce(function (sum, p) { return [sum[0] + p[0] / points.length, sum[1] + p[1] / points.length]; }, [0, 0]);
          labels.push({ element: label, at: [middle[0], base + 0.05, middle[1]] });
        });
        item.floor.spots.forEach(function (spot) {
          const link = document.createElement("a");
          link.className = spot.current ? "spot current" : "spot";
          link.href = spot.url;
          link.setAttribute("aria-label", (spot.current ? "You are here: " : "Go to ") + spot.label + ", " + item.floor.name);
          link.title = spot.label;
          link.addEventListener("click", close);
          marks.appendChild(link);
          labels.push({ element: link, at: [spot.x, base + 0.3, spot.y] });
        });
      });
      if (!Number.isFinite(lowest)) { lowest = 0; highest = 1; minX = 0; maxX = 1; minZ = 0; maxZ = 1; }
      centre = [(minX + maxX) / 2, (lowest + highest) / 2, (minZ + maxZ) / 2];
      extent = Math.max(maxX - minX, maxZ - minZ, highest - lowest, 1);
      radius = Math.max(0.5 * Math.hypot(maxX - minX, highest - lowest, maxZ - minZ), 0.5);
      distance = extent * 2;
      // Stacked floors are seen from lower, between them; one floor from higher, into its rooms.
      pitch = shown < 0 ? 28 : 50;
      gl.bufferData(gl.ARRAY_BUFFER, new Float32Array(data), gl.STATIC_DRAW);
      canvas.dataset.rooms = String(labels.filter(function (item) { return item.element.className === "label"; }).length);
      draw();
    }

    let yaw = -35, pitch = 50, distance = 10, frames = 0;
    function draw() {
      const width = Math.round(canvas.clientWidth * window.devicePixelRatio), height = Math.round(canvas.clientHeight * window.devicePixelRatio);
      if (canvas.width !== width || canvas.height !== height) { canvas.width = width; canvas.height = height; }
      gl.viewport(0, 0, width, height);
      gl.clearColor(0, 0, 0, 0);
      gl.clear(gl.COLOR_BUFFER_BIT | gl.DEPTH_BUFFER_BIT);
      // Far enough back that the sphere around the house fits the narrower field of view with a
      // margin (across an upright phone, up and down a wide screen): the whole house in sight
      // from any side until the visitor zooms in.
      const narrower = Math.atan(Math.tan(22.5 * Math.PI / 180) * Math.min(1, width / Math.max(1, height)));
      const y = yaw * Math.PI / 180, x = pitch * Math.PI / 180, away = radius * 1.1 / Math.sin(narrower) * distance / (extent * 2);
      const eye = [centre[0] + away * Math.cos(x) * Math.sin(y), centre[1] + away * Math.sin(x), centre[2] + away * Math.cos(x) * Math.cos(y)];
      const camera = multiply(perspective(45 * Math.PI / 180, width / Math.max(1, height), 0.1, away * 4 + extent * 4), lookAt(eye, centre));
      gl.uniformMatrix4fv(gl.getUniformLocation(program, "camera"), false, camera);
      gl.uniform3fv(gl.getUniformLocation(program, "eye"), eye);
      const projectors = gl.getUniformLocation(program, "projectors"), photographed = gl.getUniformLocation(program, "photographed");
      ["photo0", "photo1", "photo2", "photo3"].forEach(function (name, unit) { gl.uniform1i(gl.getUniformLocation(program, name), unit); });
      let complete = 0;
      ranges.forEach(function (range) {
        // The photographs that have come, each on a texture unit of its own.
        const ready = range.photos.filter(function (photo) { return photos.get(photo.url); }).slice(0, 4), places = new Float32Array(16);
        ready.forEach(function (photo, unit) {
          gl.activeTexture(gl.TEXTURE0 + unit);
          gl.bindTexture(gl.TEXTURE_2D, photos.get(photo.url));
          places.set([photo.x, range.base + photo.height, photo.y, (photo.heading || 0) * Math.PI / 180], unit * 4);
        });
        gl.activeTexture(gl.TEXTURE0);
        gl.uniform4fv(projectors, places);
        gl.uniform1f(photographed, ready.length);
        if (ready.length > 0 && ready.length === range.photos.length) complete += 1;
        gl.drawArrays(gl.TRIANGLES, range.start, range.count);
      });
      // The rooms in view drawn with all their photographs (tests await them).
      canvas.dataset.photos = String(complete);
      // Each name and dot where its point falls on the screen; none behind the camera.
      const box = [canvas.clientWidth, canvas.clientHeight];
      labels.forEach(function (item) {
        const p = item.at, w = camera[3] * p[0] + camera[7] * p[1] + camera[11] * p[2] + camera[15];
        const sx = (camera[0] * p[0] + camera[4] * p[1] + camera[8] * p[2] + camera[12]) / w;
        const sy = (camera[1] * p[0] + camera[5] * p[1] + camera[9] * p[2] + camera[13]) / w;
        item.element.hidden = w <= 0;
        item.element.style.left = ((sx + 1) / 2 * box[0]).toFixed(1) + "px";
        item.element.style.top = ((1 - sy) / 2 * box[1]).toFixed(1) + "px";
      });
      // A room's name moved down past the dots and the names laid out before it that it would
      // cover (a panorama often stands in the middle of its room).
      const placed = labels.filter(function (item) { return item.element.className !== "label" && !item.element.hidden; })
        .map(function (item) { return item.element.getBoundingClientRect(); });
      labels.forEach(function (item) {
        const label = item.element;
        if (label.className !== "label" || label.hidden) return;
        label.style.marginTop = "0px";
        const at = label.getBoundingClientRect();
        let shift = 0;
        for (let tries = 0; tries <= placed.length; tries++) {
          const hit = placed.find(function (other) {
            return at.left < other.right && other.left < at.right && at.top + shift < other.bottom && other.top < at.bottom + shift;
          });
          if (!hit) break;
          shift = hit.bottom - at.top + 2;
        }
        if (shift > 0) label.style.marginTop = shift.toFixed(1) + "px";
        placed.push({ left: at.left, right: at.right, top: at.top + shift, bottom: at.bottom + shift });
      });
      canvas.dataset.frames = String(++frames);
      canvas.dataset.yaw = yaw.toFixed(1);
      canvas.dataset.pitch = pitch.toFixed(1);
    }
    function turn(by, tilt) {
      yaw = (yaw + by) % 360;
      pitch = Math.max(10, Math.min(89, pitch + tilt));
      window.requestAnimationFrame(draw);
    }
    function zoomBy(factor) {
      distance = Math.max(extent * 0.4, Math.min(extent * 4, distance * factor));
      window.requestAnimationFrame(draw);
    }

    const pointers = new Map();
    let pinch = 0;
    canvas.addEventListener("pointerdown", function (event) {
      pointers.set(event.pointerId, { x: event.clientX, y: event.clientY });
      canvas.setPointerCapture(event.pointerId);
    });
    canvas.addEventListener("pointermove", function (event) {
      const last = pointers.get(event.pointerId);
      if (!last) return;
      pointers.set(event.pointerId, { x: event.clientX, y: event.clientY });
      if (pointers.size === 1) {
        turn(-(event.clientX - last.x) * 0.4, (event.clientY - last.y) * 0.3);
      } else if (pointers.size === 2) {
        const [a, b] = Array.from(pointers.values()), now = Math.hypot(a.x - b.x, a.y - b.y);
        if (pinch > 0 && now > 0) zoomBy(pinch / now);
        pinch = now;
      }
    });
    ["pointerup", "pointercancel"].forEach(function (name) {
      canvas.addEventListener(name, function (event) { pointers.delete(event.pointerId); pinch = 0; });
    });
    canvas.addEventListener("wheel", function (event) {
      event.preventDefault();
      zoomBy(Math.exp(event.deltaY * 0.001));
    }, { passive: false });
    canvas.addEventListener("keydown", function (event) {
      switch (event.key) {
        case "ArrowLeft": turn(-10, 0); break;
        case "ArrowRight": turn(10, 0); break;
        case "ArrowUp": turn(0, 5); break;
        case "ArrowDown": turn(0, -5); break;
        case "+": case "=": zoomBy(0.9); break;
        case "-": zoomBy(1 / 0.9); break;
        default: return;
      }
      event.preventDefault();
    });
    window.addEventListener("resize", draw);

    // The floors' buttons: all of them stacked, or one.
    const choices = house.floors.length > 1 ? [{ name: "All floors", index: -1 }] : [];
    house.floors.forEach(function (floor, index) { choices.push({ name: floor.name, index: index }); });
    const buttons = choices.map(function (choice) {
      const button = document.createElement("button");
      button.type = "button";
      button.textContent = choice.name;
      button.addEventListener("click", function () {
        shown = choice.index;
        buttons.forEach(function (other, i) { other.setAttribute("aria-pressed", String(choices[i].index === shown)); });
        build();
      });
      button.setAttribute("aria-pressed", String(choice.index === shown));
      floorsNav.appendChild(button);
      return button;
    });
    build();
    closer.focus();
  }

