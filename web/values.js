// StageRack's page, shared helpers: the socket, values as text, the sliders' mapping
// between a parameter's value and a position 0…1, decibels and the meters' colours.
// Plain JavaScript, no build step; loaded first (index.html).
"use strict";

const $ = (id) => document.getElementById(id);
const page = { socket: null, canWrite: false, state: null, engineTempo: null };

function send(message) {
  if (page.socket && page.socket.readyState === WebSocket.OPEN) page.socket.send(JSON.stringify(message));
}

function el(tag, className, text) {
  const e = document.createElement(tag);
  if (className) e.className = className;
  if (text !== undefined) e.textContent = text;
  return e;
}

function isLog(spec) {
  return spec.min > 0 && (spec.unit === "Hz" || spec.unit === "s");
}

// A parameter's value as a position 0…1 of its slider (log for Hz and seconds), and back.
function toPosition(spec, value) {
  const t = isLog(spec) ? Math.log(value / spec.min) / Math.log(spec.max / spec.min) : (value - spec.min) / (spec.max - spec.min);
  return Math.min(1, Math.max(0, isFinite(t) ? t : 0));
}

function fromPosition(spec, t) {
  return isLog(spec) ? spec.min * Math.pow(spec.max / spec.min, t) : spec.min + t * (spec.max - spec.min);
}

function format(spec, value) {
  if (spec.choices) return spec.choices[Math.round(value)] || String(value);
  if (spec.unit === "bool") return value >= 0.5 ? "on" : "off";
  const digits = Math.abs(value) >= 100 ? 0 : Math.abs(value) >= 10 ? 1 : 2;
  const text = Number(value.toFixed(digits)).toString();
  return spec.unit ? text + " " + spec.unit : text;
}

function dB(x) { return x > 0 ? 20 * Math.log10(x) : -Infinity; }

// The meters' scale: −60 dBFS at the left, 0 at the right.
const METER_FLOOR_DB = -60;
function meterFraction(level) { return Math.min(1, Math.max(0, (level - METER_FLOOR_DB) / -METER_FLOOR_DB)); }

// The colour of a whole bar by its level: green, then yellow from −18 dBFS, orange from
// −6, red only from −1 (near clipping), never a gradient that is red at the tip.
function levelClass(level) {
  if (level >= -1) return "hot";
  if (level >= -6) return "loud";
  if (level >= -18) return "good";
  return "low";
}
