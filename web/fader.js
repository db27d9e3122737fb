// StageRack's page: a fader that never jumps. A drag moves the value by the drag, from
// wherever the finger lands (the whole width is the whole range; a quarter of that in
// fine mode); a tap alone (less than 6 px of movement) changes nothing; a vertical swipe
// scrolls the engineer's view instead. Once past 6 px the whole drag counts.
// Keyboard: arrows (fine with Shift), Page Up/Down, Home/End.
"use strict";

const DRAG_THRESHOLD_PX = 6;  // below this a touch is a tap, and a tap changes nothing
const FINE_SCALE = 0.25;

// Makes `box` a relative fader. `options`: position() → 0…1 now; move(p, final) called
// while dragging (final on release); label for assistive technology.
function makeFader(box, options) {
  box.classList.add("fader");
  box.tabIndex = 0;
  box.setAttribute("role", "slider");
  box.setAttribute("aria-valuemin", "0");
  box.setAttribute("aria-valuemax", "100");
  if (options.label) box.setAttribute("aria-label", options.label);
  const fill = el("div", "fill");
  box.appendChild(fill);
  let drag = null;

  function show(p) {
    fill.style.width = (p * 100).toFixed(2) + "%";
    box.setAttribute("aria-valuenow", String(Math.round(p * 100)));
  }

  box.addEventListener("pointerdown", (e) => {
    if (e.button !== 0) return;
    drag = { id: e.pointerId, x: e.clientX, y: e.clientY, start: options.position(), moving: false };
    box.setPointerCapture(e.pointerId);
  });
  box.addEventListener("pointermove", (e) => {
    if (!drag || e.pointerId !== drag.id) return;
    const dx = e.clientX - drag.x;
    if (!drag.moving) {
      if (Math.abs(dx) < DRAG_THRESHOLD_PX) return;  // a tap, so far: nothing moves
      drag.moving = true;
      box.classList.add("dragging");
    }
    const fine = e.shiftKey || document.body.classList.contains("fine");
    const p = Math.min(1, Math.max(0, drag.start + (dx / box.clientWidth) * (fine ? FINE_SCALE : 1)));
    show(p);
    options.move(p, false);
  });
  function end(e) {
    if (!drag || e.pointerId !== drag.id) return;
    const d = drag;
    drag = null;
    box.classList.remove("dragging");
    if (d.moving && e.type === "pointerup") {
      const fine = e.shiftKey || document.body.classList.contains("fine");
      const p = Math.min(1, Math.max(0, d.start + ((e.clientX - d.x) / box.clientWidth) * (fine ? FINE_SCALE : 1)));
      show(p);
      options.move(p, true);
    }
  }
  box.addEventListener("pointerup", end);
  box.addEventListener("pointercancel", end);
  box.addEventListener("keydown", (e) => {
    const steps = { ArrowRight: 0.01, ArrowUp: 0.01, ArrowLeft: -0.01, ArrowDown: -0.01, PageUp: 0.1, PageDown: -0.1 };
    let p = options.position();
    if (e.key === "Home") p = 0;
    else if (e.key === "End") p = 1;
    else if (e.key in steps) p += steps[e.key] * (e.shiftKey ? FINE_SCALE : 1);
    else return;
    e.preventDefault();
    p = Math.min(1, Math.max(0, p));
    show(p);
    options.move(p, true);
  });
  return { show: show, dragging: () => drag !== null && drag.moving };
}

// Calls `send` at most every `ms` milliseconds while moving, and always with the last value.
function throttled(ms, sendNow) {
  let last = 0;
  let pending = null;
  let timer = null;
  return (value, final) => {
    const now = Date.now();
    if (final || now - last >= ms) {
      clearTimeout(timer);
      timer = null;
      last = now;
      sendNow(value);
      return;
    }
    pending = value;
    if (!timer) timer = setTimeout(() => { timer = null; last = Date.now(); sendNow(pending); }, ms - (now - last));
  };
}
