import StageCore

/// The units of a rack the soundcheck sets, found by type (the first of each in the rack's
/// order): the trim (`gain`, else the `eq`'s `globalGain`), the `eq` and its high-pass band,
/// the `dynamics` unit (compressor and gate) and the `deesser`; what is missing, in words.
/// Thread: control.
struct SoundcheckStrip {
    let rack: RackDescription
    let registry: UnitRegistry
    var trim: (unit: String, parameter: String)?
    var eq: String?
    /// The 1-based band of `eq` whose type is a high-pass.
    var highPassBand: Int?
    var dynamics: String?
    var deesser: String?
    var missing: [String] = []
    var notes: [String] = []

    init(rack: RackDescription, registry: UnitRegistry) {
        self.rack = rack
        self.registry = registry
        func first(_ type: String) -> String? { rack.units.first { $0.type == type }?.id }
        eq = first("eq")
        dynamics = first("dynamics")
        deesser = first("deesser")
        if let gain = first("gain") {
            trim = (gain, "gain")
        } else if let eq {
            trim = (eq, "globalGain")
            notes.append("no gain unit: the input trim goes into \(eq).globalGain")
        } else {
            missing.append("no gain unit for the input trim (add { \"type\": \"gain\" } after the input)")
        }
        if let eq {
            highPassBand = findHighPass(eq)
            if highPassBand == nil { missing.append("\(eq) has no high-pass band (set a band's type to \"highPass\")") }
        } else {
            missing.append("no eq unit for the high-pass (add { \"type\": \"eq\" }: its band 1 is a high-pass)")
        }
        if dynamics == nil {
            missing.append("no compressor or gate (add { \"type\": \"dynamics\" })")
        }
        if deesser == nil { missing.append("no de-esser (add { \"type\": \"deesser\" })") }
    }

    func findHighPass(_ eq: String) -> Int? {
        for spec in specs(eq) where spec.id.hasPrefix("type") && !spec.choices.isEmpty {
            guard let band = Int(spec.id.dropFirst(4)), let v = value(eq, spec.id) else { continue }
            let i = Int(v.rounded())
            if i >= 0 && i < spec.choices.count && spec.choices[i] == "highPass" { return band }
        }
        return nil
    }

    func specs(_ unit: String) -> [ParameterSpec] {
        guard let u = rack.unit(unit), let type = registry.type(named: u.type) else { return [] }
        return type.parameters(u.settings)
    }

    /// The rack's value of `unit.parameter`, else its default.
    func value(_ unit: String?, _ parameter: String) -> Float? {
        guard let unit, let u = rack.unit(unit) else { return nil }
        if let v = u.parameterValues.first(where: { $0.id == parameter }) { return v.value }
        return specs(unit).first { $0.id == parameter }?.defaultValue
    }

    func range(_ unit: String, _ parameter: String) -> ClosedRange<Float>? {
        specs(unit).first { $0.id == parameter }?.range
    }
}
