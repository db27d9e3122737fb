import StageCore

/// `feedback`: finds acoustic feedback (a howl) and notches it before it is heard (mono in,
/// mono out, no latency). A howl is a narrowband tone that holds or grows, with no
/// harmonic series and no vibrato; a sung note has harmonics and moves. See `FeedbackUnit`
/// and `FeedbackDetector` for the method; measured in a closed loop by FeedbackLoopTests.
///
/// Parameters: `sensitivity` 0…100 % (50: how prominent and how lasting a tone must be),
/// `liveNotches` 0…12 (8: how many notches may follow new howls), `maxDepth` 3…40 dB (18)
/// and `release` 1…600 s (60: a live notch lifts once its frequency has not rung that
/// long). Commands (`midi.map` `"unit.command"`): `ring-out` (on/off: notches found while
/// on are fixed, kept and saved with the rack) and `clear` (removes every notch). Setting
/// `state`: the fixed notches, `{ "notches": [ { "hz": 1250, "depth": 9, "width": 0.025 } ] }`
/// (what "save" writes after a ring-out). The notches are its readouts. Thread: any (an
/// immutable description).
public struct FeedbackUnitType: UnitType {
    public init() {}
    public var name: String { "feedback" }
    public var summary: String { "feedback suppressor: notches a howl as it starts; ring-out keeps fixed notches" }

    public var settings: [SettingSpec] {
        [
            SettingSpec(
                key: "state", kind: .custom("{ \"notches\": [ { \"hz\": 20…20000, \"depth\": 0…40 dB, \"width\": 1/80…1/10 octave } ] } (at most 12)"),
                help: "the fixed notches a ring-out found (written by save)"),
        ]
    }

    public func parameters(_ settings: UnitSettings) -> [ParameterSpec] {
        [
            ParameterSpec(
                id: "sensitivity", name: "Sensitivity", unit: .percent, range: 0...100, defaultValue: 50, smoothingSeconds: 0,
                help: "how readily a steady narrow tone is taken for feedback"),
            Self.whole(
                ParameterSpec(
                    id: "liveNotches", name: "Live notches", unit: .generic, range: 0...12, defaultValue: 8, smoothingSeconds: 0,
                    help: "how many notches may follow new howls (fixed ones aside; 12 in all)")),
            ParameterSpec(
                id: "maxDepth", name: "Max depth", unit: .decibels, range: 3...40, defaultValue: 18, smoothingSeconds: 0,
                help: "the deepest a notch may go"),
            ParameterSpec(
                id: "release", name: "Release", unit: .seconds, range: 1...600, defaultValue: 60, smoothingSeconds: 0,
                help: "a live notch lifts once its frequency has not rung for this long"),
        ]
    }

    static func whole(_ spec: ParameterSpec) -> ParameterSpec {
        var s = spec
        s.wholeNumbers = true
        return s
    }

    public func layout(_ settings: UnitSettings, _ context: UnitBuildContext) -> BusLayout {
        BusLayout(inputs: [.channels(1)], outputs: [.channels(1)])
    }

    public func commands(_ settings: UnitSettings) -> [String] { FeedbackUnit.Command.allCases.map(\.name) }

    public func check(_ settings: UnitSettings) -> [SettingProblem] {
        guard let node = settings.node("state") else { return [] }
        do {
            _ = try Self.notches(node)
            return []
        } catch {
            return [SettingProblem(key: "state", message: error.message)]
        }
    }

    public func make(_ settings: UnitSettings, _ context: UnitBuildContext) throws -> any RackUnit {
        FeedbackUnit(notches: try settings.node("state").map { node throws(UnitError) in try Self.notches(node) } ?? [])
    }

    /// The fixed notches of a `"state"` object; throws a message naming the value at fault.
    static func notches(_ node: JSONNode) throws(UnitError) -> [FeedbackNotchReading] {
        guard let members = node.members else { throw UnitError("an object { \"notches\": [...] }, not \(node.value.kindName)") }
        for m in members where m.key != "notches" { throw UnitError("unknown key \"\(m.key)\" (only \"notches\")") }
        guard let list = members.first(where: { $0.key == "notches" })?.value else { return [] }
        guard let items = list.elements else { throw UnitError("\"notches\" is a list, not \(list.value.kindName)") }
        guard items.count <= FeedbackNotchBank.capacity else {
            throw UnitError("\(items.count) notches; at most \(FeedbackNotchBank.capacity)")
        }
        var out: [FeedbackNotchReading] = []
        for (i, item) in items.enumerated() {
            guard let fields = item.members else { throw UnitError("notch \(i + 1): an object { \"hz\", \"depth\", \"width\" }") }
            for f in fields where !["hz", "depth", "width"].contains(f.key) {
                throw UnitError("notch \(i + 1): unknown key \"\(f.key)\" (hz, depth, width)")
            }
            let hz = try number(fields, "hz", 20...20000, nil, notch: i + 1)
            let depth = try number(fields, "depth", 0...40, nil, notch: i + 1)
            let width = try number(fields, "width", 1.0 / 80...0.1, FeedbackUnit.firstWidth, notch: i + 1)
            out.append(FeedbackNotchReading(hz: hz, depth: depth, width: width, fixed: true))
        }
        return out
    }

    /// Member `key` of a notch, a number in `range` (`fallback` when absent, nil: required).
    static func number(
        _ fields: [JSONMember], _ key: String, _ range: ClosedRange<Double>, _ fallback: Double?, notch: Int
    ) throws(UnitError) -> Double {
        guard let v = fields.first(where: { $0.key == key })?.value else {
            if let fallback { return fallback }
            throw UnitError("notch \(notch): \"\(key)\" is missing")
        }
        guard let x = v.number, range.contains(x) else {
            throw UnitError("notch \(notch): \"\(key)\" must be a number \(formatNumber(range.lowerBound))…\(formatNumber(range.upperBound))")
        }
        return x
    }
}
