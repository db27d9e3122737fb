import StageDrivers
import StageService

/// `play`'s report of a sound device that did not open: what is wrong and what to do
/// (`DeviceAdvice`, given the cards this machine has). alsa-lib's own lines about it: for a
/// device that is not there, the first (the one that names the cause) inside the error
/// line; for one that is there but refused, all of them. Returns the exit status (1).
/// Thread: main.
func reportDeviceError(_ error: ALSAError, setup: PlayCommand.Setup) -> Int32 {
    reportDeviceError(error, command: "play", playback: setup.playback, capture: setup.capture, deviceWait: setup.service.deviceWait)
}

/// The same report for any command that opens devices (`latency`): `deviceWait` nil for a
/// command without `--device-wait` (no hint about it). Thread: main.
func reportDeviceError(_ error: ALSAError, command: String, playback: String?, capture: String?, deviceWait: Double?) -> Int32 {
    let role = error.device == playback ? "playback" : error.device == capture ? "capture" : "sound"
    let cards = SoundCards.list()
    var problem = DeviceProblem(
        device: error.device, role: role, function: error.function, code: error.code, technical: error.description,
        cards: cards.map(\.id), cardNumbers: cards.map(\.index), deviceWait: deviceWait)
    let alsaLines = ALSAMessages.heldAtLastFailure
    let absent = DeviceAdvice.isAbsence(problem)
    if absent, let first = alsaLines.first { problem.technical += "; \(first)" }
    let (message, hints) = DeviceAdvice.explain(problem)
    Log.error("stagerack \(command): \(message)")
    if !absent {
        for line in alsaLines { Log.warning(line) }
    }
    // (Trying without a sound card is for `play`: a latency cannot be measured on none.)
    for hint in hints where command == "play" || !hint.hasPrefix("to try play") { Log.info(hint) }
    return 1
}
