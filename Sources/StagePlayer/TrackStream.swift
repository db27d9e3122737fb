import StageCore
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Where the render thread asks the disk to stream from, and at which transpose. Plain value.
struct StreamRequest: BitwiseCopyable {
    /// Chunks of any other generation are stale and thrown away by the render thread.
    var generation: UInt32
    /// The start point (0: the file's beginning, then the cues).
    var startPoint: Int32
    /// The generation's first frame (from the start point): the preload's end, 0 for a
    /// transposed start (no preload), or a transpose switch's frame.
    var fromFrame: Int64
    /// Semitones, −12…12 (0: the file's audio untouched).
    var semitones: Int32
    /// A transpose switch: the stream goes on from `fromFrame` of the current start (not a
    /// new start), its first `fadeFrames` fading in.
    var continues: Bool
    /// A start of the file at `TrackStream.primedSemitones` after the primed preload: the
    /// shifter goes on from where the control thread left it (first start only).
    var primed = false
}

/// The disk side of a player: a thread of its own reads the track (`TrackReader`, then
/// `TrackTransposer`: transposed there, never on the render thread) into a fixed pool of
/// chunks that the render thread plays. Memory is the pool plus the preloads plus the
/// transposer's history, whatever the file's length.
///
/// Queues (each preallocated, one producer and one consumer, checked by `SPSCQueue`):
/// - `filled`: chunk numbers, disk thread → render thread (audio ready to play);
/// - `free`: chunk numbers, render thread → disk thread (played or stale, to refill);
/// - `requests`: `StreamRequest`s, render thread → disk thread (a start: play, a cue).
/// A chunk's samples and its header (generation, frames, place in the stream) are written
/// by the disk thread before it pushes the chunk's number and read by the render thread
/// after it pops it (the queue's release/acquire orders them); the disk thread never
/// touches a chunk again until the render thread gives its number back through `free`.
///
/// A start is instant: the first `preloadFrames` of every start point were read on the
/// control thread (`preload(_:)`); the disk thread streams from there on. The render thread
/// never waits (live): a chunk that is not there is silence and a counted underrun.
/// Thread: `init`/`preload`/`shutdown` on the control thread; the disk thread runs `run`.
final class TrackStream: @unchecked Sendable {
    let chunkFrames: Int
    let chunkCount: Int
    let preloadFrames: Int
    /// A transpose switch's crossfade (the render thread's fade-out, the disk's fade-in).
    let fadeFrames: Int
    /// Interleaved stereo samples of every chunk, `chunkFrames` frames each.
    let samples: UnsafeMutablePointer<Float>
    let chunkGeneration: UnsafeMutablePointer<UInt32>
    let chunkFrameCount: UnsafeMutablePointer<Int>
    /// The chunk's first frame, counted from the start point (engine frames).
    let chunkStart: UnsafeMutablePointer<Int64>
    /// Producer: disk thread. Consumer: render thread.
    let filled: SPSCQueue<Int32>
    /// Producer: render thread. Consumer: disk thread.
    let free: SPSCQueue<Int32>
    /// Producer: render thread. Consumer: disk thread.
    let requests: SPSCQueue<StreamRequest>
    /// File frames of the start points (0, then each cue's).
    let startFrames: [Int]
    /// Per start point: its first frames, interleaved stereo, and how many (fewer than
    /// `preloadFrames` when the file ends sooner).
    private(set) var preloads: [UnsafeMutablePointer<Float>] = []
    private(set) var preloadLengths: [Int] = []
    /// The song's transpose at load (0: none) and the file's first frames at that pitch,
    /// made on the control thread by the shifter the disk thread goes on with (`primed`).
    let primedSemitones: Int
    let primedPreload: UnsafeMutablePointer<Float>
    private(set) var primedLength = 0
    /// Frames of the primed preload: half a second or so (six chunks), enough for the disk
    /// thread's next chunk, short enough for a song's load (R3 costs ~0.17 s a second of
    /// audio here, most of a second on a Pi 4).
    static let primedChunks = 6
    /// The file goes on after the primed preload (it did not end within it).
    var primedGoesOn: Bool { primedLength == min(preloadFrames, Self.primedChunks * chunkFrames) }
    /// A test hook: the disk thread sleeps this long after each chunk (a slow disk).
    let diskDelayNanoseconds = Atomic<Int>(0)
    /// Chunks the disk thread read (for tests and the status).
    let chunksRead = Atomic<Int>(0)
    /// Where the render thread plays (frames from the start point) and in which generation:
    /// a disk that fell behind skips ahead instead of reading what is already past.
    /// Written by the render thread (position, then generation with release), read by the
    /// disk thread (generation with acquire, then position).
    let renderFrame = Atomic<Int>(0)
    let renderGeneration = Atomic<UInt32>(0)

    private let reader: TrackReader
    private let transposer: TrackTransposer
    private let running = Atomic<Bool>(true)
    private var thread: StageThread?
    private let scratch: UnsafeMutablePointer<Float>

    init(reader: TrackReader, startFrames: [Int], preloadFrames: Int, bufferFrames: Int, fadeFrames: Int, primedSemitones: Int = 0) {
        self.reader = reader
        self.primedSemitones = primedSemitones
        self.startFrames = startFrames
        self.preloadFrames = preloadFrames
        self.fadeFrames = fadeFrames
        chunkFrames = 4096
        chunkCount = max(4, (bufferFrames + chunkFrames - 1) / chunkFrames)
        samples = .allocate(capacity: chunkCount * chunkFrames * 2)
        samples.initialize(repeating: 0, count: chunkCount * chunkFrames * 2)
        chunkGeneration = .allocate(capacity: chunkCount)
        chunkGeneration.initialize(repeating: 0, count: chunkCount)
        chunkFrameCount = .allocate(capacity: chunkCount)
        chunkFrameCount.initialize(repeating: 0, count: chunkCount)
        chunkStart = .allocate(capacity: chunkCount)
        chunkStart.initialize(repeating: 0, count: chunkCount)
        filled = SPSCQueue(minimumCapacity: chunkCount)
        free = SPSCQueue(minimumCapacity: chunkCount)
        requests = SPSCQueue(minimumCapacity: 64)
        scratch = .allocate(capacity: chunkFrames * 2)
        for start in startFrames {
            let buffer = UnsafeMutablePointer<Float>.allocate(capacity: max(preloadFrames, 1) * 2)
            buffer.initialize(repeating: 0, count: max(preloadFrames, 1) * 2)
            reader.start(atFileFrame: start)
            preloads.append(buffer)
            preloadLengths.append(reader.read(into: buffer, frames: preloadFrames))
        }
        // A switch re-renders from a frame in the chunk playing (or the preload): the pool's
        // length back from what the disk has read, plus the chunks it may fill before it
        // reads the request, the shifter's input lead (R3: ~0.1 s) and the priming. Short
        // of it the priming would be cut, and an offline render would depend on timing.
        let history = max(chunkCount * chunkFrames, preloadFrames) + 16 * chunkFrames + TrackTransposer.primeFrames
        transposer = TrackTransposer(reader: reader, sampleRate: reader.engineRate, historyFrames: history)
        let primedCapacity = primedSemitones == 0 ? 1 : min(preloadFrames, Self.primedChunks * chunkFrames)
        primedPreload = .allocate(capacity: primedCapacity * 2)
        primedPreload.initialize(repeating: 0, count: primedCapacity * 2)
        if primedSemitones != 0 {
            reader.start(atFileFrame: startFrames[0])
            transposer.begin(semitones: primedSemitones, outputFrom: 0)
            primedLength = transposer.read(into: primedPreload, frames: primedCapacity)
        }
    }

    deinit {
        samples.deallocate()
        chunkGeneration.deallocate()
        chunkFrameCount.deallocate()
        chunkStart.deallocate()
        scratch.deallocate()
        primedPreload.deallocate()
        for p in preloads { p.deallocate() }
    }

    /// Chunk `c`'s samples.
    @inline(__always)
    func chunk(_ c: Int) -> UnsafeMutablePointer<Float> { samples + c * chunkFrames * 2 }

    /// Starts the disk thread. Thread: control.
    func startThread() throws(TrackError) {
        do {
            thread = try StageThread(.init(name: "stagerack-disk")) { [self] in run() }
        } catch {
            throw TrackError("cannot start the player's disk thread: \(error)")
        }
    }

    /// Stops the disk thread and waits for it. Thread: control.
    func shutdown() {
        guard let t = thread else { return }
        running.store(false, ordering: .releasing)
        t.join()
        thread = nil
    }

    /// The disk thread: follows the latest start and the transpose switch after it, fills
    /// chunks while there are free ones, otherwise naps 2 ms.
    private func run() {
        var generation: UInt32 = 0
        var active = false
        var neverUsed = 0  // chunks 0..<neverUsed have been handed out at least once
        while running.load(ordering: .acquiring) {
            var start: StreamRequest?
            var change: StreamRequest?
            while let r = requests.pop() {
                if r.continues { change = r } else { start = r; change = nil }
            }
            if let r = start {
                generation = r.generation
                let point = Int(r.startPoint)
                if r.primed {  // the shifter goes on after the primed preload
                    active = primedGoesOn
                } else {
                    reader.start(atFileFrame: startFrames[point])
                    transposer.begin(semitones: Int(r.semitones), outputFrom: r.fromFrame)
                    // A track within its preload is played from there, unless transposed.
                    active = r.fromFrame < Int64(preloadLengths[point]) || preloadLengths[point] == preloadFrames
                }
            }
            if let r = change {
                generation = r.generation
                transposer.restart(semitones: Int(r.semitones), at: r.fromFrame, fadeFrames: fadeFrames)
                active = true
            }
            if active {
                var c: Int32 = -1
                if neverUsed < chunkCount {
                    c = Int32(neverUsed)
                    neverUsed += 1
                } else if let f = free.pop() {
                    c = f
                }
                if c >= 0 {
                    active = fill(Int(c), generation: generation)
                    continue
                }
            }
            nap(nanoseconds: 2_000_000)
        }
    }

    /// Fills chunk `i` with the stream's next frames and hands it to the render thread;
    /// false at the track's end.
    private func fill(_ i: Int, generation: UInt32) -> Bool {
        if renderGeneration.load(ordering: .acquiring) == generation {
            let behind = Int64(renderFrame.load(ordering: .relaxed)) - transposer.outputFrame
            if behind > 0 {  // late: what would be read is past; start two chunks ahead
                transposer.jump(to: transposer.outputFrame + behind + Int64(2 * chunkFrames), scratch: scratch, scratchFrames: chunkFrames)
            }
        }
        chunkStart[i] = transposer.outputFrame
        let n = transposer.read(into: chunk(i), frames: chunkFrames)
        chunkGeneration[i] = generation
        chunkFrameCount[i] = n
        _ = filled.push(Int32(i))
        chunksRead.add(1, ordering: .relaxed)
        let delay = diskDelayNanoseconds.load(ordering: .relaxed)
        if delay > 0 { nap(nanoseconds: delay) }
        return n == chunkFrames  // the end (n may be 0: an end marker)
    }
}

/// Sleeps the calling thread (never the render thread). Thread: any but render.
func nap(nanoseconds: Int) {
    var ts = timespec(tv_sec: nanoseconds / 1_000_000_000, tv_nsec: nanoseconds % 1_000_000_000)
    nanosleep(&ts, nil)
}
