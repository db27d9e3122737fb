import StageCore
import StageControl
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Raw MIDI bytes from a named pipe (FIFO) into a `MIDIRouter`, for tests where there is no
/// ALSA sequencer (`STAGERACK_MIDI_PIPE=PATH` for `play`; `mkfifo` it first, then write
/// bytes such as `B0 15 40`). It does what `MIDIInput` does after decoding (stamp, route,
/// map), without hotplug or feedback (feedback is read and dropped).
///
/// Thread: as `MIDIInput` (init, `start`, `stop`, `replaceMapper`, `noteParameterMoved`,
/// `takeLog` on the control side; the rest on the thread it starts).
public final class MIDIPipeInput: LiveMIDI, @unchecked Sendable {
    public let path: String
    public let router: MIDIRouter
    public var inputName: String { "the pipe \(path) (STAGERACK_MIDI_PIPE)" }
    public var inputOverruns: Int { 0 }

    let fd: Int32
    let wakeRead: Int32
    let wakeWrite: Int32
    let stopping = Atomic<Bool>(false)
    var thread: StageThread?

    /// Opens `path` (read and write, so the pipe never reaches end of file when a writer
    /// closes). Thread: control.
    public init(path: String, mapper: MIDIMapper?, events: SPSCQueue<EngineEvent>?, clock: AudioClock?, monitor: Bool) throws(RemoteMIDIError) {
        self.path = path
        fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { throw RemoteMIDIError(message: "cannot open \(path): \(String(cString: strerror(errno)))") }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFIFO else {
            close(fd)
            throw RemoteMIDIError(message: "\(path) is not a named pipe (mkfifo)")
        }
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else {
            close(fd)
            throw RemoteMIDIError(message: "cannot make a wake-up pipe")
        }
        for f in fds {
            _ = fcntl(f, F_SETFL, fcntl(f, F_GETFL) | O_NONBLOCK)
            _ = fcntl(f, F_SETFD, FD_CLOEXEC)
        }
        wakeRead = fds[0]
        wakeWrite = fds[1]
        router = MIDIRouter(mapper: mapper, events: events, clock: clock, monitor: monitor)
    }

    deinit {
        stop()
        close(fd)
        close(wakeRead)
        close(wakeWrite)
    }

    public func start() throws {
        precondition(thread == nil, "MIDIPipeInput started twice")
        do {
            thread = try StageThread(.init(name: "stagerack-midi")) { [self] in run() }
        } catch {
            throw RemoteMIDIError(message: "cannot start the MIDI pipe thread: \(error)")
        }
    }

    public func stop() {
        guard let t = thread else { return }
        stopping.store(true, ordering: .releasing)
        wake()
        t.join()
        thread = nil
    }



    public func takeLog() -> [String] { [] }

    public func wake() {
        var b: UInt8 = 1
        _ = write(wakeWrite, &b, 1)
    }

    /// The MIDI thread: bytes → messages → the router. Thread: MIDI.
    func run() {
        var parser = MIDIByteParser()
        var buffer = [UInt8](repeating: 0, count: 1024)
        var fds = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0), pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)]
        while !stopping.load(ordering: .acquiring) {
            router.takeReplacement()
            router.sendFeedback { _ in }
            for i in fds.indices { fds[i].revents = 0 }
            _ = poll(&fds, 2, 100)
            while read(wakeRead, &buffer, buffer.count) > 0 {}
            router.takeReplacement()
            while true {
                let n = read(fd, &buffer, buffer.count)
                guard n > 0 else { break }
                let arrival = monotonicNanoseconds()
                parser.feed(buffer[0..<n]) { router.handle($0, arrivalNanoseconds: arrival) }
            }
            router.poll(nanoseconds: monotonicNanoseconds())
            router.sendFeedback { _ in }
        }
    }
}

/// Why the MIDI pipe cannot be used.
public struct RemoteMIDIError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}
