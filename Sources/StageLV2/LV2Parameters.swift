import StageCore

/// A plugin's control input ports as StageRack parameters, and back.
///
/// Parameter i is the i-th control input port, its id the port's symbol. A port marked
/// `lv2:toggled` is a switch; `lv2:enumeration` with scale points is a choice whose value is
/// the index of the scale point (sorted by value; the port receives the point's value);
/// `lv2:integer` takes whole numbers; `pprops:logarithmic` makes MIDI knobs move it on a log
/// curve. Units from `units:unit`: dB, Hz, s, %, cents, semitones; others are shown in the
/// help. The host does not smooth unless the rack's `smooth` setting names the parameter: a
/// value steps at its frame (the plugin smooths if it does).
/// Thread: any (pure functions of a description).
public enum LV2Parameters {
    public static func specs(_ info: LV2PluginInfo) -> [ParameterSpec] {
        info.controlInputs.map(spec)
    }

    static func spec(_ port: LV2Port) -> ParameterSpec {
        let lo = port.minimum
        let hi = port.maximum
        if port.enumeration && !port.scalePoints.isEmpty {
            let labels = uniqueLabels(port.scalePoints)
            let nearest = port.scalePoints.indices.min {
                abs(port.scalePoints[$0].value - port.defaultValue) < abs(port.scalePoints[$1].value - port.defaultValue)
            } ?? 0
            var s = ParameterSpec.choice(id: port.symbol, name: port.name, choices: labels, defaultIndex: nearest)
            s.help = "port \(port.index), enumeration"
            return s
        }
        if port.toggled {
            var s = ParameterSpec.toggle(
                id: port.symbol, name: port.name, defaultOn: port.defaultValue > lo, smoothingSeconds: 0)
            s.help = "port \(port.index), toggled"
            return s
        }
        let (unit, unitNote) = parameterUnit(port.unitURI)
        var notes = ["port \(port.index)"]
        if let unitNote { notes.append(unitNote) }
        if port.integer { notes.append("integer") }
        if port.logarithmic { notes.append("logarithmic") }
        if !port.scalePoints.isEmpty {
            notes.append("marks: " + port.scalePoints.map { "\(formatNumber($0.value)) \($0.label)" }.joined(separator: ", "))
        }
        var s = ParameterSpec(
            id: port.symbol, name: port.name, unit: unit, range: lo...hi, defaultValue: port.defaultValue,
            smoothingSeconds: 0, help: notes.joined(separator: ", "))
        if port.logarithmic && lo > 0 { s.preferredCurve = .log }
        s.wholeNumbers = port.integer
        return s
    }

    /// The value the port receives for parameter value `value` (a choice index becomes its
    /// scale point's value; a switch the port's minimum or maximum; integers are rounded).
    /// Thread: render (no allocation).
    @inline(__always)
    static func portValue(_ value: Float, _ port: PortMapping) -> Float {
        switch port.shape {
        case .plain: return value
        case .integer: return value.rounded()
        case .toggle: return value >= 0.5 ? port.on : port.off
        case .choice:
            let i = Int(value.rounded())
            return port.points[min(max(i, 0), port.pointCount - 1)]
        }
    }

    /// The parameter value for port value `value` (the inverse of `portValue`: a choice's
    /// index of the nearest scale point, a switch on above the port's minimum). Thread: any.
    static func parameterValue(_ value: Float, _ port: LV2Port) -> Float {
        if port.enumeration && !port.scalePoints.isEmpty {
            let i = port.scalePoints.indices.min { abs(port.scalePoints[$0].value - value) < abs(port.scalePoints[$1].value - value) } ?? 0
            return Float(i)
        }
        if port.toggled { return value > port.minimum ? 1 : 0 }
        return min(max(value, port.minimum), port.maximum)
    }

    /// How one control input port turns a parameter value into a port value, made on the
    /// control thread; `points` is memory the unit owns. A plain value: copying it retains
    /// nothing, so the render thread reads it freely.
    struct PortMapping {
        enum Shape { case plain, integer, toggle, choice }
        var portIndex: Int
        var shape: Shape
        var on: Float
        var off: Float
        var points: UnsafeMutablePointer<Float>
        var pointCount: Int
        /// Ramped by the engine (the rack's `smooth`): the port steps every few frames.
        var smoothed = false

        /// Thread: control (allocates `points`; the owner frees them with `release`).
        init(_ port: LV2Port) {
            portIndex = port.index
            on = port.maximum > port.minimum ? port.maximum : 1
            off = port.minimum
            pointCount = max(port.scalePoints.count, 1)
            points = .allocate(capacity: pointCount)
            points.initialize(repeating: port.defaultValue, count: pointCount)
            for (i, p) in port.scalePoints.enumerated() { points[i] = p.value }
            if port.enumeration && !port.scalePoints.isEmpty {
                shape = .choice
            } else if port.toggled {
                shape = .toggle
            } else {
                shape = port.integer ? .integer : .plain
            }
        }

        func release() { points.deallocate() }
    }

    private static func parameterUnit(_ uri: String?) -> (ParameterUnit, String?) {
        guard let uri, let hash = uri.lastIndex(of: "#") else { return (.generic, nil) }
        let name = String(uri[uri.index(after: hash)...])
        switch name {
        case "db": return (.decibels, nil)
        case "hz": return (.hertz, nil)
        case "s": return (.seconds, nil)
        case "pc": return (.percent, nil)
        case "cent": return (.cents, nil)
        case "semitone12TET": return (.semitones, nil)
        default: return (.generic, "unit: \(name)")
        }
    }

    /// Scale-point labels as choice names: the same label twice gets its value appended.
    private static func uniqueLabels(_ points: [LV2ScalePoint]) -> [String] {
        var seen: [String: Int] = [:]
        for p in points { seen[p.label, default: 0] += 1 }
        return points.map { seen[$0.label]! > 1 ? "\($0.label) (\(formatNumber($0.value)))" : $0.label }
    }
}
