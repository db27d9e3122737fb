// StageRack's page, the engineer's view (one tap from the performer's): every parameter of
// every unit, grouped per unit and collapsible; enumerations as selects, switches as
// toggles, the rest as faders that never jump; a long press on a value types one in.
// Also the MIDI mappings (learn, remove) and saving the rack or a snapshot.
"use strict";

const controls = {};           // "unit.param" -> { spec, output, input, fader }
const LONG_PRESS_MS = 500;

function renderEngineer() {
  const main = $("units");
  main.innerHTML = "";
  for (const key in controls) delete controls[key];
  for (const unit of page.state.units) main.appendChild(renderUnit(unit));
  renderMappings();
}

function renderUnit(unit) {
  const box = el("details", "unit" + (unit.bypass ? " bypassed" : ""));
  box.id = "unit-" + unit.id;
  box.open = sessionStorage.getItem("stagerack-closed-" + unit.id) === null;
  box.ontoggle = () => {
    if (box.open) sessionStorage.removeItem("stagerack-closed-" + unit.id);
    else sessionStorage.setItem("stagerack-closed-" + unit.id, "1");
  };
  const head = el("summary");
  head.appendChild(el("h2", "", unit.id + " · " + unit.type));
  if (unit.canBypass) {
    const b = el("button", unit.bypass ? "" : "on", unit.bypass ? "bypassed" : "on");
    b.id = "bypass-" + unit.id;
    b.onclick = (e) => { e.preventDefault(); send({ type: "bypass", unit: unit.id, on: !unit.bypass }); };
    head.appendChild(b);
  }
  box.appendChild(head);
  for (const p of unit.params) box.appendChild(renderParam(unit, p));
  return box;
}

function renderParam(unit, p) {
  const key = unit.id + "." + p.id;
  const row = el("div", "param");
  const label = el("label", "", p.name);
  const output = el("output", "", p.text);
  output.id = "value-" + unit.id + "-" + p.id;
  const c = { spec: p, output: output, input: null, fader: null };
  const set = (value) => send({ type: "set", unit: unit.id, param: p.id, value: value });
  if (p.choices) {
    const input = el("select");
    p.choices.forEach((name, i) => {
      const o = el("option", "", name);
      o.value = String(i);
      input.appendChild(o);
    });
    input.value = String(Math.round(p.value));
    input.onchange = () => set(Number(input.value));
    c.input = input;
  } else if (p.unit === "bool") {
    const input = el("button", "toggle" + (p.value >= 0.5 ? " on" : ""), p.value >= 0.5 ? "on" : "off");
    input.onclick = () => set(p.value >= 0.5 ? 0 : 1);
    c.input = input;
  } else {
    const input = el("div");
    const sendValue = throttled(50, set);
    c.fader = makeFader(input, {
      label: key,
      position: () => toPosition(p, p.value),
      move: (t, final) => {
        const v = fromPosition(p, t);
        p.value = v;
        output.textContent = format(p, v);
        sendValue(v, final);
      },
    });
    c.fader.show(toPosition(p, p.value));
    c.input = input;
    typeOnLongPress(output, p, set);
  }
  c.input.id = "param-" + unit.id + "-" + p.id;
  c.input.setAttribute("aria-label", key);
  const learnButton = el("button", "learn", "learn");
  learnButton.id = "learn-" + unit.id + "-" + p.id;
  learnButton.dataset.key = key;
  learnButton.setAttribute("aria-label", "MIDI learn " + key);
  learnButton.onclick = () => learn(key);
  row.appendChild(label);
  row.appendChild(output);
  row.appendChild(learnButton);
  row.appendChild(c.input);
  controls[key] = c;
  return row;
}

// A long press on a value opens a field to type one in (Enter sets it, Escape leaves).
function typeOnLongPress(output, spec, set) {
  let timer = null;
  output.title = "long press to type a value";
  output.addEventListener("pointerdown", () => { timer = setTimeout(() => { timer = null; openField(); }, LONG_PRESS_MS); });
  for (const type of ["pointerup", "pointercancel", "pointerleave"]) output.addEventListener(type, () => { clearTimeout(timer); timer = null; });
  output.addEventListener("contextmenu", (e) => e.preventDefault());
  function openField() {
    const field = el("input", "typed");
    field.type = "number";
    field.step = "any";
    field.min = String(spec.min);
    field.max = String(spec.max);
    field.value = String(Number(spec.value.toFixed(3)));
    field.setAttribute("aria-label", spec.name + " value");
    output.replaceWith(field);
    field.focus();
    field.select();
    const close = () => { if (field.isConnected) field.replaceWith(output); };
    field.onkeydown = (e) => {
      if (e.key === "Enter") {
        const v = Number(field.value);
        if (field.value !== "" && isFinite(v)) set(Math.min(spec.max, Math.max(spec.min, v)));
        close();
      } else if (e.key === "Escape") close();
    };
    field.onblur = close;
  }
}

function showValue(unitID, paramID, value, text) {
  const c = controls[unitID + "." + paramID];
  if (!c) return;
  c.output.textContent = text;
  if (c.fader) {
    if (c.fader.dragging()) return;  // the finger wins while it moves
    c.spec.value = value;
    c.fader.show(toPosition(c.spec, value));
  } else if (c.spec.choices) {
    c.spec.value = value;
    c.input.value = String(Math.round(value));
  } else {
    c.spec.value = value;
    c.input.textContent = value >= 0.5 ? "on" : "off";
    c.input.className = "toggle" + (value >= 0.5 ? " on" : "");
  }
}

function showBypass(unitID, on) {
  const unit = page.state && page.state.units.find((u) => u.id === unitID);
  if (!unit) return;
  unit.bypass = on;
  $("unit-" + unitID).classList.toggle("bypassed", on);
  const b = $("bypass-" + unitID);
  if (b) { b.textContent = on ? "bypassed" : "on"; b.className = on ? "" : "on"; }
}

// ------------------------------------------------------------------ MIDI learn, save

// The mappings of the rack (its file's, then those learned from a page, which can be
// removed), the control being learned (its "learn" button lit), and the last notice.
function renderMappings() {
  const s = page.state;
  const list = $("mappings");
  list.innerHTML = "";
  for (const m of s.mappings || []) {
    const li = el("li");
    li.appendChild(el("code", "", m.text));
    if (m.learned !== null && m.learned !== undefined) {
      const b = el("button", "unlearn", "remove");
      b.setAttribute("aria-label", "remove " + m.text);
      b.onclick = () => send({ type: "unlearn", index: m.learned });
      li.appendChild(b);
    }
    list.appendChild(li);
  }
  for (const b of document.querySelectorAll("button.learn")) {
    const on = b.dataset.key === s.learning;
    b.className = "learn" + (on ? " on" : "");
    b.textContent = on ? "move a knob…" : "learn";
  }
  $("notice").textContent = s.notice || "";
}

function learn(key) {
  if (page.state.learning === key) return send({ type: "learnCancel" });
  const dot = key.indexOf(".");
  send({ type: "learn", unit: key.slice(0, dot), param: key.slice(dot + 1) });
}

function showMeterDetails(m) {
  $("xruns").textContent = String(m.xruns);
  $("gr").textContent = m.gr.length ? "· GR " + m.gr.map((g) => g.unit + " " + Math.abs(g.dB).toFixed(1) + " dB").join(", ") : "";
  if (m.midi.length) $("midi").textContent = m.midi.slice(-4).join(" · ");
}
