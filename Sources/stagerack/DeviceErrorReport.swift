import StageDrivers
import StageService

/// `play`'s report of a sound device that did not open: what is wrong and what to do
/// (`DeviceAdvice`, given the cards this machine has), then alsa-lib's own lines when the
/// device is there but refused. Returns the exit status (1). Thread: main.
func reportDeviceError(_ error: ALSAError, setup: PlayCommand.Setup) -> Int32 {
    let role = error.device == setup.playback ? "playback" : error.device == setup.capture ? "capture" : "sound"
    let problem = DeviceProblem(
        device: error.device, role: role, function: error.function, code: error.code, technical: error.description,
        cards: SoundCards.list().map(\.id), deviceWait: setup.service.deviceWait)
    let (message, hints) = DeviceAdvice.explain(problem)
    Log.error("stagerack play: \(message)")
    if !DeviceAdvice.isAbsence(problem) {
        for line in ALSAMessages.heldAtLastFailure { Log.warning(line) }
    }
    for hint in hints { Log.info(hint) }
    return 1
}
