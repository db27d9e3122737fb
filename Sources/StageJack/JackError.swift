import CJack

/// A libjack call that failed, with what it means for the show.
/// Thread: any (a value).
public struct JackError: Error, Sendable, CustomStringConvertible {
    /// The libjack function that failed.
    public var function: String
    /// `jack_status_t` bits from `jack_client_open`, or a function's error code.
    public var code: Int
    /// The server is not running (or not reachable): wait and retry, as for a lost device.
    public var serverAbsent: Bool

    public init(function: String, code: Int, serverAbsent: Bool = false) {
        self.function = function
        self.code = code
        self.serverAbsent = serverAbsent
    }

    /// From `jack_client_open`'s status bits.
    static func open(status: jack_status_t) -> JackError {
        let failed = status.rawValue & (JackServerFailed.rawValue | JackServerError.rawValue)
        return JackError(function: "jack_client_open", code: Int(status.rawValue), serverAbsent: failed != 0)
    }

    public var description: String {
        if serverAbsent {
            return "no JACK server is running (\(function): status 0x\(String(code, radix: 16))); start one (jackd, or PipeWire's JACK) "
                + "or play through ALSA (--driver alsa)"
        }
        return "\(function) failed (\(code))"
    }
}
