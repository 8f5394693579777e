// A slider view: range inputs over a grid of states and one picture per state (a frame, a PNG).
// The browser keeps the frames it has and swaps them on input. The same module runs in two places:
// - JupyterLab (an anywidget ESM, attnlib.widgets.SliderView): frames it lacks are asked of the kernel
//   with model.send({type: "want", now, ahead}); the kernel answers {type: "frame", state} + the PNG, and
//   sends {type: "reset"} when what the frames are drawn from changed (every frame held is dropped).
// - the course site (scripts/build_site.py inlines this file): staticModel(data) stands in for the
//   widget model and every frame is already a file ("urls"/"images", "phones" below a "media" query).
// Hooks the tests and benchmarks read: class sv-ready, data-state, data-shown-ms, data-how, event sv-shown.
const AHEAD = 3;  // frames fetched further along the last move (then one step either way on every slider)

export function staticModel(data) {  // the part of an anywidget model this module uses
  const on = new Map();
  return {
    get: name => data[name],
    set(name, value) { data[name] = value; (on.get("change:" + name) || []).forEach(cb => cb()); },
    on: (event, cb) => on.set(event, [...(on.get(event) || []), cb]),
    off: (event, cb) => on.set(event, (on.get(event) || []).filter(f => f !== cb)),
    save_changes() {},
    send() {},  // nothing to ask: every frame is a file
  };
}

function build(el, sliders) {  // the markup build_site writes for a view, made here for the live view
  const root = document.createElement("div");
  root.className = "sv sv-live";
  sliders.forEach((s, k) => {
    const id = "sv-" + Math.random().toString(36).slice(2) + "-" + k;
    const row = document.createElement("div");
    row.className = "sv-row";
    row.innerHTML = `<label for="${id}"></label><input type="range" id="${id}" min="0" step="1">` +
      `<output for="${id}" aria-hidden="true"></output>`;
    row.querySelector("label").textContent = s.label + (s.unit ? ` (${s.unit})` : "");
    row.querySelector("input").max = String(s.readouts.length - 1);
    root.append(row);
  });
  root.insertAdjacentHTML("beforeend", '<figure><img></figure><p class="sv-error" role="alert" hidden></p>');
  el.append(root);
  return root;
}

function render({ model, el }) {
  const sliders = model.get("spec");  // [{label, unit, readouts}], one per slider
  const sizes = sliders.map(s => s.readouts.length);
  const strides = sizes.map((_, k) => sizes.slice(k + 1).reduce((a, b) => a * b, 1));
  const indexOf = st => sizes.map((n, k) => Math.floor(st / strides[k]) % n);
  const stateOf = idx => idx.reduce((s, i, k) => s + i * strides[k], 0);
  const urls = model.get("urls"), images = model.get("images"), phones = model.get("phones");
  const live = !images;
  const frames = new Map(), kept = new Map();  // state -> URL held; URL -> decoded Image (stays in memory)
  if (!live) images.forEach((f, st) => frames.set(st, urls[f]));
  const root = el.querySelector(".sv") || build(el, sliders);
  const inputs = [...root.querySelectorAll("input[type=range]")], outputs = [...root.querySelectorAll("output")];
  const img = root.querySelector("img"), source = root.querySelector("picture source");
  const narrow = model.get("media") ? window.matchMedia(model.get("media")) : null;
  const error = root.querySelector(".sv-error");
  const urlOf = st => (source && narrow && narrow.matches ? urls[phones[st]] : frames.get(st));
  let state = model.get("state"), startedAt = null, askedAt = null;  // askedAt: the press waiting for the kernel

  function keep(url) {  // decode a frame before it is needed
    if (!url || kept.has(url)) return;
    const im = new Image();
    im.decoding = "async";
    im.src = url;
    kept.set(url, im);
  }
  function fetchAround(st, moved, step) {  // frames further along the move, then one step either way
    const idx = indexOf(st), wanted = [];
    const at = (k, i) => (i >= 0 && i < sizes[k] ? st + (i - idx[k]) * strides[k] : null);
    if (moved >= 0) for (let n = 1; n <= AHEAD; n++) wanted.push(at(moved, idx[moved] + step * n));
    idx.forEach((v, k) => wanted.push(at(k, v - 1), at(k, v + 1)));
    const ahead = [...new Set(wanted)].filter(s => s !== null && s !== st);
    if (!live) return ahead.forEach(s => keep(urlOf(s)));
    const now = frames.has(st) ? [] : [st], missing = ahead.filter(s => !frames.has(s));
    if (now.length || missing.length) model.send({ type: "want", now, ahead: missing });
  }
  function readouts() {
    indexOf(state).forEach((i, k) => {
      const s = sliders[k], text = s.readouts[i] + (s.unit ? " " + s.unit : "");
      outputs[k].textContent = text;
      inputs[k].value = String(i);
      inputs[k].setAttribute("aria-valuetext", text);
    });
  }
  function alt(st) {
    const alts = model.get("alts");
    if (alts) return alts[st];
    return "Figure for " + indexOf(st).map((i, k) => `${sliders[k].label} = ${sliders[k].readouts[i]}` +
      (sliders[k].unit ? " " + sliders[k].unit : "")).join(", ");
  }
  function swap(how) {  // show the current state's frame (held), then note how long the press took
    const st = state, t0 = how === "kernel" ? askedAt : startedAt;
    if (source && phones) source.srcset = urls[phones[st]];
    if (img.getAttribute("src") !== frames.get(st)) img.src = frames.get(st);
    img.alt = alt(st);
    root.removeAttribute("aria-busy");
    img.decode().catch(() => null).then(() => requestAnimationFrame(() => {
      if (st !== state || t0 === null) return;
      root.dataset.shownMs = (performance.now() - t0).toFixed(1);
      root.dataset.how = how;
      root.dispatchEvent(new CustomEvent("sv-shown", { detail: { state: st, how } }));
    }));
  }
  function show(moved, step) {
    readouts();
    root.dataset.state = String(state);
    askedAt = frames.has(state) ? null : startedAt;
    error.hidden = true;
    if (frames.has(state)) swap("held");
    else root.setAttribute("aria-busy", "true");
    fetchAround(state, moved, step);
  }
  function onInput(ev, k) {
    const before = indexOf(state)[k];
    state = stateOf(inputs.map(i => Number(i.value)));
    if (startedAt === null || ev.timeStamp - startedAt > 1000) startedAt = ev.timeStamp;  // a key that moved nothing
    show(k, indexOf(state)[k] - before);  // the move's size: PageUp moves several steps
    startedAt = null;
    model.set("state", state);  // after the request for its frame, so the kernel reads that first
    model.save_changes();
  }
  inputs.forEach((input, k) => input.addEventListener("input", ev => onInput(ev, k)));
  // time a press from the key or pointer going down (the input event comes later)
  const start = ev => { startedAt = ev.timeStamp; };
  root.addEventListener("keydown", start, true);
  root.addEventListener("pointerdown", start, true);
  root.setAttribute("data-lm-suppress-shortcuts", "true");  // JupyterLab: arrow keys move the slider, not cells
  const keys = ["ArrowLeft", "ArrowRight", "ArrowUp", "ArrowDown", "Home", "End", "PageUp", "PageDown"];
  root.addEventListener("keydown", ev => keys.includes(ev.key) && ev.stopPropagation());  // the rest: JupyterLab's

  function onMessage(msg, buffers) {
    if (msg.type === "reset") {  // what the frames are drawn from changed in the kernel: every frame held is stale
      frames.forEach(url => url.startsWith("blob:") && URL.revokeObjectURL(url));
      frames.clear();
      kept.clear();
      return show(-1, 0);  // asks again for the state shown and its neighbours
    }
    if (msg.type === "error" && msg.state === state) {
      error.textContent = msg.text;
      error.hidden = false;
      root.removeAttribute("aria-busy");
    }
    if (msg.type !== "frame" || !buffers || !buffers.length || frames.has(msg.state)) return;  // held already
    const url = URL.createObjectURL(new Blob([buffers[0]], { type: "image/png" }));
    frames.set(msg.state, url);
    if (msg.state === state) swap("kernel");
    else keep(url);
  }
  function onState() {  // the kernel set the state (view.set): follow it
    if (model.get("state") === state) return;
    state = model.get("state");
    show(-1, 0);
  }
  const first = model.get("first");
  if (live && first && first.byteLength) {
    frames.set(model.get("first_state"), URL.createObjectURL(new Blob([first], { type: "image/png" })));
  }
  model.on("msg:custom", onMessage);
  model.on("change:state", onState);
  show(-1, 0);
  root.classList.add("sv-ready");
  return () => {
    model.off("msg:custom", onMessage);
    model.off("change:state", onState);
    frames.forEach(url => url.startsWith("blob:") && URL.revokeObjectURL(url));
  };
}

export default { render };
