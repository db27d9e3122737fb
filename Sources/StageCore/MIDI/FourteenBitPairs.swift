/// Joins the two 7-bit halves of 14-bit values (a CC pair MSB n + LSB n+32, or NRPN/RPN
/// data entry CC 6 + CC 38) in whatever order they arrive.
///
/// A half waits up to `window` seconds for its partner; when the partner comes, the
/// whole value is produced once (no intermediate value from a stale half). A half left
/// alone is produced on its own when the window passes, as MIDI says: an MSB alone means
/// LSB 0; an LSB alone is a fine step under the current MSB. Two halves of the same kind in
/// a row produce the first alone. Storage is allocated once. Thread: the MIDI thread.
public struct FourteenBitPairs {
    /// How long a half waits for its partner, in seconds.
    public static let window = 0.005

    /// A value ready to apply: which slot and when (the engine time of its last half).
    public struct Completed: Equatable, Sendable {
        public var slot: Int
        public var value: Int
        public var sampleTime: Int64
    }

    enum Half: UInt8 { case none, msb, lsb }

    let slots: Int
    var msb: [UInt8]
    var lsb: [UInt8]
    var pending: [Half]
    var pendingSeconds: [Double]
    var pendingSampleTime: [Int64]
    /// Slots with a pending half, to find expired ones without scanning all.
    var pendingList: [Int]
    var pendingCount = 0

    public init(slots: Int) {
        self.slots = slots
        msb = Array(repeating: 0, count: slots)
        lsb = Array(repeating: 0, count: slots)
        pending = Array(repeating: .none, count: slots)
        pendingSeconds = Array(repeating: 0, count: slots)
        pendingSampleTime = Array(repeating: 0, count: slots)
        pendingList = Array(repeating: 0, count: slots)
    }

    /// The current 14-bit value of a slot.
    public func value(_ slot: Int) -> Int { Int(msb[slot]) << 7 | Int(lsb[slot]) }

    /// True when some half waits for its partner.
    public var hasPending: Bool { pendingCount > 0 }

    /// The earliest time a waiting half expires.
    public var nextDeadline: Double? {
        guard pendingCount > 0 else { return nil }
        var t = Double.infinity
        for i in 0..<pendingCount { t = min(t, pendingSeconds[pendingList[i]] + Self.window) }
        return t
    }

    /// Takes one half. Hands `emit` up to two values: a lone half it replaces, then the
    /// completed pair.
    public mutating func receive(
        slot: Int, isMSB: Bool, value: Int, seconds: Double, sampleTime: Int64, emit: (Completed) -> Void
    ) {
        let half: Half = isMSB ? .msb : .lsb
        let other: Half = isMSB ? .lsb : .msb
        if pending[slot] == half {
            // A second half of the same kind: the first was alone.
            emitAlone(slot, emit)
        }
        if isMSB { msb[slot] = UInt8(value & 127) } else { lsb[slot] = UInt8(value & 127) }
        if pending[slot] == other {
            removePending(slot)
            emit(Completed(slot: slot, value: self.value(slot), sampleTime: sampleTime))
        } else {
            pending[slot] = half
            pendingSeconds[slot] = seconds
            pendingSampleTime[slot] = sampleTime
            pendingList[pendingCount] = slot
            pendingCount += 1
        }
    }

    /// Produces the halves whose window has passed at `seconds`.
    public mutating func expire(at seconds: Double, emit: (Completed) -> Void) {
        var i = 0
        while i < pendingCount {
            let slot = pendingList[i]
            if seconds - pendingSeconds[slot] >= Self.window {
                emitAlone(slot, emit)  // removes it; the list shifted
            } else {
                i += 1
            }
        }
    }

    /// Produces every waiting half now (end of a stream).
    public mutating func flush(emit: (Completed) -> Void) {
        while pendingCount > 0 { emitAlone(pendingList[0], emit) }
    }

    /// Forgets every waiting half and value.
    public mutating func reset() {
        for s in 0..<slots {
            msb[s] = 0
            lsb[s] = 0
            pending[s] = .none
        }
        pendingCount = 0
    }

    private mutating func emitAlone(_ slot: Int, _ emit: (Completed) -> Void) {
        if pending[slot] == .msb { lsb[slot] = 0 }
        let t = pendingSampleTime[slot]
        removePending(slot)
        emit(Completed(slot: slot, value: value(slot), sampleTime: t))
    }

    private mutating func removePending(_ slot: Int) {
        pending[slot] = .none
        for i in 0..<pendingCount where pendingList[i] == slot {
            pendingList[i] = pendingList[pendingCount - 1]
            pendingCount -= 1
            return
        }
    }
}
