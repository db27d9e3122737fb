// StageRack's page, the guided soundcheck (engineer's view): "Soundcheck" starts one on the
// running show; the server records the live input and every page shows the guide (stay
// quiet, then sing and speak at show level, counted down), then the proposed values with
// Apply (set now and written into the rack file) and Cancel. Only a page with the PIN
// sees the buttons; the server refuses the commands from any other.
"use strict";

function showSoundcheck(sc) {
  const guide = $("soundcheck-guide");
  const table = $("soundcheck-values");
  const actions = $("soundcheck-actions");
  $("soundcheck").disabled = !!sc && sc.step !== "proposal" && sc.step !== "refused";
  table.hidden = true;
  actions.hidden = true;
  guide.dataset.step = sc ? sc.step : "";
  if (!sc) { guide.textContent = ""; return; }
  actions.hidden = false;  // Cancel stops the take, or dismisses what it gave
  $("soundcheck-apply").hidden = sc.step !== "proposal";
  const peak = sc.peak === null || sc.peak === undefined ? "" : " · input peak " + sc.peak + " dBFS";
  switch (sc.step) {
    case "quiet": guide.textContent = "Stay quiet: " + sc.secondsLeft + " s" + peak; break;
    case "sing": guide.textContent = "Sing and speak at show level (loud phrases, soft words, s and sh): " + sc.secondsLeft + " s" + peak; break;
    case "analysing": guide.textContent = "Listening to the take…"; break;
    case "refused": guide.textContent = "No proposal: " + sc.message; break;
    case "proposal": {
      guide.textContent = sc.summary + (sc.notes.length ? " · " + sc.notes.join(" · ") : "");
      table.innerHTML = "";
      for (const v of sc.values) {
        const row = el("tr");
        row.dataset.target = v.target;
        row.appendChild(el("th", "", v.target));
        row.appendChild(el("td", "value", v.text));
        row.appendChild(el("td", "small", v.reason));
        table.appendChild(row);
      }
      table.hidden = false;
      break;
    }
  }
}

$("soundcheck").onclick = () => send({ type: "soundcheck", go: "start" });
$("soundcheck-apply").onclick = () => send({ type: "soundcheck", go: "apply" });
$("soundcheck-cancel").onclick = () => send({ type: "soundcheck", go: "cancel" });
