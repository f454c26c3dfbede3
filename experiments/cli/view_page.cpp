#include <fraglab/cli/view_page.hpp>

#include <fraglab/runtime/output/svg_chart.hpp>

namespace fraglab::cli {
namespace {

constexpr char const* style = R"CSS(
body{font-family:sans-serif;margin:1em 2em;color:#222}
h1{font-size:20px}h2{font-size:15px;margin:0 0 4px}
#controls{position:sticky;top:0;background:#fff;padding:6px 0;border-bottom:1px solid #ddd;z-index:1}
#slider{width:60%}
#panels{display:grid;grid-template-columns:repeat(auto-fit,minmax(420px,1fr));gap:18px;margin-top:12px}
.panel{border:1px solid #ddd;padding:8px}
canvas{width:100%;display:block;margin:4px 0}
.state{font-size:12px;font-family:monospace;white-space:pre-wrap}
table{border-collapse:collapse;font-size:12px}td,th{border:1px solid #ddd;padding:2px 6px;text-align:right}td.holder{text-align:left}
.legend span{display:inline-block;width:10px;height:10px;margin:0 3px 0 10px}
.note{font-size:12px;color:#555}
#overlay{border:1px solid #ddd;padding:8px;margin-top:12px}
canvas.series,canvas.overlay{cursor:crosshair}
)CSS";

constexpr char const* script = R"JS(
"use strict";
const D = JSON.parse(document.getElementById("data").textContent);
const colors = {live: "#000000", allocated: "#ff7f0e", reserved: "#1f77b4", used: [31, 119, 180], free: [230, 230, 230]};
function size(b) {
  const u = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0, v = b;
  while (v >= 1024 && i < u.length - 1) { v /= 1024; i++; }
  return (i === 0 || v >= 10 ? v.toFixed(i === 0 ? 0 : 2) : v.toFixed(3)) + " " + u[i];
}
function canvas(parent, cls, height) {
  const c = document.createElement("canvas");
  c.className = cls;
  c.width = 800;
  c.height = height;
  parent.appendChild(c);
  return c;
}
const panels = D.policies.map((p, index) => {
  const div = document.createElement("div");
  div.className = "panel";
  div.id = "panel-" + index;
  div.dataset.policy = p.name;
  const h = document.createElement("h2");
  h.textContent = p.name + " (" + p.backend + ")";
  div.appendChild(h);
  const legend = document.createElement("div");
  legend.className = "legend note";
  legend.innerHTML = '<span style="background:#000"></span>live<span style="background:#ff7f0e"></span>allocated' +
                     '<span style="background:#1f77b4"></span>reserved, over events';
  div.appendChild(legend);
  const series = canvas(div, "series", 170);
  const mapNote = document.createElement("div");
  mapNote.className = "note";
  mapNote.textContent = "address space (regions packed, empty space between them left out) over time: blue in use, grey free";
  div.appendChild(mapNote);
  const map = canvas(div, "map", 260);
  const state = document.createElement("div");
  state.className = "state";
  div.appendChild(state);
  const peak = document.createElement("table");
  peak.className = "peak";
  div.appendChild(peak);
  document.getElementById("panels").appendChild(div);
  return {p, series, map, state, peak};
});
const lastEvent = Math.max(1, D.events);
// The events shown: all, or the window dragged out on a chart (the series hold up to 4096
// samples, each the peak of its stretch of events, so a narrower window shows more of them).
const zoom = {from: 0, to: lastEvent};
const pad = 4;
function xOf(c, e) { return pad + (c.width - 2 * pad) * (e - zoom.from) / Math.max(1, zoom.to - zoom.from); }
function eventAt(c, px) { return zoom.from + (zoom.to - zoom.from) * Math.min(1, Math.max(0, (px - pad) / (c.width - 2 * pad))); }
function visible(series) {
  // The samples in the window, and the one either side, so that lines reach the edges.
  let a = 0, b = series.length - 1;
  while (a + 1 < series.length && series[a + 1][0] <= zoom.from) a++;
  while (b > 0 && series[b - 1][0] >= zoom.to) b--;
  return series.slice(a, b + 1);
}
function lines(c, list, point, label) {
  // list: [{color, points: [[event, bytes]...]}]; the y axis from zero to the highest shown.
  const g = c.getContext("2d"), W = c.width, H = c.height;
  g.clearRect(0, 0, W, H);
  const top = Math.max(1, ...list.flatMap(l => l.points.filter(q => q[0] >= zoom.from && q[0] <= zoom.to).map(q => q[1])));
  c.dataset.top = top;
  const y = b => H - pad - (H - 2 * pad) * Math.min(b, top) / top;
  g.save();
  g.beginPath();
  g.rect(pad, 0, W - 2 * pad, H);
  g.clip();
  list.forEach(l => {
    g.strokeStyle = l.color;
    g.beginPath();
    l.points.forEach((q, i) => (i ? g.lineTo(xOf(c, q[0]), y(q[1])) : g.moveTo(xOf(c, q[0]), y(q[1]))));
    g.stroke();
  });
  const at = D.points[point];
  if (at >= zoom.from && at <= zoom.to) {
    g.strokeStyle = "#d62728";
    g.beginPath();
    g.moveTo(xOf(c, at), 0);
    g.lineTo(xOf(c, at), H);
    g.stroke();
  }
  g.restore();
  g.fillStyle = "#555";
  g.font = "22px sans-serif";  // the canvas is drawn at twice the size it is shown
  g.fillText(label + " " + size(top) + (zoom.from > 0 || zoom.to < lastEvent ? ", events " + Math.round(zoom.from) + "-" + Math.round(zoom.to) : ""), pad + 6, 24);
}
function drawSeries(v, point) {
  const shown = visible(v.p.series);
  lines(v.series, [[1, colors.live], [2, colors.allocated], [3, colors.reserved]].map(([k, color]) =>
    ({color, points: shown.map(s => [s[0], s[k]])})), point, "peak reserved");
}
function drawMap(v, point) {
  const c = v.map, g = c.getContext("2d"), W = c.width, H = c.height;
  g.clearRect(0, 0, W, H);
  const shown = v.p.states.map((s, i) => [s, i]).filter(([s]) => s.event >= zoom.from && s.event <= zoom.to);
  const n = shown.length, w = W / Math.max(1, n), space = Math.max(1, v.p.space);
  c.dataset.states = n;
  shown.forEach(([s, i], column) => {
    s.segments.forEach(([off, bytes, used]) => {
      const f = used / 100, mix = k => Math.round(colors.free[k] + (colors.used[k] - colors.free[k]) * f);
      g.fillStyle = "rgb(" + mix(0) + "," + mix(1) + "," + mix(2) + ")";
      const y0 = H * off / space, h = Math.max(1, H * bytes / space);
      g.fillRect(column * w, y0, Math.max(1, w - 1), h);
    });
    if (i === point) {
      g.strokeStyle = "#d62728";
      g.strokeRect(column * w, 0, Math.max(1, w - 1), H);
    }
  });
}
// Every policy's bytes of one kind on one chart, one colour a policy.
const palette = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"];
const overlay = document.getElementById("overlay-chart");
const metric = document.getElementById("metric");
document.getElementById("overlay-legend").innerHTML = D.policies.map((p, i) =>
  '<span style="background:' + palette[i % palette.length] + '"></span><b data-policy="' + p.name + '">' + p.name + "</b>").join("");
function drawOverlay(point) {
  const k = {live: 1, allocated: 2, reserved: 3}[metric.value];
  overlay.dataset.metric = metric.value;
  lines(overlay, D.policies.map((p, i) => ({color: palette[i % palette.length], points: visible(p.series).map(s => [s[0], s[k]])})),
        point, "peak " + metric.value);
}
// Zoom: drag across any chart; the button shows every event again.
function setZoom(from, to) {
  zoom.from = Math.max(0, Math.min(from, to));
  zoom.to = Math.min(lastEvent, Math.max(from, to));
  if (zoom.to - zoom.from < 1) { zoom.from = 0; zoom.to = lastEvent; }
  document.body.dataset.zoomFrom = Math.round(zoom.from);
  document.body.dataset.zoomTo = Math.round(zoom.to);
  document.getElementById("unzoom").disabled = zoom.from === 0 && zoom.to === lastEvent;
  draw();
}
function zoomable(c) {
  let start = null;
  const px = ev => (ev.offsetX / c.clientWidth) * c.width;
  c.addEventListener("mousedown", ev => { start = eventAt(c, px(ev)); });
  c.addEventListener("mouseup", ev => {
    if (start === null) return;
    const end = eventAt(c, px(ev));
    if (Math.abs(px(ev) - xOf(c, start)) > 8) setZoom(start, end);
    start = null;
  });
}
function showState(v, point) {
  const s = v.p.states[point];
  v.state.dataset.event = s.event;
  v.state.dataset.chunks = s.chunks;
  v.state.dataset.largestFree = s.largest_free;
  let text = "event " + s.event + " of " + D.events + (s.event === v.p.peak_event ? " (its peak of reserved bytes)" : "") + "\n" +
             s.chunks + " chunks, " + s.free_chunks + " free; largest free " + size(s.largest_free) + "; free " +
             size(s.free_bytes) + " of " + size(s.reserved) + " reserved\n" + s.region_count + " regions, the largest: ";
  text += s.regions.slice(0, 6).map(([bytes, free]) => size(bytes) + " (" + size(free) + " free)").join(", ") +
          (s.region_count > 6 ? ", ..." : "");
  v.state.textContent = text;
}
// Built as text nodes, never as HTML: a call site is the recording's text (`<lambda>`, paths).
function showPeak(v) {
  const side = b => (b === null ? "region's end" : !b[2] ? "free " + size(b[0]) :
                     "live " + size(b[0]) + " (asked " + size(b[1]) + ")" + (b[3] ? " from " + D.sites[b[3]] : ""));
  const cell = (row, tag, text, cls) => {
    const c = document.createElement(tag);
    c.textContent = text;
    if (cls) c.className = cls;
    row.appendChild(c);
  };
  v.peak.replaceChildren();
  const caption = v.peak.createCaption();
  caption.className = "note";
  caption.textContent = "at its peak (event " + v.p.peak_event + "): the largest free chunks and the blocks that hold them in place" +
                        (D.sites.length > 1 ? ", with the call sites that allocated them" : "");
  const head = v.peak.insertRow();
  ["address", "free", "before it", "after it"].forEach(h => cell(head, "th", h));
  v.p.peak_free.forEach(([addr, bytes, before, after]) => {
    const row = v.peak.insertRow();
    cell(row, "td", addr.toString(16));
    cell(row, "td", size(bytes));
    cell(row, "td", side(before), "holder");
    cell(row, "td", side(after), "holder");
  });
}
const slider = document.getElementById("slider");
slider.max = D.points.length - 1;
// A page that explains a moment (fraglab explain) opens at it.
const explained = document.getElementById("explain");
if (explained) slider.value = Math.max(0, D.points.indexOf(Number(explained.dataset.event)));
function draw() {
  const point = Number(slider.value);
  document.getElementById("at").textContent = "event " + D.points[point] + " of " + D.events;
  drawOverlay(point);
  panels.forEach(v => { drawSeries(v, point); drawMap(v, point); showState(v, point); });
}
panels.forEach(showPeak);
slider.addEventListener("input", draw);
metric.addEventListener("change", draw);
document.getElementById("unzoom").addEventListener("click", () => setZoom(0, lastEvent));
[overlay, ...panels.map(v => v.series)].forEach(zoomable);
setZoom(0, lastEvent);
)JS";

}  // namespace

std::string view_page(std::string const& data, std::string const& made_by, std::string const& preface)
{
  return std::string("<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>fraglab view</title><style>") + style +
         "</style></head><body>\n<h1>fraglab view</h1>\n<p class=\"note\">" + svg::escaped(made_by) + "</p>\n" + preface +
         "<div id=\"controls\"><input id=\"slider\" type=\"range\" min=\"0\" max=\"0\" value=\"0\"> <span id=\"at\"></span> "
         "<button id=\"unzoom\" disabled>every event</button> <span class=\"note\">drag across a chart to zoom into those events</span></div>\n"
         "<div id=\"overlay\"><h2>every policy, overlaid: <select id=\"metric\"><option value=\"reserved\">reserved</option>"
         "<option value=\"allocated\">allocated</option><option value=\"live\">live</option></select> bytes over events</h2>"
         "<div id=\"overlay-legend\" class=\"legend note\"></div><canvas id=\"overlay-chart\" class=\"overlay\" width=\"1600\" height=\"220\"></canvas></div>\n"
         "<div id=\"panels\"></div>\n<script id=\"data\" type=\"application/json\">" + data + "</script>\n<script>" + script +
         "</script>\n</body></html>\n";
}

}  // namespace fraglab::cli
