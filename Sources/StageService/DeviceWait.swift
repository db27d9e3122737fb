/// Waiting at start-up for sound devices that are not there yet (a USB interface that the
/// kernel finds seconds after boot), instead of failing.
///
/// Opening is retried every `interval` seconds. Only errors that mean "not there (yet)" are
/// waited for (the caller's `isAbsent`); any other error (the device exists but refuses the
/// rate, say) ends the wait at once. The log gets one line when the wait starts, a reminder
/// at 5, 10, 20 and 40 s and then every minute, a line whenever the reason changes, and one
/// when the devices are ready: a boot that waits an hour leaves about 60 lines, not 3,600.
/// Thread: control.
public struct DeviceWaiter {
    /// Seconds to wait in all; nil waits for ever, 0 does not wait.
    public var limit: Double?
    /// Seconds between attempts.
    public var interval: Double
    /// True for errors that mean the device is absent (not yet plugged in, busy).
    public var isAbsent: (any Error) -> Bool
    /// Sleeps up to the given seconds; returns true when asked to stop (SIGINT/SIGTERM).
    public var pause: (Double) -> Bool
    /// Monotonic seconds.
    public var now: () -> Double
    public var log: (LogLevel, String) -> Void

    public init(
        limit: Double?, interval: Double = 1, isAbsent: @escaping (any Error) -> Bool,
        pause: @escaping (Double) -> Bool, now: @escaping () -> Double, log: @escaping (LogLevel, String) -> Void
    ) {
        self.limit = limit
        self.interval = interval
        self.isAbsent = isAbsent
        self.pause = pause
        self.now = now
        self.log = log
    }

    /// Elapsed seconds after which a "still waiting" line is due, given the last one.
    public static func nextReminder(after last: Double) -> Double {
        let steps: [Double] = [5, 10, 20, 40, 60]
        if let next = steps.first(where: { $0 > last }) { return next }
        return (last / 60).rounded(.down) * 60 + 60
    }

    /// Calls `open` until it succeeds; returns its result, or nil when asked to stop while
    /// waiting. Throws `open`'s error when it is not an absence, or when the limit is reached.
    public func wait<T>(for what: String, _ open: () throws -> T) throws -> T? {
        let start = now()
        var attempts = 0
        var lastReason: String?
        var reminder = Self.nextReminder(after: 0)
        while true {
            attempts += 1
            do {
                let result = try open()
                if attempts > 1 {
                    log(.info, "\(what): ready after \(seconds(now() - start)) (\(attempts) attempts)")
                }
                return result
            } catch {
                let reason = "\(error)"
                guard isAbsent(error) else { throw error }
                let elapsed = now() - start
                if let limit, elapsed >= limit {
                    if limit > 0 {
                        log(.error, "\(what): gave up after \(seconds(elapsed)): \(reason)")
                    }
                    throw error
                }
                if lastReason == nil {
                    let until = limit.map { "for up to \(seconds($0))" } ?? "until it appears"
                    log(.warning, "waiting for \(what): \(reason); retrying every \(seconds(interval)) \(until)")
                } else if reason != lastReason {
                    log(.warning, "still waiting for \(what) (\(seconds(elapsed))): now \(reason)")
                } else if elapsed >= reminder {
                    log(.info, "still waiting for \(what) (\(seconds(elapsed))): \(reason)")
                }
                while reminder <= elapsed { reminder = Self.nextReminder(after: reminder) }
                lastReason = reason
                if pause(limit.map { min(interval, max($0 - elapsed, 0)) } ?? interval) {
                    log(.info, "stopped while waiting for \(what)")
                    return nil
                }
            }
        }
    }

    func seconds(_ s: Double) -> String {
        let r = (s * 10).rounded() / 10
        return r == r.rounded() ? "\(Int(r)) s" : "\(r) s"
    }
}
