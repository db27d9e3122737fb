// StageRack's page: one WebSocket to the server that served it; the server holds the state
// (the rack's parameters, the song, the snapshot) and sends every change, from MIDI, OSC or
// another page. Plain JavaScript, no build step, nothing from the internet.
"use strict";

const $ = (id) => document.getElementById(id);
let socket = null;
let canWrite = false;
let state = null;
const controls = {};          // "unit.param" -> { input, output, spec }
const lastSent = {};          // "unit.param" -> time of the last message (throttle)
const SEND_INTERVAL_MS = 50;  // at most 20 changes a second per control

function send(message) {
  if (socket && socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(message));
}

function connect() {
  const scheme = location.protocol === "https:" ? "wss://" : "ws://";
  socket = new WebSocket(scheme + location.host + "/");
  socket.onopen = () => { $("link").textContent = "connected"; };
  socket.onclose = () => {
    $("link").textContent = "reconnecting…";
    canWrite = false;
    setTimeout(connect, 1000);
  };
  socket.onmessage = (event) => {
    let m;
    try { m = JSON.parse(event.data); } catch (e) { return; }
    receive(m);
  };
}

function receive(m) {
  switch (m.type) {
    case "hello": {
      const token = sessionStorage.getItem("stagerack-token");
      if (token) send({ type: "resume", token: token });
      else showLogin(true);
      send({ type: "meters", on: true });
      break;
    }
    case "session":
      canWrite = true;
      sessionStorage.setItem("stagerack-token", m.token);
      showLogin(false);
      $("link").textContent = "connected · can change";
      document.body.classList.add("write");
      send({ type: "meters", on: true });
      break;
    case "state": state = m; render(); break;
    case "mappings":
      if (state) { state.mappings = m.mappings; state.learning = m.learning; state.notice = m.notice; renderMappings(); }
      break;
    case "change": showValue(m.unit, m.param, m.value, m.text); break;
    case "bypass": showBypass(m.unit, m.on); break;
    case "snapshot": if (state) { state.snapshot = m.name; renderSnapshots(); } break;
    case "meters": showMeters(m); break;
    case "error":
      if (/PIN|session/.test(m.error)) {
        sessionStorage.removeItem("stagerack-token");
        showLogin(true);
        $("login-error").textContent = m.error;
      } else {
        $("message").textContent = m.error;
      }
      break;
  }
}

function showLogin(show) {
  $("login").hidden = !show;
  if (!show) $("login-error").textContent = "";
}

// ------------------------------------------------------------------ the rack

function isLog(spec) {
  return spec.min > 0 && (spec.unit === "Hz" || spec.unit === "s");
}

function toSlider(spec, value) {
  const t = isLog(spec) ? Math.log(value / spec.min) / Math.log(spec.max / spec.min) : (value - spec.min) / (spec.max - spec.min);
  return Math.round(Math.min(1, Math.max(0, t)) * 1000);
}

function fromSlider(spec, position) {
  const t = position / 1000;
  return isLog(spec) ? spec.min * Math.pow(spec.max / spec.min, t) : spec.min + t * (spec.max - spec.min);
}

function format(spec, value) {
  if (spec.choices) return spec.choices[Math.round(value)] || String(value);
  if (spec.unit === "bool") return value >= 0.5 ? "on" : "off";
  const digits = Math.abs(value) >= 100 ? 0 : Math.abs(value) >= 10 ? 1 : 2;
  const text = Number(value.toFixed(digits)).toString();
  return spec.unit ? text + " " + spec.unit : text;
}

function render() {
  $("rack").textContent = state.rack || "StageRack";
  const song = $("song");
  song.innerHTML = "";
  state.songs.forEach((name, i) => {
    const o = document.createElement("option");
    o.value = String(i + 1);
    o.textContent = (i + 1) + ". " + name;
    song.appendChild(o);
  });
  song.value = String(state.song);
  renderSnapshots();
  const main = $("units");
  main.innerHTML = "";
  for (const key in controls) delete controls[key];
  for (const unit of state.units) main.appendChild(renderUnit(unit));
  renderMappings();
}

// ------------------------------------------------------------------ MIDI learn, save

// The mappings of the rack (its file's, then those learned from a page, which can be
// removed), the control being learned (its "learn" button lit), and the last notice.
function renderMappings() {
  const list = $("mappings");
  list.innerHTML = "";
  for (const m of state.mappings || []) {
    const li = document.createElement("li");
    const text = document.createElement("code");
    text.textContent = m.text;
    li.appendChild(text);
    if (m.learned !== null && m.learned !== undefined) {
      const b = document.createElement("button");
      b.textContent = "remove";
      b.className = "unlearn";
      b.setAttribute("aria-label", "remove " + m.text);
      b.onclick = () => send({ type: "unlearn", index: m.learned });
      li.appendChild(b);
    }
    list.appendChild(li);
  }
  for (const b of document.querySelectorAll("button.learn")) {
    const on = b.dataset.key === state.learning;
    b.className = "learn" + (on ? " on" : "");
    b.textContent = on ? "move a knob…" : "learn";
  }
  $("notice").textContent = state.notice || "";
}

function learn(key) {
  if (state.learning === key) return send({ type: "learnCancel" });
  const dot = key.indexOf(".");
  send({ type: "learn", unit: key.slice(0, dot), param: key.slice(dot + 1) });
}


function renderSnapshots() {
  const box = $("snapshots");
  box.innerHTML = "";
  for (const name of state.snapshots) {
    const b = document.createElement("button");
    b.textContent = name;
    b.className = name === state.snapshot ? "on" : "";
    b.onclick = () => send({ type: "snapshot", name: name });
    box.appendChild(b);
  }
}

function renderUnit(unit) {
  const box = document.createElement("div");
  box.className = "unit" + (unit.bypass ? " bypassed" : "");
  box.id = "unit-" + unit.id;
  const head = document.createElement("header");
  const title = document.createElement("h2");
  title.textContent = unit.id + " · " + unit.type;
  head.appendChild(title);
  if (unit.canBypass) {
    const b = document.createElement("button");
    b.id = "bypass-" + unit.id;
    b.textContent = unit.bypass ? "bypassed" : "on";
    b.className = unit.bypass ? "" : "on";
    b.onclick = () => send({ type: "bypass", unit: unit.id, on: !unit.bypass });
    head.appendChild(b);
  }
  box.appendChild(head);
  for (const p of unit.params) box.appendChild(renderParam(unit, p));
  return box;
}

function renderParam(unit, p) {
  const key = unit.id + "." + p.id;
  const row = document.createElement("div");
  row.className = "param";
  const label = document.createElement("label");
  label.textContent = p.name;
  const output = document.createElement("output");
  output.id = "value-" + unit.id + "-" + p.id;
  output.textContent = p.text;
  let input;
  if (p.choices) {
    input = document.createElement("select");
    p.choices.forEach((c, i) => {
      const o = document.createElement("option");
      o.value = String(i);
      o.textContent = c;
      input.appendChild(o);
    });
    input.value = String(Math.round(p.value));
    input.onchange = () => send({ type: "set", unit: unit.id, param: p.id, value: Number(input.value) });
  } else {
    input = document.createElement("input");
    input.type = "range";
    input.min = "0";
    input.max = "1000";
    input.step = p.unit === "bool" ? "1000" : "1";
    input.value = String(toSlider(p, p.value));
    input.oninput = () => {
      const value = fromSlider(p, Number(input.value));
      output.textContent = format(p, value);
      const now = Date.now();
      if (!lastSent[key] || now - lastSent[key] >= SEND_INTERVAL_MS) {
        lastSent[key] = now;
        send({ type: "set", unit: unit.id, param: p.id, value: value });
      }
    };
    input.onchange = () => send({ type: "set", unit: unit.id, param: p.id, value: fromSlider(p, Number(input.value)) });
  }
  input.id = "param-" + unit.id + "-" + p.id;
  input.setAttribute("aria-label", key);
  label.htmlFor = input.id;
  const learnButton = document.createElement("button");
  learnButton.className = "learn";
  learnButton.id = "learn-" + unit.id + "-" + p.id;
  learnButton.dataset.key = key;
  learnButton.textContent = "learn";
  learnButton.setAttribute("aria-label", "MIDI learn " + key);
  learnButton.onclick = () => learn(key);
  row.appendChild(label);
  row.appendChild(output);
  row.appendChild(learnButton);
  row.appendChild(input);
  controls[key] = { input: input, output: output, spec: p };
  return row;
}

function showValue(unitID, paramID, value, text) {
  const c = controls[unitID + "." + paramID];
  if (!c) return;
  c.spec.value = value;
  c.output.textContent = text;
  if (document.activeElement !== c.input || c.input.tagName === "SELECT") {
    c.input.value = c.spec.choices ? String(Math.round(value)) : String(toSlider(c.spec, value));
  }
}

function showBypass(unitID, on) {
  const unit = state && state.units.find((u) => u.id === unitID);
  if (!unit) return;
  unit.bypass = on;
  $("unit-" + unitID).className = "unit" + (on ? " bypassed" : "");
  const b = $("bypass-" + unitID);
  if (b) { b.textContent = on ? "bypassed" : "on"; b.className = on ? "" : "on"; }
}

// ------------------------------------------------------------------ meters

function dB(x) { return x > 0 ? 20 * Math.log10(x) : -Infinity; }

function bar(id, fraction, text) {
  $("m-" + id).style.width = Math.round(Math.min(1, Math.max(0, fraction)) * 100) + "%";
  $("t-" + id).textContent = text;
}

function showMeters(m) {
  if (m.in === null) bar("in", 0, "no input");
  else bar("in", (dB(m.in) + 60) / 60, isFinite(dB(m.in)) ? dB(m.in).toFixed(1) + " dB" : "-inf");
  bar("out", (dB(m.out) + 60) / 60, isFinite(dB(m.out)) ? dB(m.out).toFixed(1) + " dB" : "-inf");
  bar("load", m.load, Math.round(m.load * 100) + " %");
  $("xruns").textContent = String(m.xruns);
  $("gr").textContent = m.gr.length ? "· GR " + m.gr.map((g) => g.unit + " " + Math.abs(g.dB).toFixed(1) + " dB").join(", ") : "";
  if (m.midi.length) $("midi").textContent = m.midi.slice(-4).join(" · ");
}

// ------------------------------------------------------------------ buttons

$("login-form").onsubmit = (e) => {
  e.preventDefault();
  send({ type: "login", pin: $("pin").value });
  $("pin").value = "";
};
$("next").onclick = () => send({ type: "next" });
$("previous").onclick = () => send({ type: "previous" });
$("song").onchange = () => send({ type: "song", number: Number($("song").value) });
$("panic").onclick = () => send({ type: "panic" });
$("save").onclick = () => send({ type: "save" });
$("save-snapshot").onclick = () => {
  const name = $("snapshot-name").value.trim();
  if (name) send({ type: "save", snapshot: name });
};
connect();
