import CStageShim
import StageCore
import StageService
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Where `Log` lines go: stderr in the `LogFormat` of this process (journald priorities
/// under systemd, colours only on a terminal), around the `--meters` view when it is on
/// screen. Lines come from the main thread and the control thread (switches, reloads), so
/// the state lives under a lock: each line and each redraw is written whole. Never called
/// from the audio thread. Thread: any but the audio thread.
enum LogOutput {
    struct State {
        var format = LogFormat.detect(environment: ProcessEnvironment.current)
        /// The meter lines on screen just above the cursor (empty: none).
        var meterLines: [String] = []
    }
    static let state = Locked(State())

    static func emit(_ level: LogLevel, _ message: String) {
        state.withLock { s in
            if s.meterLines.isEmpty {
                Console.writeStderr(s.format.format(level, message))
            } else {
                Console.writeStderr(MeterView.erase(s.meterLines.count) + s.format.format(level, message) + MeterView.draw(s.meterLines, replacing: 0))
            }
        }
    }

    /// Draws the meters in place of the previous ones.
    static func showMeters(_ lines: [String]) {
        state.withLock { s in
            Console.writeStderr(MeterView.draw(lines, replacing: s.meterLines.count))
            s.meterLines = lines
        }
    }

    /// Leaves the last meters on screen; later lines print below them.
    static func releaseMeters() { state.withLock { $0.meterLines = [] } }
}

/// The process environment as a dictionary. Thread: any (read-only after start).
enum ProcessEnvironment {
    static var current: [String: String] {
        var env: [String: String] = [:]
        var p = environ
        while let entry = p.pointee {
            let s = String(cString: entry)
            if let eq = s.firstIndex(of: "=") { env[String(s[..<eq])] = String(s[s.index(after: eq)...]) }
            p += 1
        }
        return env
    }
}

/// alsa-lib's own error lines as `warning: alsa-lib: ...` log lines: only those reported on
/// the main thread (never the audio thread), and each distinct message at most once a
/// minute (a device retried every second would otherwise repeat them for ever).
enum ALSAMessages {
    nonisolated(unsafe) private static var mainThread = pthread_self()
    nonisolated(unsafe) private static var lastSeen: [String: Double] = [:]

    static func route() {
        mainThread = pthread_self()
        stage_alsa_route_errors { file, line, function, _, message in
            guard pthread_equal(pthread_self(), ALSAMessages.mainThread) != 0, let message else { return }
            let text = "alsa-lib: \(function.map { String(cString: $0) } ?? ""): \(String(cString: message))"
            ALSAMessages.log(text)
        }
    }

    /// alsa-lib's lines kept back while a device opens (see `held`); nil: not holding.
    nonisolated(unsafe) private static var holding: [String]?
    /// The lines kept back during the last open that failed, for its report.
    nonisolated(unsafe) private(set) static var heldAtLastFailure: [String] = []

    /// Runs `body` (opening devices) with alsa-lib's lines kept back: logged when it
    /// succeeds, kept in `heldAtLastFailure` when it throws (and logged too when
    /// `emitOnFailure`: while waiting for a device, each distinct line once a minute). A
    /// failed open of `default` on a machine without a card makes alsa-lib print eight
    /// lines that the error's own report says better ("no sound card").
    static func held<T>(emitOnFailure: Bool = false, _ body: () throws -> T) throws -> T {
        holding = []
        do {
            let result = try body()
            let lines = holding ?? []
            holding = nil
            for line in lines { log(line) }
            return result
        } catch {
            heldAtLastFailure = holding ?? []
            holding = nil
            if emitOnFailure { for line in heldAtLastFailure { log(line) } }
            throw error
        }
    }

    static func log(_ text: String) {
        if holding != nil {
            holding?.append(text)
            return
        }
        let now = monotonicSeconds()
        if let t = lastSeen[text], now - t < 60 { return }
        lastSeen[text] = now
        LogOutput.emit(.warning, text)
    }
}

/// CLOCK_MONOTONIC in seconds. Thread: any.
func monotonicSeconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) * 1e-9
}
