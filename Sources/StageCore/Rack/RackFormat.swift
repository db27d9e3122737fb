/// The versions of the rack file format this program reads. Thread: any (constants).
///
/// - 1: the first format. A synth's `program` setting counts 0…127 (FluidSynth's and the
///   MIDI byte's numbering), unlike setlist and snapshot programs (1…128).
/// - 2: every program number counts 1…128, as controllers and General MIDI lists print
///   them. Nothing else differs.
///
/// A format 1 file keeps its meaning: `program: 0` there is `program: 1` in format 2.
public enum RackFormat {
    public static let original = 1
    public static let current = 2
    public static let supported = original...current

    /// The range a synth `program` setting is written in, in a file of `format`.
    public static func programRange(_ format: Int) -> ClosedRange<Int> { format >= 2 ? 1...128 : 0...127 }

    /// The 0-based program (FluidSynth's) that `written` means in a file of `format`.
    public static func zeroBasedProgram(_ written: Int, format: Int) -> Int { format >= 2 ? written - 1 : written }
}

extension RackReader {
    /// For a format 1 rack whose synths set a `program`: a note on how to update it to
    /// format 2 without changing the sound (each program + 1). Nothing for other racks,
    /// whose meaning is the same in both formats.
    func formatNotes(_ rack: RackDescription, _ root: JSONNode) -> [RackDiagnostic] {
        guard rack.format == RackFormat.original else { return [] }
        var programs: [String] = []
        for unit in rack.units {
            guard let member = unit.settings.members.first(where: { $0.key == "program" }),
                let n = member.value.number, let v = Int(exactly: n)
            else { continue }
            programs.append("units.\(unit.id).program \(v) → \(v + 1) (line \(member.value.location.line))")
        }
        guard !programs.isEmpty else { return [] }
        return [
            RackDiagnostic(
                file: rack.file, location: root["format"]?.value.location ?? root.location, path: "format",
                message: "note: format 1 counts synth programs 0…127; format 2 counts them 1…128, as controllers, "
                    + "setlists and snapshots do. To update this file, set \"format\": 2 and add 1 to each synth "
                    + "program: \(programs.joined(separator: ", ")). As it is, the file stays valid and sounds the same.")
        ]
    }
}
