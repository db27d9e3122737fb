// The song's lyrics on the page: the section playing (from the meters' `sectionIndex`)
// in large type with its chords above the words, transposed by the meters' `transpose`
// (semitones, 0 when missing), and the first lines of the next section under it. In the
// performer's view a panel under the key and tempo; the lyrics view (the Lyrics button, or
// the address ending ?view=lyrics) shows it alone, large and high-contrast, for a tablet on
// a stand. The lyrics come as one message after the state (the server sends it on connect
// and on a song change); a song without sections shows all its lyrics. Lines that carry a
// time in the song's track (`[1:23.5]` in the ChordPro file) follow the track: the line
// being sung (the last whose time the meters' `trackTime` has reached) is lit.
"use strict";

const lyrics = { data: null, index: null, transpose: 0, shownAt: 0, trackTime: null };
const LYRICS_NEXT_LINES = 2;

// The state arrived: a new song's lyrics follow it (or none do).
function lyricsForState(m) {
  if (lyrics.data && lyrics.data.song !== m.song) { lyrics.data = null; lyrics.index = null; renderLyrics(); }
}

function receiveLyrics(m) {
  lyrics.data = m;
  renderLyrics();
}

// The meters: the section playing and the transpose; a change redraws.
function lyricsFollowMeters(m) {
  const index = typeof m.sectionIndex === "number" ? m.sectionIndex : null;
  const transpose = typeof m.transpose === "number" ? m.transpose : 0;
  lyrics.trackTime = typeof m.trackTime === "number" ? m.trackTime : null;
  if (index !== lyrics.index || transpose !== lyrics.transpose) {
    lyrics.index = index;
    lyrics.transpose = transpose;
    renderLyrics();
  }
  lightTimedLine();
}

// The timed line being sung, lit (`sung`); the lyrics box says which (data-line: its
// index among the timed lines shown, "" for none).
function lightTimedLine() {
  const t = lyrics.trackTime;
  let lit = null;
  const timed = $("lyrics-now").querySelectorAll("[data-time]");
  timed.forEach((row, i) => { if (t !== null && Number(row.dataset.time) <= t) lit = i; });
  timed.forEach((row, i) => row.classList.toggle("sung", i === lit));
  $("lyrics").dataset.line = lit === null ? "" : String(lit);
}

function lyricsBlock(sectionIndex) {
  const d = lyrics.data;
  if (sectionIndex === null || sectionIndex < 0 || sectionIndex >= d.sections.length) return null;
  const b = d.sections[sectionIndex];
  return b === null || b === undefined ? null : d.blocks[b];
}

function renderLyrics() {
  const d = lyrics.data;
  const has = !!(d && d.blocks.length);
  $("lyrics").hidden = !has;
  $("lyrics-view").hidden = !has && document.body.dataset.view !== "lyrics";
  if (!has) return;
  const now = $("lyrics-now");
  const next = $("lyrics-next");
  now.innerHTML = "";
  next.innerHTML = "";
  if (d.sections.length === 0) {  // no sections: the whole song
    $("lyrics-section").textContent = d.title || "";
    d.blocks.forEach((b) => b.lines.forEach((line) => now.appendChild(lyricLine(line))));
    $("lyrics-next-label").textContent = "";
  } else {
    const i = lyrics.index;
    const current = lyricsBlock(i);
    $("lyrics-section").textContent = i === null ? (d.title || "") : sectionTitle(i, current);
    if (current) current.lines.forEach((line) => now.appendChild(lyricLine(line)));
    const n = i === null ? 0 : i + 1;
    const coming = n < d.sections.length ? lyricsBlock(n) : null;
    $("lyrics-next-label").textContent = n < d.sections.length ? "next: " + sectionTitle(n, coming) : "";
    if (coming) coming.lines.slice(0, LYRICS_NEXT_LINES).forEach((line) => next.appendChild(lyricLine(line)));
  }
  $("lyrics").dataset.section = lyrics.index === null ? "" : String(lyrics.index);
  $("lyrics").dataset.transpose = String(lyrics.transpose);
  lyrics.shownAt = Date.now();
  lightTimedLine();
}

function sectionTitle(i, block) {
  const name = lyrics.data.names[i] || "";
  return block && block.label && block.label.toLowerCase() !== name.toLowerCase() ? name + " · " + block.label : name;
}

// One line: [chord, words] segments, each a column with the chord above its words (no
// chord row when the line has no chords); a timed line ({time, words}) the same, with its
// time; or a comment.
function lyricLine(line) {
  if (!Array.isArray(line) && Array.isArray(line.words)) {
    const row = lyricLine(line.words);
    row.dataset.time = String(line.time);
    return row;
  }
  if (!Array.isArray(line)) return el("div", "lyric-comment", line.comment || "");
  const row = el("div", "lyric-line");
  const chords = line.some((s) => s[0] !== "");
  if (!chords) row.classList.add("no-chords");
  for (const [chord, words] of line) {
    const seg = el("span", "seg");
    if (chords) seg.appendChild(el("span", chord[0] === "*" ? "chord note" : "chord", chord[0] === "*" ? chord.slice(1) : transposeChord(chord, lyrics.transpose)));
    seg.appendChild(el("span", "words", words === "" ? "\u00a0" : words));
    row.appendChild(seg);
  }
  return row;
}
