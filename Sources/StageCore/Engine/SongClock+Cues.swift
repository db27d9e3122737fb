/// A spoken cue's start, for the click (`RenderContext.songCues`): the section it names (an
/// index into the song's sections) and the absolute engine frame it starts on. Thread: any
/// (a value).
@frozen
public struct SongCue: Sendable, BitwiseCopyable {
    public var frame: Int64
    public var section: Int32
}

/// When the song's spoken cues start (racks/README.md, "Spoken cues"): the clock lists them
/// for the block (`cues`), the click unit speaks them.
///
/// - A section placed by bar: on the beat one bar before its start, as the clock lists it
///   (so again after a vamp that plays that bar again).
/// - A section placed by time: where the playing track reaches its time less one bar (the
///   bar's length at the clock's tempo); before the track starts on a count-in's downbeat,
///   on the bar clock as if the track had started there.
/// - A jump (`next-section`, `repeat-section`): the section it leads to, at once when the
///   jump is armed at least a beat before its bar line, else on that bar line. Not again
///   when that section's cue was the last spoken and it has not started yet (a second press,
///   or a jump to the section whose cue the bar before already spoke); a natural cue from
///   the frame a jump is armed on is not spoken (the jump decides what comes next).
///
/// Thread: render (all of it; nothing allocates).
extension SongClock {
    /// Adds a cue start, keeping the list in frame order. Thread: render.
    @inline(__always)
    func addCue(at frame: Int64, section: Int) {
        guard cueCount < cueCapacity else { return }
        var k = cueCount
        while k > 0 && cues[k - 1].frame > frame {
            cues[k] = cues[k - 1]
            k -= 1
        }
        cues[k] = SongCue(frame: frame, section: Int32(truncatingIfNeeded: section))
        cueCount += 1
        lastCued = section
    }

    /// Whether a natural cue at `frame` gives way to the armed jump. Thread: render.
    @inline(__always)
    func jumpOverrides(_ frame: Int64) -> Bool { armed != nil && frame >= armedFrame }

    /// The cue of a section placed by bar one bar after song beat `beat` (listed at `frame`),
    /// among the sections not yet playing. Thread: render.
    @inline(__always)
    func listBarCue(atBeat beat: Double, frame: Int64) {
        guard !jumpOverrides(frame) else { return }
        var k = current + 1
        while k < sectionCount {
            if sections[k].trackFrame < 0 && sections[k].startBeat - beatsPerBar == beat {
                addCue(at: frame, section: k)
                return
            }
            k += 1
        }
    }

    /// The cues of the sections placed by time that start in `from ..< until` (a stretch of
    /// the block at `blockStart`): one bar before their time in the playing track, or, before
    /// the track starts on the count-in's downbeat (song beat 0), on the bar clock. Thread: render.
    func listTimeCues(from: Int64, until: Int64, blockStart: Int64) {
        guard from < until else { return }
        let bar = beatsPerBar * framesPerBeat
        var k = current + 1
        while k < sectionCount {
            defer { k += 1 }
            guard sections[k].trackFrame >= 0 else { continue }
            let inTrack = sections[k].trackFrame - bar
            let at: Int64
            if trackMoving {
                let offset = (inTrack - trackPosition).rounded(.up)
                guard offset >= 0, offset < Double(until - blockStart) else { continue }
                at = blockStart + Int64(offset)
            } else if current < 0 && firstBeat < 0 {
                at = frame(ofBeat: inTrack / framesPerBeat)
            } else {
                continue
            }
            if at >= from && at < until && !jumpOverrides(at) { addCue(at: at, section: k) }
        }
    }

    /// The cue of the jump just armed at frame `at`: the section it leads to, reckoned from
    /// the section that will be playing at its bar line. Thread: render.
    func cueJump(armedAt at: Int64, blockStart: Int64) {
        guard let jump = armed else { return }
        armedFrame = at
        let landing = frame(ofBeat: armedBeat)
        var playing = current
        while playing + 1 < sectionCount && startFrame(of: playing + 1, blockStart: blockStart) < landing { playing += 1 }
        let target = jump == .next ? playing + 1 : max(playing, 0)
        guard target < sectionCount else {
            cueOnLanding = false
            return
        }
        // Already spoken, and not yet reached: a second press, or the bar before's cue.
        guard target != lastCued || target <= current else { return }
        if Double(landing - at) >= framesPerBeat {
            cueOnLanding = false
            addCue(at: at, section: target)
        } else {
            cueOnLanding = true
            lastCued = target
        }
    }
}
