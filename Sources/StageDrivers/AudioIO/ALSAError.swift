import CALSA

/// An ALSA call that failed: which C function, on which device, and ALSA's own reason.
public struct ALSAError: Error, Sendable, CustomStringConvertible {
    /// The C function that failed, e.g. `snd_pcm_open`.
    public var function: String
    /// The device or object it was called on.
    public var device: String
    /// The negative errno ALSA returned.
    public var code: Int32

    public var description: String {
        "\(device): \(function) failed: \(String(cString: snd_strerror(code))) (\(code))"
    }

    /// The device is gone (USB unplugged) rather than merely out of sync.
    public var isDeviceGone: Bool { code == -ENODEV_ || code == -ENXIO_ }
}

let ENODEV_: Int32 = 19
let EBADFD_: Int32 = 77
let ENXIO_: Int32 = 6
let EIO_: Int32 = 5
let EPIPE_: Int32 = 32
let ESTRPIPE_: Int32 = 86
let EAGAIN_: Int32 = 11

/// Calls an ALSA function and turns a negative result into an `ALSAError` naming it.
/// Every ALSA call of the drivers goes through here (or reports its own error the same way).
/// Thread: any (no allocation on success).
@inline(__always)
@discardableResult
func alsa(_ function: StaticString, _ device: String, _ result: Int32) throws(ALSAError) -> Int32 {
    if result < 0 { throw ALSAError(function: "\(function)", device: device, code: result) }
    return result
}
