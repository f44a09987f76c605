// Crase's pages: follow a running run, and open the cards of the evidence graph.
"use strict";

const RUNNING = new Set(["queued", "running"]);

function followRun(live) {
  const url = live.dataset.progressUrl;
  const poll = async () => {
    const reply = await fetch(url, {credentials: "same-origin"});
    if (!reply.ok) { setTimeout(poll, 3000); return; }
    const holder = document.createElement("div");
    holder.innerHTML = await reply.text();
    const fresh = holder.firstElementChild;
    document.getElementById("progress").replaceWith(fresh);
    if (RUNNING.has(fresh.dataset.status)) { setTimeout(poll, 1000); } else { location.reload(); }
  };
  setTimeout(poll, 1000);
}

async function showCard(url) {
  const card = document.getElementById("card");
  card.setAttribute("aria-busy", "true");
  const reply = await fetch(url, {credentials: "same-origin"});
  card.innerHTML = await reply.text();
  card.removeAttribute("aria-busy");
}

function paperPath(id) {
  // Ids such as hep-th/9901001 keep their slash: the route takes the rest of the path.
  return id.split("/").map(encodeURIComponent).join("/");
}

function select(svg, element) {
  for (const old of svg.querySelectorAll(".selected")) { old.classList.remove("selected"); }
  element.classList.add("selected");
}

// Zoom and pan move the SVG's view box; labels keep their size on screen (the CSS divides
// their font size by --zoom), and the labels that did not fit at full view appear once
// zoomed in.
const ZOOM_STEP = 1.5;
const MAX_ZOOM = 12;
const SPARE_LABELS_ZOOM = 1.8;

function viewBoxOf(svg) {
  const [x, y, w, h] = svg.getAttribute("viewBox").split(/\s+/).map(Number);
  return {x, y, w, h};
}

function setViewBox(svg, box, full) {
  const zoom = Math.min(MAX_ZOOM, Math.max(1, full.w / box.w));
  const w = full.w / zoom, h = full.h / zoom;
  const x = Math.min(Math.max(box.x, full.x), full.x + full.w - w);
  const y = Math.min(Math.max(box.y, full.y), full.y + full.h - h);
  svg.setAttribute("viewBox", `${x.toFixed(1)} ${y.toFixed(1)} ${w.toFixed(1)} ${h.toFixed(1)}`);
  svg.style.setProperty("--zoom", zoom.toFixed(3));
  svg.classList.toggle("zoomed", zoom >= SPARE_LABELS_ZOOM);
}

function zoomAt(svg, full, factor, cx, cy) {
  // (cx, cy): the drawing's point that stays where it is on screen.
  const box = viewBoxOf(svg);
  const w = box.w / factor, h = box.h / factor;
  setViewBox(svg, {x: cx - (cx - box.x) / factor, y: cy - (cy - box.y) / factor, w, h}, full);
}

function drawingPoint(svg, event) {
  const m = svg.getScreenCTM().inverse();
  return {x: event.clientX * m.a + event.clientY * m.c + m.e,
          y: event.clientX * m.b + event.clientY * m.d + m.f};
}

function wireZoom(svg) {
  const full = viewBoxOf(svg);
  const centre = () => { const b = viewBoxOf(svg); return [b.x + b.w / 2, b.y + b.h / 2]; };
  document.getElementById("zoom-in").addEventListener(
    "click", () => zoomAt(svg, full, ZOOM_STEP, ...centre()));
  document.getElementById("zoom-out").addEventListener(
    "click", () => zoomAt(svg, full, 1 / ZOOM_STEP, ...centre()));
  document.getElementById("zoom-reset").addEventListener(
    "click", () => setViewBox(svg, full, full));
  svg.addEventListener("wheel", (event) => {
    event.preventDefault();
    const p = drawingPoint(svg, event);
    zoomAt(svg, full, event.deltaY < 0 ? 1.2 : 1 / 1.2, p.x, p.y);
  }, {passive: false});
  let drag = null;
  svg.addEventListener("pointerdown", (event) => {
    if (event.button !== 0) { return; }
    drag = {start: drawingPoint(svg, event), box: viewBoxOf(svg), moved: false};
  });
  svg.addEventListener("pointermove", (event) => {
    if (!drag) { return; }
    const p = drawingPoint(svg, event);
    const dx = p.x - drag.start.x, dy = p.y - drag.start.y;
    if (!drag.moved && Math.hypot(dx, dy) < 3) { return; }
    drag.moved = true;
    const box = viewBoxOf(svg);
    setViewBox(svg, {x: box.x - dx, y: box.y - dy, w: box.w, h: box.h}, full);
  });
  const stop = (event) => {
    // A drag is not a click: the click that ends it opens no card.
    if (drag && drag.moved) { svg.dataset.dragged = "1"; }
    drag = null;
  };
  svg.addEventListener("pointerup", stop);
  svg.addEventListener("pointerleave", () => { drag = null; });
}

function byData(svg, selector, name, value) {
  return [...svg.querySelectorAll(selector)].filter((el) => el.dataset[name] === value);
}

// A result and the citation edges from its seed to it: lit up, the rest dimmed.
function lightUp(svg, id, path) {
  clearLight(svg);
  const papers = new Set([id, ...path.flat()]);
  for (const paper of papers) {
    for (const el of byData(svg, "circle.node, text.label", "id", paper)) { el.classList.add("lit"); }
  }
  const wanted = new Set(path.map(([citing, cited]) => `${citing}\u0000${cited}`));
  for (const edge of svg.querySelectorAll("path.edge")) {
    if (wanted.has(`${edge.dataset.citing}\u0000${edge.dataset.cited}`)) { edge.classList.add("lit"); }
  }
  svg.classList.add("highlighting");
}

function clearLight(svg) {
  for (const el of svg.querySelectorAll(".lit")) { el.classList.remove("lit"); }
  svg.classList.remove("highlighting");
}

function showPaper(svg, run, id) {
  showCard(`/ui/runs/${run}/papers/${paperPath(id)}`);
  const entry = [...document.querySelectorAll("#graph-results li")].find((li) => li.dataset.id === id);
  for (const old of document.querySelectorAll("#graph-results li.chosen")) { old.classList.remove("chosen"); }
  if (entry) {
    entry.classList.add("chosen");
    entry.scrollIntoView({block: "nearest"});
    lightUp(svg, id, JSON.parse(entry.dataset.path));
  } else {
    clearLight(svg);
  }
}

function wireResults(svg, run) {
  const chosen = () => document.querySelector("#graph-results li.chosen");
  for (const entry of document.querySelectorAll("#graph-results li")) {
    const light = () => lightUp(svg, entry.dataset.id, JSON.parse(entry.dataset.path));
    entry.addEventListener("mouseenter", light);
    entry.addEventListener("focus", light);
    entry.addEventListener("mouseleave", () => {
      const kept = chosen();
      if (kept) { lightUp(svg, kept.dataset.id, JSON.parse(kept.dataset.path)); } else { clearLight(svg); }
    });
    entry.addEventListener("click", () => {
      const node = byData(svg, "circle.node", "id", entry.dataset.id)[0];
      if (node) { select(svg, node); }
      showPaper(svg, run, entry.dataset.id);
    });
  }
}

function wireGraph(svg) {
  const run = svg.dataset.run;
  wireZoom(svg);
  wireResults(svg, run);
  svg.addEventListener("click", (event) => {
    if (svg.dataset.dragged) { delete svg.dataset.dragged; return; }
    const node = event.target.closest("circle.node, text.label");
    if (node) {
      const circle = byData(svg, "circle.node", "id", node.dataset.id)[0];
      select(svg, circle);
      showPaper(svg, run, node.dataset.id);
      return;
    }
    const edge = event.target.closest("path.edge");
    if (edge) {
      select(svg, edge);
      const query = new URLSearchParams({citing: edge.dataset.citing, cited: edge.dataset.cited});
      showCard(`/ui/runs/${run}/edge?${query}`);
    }
  });
  for (const flag of ["show-context", "show-pruned", "show-cut-seeds"]) {
    const box = document.getElementById(flag);
    if (box) { box.addEventListener("change", () => svg.classList.toggle(flag, box.checked)); }
  }
  // The colour the page chose (by year in the force layout, whose position shows no year).
  const colour = document.getElementById("colour-by");
  const paint = () => {
    svg.classList.toggle("colour-year", colour.value === "year");
    document.body.classList.toggle("colour-year", colour.value === "year");
  };
  paint();
  colour.addEventListener("change", paint);
  // Another layout is another page (the server lays the drawing out).
  const layout = document.getElementById("layout");
  if (layout) { layout.addEventListener("change", () => layout.form.submit()); }
  // When the drawing has been painted (two frames after the page was laid out): read by
  // the draw-time benchmark.
  requestAnimationFrame(() => requestAnimationFrame(() => {
    window.craseGraphPaintedMs = performance.now();
  }));
}

document.addEventListener("DOMContentLoaded", () => {
  const live = document.getElementById("live");
  if (live) { followRun(live); }
  const svg = document.getElementById("evidence-graph");
  if (svg) { wireGraph(svg); }
});
