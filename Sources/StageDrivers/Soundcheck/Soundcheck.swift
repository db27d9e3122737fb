import Foundation
import StageCore

/// The guided soundcheck: from a recording (a few seconds of silence, then the singer at
/// show level) and a rack, the strip's values: the input trim that brings the loud phrases
/// to `targetLevel`, the high-pass under the voice's fundamentals, the compressor threshold
/// for `compressionTarget` dB of gain reduction on the loud phrases, the de-esser threshold
/// for `deEssingTarget` dB on the sibilants, and the gate above the noise floor.
///
/// The trim and the high-pass come from the analysis (`SoundcheckAnalysis`); the two
/// thresholds are then found by rendering the recording through the rack itself (the same
/// units as live) and reading the compressor's and de-esser's gain-reduction meters on the
/// loud phrases and the sibilants, a few rounds until both are within 0.5 dB of their
/// targets; the gate goes `gateMargin` dB over the floor the compressor's detector hears
/// (after the trim and the high-pass), kept under the soft words.
///
/// Units are found by type, the first of each in the rack: `gain` for the trim (else the
/// `eq`'s `globalGain`), the `eq` band that is a high-pass, `dynamics` (compressor and
/// gate), `deesser`. What the rack lacks is listed in `Proposal.missing`.
/// Thread: control (offline: renders on the caller's thread).
public enum Soundcheck {
    /// The loud phrases' RMS after the trim (dBFS).
    public static let targetLevel: Float = -24
    public static let compressionTarget: Float = 5
    public static let deEssingTarget: Float = 6
    public static let gateMargin: Float = 10

    /// One value to write: `unit.parameter` = `value`, and why, in words.
    public struct Setting: Sendable {
        public var unit: String
        public var parameter: String
        public var value: Float
        public var reason: String
        /// The value as rack-file JSON (whole numbers without a decimal point).
        public var json: String {
            value == value.rounded() ? String(Int(value)) : String(format: "%.1f", Double(value))
        }
    }

    public struct Proposal: Sendable {
        public var settings: [Setting] = []
        /// What the rack lacks, in words ("no compressor: ...").
        public var missing: [String] = []
        /// Things worth knowing (the gate close to the soft words, a range raised).
        public var notes: [String] = []
        /// The summary of the recording, one line.
        public var summary = ""
        /// Gain reduction the final render measured on the loud phrases and the sibilants (dB).
        public var compression: Float?
        public var deEssing: Float?

        public func value(_ unit: String, _ parameter: String) -> Float? {
            settings.first { $0.unit == unit && $0.parameter == parameter }?.value
        }

        /// `text` (the rack) with the settings written in, keeping the rest as written.
        public func applied(to text: String) throws(RackTextEditor.EditError) -> String {
            try RackTextEditor.settingParameters(settings.map { ($0.unit, $0.parameter, $0.json) }, in: text)
        }
    }

    /// Proposes the strip's values for `rack` (read from `text`, its file `file`) from
    /// `voice` (mono, at `sampleRate`). Throws `SoundcheckError` for a recording it cannot
    /// use, `RackError` when the rack does not render.
    public static func propose(
        text: String, file: String, registry: UnitRegistry, voice: [Float], sampleRate: Double
    ) throws -> Proposal {
        let rack = try RackReader(registry: registry).read(text: text, file: file)
        let strip = SoundcheckStrip(rack: rack, registry: registry)
        let split = Double(strip.value(strip.deesser, "frequency") ?? 6000)
        let analysis = try SoundcheckAnalysis(samples: voice, sampleRate: sampleRate, sibilantSplit: split)
        var proposal = Proposal()
        proposal.missing = strip.missing
        proposal.notes = strip.notes
        let sibilantSeconds = Double(analysis.sibilant.filter { $0 }.count) * SoundcheckAnalysis.frameSeconds
        proposal.summary = "noise floor \(f(analysis.noiseFloor)) dBFS, loud phrases \(f(analysis.loudLevel)) dBFS, "
            + "voice from \(Int(analysis.lowestFundamental.rounded())) Hz, \(String(format: "%.1f", sibilantSeconds)) s of sibilants"

        // The trim.
        let trim = ((targetLevel - analysis.loudLevel) * 2).rounded() / 2
        if let (unit, parameter) = strip.trim {
            let range = strip.range(unit, parameter) ?? -96...24
            guard trim <= range.upperBound else {
                throw SoundcheckError(
                    "the input is too quiet (loud phrases at \(f(analysis.loudLevel)) dBFS): turn the interface's input gain up by about "
                        + "\(Int((trim - range.upperBound).rounded(.up)) + 6) dB and record again")
            }
            proposal.settings.append(Setting(
                unit: unit, parameter: parameter, value: max(trim, range.lowerBound),
                reason: "input trim: loud phrases at \(f(targetLevel)) dBFS"))
        }
        let applied = strip.trim == nil ? 0 : trim

        // The high-pass: three quarters of the lowest fundamental, 60…160 Hz, in 5 Hz steps.
        let highPass = Float((min(max(analysis.lowestFundamental * 0.75, 60), 160) / 5).rounded() * 5)
        if let eq = strip.eq, let band = strip.highPassBand {
            proposal.settings.append(Setting(
                unit: eq, parameter: "frequency\(band)", value: highPass,
                reason: "high-pass under the voice (lowest fundamental \(Int(analysis.lowestFundamental.rounded())) Hz)"))
        }

        // The gate, in the levels its detector hears (after the trim and the high-pass).
        let floor = SoundcheckAnalysis.noiseFloor(voice, sampleRate: sampleRate, highPass: Double(highPass)) + applied
        let soft = analysis.quietVoiceLevel + applied
        var gate = floor + gateMargin
        if gate > soft - 3 {
            gate = max(floor + 4, (floor + soft) / 2)
            proposal.notes.append("the room noise is close to the soft words: the gate (\(f(gate)) dB) may cut them; a quieter room or a closer microphone helps")
        }
        gate = gate.rounded()

        try calibrate(&proposal, text: text, file: file, registry: registry, strip: strip, analysis: analysis, voice: voice)
        if let dynamics = strip.dynamics {
            proposal.settings.append(Setting(
                unit: dynamics, parameter: "expansionThreshold", value: min(max(gate, -120), 0),
                reason: "gate \(f(gate - floor)) dB over the noise floor (\(f(floor)) dBFS after the trim)"))
        }
        return proposal
    }

    /// Finds the compressor and de-esser thresholds by rendering `voice` through the rack
    /// with the proposal so far (the gate held open) and reading the meters.
    static func calibrate(
        _ proposal: inout Proposal, text: String, file: String, registry: UnitRegistry, strip: SoundcheckStrip,
        analysis: SoundcheckAnalysis, voice: [Float]
    ) throws {
        let ratio = strip.dynamics.flatMap { strip.value($0, "ratio") } ?? 1
        let compressing = strip.dynamics != nil && ratio > 1.05 && (strip.value(strip.dynamics, "headRoom") ?? 0) == 0
        if strip.dynamics != nil && !compressing {
            proposal.notes.append("\(strip.dynamics!).ratio is 1 (or headRoom is set): the compressor threshold is left as it is")
        }
        let hasSibilants = analysis.sibilant.contains(true)
        var deEssing = strip.deesser != nil && hasSibilants
        if strip.deesser != nil && !hasSibilants {
            proposal.notes.append("no sibilants found in the recording: the de-esser is left as it is (say a few words with s and sh)")
        }
        guard compressing || deEssing else { return }
        var threshold = targetLevel - compressionTarget / (1 - 1 / ratio)
        var deThreshold: Float = targetLevel - 12
        var extra: [(String, String, String)] = []
        if deEssing, let d = strip.deesser, let range = strip.value(d, "range"), range < deEssingTarget + 2 {
            extra.append((d, "range", "\(Int(deEssingTarget + 2))"))
            proposal.settings.append(Setting(
                unit: d, parameter: "range", value: deEssingTarget + 2,
                reason: "the de-esser's most reduction, to allow \(f(deEssingTarget)) dB on the sibilants"))
        }
        if let d = strip.dynamics { extra.append((d, "expansionThreshold", "-120")) }
        var measured: (compression: Float, deEssing: Float) = (0, 0)
        for _ in 0..<6 {
            var values = proposal.settings.map { ($0.unit, $0.parameter, $0.json) } + extra
            if compressing { values.append((strip.dynamics!, "threshold", json(threshold))) }
            if deEssing { values.append((strip.deesser!, "threshold", json(deThreshold))) }
            measured = try SoundcheckRender.meters(
                text: try RackTextEditor.settingParameters(values, in: text), file: file, registry: registry,
                units: (strip.dynamics, strip.deesser), voice: voice, analysis: analysis)
            let compressionError = compressing ? measured.compression - compressionTarget : 0
            let deEssingError = deEssing ? measured.deEssing - deEssingTarget : 0
            if abs(compressionError) < 0.5 && abs(deEssingError) < 0.5 { break }
            threshold = clampedStep(threshold, compressionError / (1 - 1 / ratio), -60...20)
            deThreshold = clampedStep(deThreshold, deEssingError, -60...0)
        }
        if compressing {
            proposal.compression = measured.compression
            proposal.settings.append(Setting(
                unit: strip.dynamics!, parameter: "threshold", value: threshold,
                reason: "\(f(measured.compression)) dB of gain reduction on the loud phrases"))
        }
        if deEssing {
            if deThreshold <= -60 && measured.deEssing < deEssingTarget - 1 {
                proposal.notes.append("the sibilants are too soft for \(f(deEssingTarget)) dB of de-essing even at -60 dB")
                deEssing = false
            }
            proposal.deEssing = measured.deEssing
            proposal.settings.append(Setting(
                unit: strip.deesser!, parameter: "threshold", value: deThreshold,
                reason: "\(f(measured.deEssing)) dB of reduction on the sibilants"))
        }
    }

    /// `value` moved by `step` (at most 12 dB), in half-dB steps, inside `range`.
    static func clampedStep(_ value: Float, _ step: Float, _ range: ClosedRange<Float>) -> Float {
        let next = value + min(max(step, -12), 12)
        return (min(max(next, range.lowerBound), range.upperBound) * 2).rounded() / 2
    }

    static func json(_ v: Float) -> String { Setting(unit: "", parameter: "", value: v, reason: "").json }
    static func f(_ v: Float) -> String { String(format: "%.1f", Double(v)) }
}
