import StageCore
import StageLV2

/// `stagerack units lv2` and `stagerack units URI`: the installed LV2 plugins, and one
/// plugin's parameters as a built-in unit's are shown. Thread: main.
enum LV2Listing {
    static func installed() -> [String] {
        if let failure = LV2World.libraryFailure { return ["lv2: \(failure)"] }
        let world = LV2World.shared
        let plugins = world.plugins
        var lines = [
            "lv2: \(counted(plugins.count, "installed LV2 plugin")) (LV2_PATH read in "
                + "\(formatNumber(world.loadSeconds * 1000)) ms); use one with "
                + "{ \"type\": \"lv2\", \"plugin\": \"URI\" }, see its parameters with `stagerack units URI`"
        ]
        lines += plugins.map { "  \($0.uri)  \($0.name)\($0.className.isEmpty ? "" : " (\($0.className))")" }
        return lines
    }

    static func plugin(_ uri: String) throws -> [String] {
        if let failure = LV2World.libraryFailure { throw UsageError(message: "lv2: \(failure)") }
        let world = LV2World.shared
        guard let info = world.plugin(uri) else {
            throw UsageError(message: LV2UnitType.missingMessage(uri, world))
        }
        var lines = ["\(info.uri): \(info.name)\(info.className.isEmpty ? "" : " (\(info.className))")"]
        lines.append("  bundle \(info.bundlePath)")
        lines.append(
            "  audio: \(counted(info.audioInputs.count, "input")), \(counted(info.audioOutputs.count, "output"))"
                + (info.takesMIDI ? "; takes MIDI" : ""))
        if !info.requiredFeatures.isEmpty {
            lines.append("  requires: " + info.requiredFeatures.joined(separator: ", "))
        }
        if let refusal = LV2UnitType.refusal(info) { lines.append("  cannot be used: \(refusal)") }
        if !info.hardRTCapable { lines.append("  not hardRTCapable: needs \"allowNonRealtime\": true") }
        lines += LV2Parameters.specs(info).map(UnitsCommand.parameterLine)
        if !info.controlOutputs.isEmpty {
            lines.append("  outputs (read-only): " + info.controlOutputs.map(\.symbol).joined(separator: ", "))
        }
        if info.latencyPort != nil { lines.append("  reports its latency (read when the rack loads)") }
        if info.usesWorker { lines.append("  schedules work: runs a worker thread (worker:schedule)") }
        if info.hasState {
            lines.append("  has state: saved into the unit's \"state\" (`stagerack units URI --state` prints it)")
        }
        let presets = world.presets(uri)
        lines.append(
            presets.isEmpty
                ? "  presets: none"
                : "  presets (\"preset\": NAME): " + presets.map { "\"\($0.name)\"" }.joined(separator: ", "))
        return lines
    }

    /// `units URI --state [--preset NAME]`: the state of a new instance (after the preset),
    /// as a unit's `"state"` in a rack file. Thread: main (control).
    static func state(_ uri: String, preset: String?) throws -> [String] {
        guard let info = LV2World.shared.plugin(uri) else {
            throw UsageError(message: LV2UnitType.missingMessage(uri, LV2World.shared))
        }
        var settings: [String: JSONValue] = ["plugin": .string(uri)]
        if let preset { settings["preset"] = .string(preset) }
        if !info.hasState { throw UsageError(message: "\(uri) has no state:interface: it keeps no state") }
        do {
            let harness = try UnitHarness(type: LV2UnitType(), settings: settings, maxFrames: 256)
            guard let unit = harness.unit as? LV2Unit else { return [] }
            return ["\"state\": " + (try unit.saveState().json())]
        } catch let e as UnitError {
            throw UsageError(message: e.message)
        }
    }
}
