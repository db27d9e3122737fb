import CFluidSynth
import StageCore
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// FluidSynth's log, captured instead of printed.
///
/// FluidSynth logs through one process-wide function pointer, and it logs from the render
/// thread too ("Ringbuffer full", voice allocation failures). `install()` (control thread,
/// done by the first SoundFont load) points every level at a non-capturing C callback that
/// copies the text into a fixed ring of slots: no allocation, no lock, no output, so it is
/// safe on the render thread. The control thread reads the ring: `drain()` for the app to
/// show, `messages(since:)` to collect what one SoundFont load said.
/// Thread: any (the callback); control (install, drain, messages).
public enum FluidSynthLog {
    /// One captured line.
    public struct Message: Sendable, Equatable, CustomStringConvertible {
        /// FluidSynth's level: 0 panic, 1 error, 2 warning, 3 info, 4 debug.
        public var level: Int
        public var text: String
        public var levelName: String {
            switch level {
            case 0: return "panic"
            case 1: return "error"
            case 2: return "warning"
            case 3: return "info"
            default: return "debug"
            }
        }
        public var description: String { "fluidsynth \(levelName): \(text)" }
    }

    /// Routes FluidSynth's log into the ring (idempotent). Thread: control.
    public static func install() {
        _ = installed
    }

    /// Messages logged since the last `drain()` (oldest first), with debug lines left out.
    /// Lines overwritten before they were read are counted in `lost`. Thread: control.
    public static func drain() -> (messages: [Message], lost: Int) {
        install()
        return ring.drain()
    }

    /// The position of the next message, to pass to `messages(since:)` later.
    /// Thread: control.
    public static var position: Int { ring.head.load(ordering: .acquiring) }

    /// Messages logged from `position` on, without consuming them. Thread: control.
    public static func messages(since position: Int) -> [Message] {
        ring.read(from: position, to: ring.head.load(ordering: .acquiring)).messages
    }

    static let ring = LogRing(capacity: 256, slotBytes: 240)

    private static let installed: Bool = {
        let data = Unmanaged.passUnretained(ring).toOpaque()
        let levels: [Int32] = [
            Int32(FLUID_PANIC.rawValue), Int32(FLUID_ERR.rawValue), Int32(FLUID_WARN.rawValue),
            Int32(FLUID_INFO.rawValue), Int32(FLUID_DBG.rawValue),
        ]
        for level in levels {
            _ = fluid_set_log_function(
                level,
                { level, message, data in
                    guard let message, let data else { return }
                    Unmanaged<LogRing>.fromOpaque(data).takeUnretainedValue().write(level: level, message)
                }, data)
        }
        return true
    }()
}

/// A fixed ring of text slots written by any thread without allocating; each slot carries a
/// sequence number (odd while being written) so the reader can tell torn or overwritten
/// slots (a sequence lock). The slots' text and level are atomics too, stored and loaded
/// relaxed, eight bytes at a time: a reader racing a writer reads a torn slot and drops it by
/// its sequence number, without a data race (the thread sanitizer reported the plain-memory
/// version). Thread: any writes; one control thread at a time reads.
final class LogRing: @unchecked Sendable {
    let capacity: Int
    /// Text bytes per slot, the terminating zero included (a multiple of 8).
    let slotBytes: Int
    let wordsPerSlot: Int
    let words: UnsafeMutablePointer<Atomic<UInt64>>
    let levels: UnsafeMutablePointer<Atomic<Int32>>
    let sequence: UnsafeMutablePointer<Atomic<Int>>
    let head = Atomic<Int>(0)
    private let cursor = Locked<Int>(0)

    init(capacity: Int, slotBytes: Int) {
        self.capacity = capacity
        wordsPerSlot = max(1, slotBytes / 8)
        self.slotBytes = wordsPerSlot * 8
        words = .allocate(capacity: capacity * wordsPerSlot)
        for i in 0..<capacity * wordsPerSlot { (words + i).initialize(to: Atomic(0)) }
        levels = .allocate(capacity: capacity)
        for i in 0..<capacity { (levels + i).initialize(to: Atomic(0)) }
        sequence = .allocate(capacity: capacity)
        for i in 0..<capacity { (sequence + i).initialize(to: Atomic(0)) }
    }

    deinit {
        words.deinitialize(count: capacity * wordsPerSlot)
        words.deallocate()
        levels.deinitialize(count: capacity)
        levels.deallocate()
        sequence.deinitialize(count: capacity)
        sequence.deallocate()
    }

    /// Copies `message` (cut to `slotBytes - 1` bytes) into the next slot. Thread: any
    /// (render included): no allocation, no lock, no system call.
    func write(level: Int32, _ message: UnsafePointer<CChar>) {
        if level >= Int32(FLUID_DBG.rawValue) { return }
        let ticket = head.wrappingAdd(1, ordering: .relaxed).oldValue
        let slot = ticket % capacity
        sequence[slot].store(2 * ticket + 1, ordering: .relaxed)
        atomicMemoryFence(ordering: .releasing)
        levels[slot].store(level, ordering: .relaxed)
        let dst = words + slot * wordsPerSlot
        var i = 0  // bytes of the message taken
        var ended = false
        for w in 0..<wordsPerSlot {
            var word: UInt64 = 0
            for k in 0..<8 where !ended {
                let c = UInt8(bitPattern: message[i])
                if c == 0 || i == slotBytes - 1 {
                    ended = true
                } else {
                    word |= UInt64(c) << (8 * UInt64(k))
                    i += 1
                }
            }
            dst[w].store(word, ordering: .relaxed)
            if ended { break }
        }
        sequence[slot].store(2 * ticket + 2, ordering: .releasing)
    }

    /// The text of `slot` as it reads now (maybe torn: check the sequence after).
    private func text(of slot: Int) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(slotBytes)
        let src = words + slot * wordsPerSlot
        copying: for w in 0..<wordsPerSlot {
            let word = src[w].load(ordering: .relaxed)
            for k in 0..<8 {
                let c = UInt8(truncatingIfNeeded: word >> (8 * UInt64(k)))
                if c == 0 { break copying }
                bytes.append(c)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Reads tickets `from..<to` that are still intact. Thread: control.
    func read(from: Int, to: Int) -> (messages: [Message], lost: Int) {
        var out: [FluidSynthLog.Message] = []
        var lost = 0
        var ticket = max(from, to - capacity)
        lost += ticket - from
        while ticket < to {
            let slot = ticket % capacity
            let expected = 2 * ticket + 2
            if sequence[slot].load(ordering: .acquiring) == expected {
                let level = Int(levels[slot].load(ordering: .relaxed))
                let s = text(of: slot)
                atomicMemoryFence(ordering: .acquiring)
                if sequence[slot].load(ordering: .relaxed) == expected {
                    out.append(FluidSynthLog.Message(level: level, text: s))
                } else {
                    lost += 1
                }
            } else {
                lost += 1
            }
            ticket += 1
        }
        return (out, lost)
    }

    typealias Message = FluidSynthLog.Message

    func drain() -> (messages: [Message], lost: Int) {
        cursor.withLock { from in
            let to = head.load(ordering: .acquiring)
            let result = read(from: from, to: to)
            from = to
            return result
        }
    }
}
