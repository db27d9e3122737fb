/// The music a harmony voice needs: scales by name, the nearest scale note, steps within a
/// scale, chord tones above and below a sung note, and just intonation. Pitch-class sets
/// are 12-bit masks (bit 0 = the key's or the chord's C). Pure functions on integers, so the
/// render thread may call them. Thread: any.
enum HarmonyTheory {
    /// Scale names (rack files) and their pitch classes above the key.
    static let scales: [(name: String, steps: [Int])] = [
        ("major", [0, 2, 4, 5, 7, 9, 11]),
        ("naturalMinor", [0, 2, 3, 5, 7, 8, 10]),
        ("harmonicMinor", [0, 2, 3, 5, 7, 8, 11]),
        ("melodicMinor", [0, 2, 3, 5, 7, 9, 11]),
        ("ionian", [0, 2, 4, 5, 7, 9, 11]),
        ("dorian", [0, 2, 3, 5, 7, 9, 10]),
        ("phrygian", [0, 1, 3, 5, 7, 8, 10]),
        ("lydian", [0, 2, 4, 6, 7, 9, 11]),
        ("mixolydian", [0, 2, 4, 5, 7, 9, 10]),
        ("aeolian", [0, 2, 3, 5, 7, 8, 10]),
        ("locrian", [0, 1, 3, 5, 6, 8, 10]),
        ("majorPentatonic", [0, 2, 4, 7, 9]),
        ("minorPentatonic", [0, 3, 5, 7, 10]),
        ("chromatic", Array(0..<12)),
    ]

    static var scaleNames: [String] { scales.map(\.name) }

    /// The pitch-class mask of scale `name` in key `key` (0 = C … 11 = B), or nil.
    static func scaleMask(_ name: String, key: Int) -> UInt16? {
        guard let s = scales.first(where: { $0.name == name }) else { return nil }
        var mask: UInt16 = 0
        for step in s.steps { mask |= 1 << UInt16((step + key) % 12) }
        return mask
    }

    /// `mask` moved up by `semitones` (a scale in another key).
    static func transpose(_ mask: UInt16, by semitones: Int) -> UInt16 {
        let k = UInt16(((semitones % 12) + 12) % 12)
        return ((mask << k) | (mask >> (12 - k))) & 0xFFF
    }

    @inline(__always)
    static func contains(_ mask: UInt16, _ note: Int) -> Bool {
        mask & (1 << UInt16(((note % 12) + 12) % 12)) != 0
    }

    /// The scale note nearest to `note` (a tie takes the lower one).
    static func nearestScaleNote(_ note: Int, mask: UInt16) -> Int {
        guard mask != 0 else { return note }
        for d in 0...6 {
            if contains(mask, note - d) { return note - d }
            if contains(mask, note + d) { return note + d }
        }
        return note
    }

    /// The scale note `steps` scale degrees from `note` (which is on the scale): positive
    /// up, negative down.
    static func scaleStep(_ note: Int, steps: Int, mask: UInt16) -> Int {
        guard mask != 0 else { return note }
        var n = note
        var left = abs(steps)
        let direction = steps > 0 ? 1 : -1
        while left > 0 {
            n += direction
            if contains(mask, n) { left -= 1 }
        }
        return n
    }

    /// Scale degrees a musician's interval number moves: 1 (unison) 0, 3 (a third above)
    /// 2, −3 (a third below) −2, 8 (an octave) 7. 0 and −1 are unison too.
    static func scaleSteps(interval: Int) -> Int {
        interval > 0 ? interval - 1 : interval < -1 ? interval + 1 : 0
    }

    /// The `rank`-th chord tone (1 or 2) strictly above (`up`) or below `note`, whose
    /// pitch classes are `chord`; nil for an empty chord.
    static func chordTone(from note: Int, chord: UInt16, up: Bool, rank: Int) -> Int? {
        guard chord != 0 else { return nil }
        var found = 0
        var n = note
        for _ in 0..<48 {
            n += up ? 1 : -1
            if contains(chord, n) {
                found += 1
                if found == rank { return n }
            }
        }
        return nil
    }

    /// Cents from equal temperament to just intonation for an interval of `semitones`
    /// above the root (5-limit: 16/15, 9/8, 6/5, 5/4, 4/3, 45/32, 3/2, 8/5, 5/3, 16/9, 15/8).
    static let justCents: [Double] = [
        0, 11.73, 3.91, 15.64, -13.69, -1.96, -9.78, 1.96, 13.69, -15.64, -3.91, -11.73,
    ]

    @inline(__always)
    static func justOffset(note: Int, root: Int) -> Double {
        justCents[(((note - root) % 12) + 12) % 12] / 100
    }
}
