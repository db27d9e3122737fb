/// A setlist: racks in performance order, each optionally bound to a program (and bank).
public struct Setlist: Sendable {
    public struct Entry: Sendable, Equatable {
        /// The rack file, resolved against the setlist's folder.
        public var rack: String
        public var name: String
        /// 1…128 as controllers display programs.
        public var program: Int?
        /// The 14-bit bank select value (MSB×128 + LSB), 0 by default.
        public var bank: Int
        public var location: SourceLocation?
        /// Where the rack's file name is written (for "no such file" errors).
        public var rackLocation: SourceLocation?
        /// The file name as written in the setlist.
        public var rackAsWritten: String = ""
        /// The song's backing track (resolved against the setlist's folder), its tempo in
        /// BPM and its key ("C", "F#", "Bb"): see `SetlistSong`.
        public var song = SetlistSong()

        public init(rack: String, name: String, program: Int?, bank: Int, location: SourceLocation?) {
            self.rack = rack
            self.name = name
            self.program = program
            self.bank = bank
            self.location = location
        }
    }

    public var file: String = ""
    public var name: String = ""
    public var entries: [Entry] = []

    public init() {}

    /// The entry a program change selects, if any.
    public func entry(program: Int, bank: Int) -> Int? {
        entries.firstIndex { $0.program == program && $0.bank == bank }
    }

    /// True when a JSON document looks like a setlist rather than a rack.
    public static func isSetlist(_ root: JSONNode) -> Bool { root["songs"] != nil && root["units"] == nil }
}

/// Reads setlist files with the same line:column errors as racks. Thread: control.
public enum SetlistReader {
    static let keys = ["format", "name", "description", "songs"]
    static let entryKeys = ["rack", "name", "program", "bank", "comment"] + SetlistSong.keys

    public static func read(text: String, file: String) throws(RackError) -> Setlist {
        let (setlist, problems) = try readReportingAll(text: text, file: file)
        if !problems.isEmpty { throw RackError(problems) }
        return setlist
    }

    /// The setlist as far as it reads, with its problems (thrown only when nothing can be
    /// read: not JSON, not an object, no songs): a caller that checks the songs' files too
    /// reports everything at once.
    public static func readReportingAll(text: String, file: String) throws(RackError) -> (Setlist, [RackDiagnostic]) {
        let root: JSONNode
        do {
            root = try JSONParser.parse(text)
        } catch {
            throw RackError([RackDiagnostic(file: file, location: error.location, path: "", message: error.message)])
        }
        var d: [RackDiagnostic] = []
        func report(_ loc: SourceLocation?, _ path: String, _ msg: String) {
            d.append(RackDiagnostic(file: file, location: loc, path: path, message: msg))
        }
        var setlist = Setlist()
        setlist.file = file
        guard let members = root.members else {
            throw RackError([RackDiagnostic(file: file, location: root.location, path: "", message: "a setlist must be an object")])
        }
        for m in members where !keys.contains(m.key) {
            report(m.keyLocation, m.key, "unknown key in a setlist\(Suggest.hint(for: m.key, in: keys))")
        }
        // Setlists count programs 1…128 in both formats; 2 is accepted so that a folder of
        // format 2 racks and its setlist can say the same.
        let format = root["format"]?.value.number.flatMap { Int(exactly: $0) }
        if format.map({ !RackFormat.supported.contains($0) }) ?? true {
            report(
                root["format"]?.value.location ?? root.location, "format",
                root["format"] == nil ? "missing; add \"format\": 1" : "this program reads setlist formats 1 and 2")
        }
        setlist.name = root["name"]?.value.string ?? ""
        let folder: String = {
            guard let slash = file.lastIndex(of: "/") else { return "" }
            return String(file[...slash])
        }()
        guard let songs = root["songs"] else {
            report(root.location, "songs", "missing (the racks in order: [ { \"rack\": \"vocal.json\", \"program\": 1 } ])")
            throw RackError(d)
        }
        guard let list = songs.value.elements, !list.isEmpty else {
            report(songs.value.location, "songs", "must be a non-empty list of { \"rack\": FILE, \"program\": N }")
            throw RackError(d)
        }
        var seen: [String: Int] = [:]
        for (i, e) in list.enumerated() {
            let path = "songs[\(i)]"
            var entry = Setlist.Entry(rack: "", name: "", program: nil, bank: 0, location: e.location)
            if let s = e.string {
                entry.rack = joined(folder, s)
                entry.name = s
                entry.rackLocation = e.location
                entry.rackAsWritten = s
                setlist.entries.append(entry)
                continue
            }
            guard let fields = e.members else {
                report(e.location, path, "must be a rack file name or { \"rack\": FILE, \"program\": N }")
                continue
            }
            for m in fields where !entryKeys.contains(m.key) {
                report(m.keyLocation, "\(path).\(m.key)", "unknown key in a song\(Suggest.hint(for: m.key, in: entryKeys))")
            }
            guard let rack = e["rack"]?.value.string else {
                report(e.location, "\(path).rack", "missing (the rack file, relative to the setlist)")
                continue
            }
            entry.rack = joined(folder, rack)
            entry.rackLocation = e["rack"]?.value.location
            entry.rackAsWritten = rack
            entry.name = e["name"]?.value.string ?? rack
            if let p = e["program"] {
                if let v = p.value.number, v == v.rounded(), (1...128).contains(v) { entry.program = Int(v) } else {
                    report(p.value.location, "\(path).program", "must be a program number 1…128")
                }
            }
            if let b = e["bank"] {
                if let v = b.value.number, v == v.rounded(), (0...16383).contains(v) { entry.bank = Int(v) } else {
                    report(b.value.location, "\(path).bank", "must be a bank number 0…16383 (MSB×128 + LSB)")
                }
            }
            entry.song = SetlistSong.read(e, path: path, folder: folder, report: report)
            if let p = entry.program {
                let key = "\(entry.bank):\(p)"
                if let other = seen[key] {
                    report(e["program"]?.value.location, "\(path).program", "program \(p) (bank \(entry.bank)) already selects songs[\(other)]")
                }
                seen[key] = i
            }
            setlist.entries.append(entry)
        }
        return (setlist, d)
    }

    /// `folder` + `name` with `.` and `dir/..` taken out (`racks/setlists/../monitor.json`
    /// → `racks/monitor.json`), as a user would write it; `..` at the start is kept.
    static func joined(_ folder: String, _ name: String) -> String {
        if name.hasPrefix("/") { return name }
        let whole = folder + name
        var parts: [Substring] = []
        for part in whole.split(separator: "/", omittingEmptySubsequences: true) {
            if part == "." { continue }
            if part == "..", let last = parts.last, last != ".." {
                parts.removeLast()
                continue
            }
            parts.append(part)
        }
        let path = parts.joined(separator: "/")
        return whole.hasPrefix("/") ? "/" + path : path.isEmpty ? "." : path
    }
}
