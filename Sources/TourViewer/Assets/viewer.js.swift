extension ViewerAssets {
    /// The 360° viewer: a WebGL full-screen triangle whose fragment shader turns each pixel's
    /// view direction into longitude and latitude and samples the equirectangular image there.
    /// Drag or arrow keys look around, the wheel or +/- zoom. Without WebGL the plain image the
    /// page shows stays. `data-frames` on the canvas counts drawn frames (tests await it).
    static let viewerScript = #"""
"use strict";
(function () {
  const root = document.getElementById("viewer");
  if (!root) return;
  const image = root.querySelector("img.fallback");
  const canvas = root.querySelector("canvas");
  const gl = canvas.getContext("webgl", { preserveDrawingBuffer: true, antialias: false });
  if (!gl) return;

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
    "  d = vec3(d.x * cy + d.z * sy, d.y, -d.x * sy + d.z * cy);",
    "  float longitude = atan(d.x, -d.z);",
    "  float latitude = asin(clamp(d.y, -1.0, 1.0));",
    "  gl_FragColor = texture2D(image, vec2(longitude / (2.0 * PI) + 0.5, 0.5 - latitude / PI));",
    "}"
  ].join("\n");

  function compile(type, source) {
    const shader = gl.createShader(type);
    gl.shaderSource(shader, source);
    gl.compileShader(shader);
    if (!gl.getShaderParameter(shader, gl.COMPILE_STATUS)) throw new Error(gl.getShaderInfoLog(shader));
    return shader;
  }

  let program;
  try {
    program = gl.createProgram();
    gl.attachShader(program, compile(gl.VERTEX_SHADER, vertexSource));
    gl.attachShader(program, compile(gl.FRAGMENT_SHADER, fragmentSource));
    gl.linkProgram(program);
    if (!gl.getProgramParameter(program, gl.LINK_STATUS)) throw new Error(gl.getProgramInfoLog(program));
  } catch (error) {
    return; // the plain image stays
  }
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

  const view = { yaw: 0, pitch: 0, fov: 75 };
  let texture = null;
  let pending = false;
  let frames = 0;

  function draw() {
    pending = false;
    const ratio = window.devicePixelRatio || 1;
    const width = Math.max(1, Math.round(canvas.clientWidth * ratio));
    const height = Math.max(1, Math.round(canvas.clientHeight * ratio));
    if (canvas.width !== width || canvas.height !== height) {
      canvas.width = width;
      canvas.height = height;
    }
    gl.viewport(0, 0, width, height);
    gl.uniform1f(uniform.yaw, view.yaw * Math.PI / 180);
    gl.uniform1f(uniform.pitch, view.pitch * Math.PI / 180);
    gl.uniform1f(uniform.focal, Math.tan(view.fov * Math.PI / 360));
    gl.uniform1f(uniform.aspect, width / height);
    gl.drawArrays(gl.TRIANGLES, 0, 3);
    frames += 1;
    canvas.dataset.frames = String(frames);
  }

  function redraw() {
    if (texture && !pending) {
      pending = true;
      window.requestAnimationFrame(draw);
    }
  }

  function look(yaw, pitch) {
    view.yaw = ((view.yaw + yaw) % 360 + 360) % 360;
    view.pitch = Math.max(-85, Math.min(85, view.pitch + pitch));
    redraw();
  }

  function zoom(factor) {
    view.fov = Math.max(30, Math.min(100, view.fov * factor));
    redraw();
  }

  function textureSource() {
    const largest = gl.getParameter(gl.MAX_TEXTURE_SIZE);
    if (image.naturalWidth <= largest && image.naturalHeight <= largest) return image;
    const scaled = document.createElement("canvas");
    const scale = largest / Math.max(image.naturalWidth, image.naturalHeight);
    scaled.width = Math.floor(image.naturalWidth * scale);
    scaled.height = Math.floor(image.naturalHeight * scale);
    scaled.getContext("2d").drawImage(image, 0, 0, scaled.width, scaled.height);
    return scaled;
  }

  function start() {
    texture = gl.createTexture();
    gl.bindTexture(gl.TEXTURE_2D, texture);
    gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_WRAP_S, gl.CLAMP_TO_EDGE);
    gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_WRAP_T, gl.CLAMP_TO_EDGE);
    gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MIN_FILTER, gl.LINEAR);
    gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MAG_FILTER, gl.LINEAR);
    gl.texImage2D(gl.TEXTURE_2D, 0, gl.RGB, gl.RGB, gl.UNSIGNED_BYTE, textureSource());
    image.classList.add("hidden");
    canvas.classList.remove("hidden");
    redraw();
  }

  let dragging = null;
  canvas.addEventListener("pointerdown", function (event) {
    dragging = { x: event.clientX, y: event.clientY };
    canvas.setPointerCapture(event.pointerId);
    canvas.focus();
  });
  canvas.addEventListener("pointermove", function (event) {
    if (!dragging) return;
    const degreesPerPixel = view.fov / Math.max(1, canvas.clientHeight);
    look(-(event.clientX - dragging.x) * degreesPerPixel, (event.clientY - dragging.y) * degreesPerPixel);
    dragging = { x: event.clientX, y: event.clientY };
  });
  canvas.addEventListener("pointerup", function () { dragging = null; });
  canvas.addEventListener("pointercancel", function () { dragging = null; });
  canvas.addEventListener("wheel", function (event) {
    event.preventDefault();
    zoom(Math.exp(event.deltaY * 0.001));
  }, { passive: false });
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
    event.preventDefault();
  });
  window.addEventListener("resize", redraw);

  if (image.complete && image.naturalWidth > 0) {
    start();
  } else {
    image.addEventListener("load", start, { once: true });
  }
})();
"""#
}
