// FrameSlider: a slider view that keeps the frames (PNGs) it has and swaps them on input.
// The same file runs as an anywidget ESM in JupyterLab (frames asked from the kernel with
// model.send) and on a static page (a stand-in model whose "urls" already name every frame).
function render({ model, el }) {
  const sliders = model.get("sliders");            // [{label, unit, readouts: [...]}, ...]
  const alts = model.get("alts") || [];            // alt text per state (may also come with a frame)
  const sizes = sliders.map(s => s.readouts.length);
  const strides = sizes.map((_, k) => sizes.slice(k + 1).reduce((a, b) => a * b, 1));
  const frames = new Map();                        // state -> image URL (blob:, data: or a file URL)
  (model.get("urls") || []).forEach((u, i) => frames.set(i, u));
  const root = document.createElement("div");
  root.className = "fs";
  const inputs = [], outs = [];
  const idxOf = state => sizes.map((n, k) => Math.floor(state / strides[k]) % n);
  let state = model.get("state"), keyAt = null, asked = new Set();
  sliders.forEach((s, k) => {
    const row = document.createElement("div");
    const id = "fs-" + Math.random().toString(36).slice(2);
    const label = document.createElement("label");
    label.htmlFor = id;
    label.textContent = s.label + (s.unit ? " (" + s.unit + ")" : "");
    const input = document.createElement("input");
    Object.assign(input, { type: "range", id, min: 0, max: sizes[k] - 1, step: 1 });
    input.value = idxOf(state)[k];
    const out = document.createElement("output");
    out.htmlFor = id;
    out.setAttribute("aria-hidden", "true");
    row.append(label, input, out);
    root.append(row);
    inputs.push(input);
    outs.push(out);
    input.addEventListener("input", ev => show(ev.timeStamp));
  });
  const img = document.createElement("img");
  root.append(img);
  root.addEventListener("keydown", ev => { keyAt = ev.timeStamp; }, true);
  root.setAttribute("data-lm-suppress-shortcuts", "true");  // JupyterLab: arrow keys move the slider, not cells
  root.addEventListener("keydown", ev => ev.stopPropagation());
  root.addEventListener("pointerdown", ev => { keyAt = ev.timeStamp; }, true);
  el.append(root);

  function readouts() {
    inputs.forEach((input, k) => {
      const s = sliders[k], text = s.readouts[Number(input.value)] + (s.unit ? " " + s.unit : "");
      outs[k].textContent = text;
      input.setAttribute("aria-valuetext", text);
    });
  }
  function swap(st, t0, how) {                      // st's frame is held: show it, then time it
    img.src = frames.get(st);
    img.alt = alts[st] || "";
    img.style.maxWidth = "100%";
    root.removeAttribute("aria-busy");
    img.decode().catch(() => null).then(() => requestAnimationFrame(() => {
      if (st !== state || t0 === null) return;
      root.dataset.shownMs = (performance.now() - t0).toFixed(1);
      root.dataset.how = how;
      root.dispatchEvent(new CustomEvent("fs-shown", { detail: { state: st, ms: performance.now() - t0, how, kernelMs: Number(root.dataset.kernelMs) } }));
    }));
  }
  function need(st) {                               // ask the kernel once per missing frame
    if (frames.has(st) || asked.has(st)) return;
    asked.add(st);
    model.send({ type: "need", state: st });
  }
  function ahead(st, way) {                         // ask for the next frames along the move, then neighbours
    const n = model.get("ahead") || 0, idx = idxOf(st);
    if (!n) return;
    const at = (k, i) => st + (i - idx[k]) * strides[k];
    if (way) for (let j = 1; j <= n; j++) { const i = idx[moved] + way * j; if (i >= 0 && i < sizes[moved]) need(at(moved, i)); }
    idx.forEach((v, k) => [-1, 1].forEach(d => { if (v + d >= 0 && v + d < sizes[k]) need(at(k, v + d)); }));
  }
  let moved = 0, way = 0;
  function show(tInput) {
    const t0 = keyAt !== null && tInput - keyAt < 1000 ? keyAt : tInput;
    keyAt = null;
    const before = idxOf(state);
    state = inputs.reduce((s, input, k) => s + Number(input.value) * strides[k], 0);
    const now = idxOf(state);
    moved = Math.max(0, now.findIndex((v, k) => v !== before[k]));
    way = Math.sign(now[moved] - before[moved]);
    readouts();
    root.dataset.state = String(state);
    if (frames.has(state)) swap(state, t0, "held");
    else { root.setAttribute("aria-busy", "true"); pending = { st: state, t0 }; need(state); }
    ahead(state, way);
    model.set("state", state);  // after the request, so the kernel reads the request first
    model.save_changes();
  }
  let pending = null;
  function onMsg(msg, buffers) {
    if (!msg || msg.type !== "frame") return;
    const url = buffers && buffers.length
      ? URL.createObjectURL(new Blob([buffers[0]], { type: "image/png" }))
      : "data:image/png;base64," + msg.b64;
    frames.set(msg.state, url);
    asked.delete(msg.state);
    if (msg.alt) alts[msg.state] = msg.alt;
    if (msg.ms !== undefined) root.dataset.kernelMs = String(msg.ms);
    if (msg.state === state) swap(state, pending && pending.st === state ? pending.t0 : null, "kernel");
  }
  model.on("msg:custom", onMsg);
  root.forget = () => { frames.clear(); asked.clear(); };  // for benchmarks only
  readouts();
  if (frames.has(state)) swap(state, null, "held"); else need(state);
  return () => model.off("msg:custom", onMsg);
}
export default { render };
