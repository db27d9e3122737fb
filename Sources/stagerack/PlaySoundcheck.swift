import Foundation
import StageCore
import StageDrivers
import StageRemote

/// The page's Soundcheck button (README "Guided soundcheck"): the player copies the
/// engine's input through an `InputTap` (render thread → the remote hub's control thread,
/// lock-free), the hub guides the singer on the page and records the take, and the take is
/// analysed here exactly as `stagerack soundcheck --input` analyses a file (`Soundcheck`),
/// on the hub's analysis thread. Thread: main (set-up, before the audio thread starts).
extension LiveSession {
    /// Gives the player a tap and the hub the analysis, when the show has a live input.
    func attachSoundcheck(to hub: RemoteHub, player: RackPlayer) {
        guard needsCapture else { return }
        let tap = InputTap(seconds: 2, sampleRate: Double(setup.rate))
        player.inputTap = tap
        hub.soundcheckTap = tap
        hub.analyseSoundcheck = { take, rate, rackFile in Self.analyseTake(take, sampleRate: rate, rackFile: rackFile) }
    }

    /// The proposal for `take` (mono, at `sampleRate`) and the rack file playing, or the
    /// refusal in words. Thread: the hub's analysis thread.
    static func analyseTake(_ take: [Float], sampleRate: Double, rackFile: String) -> Result<SoundcheckOffer, RemoteError> {
        guard let data = FileManager.default.contents(atPath: rackFile), let text = String(data: data, encoding: .utf8) else {
            return .failure(RemoteError("cannot read \(rackFile)"))
        }
        do {
            try SoundcheckAnalysis.checkClipping(take)
            let p = try Soundcheck.propose(text: text, file: rackFile, registry: Registry.standard, voice: take, sampleRate: sampleRate)
            let values = p.settings.map { SoundcheckValue(unit: $0.unit, parameter: $0.parameter, value: $0.value, json: $0.json, reason: $0.reason) }
            Log.info("web: soundcheck: \(p.summary); proposed \(values.map { "\($0.unit).\($0.parameter) \($0.json)" }.joined(separator: ", "))")
            return .success(SoundcheckOffer(summary: p.summary, values: values, notes: p.missing.map { "missing: \($0)" } + p.notes))
        } catch let e as SoundcheckError {
            Log.info("web: soundcheck refused: \(e.message)")
            return .failure(RemoteError(e.message))
        } catch {
            return .failure(RemoteError("\(error)"))
        }
    }
}
