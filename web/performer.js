// StageRack's page, the performer's view (the first screen after the PIN): the song, large,
// and the next one; ◀ ▶; the rack's performance controls as large labelled faders and
// toggles; meters with a dB scale and a clip hold; one small load/xrun indicator; key,
// tempo and a tap button; the players' and loopers' transport; the song's snapshots as
// buttons; panic (in the header).
"use strict";

const performer = { faders: [], taps: [], clipUntil: { in: 0, out: 0 }, peak: { in: null, out: null }, xruns: null, xrunAt: -Infinity };
const CLIP_HOLD_MS = 2000;
const PEAK_HOLD_MS = 1500;

function renderPerformer() {
  const s = page.state;
  const song = $("song");
  song.innerHTML = "";
  s.songs.forEach((name, i) => {
    const o = el("option", "", (i + 1) + ". " + name);
    o.value = String(i + 1);
    song.appendChild(o);
  });
  song.value = String(s.song);
  $("song-name").textContent = s.songs[s.song - 1] || s.rack || "";
  $("song-number").textContent = s.songs.length > 1 ? s.song + "/" + s.songs.length : "";
  $("next-song").textContent = s.song < s.songs.length ? "next: " + s.songs[s.song] : "last song";
  renderSnapshots();
  renderControls();
  renderTransport();
  showTempo();
  showTalk();
}

// The song's sections and transpose, from the meters (each only when the song has it): the
// section playing and the next, buttons to move on or vamp (from the next bar line), the
// song's transpose and a semitone down or up (at the next section or at once, as the song
// says).
function showSongControls(m) {
  const sections = m.section != null || m.nextSection != null;
  const transposes = typeof m.transpose === "number";
  for (const id of ["section", "repeat-section", "next-section"]) $(id).hidden = !sections;
  for (const id of ["transpose", "transpose-down", "transpose-up"]) $(id).hidden = !transposes;
  $("song-controls").hidden = !sections && !transposes;
  if (sections) $("section").textContent = (m.section || "–") + (m.nextSection ? " → " + m.nextSection : "");
  if (transposes) $("transpose").textContent = "key " + (m.transpose > 0 ? "+" : "") + m.transpose;
  $("song-controls").dataset.transpose = transposes ? String(m.transpose) : "";
}

// Talk (between songs: the effects off the voice, the strip kept): lit while on.
function showTalk() {
  const on = !!page.state.talk;
  $("talk").classList.toggle("on", on);
  $("talk").setAttribute("aria-pressed", String(on));
}

// The transport of the rack's players and loopers: one row of buttons per unit (the
// one-button modes `toggle` and `cycle`, meant for a foot switch, left out).
function renderTransport() {
  const box = $("transport");
  box.innerHTML = "";
  for (const t of page.state.transport || []) {
    const row = el("div", "transport-row");
    row.appendChild(el("span", "transport-unit", t.unit));
    for (const name of t.commands) {
      if (name === "toggle" || name === "cycle") continue;
      const b = el("button", "", name);
      b.id = "command-" + t.unit + "-" + name.replace(/\W+/g, "-");
      b.onclick = () => send({ type: "command", unit: t.unit, command: name });
      row.appendChild(b);
    }
    box.appendChild(row);
  }
  box.hidden = box.children.length === 0;
}

function renderSnapshots() {
  const box = $("snapshots");
  box.innerHTML = "";
  for (const name of page.state.snapshots) {
    const b = el("button", name === page.state.snapshot ? "on" : "", name);
    b.onclick = () => send({ type: "snapshot", name: name });
    box.appendChild(b);
  }
  box.hidden = page.state.snapshots.length === 0;
}

function renderControls() {
  const box = $("controls");
  box.innerHTML = "";
  performer.faders = [];
  (page.state.performance || []).forEach((c, i) => {
    const item = el("div", "control kind-" + c.kind);
    item.id = "control-" + i;
    const head = el("div", "control-head");
    head.appendChild(el("span", "control-label", c.label));
    const value = el("output", "control-value", c.text);
    value.id = "control-value-" + i;
    head.appendChild(value);
    item.appendChild(head);
    if (c.kind === "toggle") {
      const b = el("button", "toggle" + (c.position >= 0.5 ? " on" : ""), c.position >= 0.5 ? "on" : "off");
      b.id = "control-input-" + i;
      b.setAttribute("aria-pressed", String(c.position >= 0.5));
      b.setAttribute("aria-label", c.label);
      b.onclick = () => send({ type: "perform", control: i, value: c.position >= 0.5 ? 0 : 1 });
      item.appendChild(b);
      head.removeChild(value);
    } else if (c.kind === "choice") {
      const row = el("div", "choices");
      c.choices.forEach((name, k) => {
        const b = el("button", Math.round(c.position) === k ? "on" : "", name);
        b.onclick = () => send({ type: "perform", control: i, value: k });
        row.appendChild(b);
      });
      item.appendChild(row);
    } else {
      const box2 = el("div");
      box2.id = "control-input-" + i;
      const sendPosition = throttled(50, (p) => send({ type: "perform", control: i, value: p }));
      const f = makeFader(box2, {
        label: c.label,
        position: () => c.position,
        move: (p, final) => { c.position = p; sendPosition(p, final); },
      });
      f.show(c.position);
      performer.faders[i] = f;
      item.appendChild(box2);
    }
    box.appendChild(item);
  });
}

// A control moved (here, on another page, by MIDI or OSC).
function showControl(i, position, text) {
  const c = page.state && page.state.performance && page.state.performance[i];
  if (!c) return;
  const f = performer.faders[i];
  if (f && f.dragging()) { $("control-value-" + i).textContent = text; return; }  // the finger wins while it moves
  c.position = position;
  c.text = text;
  if (c.kind === "toggle") {
    const b = $("control-input-" + i);
    b.textContent = position >= 0.5 ? "on" : "off";
    b.className = "toggle" + (position >= 0.5 ? " on" : "");
    b.setAttribute("aria-pressed", String(position >= 0.5));
  } else if (c.kind === "choice") {
    $("control-" + i).querySelectorAll(".choices button").forEach((b, k) => { b.className = Math.round(position) === k ? "on" : ""; });
  } else {
    $("control-value-" + i).textContent = text;
    if (f) f.show(position);
  }
}

// The tempo the engine follows when the meters carry it (MIDI clock outranks a tap, the
// song's own tempo comes after both); else the rack's, or the last one tapped here.
function showTempo() {
  const s = page.state;
  const now = performance.now();
  if (performer.taps.length === 1 && now - performer.taps[0] < 3000) return;  // "tap…" stays
  const engine = page.engineTempo;
  const bpm = engine ? engine.bpm : s.tempo;
  $("tempo").textContent = bpm ? (Math.round(bpm * 10) / 10) + " BPM" : "";
  $("tempo").title = engine && engine.source ? "tempo from " + engine.source : "";
  // With `play --link`: the session's peers beside the tempo (Link, the band's shared tempo).
  if (engine && engine.linkPeers !== null && engine.linkPeers !== undefined) {
    $("tempo").textContent += " · Link " + engine.linkPeers + (engine.linkPeers === 1 ? " peer" : " peers");
  }
  $("key").textContent = s.key || "";
  $("key").hidden = !s.key;
}

// Tap tempo: the average of the last taps (at most 4 intervals, each 0.15…3 s).
function tap() {
  const now = performance.now();
  const taps = performer.taps.filter((t) => now - t < 3000);
  taps.push(now);
  performer.taps = taps.slice(-5);
  if (performer.taps.length < 2) { $("tempo").textContent = "tap…"; return; }
  const first = performer.taps[0];
  const bpm = 60000 / ((now - first) / (performer.taps.length - 1));
  if (bpm >= 20 && bpm <= 400) send({ type: "tempo", bpm: Math.round(bpm * 10) / 10 });
}

// ------------------------------------------------------------------ meters

function meter(id, linear, now) {
  const bar = $("m-" + id);
  const text = $("t-" + id);
  if (linear === null) { bar.style.width = "0"; text.textContent = "no input"; return; }
  const level = dB(linear);
  bar.style.width = (meterFraction(level) * 100).toFixed(1) + "%";
  bar.className = "level " + levelClass(level);
  const peak = performer.peak[id];
  if (!peak || level >= peak.level || now > peak.until) performer.peak[id] = { level: level, until: now + PEAK_HOLD_MS };
  $("p-" + id).style.left = (meterFraction(performer.peak[id].level) * 100).toFixed(1) + "%";
  if (level >= -0.1) performer.clipUntil[id] = now + CLIP_HOLD_MS;
  $("c-" + id).classList.toggle("lit", now < performer.clipUntil[id]);
  text.textContent = isFinite(level) ? level.toFixed(1) : "-inf";
}

// Load and xruns as one small indicator: red only when it matters (render load above
// 80 %, or an xrun in the last 10 s), amber from 60 %.
function showLoad(m, now) {
  if (performer.xruns !== null && m.xruns > performer.xruns) performer.xrunAt = now;
  performer.xruns = m.xruns;
  const box = $("load");
  const recentXrun = now - performer.xrunAt < 10000;
  box.className = m.load > 0.8 || recentXrun ? "bad" : m.load > 0.6 ? "warn" : "ok";
  box.textContent = "DSP " + Math.round(m.load * 100) + "%" + (m.xruns ? " · " + m.xruns + " xrun" + (m.xruns === 1 ? "" : "s") : "");
  box.title = "render load " + Math.round(m.load * 100) + " %, xruns " + m.xruns;
}

// Readouts (a tuner's, say) when the state or the meters carry a `readouts` field: shown
// as text; hidden when there is none.
function showReadouts(m) {
  const r = $("readouts");
  if (m.readouts === undefined || m.readouts === null) { r.hidden = true; return; }
  const text = typeof m.readouts === "string" ? m.readouts
    : Array.isArray(m.readouts) ? m.readouts.map((x) => typeof x === "string" ? x : x.text || JSON.stringify(x)).join(" · ")
    : Object.keys(m.readouts).map((k) => k + " " + m.readouts[k]).join(" · ");
  r.textContent = text;
  r.hidden = text === "";
}
