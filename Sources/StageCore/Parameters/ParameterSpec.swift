#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// What a parameter's number means, for display, validation and MIDI curves.
public enum ParameterUnit: String, Sendable, CaseIterable {
    case decibels = "dB"
    case hertz = "Hz"
    case seconds = "s"
    case percent = "%"
    case cents = "cents"
    case semitones = "semitones"
    case pan = "pan"
    case boolean = "bool"
    case choice = "enum"
    case ratio = "ratio"
    case generic = ""
}

/// How a normalized control position 0…1 maps onto a parameter's range.
public enum ParameterCurve: String, Sendable, CaseIterable {
    /// Equal steps in the parameter's own unit.
    case linear
    /// Equal ratios: frequencies and times (needs a range that is strictly positive).
    case log
    /// Slow start, fast end: the inverse feel of `log`.
    case exp
}

/// A parameter declared as data: identity, unit, range, default and smoothing.
///
/// Parameters are real-time floats (AUGraph's "parameters"); configuration that needs a
/// rebuild is a unit *setting* instead. Thread: any (immutable value).
public struct ParameterSpec: Sendable, Equatable {
    /// Identifier used in rack files and addresses (`unit.id`), e.g. `gain2`.
    public var id: String
    /// Human-readable name.
    public var name: String
    public var unit: ParameterUnit
    public var range: ClosedRange<Float>
    public var defaultValue: Float
    /// Linear ramp time applied by the engine when the value changes; 0 steps at once.
    public var smoothingSeconds: Float
    /// Names of the values of a `.choice` parameter; value i is choices[i].
    public var choices: [String]
    /// One line on what it does, for `stagerack units`.
    public var help: String
    /// The curve a MIDI knob uses when the mapping names none, when the unit knows better
    /// than `naturalCurve`'s guess from the unit (an LV2 port marked logarithmic).
    public var preferredCurve: ParameterCurve? = nil
    /// Only whole numbers are accepted (an LV2 port marked integer); rack files are checked.
    public var wholeNumbers = false

    public init(
        id: String, name: String, unit: ParameterUnit, range: ClosedRange<Float>,
        defaultValue: Float, smoothingSeconds: Float = 0.02, choices: [String] = [], help: String = ""
    ) {
        precondition(range.contains(defaultValue), "default of \(id) outside its range")
        self.id = id
        self.name = name
        self.unit = unit
        self.range = range
        self.defaultValue = defaultValue
        self.smoothingSeconds = smoothingSeconds
        self.choices = choices
        self.help = help
    }

    /// A switch: 0 off, 1 on. Smoothed, so the unit may use the value as a crossfade factor.
    public static func toggle(
        id: String, name: String, defaultOn: Bool, smoothingSeconds: Float = 0.01, help: String = ""
    ) -> ParameterSpec {
        ParameterSpec(
            id: id, name: name, unit: .boolean, range: 0...1, defaultValue: defaultOn ? 1 : 0,
            smoothingSeconds: smoothingSeconds, help: help)
    }

    /// A list of named values; never smoothed.
    public static func choice(
        id: String, name: String, choices: [String], defaultIndex: Int, help: String = ""
    ) -> ParameterSpec {
        ParameterSpec(
            id: id, name: name, unit: .choice, range: 0...Float(max(choices.count - 1, 0)),
            defaultValue: Float(defaultIndex), smoothingSeconds: 0, choices: choices, help: help)
    }

    /// The curve a MIDI knob uses when the mapping names none: log for Hz and times that
    /// stay positive, linear otherwise (dB are already logarithmic).
    public var naturalCurve: ParameterCurve {
        if let preferredCurve { return preferredCurve }
        switch unit {
        case .hertz, .seconds: return range.lowerBound > 0 ? .log : .linear
        default: return .linear
        }
    }

    /// Clamps `value` into the range (and to a whole index for choices and switches).
    public func clamped(_ value: Float) -> Float {
        var v = value.isNaN ? defaultValue : min(max(value, range.lowerBound), range.upperBound)
        if unit == .choice || unit == .boolean || wholeNumbers { v = v.rounded() }
        return v
    }

    /// Formats a value with its unit, e.g. `-17.0 dB`, `chorus`.
    public func format(_ value: Float) -> String {
        switch unit {
        case .choice:
            let i = Int(value.rounded())
            return choices.indices.contains(i) ? choices[i] : "\(i)"
        case .boolean: return value >= 0.5 ? "on" : "off"
        case .generic: return formatNumber(value)
        default: return "\(formatNumber(value)) \(unit.rawValue)"
        }
    }
}

/// Formats a number with up to three decimals and no trailing zeros.
public func formatNumber(_ value: Float) -> String {
    formatNumber(Double(value))
}

/// Formats a number with up to three decimals and no trailing zeros.
public func formatNumber(_ value: Double) -> String {
    if value.isNaN { return "nan" }
    if value.isInfinite { return value > 0 ? "inf" : "-inf" }
    // Beyond 1e15 (and for tiny non-zero values) three decimals say nothing: use an exponent.
    if abs(value) >= 1e15 || (value != 0 && abs(value) < 0.0005) { return exponentForm(value) }
    if value == value.rounded() { return String(Int64(value)) }
    var s = String(Int64((abs(value) * 1000).rounded()))
    while s.count < 4 { s = "0" + s }
    var frac = String(s.suffix(3))
    let whole = String(s.dropLast(3))
    while frac.hasSuffix("0") { frac.removeLast() }
    let sign = value < 0 ? "-" : ""
    return frac.isEmpty ? sign + whole : sign + whole + "." + frac
}

/// `1.5e+308`, `-2e-50`: a number too large or too small for three decimals, with up to
/// four significant digits.
private func exponentForm(_ value: Double) -> String {
    var exponent = Int(log10(abs(value)).rounded(.down))
    var mantissa = value / pow(10, Double(exponent))
    if !mantissa.isFinite {  // subnormals: 10^exponent underflows
        mantissa = value * 1e300 / pow(10, Double(exponent + 300))
    }
    mantissa = (mantissa * 1000).rounded() / 1000
    if abs(mantissa) >= 10 {
        mantissa /= 10
        exponent += 1
    }
    return "\(formatNumber(mantissa))e\(exponent < 0 ? "-" : "+")\(abs(exponent))"
}
