/// A musical key (a pitch class, C … B) as a parameter: the `key` of the `harmony` and
/// `tune` units. A `midi.map` entry with a `keys` range sets it from a played note (the
/// note's pitch class): racks/README.md, section "MIDI". Thread: any (values).
extension ParameterSpec {
    /// The names of the twelve pitch classes, value 0 (C) … 11 (B).
    public static let pitchClassNames = ["C", "C#", "D", "Eb", "E", "F", "F#", "G", "Ab", "A", "Bb", "B"]

    /// A key parameter (a choice of the twelve pitch classes, never smoothed).
    public static func musicalKey(id: String = "key", name: String = "Key", defaultKey: Int, help: String) -> ParameterSpec {
        .choice(id: id, name: name, choices: pitchClassNames, defaultIndex: ((defaultKey % 12) + 12) % 12, help: help)
    }

    /// True for a key parameter: what a `keys` mapping may set.
    public var isMusicalKey: Bool { unit == .choice && choices == Self.pitchClassNames }
}
