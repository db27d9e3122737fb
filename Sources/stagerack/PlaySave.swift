import Foundation
import StageCore
import StageRemote

#if canImport(Glibc)
import Glibc
#endif

/// "Save" from the remote page (README "Control from a phone"): the values into the rack
/// file, keeping its text, or a new snapshot; the mappings learned from the page into its
/// `midi.map`; LV2 plugins' state into their units' `"state"`. A rack that cannot be written (the shipped racks under the service's
/// `ProtectSystem=full`) is saved as a copy in the service's state directory
/// (`$STATE_DIRECTORY/racks/`, named in `$STATE_DIRECTORY/saved-racks.json`), which `play`
/// then plays instead of the original (`SavedRacks`). `--watch` does not reload a rack
/// because of this write (`isOwnWrite`).
extension LiveSession {
    /// Writes `r`; the path written, or why not. Thread: control.
    static func saveFromPage(_ r: RackSaveRequest, ownWrites: Locked<[String: String]>) -> Result<String, RemoteError> {
        let destination: String
        switch SavedRacks.destination(for: r.rackFile, stateDirectory: SavedRacks.stateDirectory) {
        case .success(let d): destination = d
        case .failure(let e): return .failure(e)
        }
        // A copy made earlier in this run holds the earlier saves: edit it, not the original.
        let source = destination != r.rackFile && access(destination, R_OK) == 0 ? destination : r.rackFile
        do {
            let written = try RackFileEdit.apply(to: source, writingTo: destination, willReplace: { text in
                ownWrites.withLock { $0[destination] = text }
            }) { text in
                var out = text
                if let name = r.snapshot {
                    out = try RackTextEditor.addingSnapshot(name, values: r.values, in: out)
                } else {
                    let values = r.values.map { v in
                        let parts = v.target.split(separator: ".", maxSplits: 1).map(String.init)
                        return (unit: parts[0], parameter: parts.count > 1 ? parts[1] : "", value: v.value)
                    }
                    out = try RackTextEditor.settingParameters(values, in: out)
                    for m in r.mappings { out = try RackTextEditor.addingMIDIMapping(m, to: out) }
                    out = try RackTextEditor.settingUnitStates(r.unitStates, in: out)
                }
                return out
            }
            if written != r.rackFile {
                try SavedRacks.record(original: r.rackFile, copy: written)
                Log.info("web: \(r.rackFile) cannot be written: saved to \(written) (played instead from the next start)")
            } else {
                Log.info("web: saved \(written)")
            }
            return .success(written)
        } catch {
            Log.warning("web: not saved: \(error)")
            return .failure(RemoteError("\(error)"))
        }
    }

    /// True when `path` holds what this process last wrote there (its own save), so
    /// `--watch` leaves the rack alone. Thread: main.
    func isOwnWrite(_ path: String) -> Bool {
        guard let text = ownWrites.withLock({ $0[path] }), let data = FileManager.default.contents(atPath: path) else { return false }
        return String(decoding: data, as: UTF8.self) == text
    }
}

/// Writable copies of racks that cannot be written in place (the service's shipped racks),
/// kept in the state directory and named in its `saved-racks.json` (`{ "ORIGINAL": "COPY" }`):
/// the service cannot change its own config (`/etc` is read-only under `ProtectSystem=full`),
/// so this file in the state directory is the config that names the copies.
/// Thread: control (saving), main (at start).
enum SavedRacks {
    /// systemd's `$STATE_DIRECTORY` (the first, when several), or nil.
    static var stateDirectory: String? {
        guard let s = ProcessEnvironment.current["STATE_DIRECTORY"], !s.isEmpty else { return nil }
        return String(s.split(separator: ":").first ?? Substring(s))
    }

    /// Where a save of `rack` goes: the file itself when it and its folder can be written,
    /// else its copy in the state directory.
    static func destination(for rack: String, stateDirectory: String?) -> Result<String, RemoteError> {
        let folder = rack.contains("/") ? String(rack[..<rack.lastIndex(of: "/")!]) : "."
        if access(rack, W_OK) == 0 && access(folder.isEmpty ? "/" : folder, W_OK) == 0 { return .success(rack) }
        guard let stateDirectory else {
            return .failure(RemoteError("\(rack) cannot be written (and there is no state directory for a copy: STATE_DIRECTORY)"))
        }
        let racks = stateDirectory + "/racks"
        if access(racks, F_OK) != 0 && mkdir(racks, 0o755) != 0 {
            return .failure(RemoteError("cannot make \(racks): \(String(cString: strerror(errno)))"))
        }
        let name = rack.split(separator: "/").last.map(String.init) ?? "rack.json"
        return .success(racks + "/" + name)
    }

    static func indexPath(_ stateDirectory: String) -> String { stateDirectory + "/saved-racks.json" }

    /// The copies named in the state directory's index (original → copy).
    static func copies(stateDirectory: String?) -> [String: String] {
        guard let stateDirectory, let data = FileManager.default.contents(atPath: indexPath(stateDirectory)),
            let root = try? JSONParser.parse(String(decoding: data, as: UTF8.self)), let members = root.members
        else { return [:] }
        var out: [String: String] = [:]
        for m in members { if let copy = m.value.string { out[m.key] = copy } }
        return out
    }

    /// Names `copy` as the rack to play for `original`.
    static func record(original: String, copy: String) throws {
        guard let stateDirectory else { return }
        var all = copies(stateDirectory: stateDirectory)
        guard all[original] != copy else { return }
        all[original] = copy
        let body = all.keys.sorted().map { "  \(RackTextEditor.quoted($0)): \(RackTextEditor.quoted(all[$0]!))" }.joined(separator: ",\n")
        try "{\n\(body)\n}\n".write(toFile: indexPath(stateDirectory), atomically: true, encoding: .utf8)
    }

    /// `setlist` with each rack that has a saved copy replaced by the copy (said in the log).
    static func substitute(_ setlist: Setlist) -> Setlist {
        let all = copies(stateDirectory: stateDirectory)
        guard !all.isEmpty else { return setlist }
        var out = setlist
        for i in out.entries.indices {
            if let copy = all[out.entries[i].rack], access(copy, R_OK) == 0 {
                Log.info("\(out.entries[i].rack): playing the copy saved from the page, \(copy)")
                out.entries[i].rack = copy
            }
        }
        return out
    }
}
