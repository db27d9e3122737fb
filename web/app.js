// StageRack's page: one WebSocket to the server that served it; the server holds the state
// (the rack's parameters, the song, the snapshot, the performance controls) and sends every
// change, from MIDI, OSC or another page. This file connects, logs in, dispatches the
// messages to the two views (performer.js, engineer.js) and wires the buttons.
// Plain JavaScript, no build step, nothing from the internet.
"use strict";

function connect() {
  const scheme = location.protocol === "https:" ? "wss://" : "ws://";
  const socket = new WebSocket(scheme + location.host + "/");
  page.socket = socket;
  socket.onopen = () => { $("link").textContent = "connected"; };
  socket.onclose = () => {
    $("link").textContent = "reconnecting…";
    page.canWrite = false;
    setTimeout(connect, 1000);
  };
  socket.onmessage = (event) => {
    let m;
    try { m = JSON.parse(event.data); } catch (e) { return; }
    receive(m);
  };
}

function receive(m) {
  const s = page.state;
  switch (m.type) {
    case "hello": {
      const token = sessionStorage.getItem("stagerack-token");
      if (token) send({ type: "resume", token: token });
      else showLogin(true);
      send({ type: "meters", on: true });
      break;
    }
    case "session":
      page.canWrite = true;
      sessionStorage.setItem("stagerack-token", m.token);
      showLogin(false);
      $("link").textContent = "connected · can change";
      document.body.classList.add("write");
      send({ type: "meters", on: true });
      break;
    case "state":
      page.state = m;
      $("rack").textContent = m.rack || "StageRack";
      renderPerformer();
      renderEngineer();
      showReadouts(m);
      lyricsForState(m);
      showSoundcheck(m.soundcheck);
      break;
    case "soundcheck": if (s) s.soundcheck = m.soundcheck; showSoundcheck(m.soundcheck); break;
    case "lyrics": receiveLyrics(m); break;
    case "mappings":
      if (s) { s.mappings = m.mappings; s.learning = m.learning; s.notice = m.notice; renderMappings(); }
      break;
    case "change": showValue(m.unit, m.param, m.value, m.text); break;
    case "perform": showControl(m.control, m.position, m.text); break;
    case "tempo": if (s) { s.tempo = m.bpm; showTempo(); } break;
    case "talk": if (s) { s.talk = m.on; showTalk(); } break;
    case "bypass": showBypass(m.unit, m.on); break;
    case "snapshot": if (s) { s.snapshot = m.name; renderSnapshots(); } break;
    case "meters": {
      const now = performance.now();
      meter("in", m.in, now);
      meter("out", m.out, now);
      showLoad(m, now);
      showMeterDetails(m);
      lyricsFollowMeters(m);
      showSongControls(m);
      if ("readouts" in m) showReadouts(m);
      // Talk as the engine has it (a MIDI button or a section may have switched it).
      if ("talk" in m && page.state && page.state.talk !== m.talk) { page.state.talk = m.talk; showTalk(); }
      if ("tempo" in m) {
        page.engineTempo = { bpm: m.tempo, source: m.tempoSource, linkPeers: m.link ? m.link.peers : null };
        if (page.state) showTempo();
      }
      break;
    }
    case "readouts": showReadouts(m); break;
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

// The performer's view first; the engineer's one tap away (remembered for this tab); the
// lyrics view (the performer's lyrics alone, large) from the Lyrics button or ?view=lyrics.
function showView(name) {
  document.body.dataset.view = name;
  $("performer").hidden = name === "engineer";
  $("engineer").hidden = name !== "engineer";
  $("view").textContent = name === "engineer" ? "Performer" : "Engineer";
  $("view").setAttribute("aria-label", "show the " + (name === "engineer" ? "performer's" : "engineer's") + " view");
  $("lyrics-view").classList.toggle("on", name === "lyrics");
  $("lyrics-view").setAttribute("aria-pressed", String(name === "lyrics"));
  sessionStorage.setItem("stagerack-view", name);
  renderLyrics();
}

$("login-form").onsubmit = (e) => {
  e.preventDefault();
  send({ type: "login", pin: $("pin").value });
  $("pin").value = "";
};
$("view").onclick = () => showView(document.body.dataset.view === "engineer" ? "performer" : "engineer");
$("lyrics-view").onclick = (e) => {
  e.preventDefault();
  showView(document.body.dataset.view === "lyrics" ? "performer" : "lyrics");
};
$("fine").onclick = () => {
  const on = document.body.classList.toggle("fine");
  $("fine").classList.toggle("on", on);
  $("fine").setAttribute("aria-pressed", String(on));
};
$("next").onclick = () => send({ type: "next" });
$("previous").onclick = () => send({ type: "previous" });
$("song").onchange = () => send({ type: "song", number: Number($("song").value) });
$("panic").onclick = () => send({ type: "panic" });
$("tap").onclick = tap;
$("talk").onclick = () => { if (page.state) send({ type: "talk", on: !page.state.talk }); };
$("next-section").onclick = () => send({ type: "section", go: "next" });
$("repeat-section").onclick = () => send({ type: "section", go: "repeat" });
$("transpose-up").onclick = () => send({ type: "transpose", go: "up" });
$("transpose-down").onclick = () => send({ type: "transpose", go: "down" });
$("save").onclick = () => send({ type: "save" });
$("save-snapshot").onclick = () => {
  const name = $("snapshot-name").value.trim();
  if (name) send({ type: "save", snapshot: name });
};
showView(new URLSearchParams(location.search).get("view") === "lyrics" ? "lyrics"
  : ["engineer", "lyrics"].includes(sessionStorage.getItem("stagerack-view")) ? sessionStorage.getItem("stagerack-view") : "performer");
connect();
