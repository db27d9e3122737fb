import StageCore

/// One thing a remote client (OSC, the web page) asks of the control thread, already
/// resolved against the `RemoteView` the client's server read: plain and fixed size, sent
/// through an `SPSCQueue` (producer: the server's thread; consumer: the control thread).
/// Unit and parameter indices (and snapshot indices) belong to the plan `generation`;
/// the control thread refuses a command made for a rack that no longer plays.
/// Thread: any (a value).
@frozen
public struct RemoteCommand: Sendable, BitwiseCopyable, Equatable {
    public enum Kind: UInt8, Sendable, BitwiseCopyable {
        /// Set `unit.parameter` to `value` (in the parameter's units); `parameter`
        /// `ParameterAddress.bypassIndex` is the unit's bypass (0…1).
        case parameter
        /// Switch to song `index` (0-based) of the setlist.
        case song
        case next
        case previous
        /// Recall snapshot `index` of the current rack.
        case snapshot
        /// Silence everything now (every unit reset: notes, tails).
        case panic
        /// MIDI learn for `unit.parameter`: the next control moved on a controller is mapped
        /// to it (the mapping `stagerack learn` makes).
        case learn
        /// Stop learning without a mapping.
        case learnCancel
        /// Remove the mapping learned from the page at `index` (`RemoteView.mappings`'
        /// `learned` index) of the rack playing.
        case unlearn
        /// Save the values (and learned mappings) into the rack file, or as a new snapshot:
        /// which one, and the snapshot's name, wait in `RemoteHub.saveNames` (set by
        /// `requestSave`; the command itself carries nothing).
        case save
        /// Move performance control `index` (`RemoteView.performance`) to position `value`
        /// (a fader's 0…1, a toggle's 0 or 1, a choice's index): every target it names.
        case perform
        /// Tap tempo: `value` BPM (20…400) from the page's taps, the engine's tap source.
        case tempo
        /// Fire command `index` of `unit` (`RemoteView.transport`: a player's play, a
        /// looper's record), a press then a release, as a mapped MIDI button would.
        case unitCommand
        /// Talk on (`value` 1) or off (0): the rack's colouring units off the voice, tails
        /// ringing out (`Talk.targets`).
        case talk
        /// The song's next section (`value` 1) or the current one again (2), from the next
        /// bar line (`SongClock`, `SectionJump`).
        case section
        /// The song a semitone up (`value` 1) or down (−1), at the next section or at once
        /// (`SongTranspose`).
        case transpose
        /// The guided soundcheck (`RemoteHub+Soundcheck.swift`): `index` 0 starts it
        /// (`value`: the singing's seconds, 0 for 20; `parameter`: the quiet's tenths of a
        /// second, 0 for 3 s), 1 applies its proposal, 2 cancels it.
        case soundcheck
    }

    public var kind: Kind
    public var generation: UInt32
    public var unit: Int32
    public var parameter: Int32
    public var value: Float
    public var index: Int32

    public init(kind: Kind, generation: UInt32 = 0, unit: Int = 0, parameter: Int = 0, value: Float = 0, index: Int = 0) {
        self.kind = kind
        self.generation = generation
        self.unit = Int32(truncatingIfNeeded: unit)
        self.parameter = Int32(truncatingIfNeeded: parameter)
        self.value = value
        self.index = Int32(truncatingIfNeeded: index)
    }

    public static func set(_ address: ParameterAddress, _ value: Float, generation: UInt32) -> RemoteCommand {
        RemoteCommand(kind: .parameter, generation: generation, unit: address.unit, parameter: address.parameter, value: value)
    }

    public var address: ParameterAddress { ParameterAddress(unit: Int(unit), parameter: Int(parameter)) }
}

/// What the servers show: the parameter state and where the show is (song, snapshot).
/// Published by the control thread after every change; read by the server threads.
/// Thread: any (a value).
public struct RemoteView: Sendable {
    public var state: ParameterState
    public var rackName: String
    /// The setlist's song names, and the one playing (0-based).
    public var songs: [String]
    public var song: Int
    /// The current rack's snapshot names, and the one recalled last (nil after a switch).
    public var snapshots: [String]
    public var snapshot: String?
    /// The MIDI mappings of the rack playing: its file's, then those learned from a page.
    public var mappings: [RemoteMapping]
    /// `unit.param` a page is learning a control for (nil: none).
    public var learning: String?
    /// What the last learn, unlearn or save did (shown on every page); nil before any.
    public var notice: String?
    /// The performer view's controls (the rack's `performance` section or its default).
    public var performance: [RemotePerformanceControl]
    /// The tempo in BPM: the rack's (or song's), then the last tapped on a page.
    public var tempo: Double
    /// The key of the first unit that sets one (harmony, tune): "C major"; nil: none.
    public var key: String?
    /// The units with commands (players, loopers), in plan order: the performer view's
    /// transport buttons.
    public var transport: [RemoteTransport]
    /// Whether Talk is on (set by the remote's talk command; off after a song switch).
    public var talk = false
    /// The song's lyrics matched to its sections (the page's lyrics message); nil: none.
    public var lyrics: SongLyrics?
    /// The soundcheck from the page under way, or its proposal; nil: none.
    public var soundcheck: RemoteSoundcheck?
    /// Counts the publications: a server that saw this serial has seen everything.
    public var serial = 0

    public init(plan: RenderPlan, songs: [String], song: Int, canBypass: (String) -> Bool) {
        state = ParameterState(plan: plan, canBypass: canBypass)
        rackName = plan.rack.name
        self.songs = songs
        self.song = song
        snapshots = plan.rack.snapshots.map(\.name)
        mappings = plan.rack.midi.map.map { RemoteMapping($0, learned: nil) }
        performance = RemotePerformanceControl.resolve(plan.rack, in: state)
        transport = plan.rack.units.compactMap { u in
            guard !u.commands.isEmpty, let i = plan.unitIndex(u.id) else { return nil }
            return RemoteTransport(unit: u.id, unitIndex: i, commands: u.commands)
        }
        tempo = plan.rack.tempo
        lyrics = plan.rack.lyrics
        key = plan.rack.units.lazy.compactMap { u in
            u.settings.string("key").map { k in u.settings.string("scale").map { "\(k) \($0)" } ?? k }
        }.first
    }

    /// Command `name` of `unit` (a transport button), or what is wrong.
    public func unitCommand(unit: String, name: String) -> Result<RemoteCommand, RemoteError> {
        guard let t = transport.first(where: { $0.unit == unit }) else {
            return .failure(RemoteError("no unit \"\(unit)\" with commands in this rack\(transport.isEmpty ? "" : " (units: \(transport.map(\.unit).joined(separator: ", ")))")"))
        }
        guard let i = t.commands.firstIndex(of: name) else {
            return .failure(RemoteError("\(unit) has no command \"\(name)\" (commands: \(t.commands.joined(separator: ", ")))"))
        }
        return .success(RemoteCommand(kind: .unitCommand, generation: state.generation, unit: t.unitIndex, index: i))
    }

    /// Performance control `index` to `position`, or what is wrong.
    public func performCommand(_ index: Int, position: Double) -> Result<RemoteCommand, RemoteError> {
        guard performance.indices.contains(index) else {
            return .failure(RemoteError("no performance control \(index + 1) (controls 1…\(performance.count))"))
        }
        let c = performance[index]
        switch c.kind {
        case .fader:
            guard (0...1).contains(position) else { return .failure(RemoteError("perform: \(c.label): a fader's position is 0…1")) }
        case .toggle:
            guard position == 0 || position == 1 else { return .failure(RemoteError("perform: \(c.label): a toggle is 0 or 1")) }
        case .choice:
            let n = c.targets[0].spec.choices.count
            guard position == position.rounded(), position >= 0, position < Double(n) else {
                return .failure(RemoteError("perform: \(c.label): a choice is 0…\(n - 1)"))
            }
        }
        return .success(RemoteCommand(kind: .perform, generation: state.generation, value: Float(position), index: index))
    }

    /// Resolves `unit`/`parameter` names to a command, or says what is wrong.
    public func command(unit: String, parameter: String, value: Float) -> Result<RemoteCommand, RemoteError> {
        guard let address = state.address(unit: unit, parameter: parameter) else {
            if !state.units.contains(where: { $0.id == unit }) {
                return .failure(RemoteError("no unit \"\(unit)\" in this rack (units: \(state.units.map(\.id).joined(separator: ", ")))"))
            }
            return .failure(RemoteError("unit \"\(unit)\" has no parameter \"\(parameter)\""))
        }
        guard value.isFinite else { return .failure(RemoteError("\(unit).\(parameter): the value must be a number")) }
        return .success(.set(address, value, generation: state.generation))
    }

    /// A snapshot by name, or what is wrong.
    public func snapshotCommand(_ name: String) -> Result<RemoteCommand, RemoteError> {
        guard let i = snapshots.firstIndex(of: name) else {
            return .failure(RemoteError("no snapshot \"\(name)\" in this rack\(snapshots.isEmpty ? "" : " (snapshots: \(snapshots.joined(separator: ", ")))")"))
        }
        return .success(RemoteCommand(kind: .snapshot, generation: state.generation, index: i))
    }

    /// A song by 0-based index, or what is wrong.
    public func songCommand(_ index: Int) -> Result<RemoteCommand, RemoteError> {
        guard songs.indices.contains(index) else { return .failure(RemoteError("no song \(index + 1) (songs 1…\(songs.count))")) }
        return .success(RemoteCommand(kind: .song, index: index))
    }
}

/// A unit whose commands the page offers as buttons. Thread: any (a value).
public struct RemoteTransport: Sendable, Equatable {
    public var unit: String
    /// Its index in the plan (`ParameterAddress.unit`).
    public var unitIndex: Int
    public var commands: [String]
}

/// One MIDI mapping as the page lists it. Thread: any (a value).
public struct RemoteMapping: Sendable, Equatable {
    /// `unit.param`, or the action or command it fires.
    public var target: String
    /// The rack-file entry, e.g. `{ "cc": 21, "channel": 1, "to": "vox.gain" }`.
    public var text: String
    /// The index among the mappings learned from a page (what `unlearn` removes); nil for
    /// the rack file's own.
    public var learned: Int?

    public init(_ d: MIDIMappingDescription, learned: Int?) {
        target = d.target ?? d.command ?? d.action?.rawValue ?? "?"
        text = d.jsonText
        self.learned = learned
    }
}

/// The meters the servers show, published by the main thread at each of its turns
/// (from `LiveAudio.status()` and the MIDI monitor). Thread: any (a value).
public struct RemoteMeters: Sendable, Equatable {
    public struct GainReduction: Sendable, Equatable {
        public var unit: String
        public var dB: Float
        public init(unit: String, dB: Float) {
            self.unit = unit
            self.dB = dB
        }
    }

    /// Peaks since the last reading (linear, 0…1+); nil input: no capture.
    public var peakIn: Float?
    public var peakOut: Float = 0
    /// Render time over period time (1 = 100 %), the highest since the last reading.
    public var load: Float = 0
    public var xruns = 0
    /// The tempo the playing rack follows (BPM) and the name of its source
    /// (`TempoSource.name`; nil: none gives one); nil tempo: not known (no live audio).
    public var tempo: Double?
    public var tempoSource: String?
    /// With `play --link`: the Ableton Link session's peers and tempo, and the beat the
    /// rack's grid took at a time on Link's clock (µs); nil: Link off.
    public var link: Link?
    public struct Link: Sendable, Equatable {
        public var peers: Int
        public var tempo: Double
        public var beat: Double
        public var micros: Int64
        public init(peers: Int, tempo: Double, beat: Double, micros: Int64) {
            self.peers = peers
            self.tempo = tempo
            self.beat = beat
            self.micros = micros
        }
    }
    /// The setlist song's section playing and the next (`SongClock`); nil: none.
    public var section: String?
    public var nextSection: String?
    /// The index of the section playing in the song's timeline (what the lyrics follow).
    public var sectionIndex: Int?
    /// The song's transpose in semitones (`SongTranspose`); nil: nothing to transpose.
    public var transpose: Int?
    /// The song's track's position in seconds while it plays (`UnitTransportReading`):
    /// what the lyrics' timed lines follow; nil: no track playing.
    public var trackSeconds: Double?
    /// Talk as the engine has it (`RackPlayer.playingTalk`): whoever switched it (MIDI, a
    /// section, the page, OSC). nil: not known.
    public var talk: Bool?
    public var gainReduction: [GainReduction] = []
    /// A unit's read-only values (`UnitReadout`: the tuner's note, an LV2 plugin's outputs),
    /// formatted on the main thread: `text` as `play --status` shows it, `values` by name.
    public struct Readout: Sendable, Equatable {
        public var unit: String
        public var text: String
        public var values: [Value]
        public struct Value: Sendable, Equatable {
            public var name: String
            public var value: Float
            public init(name: String, value: Float) {
                self.name = name
                self.value = value
            }
        }
        public init(unit: String, text: String, values: [Value]) {
            self.unit = unit
            self.text = text
            self.values = values
        }
    }
    public var readouts: [Readout] = []
    /// The last MIDI messages seen, oldest first (at most `midiHistory`).
    public var lastMIDI: [String] = []
    public var serial = 0
    public static let midiHistory = 8

    public init() {}
}

/// A remote request that cannot be carried out: the words of the error reply.
public struct RemoteError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
