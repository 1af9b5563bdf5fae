// The GPU map: reads /api/v1/gpumap every few seconds and draws it. Every text from the cluster
// goes in through textContent, never as HTML.
"use strict";

const REFRESH_MS = 5000;
// A bearer token may be given in the page's fragment (#token=...); it is sent to the API only.
const token = new URLSearchParams(location.hash.slice(1)).get("token");

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = String(text);
  return e;
}

// colour gives each application a stable colour from its id: successive applications are a
// golden angle apart on the colour wheel, so that neighbours never look alike.
function colour(id) {
  const m = /_(\d+)_(\d+)$/.exec(id);
  let hue = 0;
  if (m) {
    hue = (Number(m[2]) * 137.508 + Number(m[1]) % 360) % 360;
  } else {
    for (const c of id) hue = (Math.imul(hue ^ c.charCodeAt(0), 16777619) >>> 0);
    hue %= 360;
  }
  return "hsl(" + hue.toFixed(0) + ", 62%, 45%)";
}

function seq(id) {
  const m = /_(\d+)$/.exec(id);
  return m ? String(Number(m[1])) : "?";
}

function drawNodes(map) {
  const body = document.querySelector("#nodes tbody");
  body.replaceChildren();
  let total = 0, used = 0;
  for (const n of map.nodes) {
    total += n.total; used += n.used;
    const tr = el("tr");
    tr.dataset.node = n.id;
    tr.append(el("td", "id", n.id), el("td", "state", n.state + (n.partition ? " · " + n.partition : "")), el("td", "state", n.rack));
    const td = el("td");
    const cells = el("div", "cells");
    n.devices.forEach((holder, i) => {
      const c = el("span", "cell");
      c.dataset.device = String(i);
      if (holder === "") { c.classList.add("free"); c.textContent = String(i); c.title = "free"; }
      else if (holder === "?") { c.classList.add("unknown"); c.textContent = "?"; c.title = "used"; }
      else { c.style.background = colour(holder); c.textContent = seq(holder); c.title = holder; c.dataset.app = holder; }
      cells.append(c);
    });
    td.append(cells);
    tr.append(td, el("td", "state", n.used + "/" + n.total + " used"));
    body.append(tr);
  }
  document.getElementById("node-summary").textContent =
    map.nodes.length + " nodes · " + used + " of " + total + " " + map.resource + " used";
}

function drawQueues(map) {
  const box = document.getElementById("queues");
  box.replaceChildren();
  for (const q of map.queues) {
    const row = el("div", "queue");
    row.append(el("span", "name", q.path));
    const bar = el("span", "bar");
    const fill = el("span");
    const max = q.max > 0 ? q.max : Math.max(q.used, 1);
    fill.style.width = Math.min(100, 100 * q.used / max) + "%";
    bar.append(fill);
    row.append(bar, el("span", "", " " + q.used + (q.max >= 0 ? " / " + q.max : "") + " " + map.resource +
      (q.pending > 0 ? " · " + q.pending + " pending" : "")));
    box.append(row);
  }
}

function drawApps(map) {
  const body = document.querySelector("#apps tbody");
  body.replaceChildren();
  for (const a of map.apps) {
    const tr = el("tr");
    tr.dataset.app = a.id;
    const sw = el("span", "swatch");
    sw.style.background = colour(a.id);
    const td0 = el("td");
    td0.append(sw);
    tr.append(td0, el("td", "", a.id + (a.name ? " (" + a.name + ")" : "")), el("td", "", a.user), el("td", "", a.queue),
      el("td", "", a.state), el("td", "", a.held), el("td", "", a.pending), el("td", "why", a.why || ""));
    body.append(tr);
  }
}

async function refresh() {
  const status = document.getElementById("status");
  try {
    const headers = token ? { Authorization: "Bearer " + token } : {};
    const resp = await fetch("/api/v1/gpumap", { headers, cache: "no-store" });
    const body = await resp.json();
    if (!resp.ok) throw new Error(body.error || resp.statusText);
    drawNodes(body); drawQueues(body); drawApps(body);
    const age = resp.headers.get("Age") || "0";
    status.textContent = "data " + age + " s old · " + new Date().toLocaleTimeString();
    status.className = "status" + (Number(age) > 60 ? " stale" : "");
    document.body.dataset.loaded = "true";
  } catch (e) {
    status.textContent = "error: " + e.message;
    status.className = "status stale";
  }
}

refresh();
setInterval(refresh, REFRESH_MS);
