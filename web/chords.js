// Chord names moved by semitones (the song's transpose, from the meters): the root and a
// slash chord's bass move, the rest of the name ("m7", "sus4", "maj7", "6/9") stays. A chord
// written with a sharp keeps sharps, one with a flat keeps flats; a natural one gets the
// usual names (C#, Eb, F#, Ab, Bb). An annotation ("*Rit.") or anything that is not a chord
// ("N.C.") is left as written. Plain JavaScript, no build step; tested in the browser by
// Tests/remote/lyrics_test.py.
"use strict";

const CHORD_NOTES = { C: 0, D: 2, E: 4, F: 5, G: 7, A: 9, B: 11 };
const CHORD_SPELLINGS = {
  "#": ["C", "C#", "D", "D#", "E", "F", "F#", "G", "G#", "A", "A#", "B"],
  "b": ["C", "Db", "D", "Eb", "E", "F", "Gb", "G", "Ab", "A", "Bb", "B"],
  "": ["C", "C#", "D", "Eb", "E", "F", "F#", "G", "Ab", "A", "Bb", "B"],
};
// Root, accidental, the rest (any "/" in it not followed by a note: "6/9"), then the bass.
const CHORD_PATTERN = /^([A-G])([#b♯♭]?)((?:[^/]|\/(?![A-G]))*)(?:\/([A-G])([#b♯♭]?))?$/;

function chordAccidental(a) { return a === "♯" ? "#" : a === "♭" ? "b" : a; }

function transposeNote(letter, accidental, semitones, spelling) {
  const a = chordAccidental(accidental);
  const pitch = CHORD_NOTES[letter] + (a === "#" ? 1 : a === "b" ? -1 : 0) + semitones;
  return CHORD_SPELLINGS[spelling][((pitch % 12) + 12) % 12];
}

function transposeChord(chord, semitones) {
  if (!semitones || !chord || chord[0] === "*") return chord;
  const m = CHORD_PATTERN.exec(chord);
  if (!m) return chord;
  const spelling = chordAccidental(m[2]);
  let out = transposeNote(m[1], m[2], semitones, spelling) + m[3];
  if (m[4]) out += "/" + transposeNote(m[4], m[5] || "", semitones, spelling || chordAccidental(m[5] || ""));
  return out;
}
