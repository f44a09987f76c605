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

function wireGraph(svg) {
  const run = svg.dataset.run;
  svg.addEventListener("click", (event) => {
    const node = event.target.closest("circle.node");
    if (node) {
      select(svg, node);
      showCard(`/ui/runs/${run}/papers/${paperPath(node.dataset.id)}`);
      return;
    }
    const edge = event.target.closest("path.edge");
    if (edge) {
      select(svg, edge);
      const query = new URLSearchParams({citing: edge.dataset.citing, cited: edge.dataset.cited});
      showCard(`/ui/runs/${run}/edge?${query}`);
    }
  });
  const toggles = {"show-context": "show-context", "show-pruned": "show-pruned",
                   "show-cut-seeds": "show-cut-seeds"};
  for (const [id, flag] of Object.entries(toggles)) {
    const box = document.getElementById(id);
    box.addEventListener("change", () => svg.classList.toggle(flag, box.checked));
  }
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
