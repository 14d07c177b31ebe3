// The viewer's script, part 4 of 6: moves through the room.
  // A move between two panoramas of one floor whose places on the plan are known travels from
  // one to the other, over the floor's rooms (floors, walls and ceilings from the dollhouse's
  // outlines and heights): the camera goes from the first camera's place to the second's in
  // `travelMilliseconds`, keeping the compass direction of the view, and each point is coloured
  // by the two panoramas projected from where they were taken. The second's picture takes over
  // from the far end of the way and grows back over the room, so that a frame shows the room's
  // geometry in both, not a cross-fade. It starts as the first view exactly (a point seen from
  // the first camera takes that panorama's pixel in its direction) and ends as the second's,
  // which is drawn under it. Null where it cannot be (no plan, a place or heading unknown, no
  // WebGL): the move fades as before.
  const travelMilliseconds = 800;
  function travel(house, fromId, toId, fromPicture, toPicture, view, root) {
    if (!house || !fromPicture || !toPicture) return null;
    function spotOf(item, id) { return item.spots.find(function (spot) { return spot.url.endsWith("/panoramas/" + id); }); }
    const floor = house.floors.find(function (item) { return spotOf(item, fromId); });
    const from = floor && spotOf(floor, fromId), to = floor && spotOf(floor, toId);
    if (!from || !to || from.heading === null || to.heading === null || !floor.rooms.length) return null;
    const canvas = document.createElement("canvas");
    canvas.className = "travel";
    canvas.setAttribute("aria-hidden", "true");
    // At half the screen's pixels: a move's frames pass in under a second, and a phone's GPU
    // (or a software one) draws four times as many of them.
    const box = root.getBoundingClientRect(), scale = window.devicePixelRatio / 2;
    canvas.width = Math.max(1, Math.round(box.width * scale));
    canvas.height = Math.max(1, Math.round(box.height * scale));
    const gl = canvas.getContext("webgl", { preserveDrawingBuffer: true, antialias: false });
    if (!gl) return null;
    const program = linkProgram(gl, "attribute vec3 position; uniform mat4 camera; varying vec3 p;" +
      "void main() { p = position; gl_Position = camera * vec4(position, 1.0); }",
      "precision highp float; uniform sampler2D first, second; uniform vec4 from, to; uniform vec2 span; uniform float t; varying vec3 p;" +
      // The pixel of a panorama taken at `at` (its heading in w) in the direction of the point.
      "vec3 seen(sampler2D image, vec4 at) { vec3 d = normalize(p - at.xyz); float lon = atan(d.x, -d.z) - at.w;" +
      " return texture2D(image, vec2(fract(0.5 + lon / 6.2831853), 0.5 - asin(clamp(d.y, -1.0, 1.0)) / 3.1415927)).rgb; }" +
      "void main() { vec2 way = to.xz - from.xz; float along = dot(p.xz - from.xz, way) / max(dot(way, way), 0.0001);" +
      // The front where the second picture takes over, along the way: beyond the farthest point
      // at first (the first view exactly), behind the nearest at the end (the second's).
      " float front = mix(span.y + 0.2, span.x - 0.2, t); float w = smoothstep(front - 0.15, front + 0.15, along);" +
      " gl_FragColor = vec4(mix(seen(first, from), seen(second, to), w), 1.0); }");
    if (!program) return null;
    gl.useProgram(program);
    gl.enable(gl.DEPTH_TEST);
    // Every room's floor and ceiling, and its walls (seen from inside or out).
    const data = [];
    floor.rooms.forEach(function (room) {
      const points = room.points, top = floor.base + room.height;
      triangulate(points).forEach(function (triangle) {
        [floor.base, top].forEach(function (level) {
          triangle.forEach(function (i) { data.push(points[i][0], level, points[i][1]); });
        });
      });
      points.forEach(function (p, i) {
        const q = points[(i + 1) % points.length];
        [[p, floor.base], [q, floor.base], [q, top], [p, floor.base], [q, top], [p, top]].forEach(function (corner) {
          data.push(corner[0][0], corner[1], corner[0][1]);
        });
      });
    });
    gl.bindBuffer(gl.ARRAY_BUFFER, gl.createBuffer());
    gl.bufferData(gl.ARRAY_BUFFER, new Float32Array(data), gl.STATIC_DRAW);
    // How far along the way (0 at the first camera, 1 at the second) the room's points reach.
    const wayX = to.x - from.x, wayZ = to.y - from.y, length = Math.max(wayX * wayX + wayZ * wayZ, 0.0001);
    let nearest = Infinity, farthest = -Infinity;
    for (let i = 0; i < data.length; i += 3) {
      const along = ((data[i] - from.x) * wayX + (data[i + 2] - from.y) * wayZ) / length;
      nearest = Math.min(nearest, along);
      farthest = Math.max(farthest, along);
    }
    const at = gl.getAttribLocation(program, "position");
    gl.enableVertexAttribArray(at);
    gl.vertexAttribPointer(at, 3, gl.FLOAT, false, 12, 0);
    [[gl.TEXTURE0, fromPicture, "first"], [gl.TEXTURE1, toPicture, "second"]].forEach(function (unit, index) {
      gl.activeTexture(unit[0]);
      gl.bindTexture(gl.TEXTURE_2D, gl.createTexture());
      [gl.TEXTURE_WRAP_S, gl.TEXTURE_WRAP_T].forEach(function (wrap) { gl.texParameteri(gl.TEXTURE_2D, wrap, gl.CLAMP_TO_EDGE); });
      gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MIN_FILTER, gl.LINEAR);
      gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MAG_FILTER, gl.LINEAR);
      gl.texImage2D(gl.TEXTURE_2D, 0, gl.RGB, gl.RGB, gl.UNSIGNED_BYTE, unit[1]);
      gl.uniform1i(gl.getUniformLocation(program, unit[2]), index);
    });
    const radians = Math.PI / 180;
    gl.uniform4f(gl.getUniformLocation(program, "from"), from.x, floor.base + from.height, from.y, from.heading * radians);
    gl.uniform4f(gl.getUniformLocation(program, "to"), to.x, floor.base + to.height, to.y, to.heading * radians);
    gl.uniform2f(gl.getUniformLocation(program, "span"), nearest, farthest);
    // The view's compass direction (the first image's heading plus the yaw) and its field of
    // view across the shorter side, as the viewer has them.
    const bearing = (from.heading + view.yaw) * radians, pitch = view.pitch * radians, aspect = canvas.width / canvas.height;
    const vertical = aspect >= 1 ? view.fov * radians : 2 * Math.atan(Math.tan(view.fov * radians / 2) / aspect);
    const projection = perspective(vertical, aspect, 0.05, 500);
    const began = performance.now();
    let frames = 0;
    function frame() {
      const t = Math.min(1, (performance.now() - began) / travelMilliseconds), eased = t * t * (3 - 2 * t);
      const eye = [from.x + (to.x - from.x) * eased, floor.base + from.height + (to.height - from.height) * eased, from.y + (to.y - from.y) * eased];
      const ahead = [eye[0] + Math.sin(bearing) * Math.cos(pitch), eye[1] + Math.sin(pitch), eye[2] - Math.cos(bearing) * Math.cos(pitch)];
      gl.viewport(0, 0, canvas.width, canvas.height);
      gl.clearColor(0, 0, 0, 1);
      gl.clear(gl.COLOR_BUFFER_BIT | gl.DEPTH_BUFFER_BIT);
      gl.uniformMatrix4fv(gl.getUniformLocation(program, "camera"), false, multiply(projection, lookAt(eye, ahead)));
      gl.uniform1f(gl.getUniformLocation(program, "t"), t);
      gl.drawArrays(gl.TRIANGLES, 0, data.length / 3);
      canvas.dataset.frames = String(++frames);
      canvas.dataset.t = t.toFixed(3);
      if (t < 1) {
        window.requestAnimationFrame(frame);
      } else {
        const lost = gl.getExtension("WEBGL_lose_context");
        canvas.remove();
        if (lost) lost.loseContext();
      }
    }
    root.appendChild(canvas);
    frame();
    return canvas;
  }
