import StageCore
import StageOSC
import StageRemote
import StageUnits

/// The view the remote's requests are resolved against: a rack with a snapshot, performance
/// controls and a looper (transport commands), two songs.
private let view: RemoteView = {
    let text = """
        { "format": 2, "units": { "mic": { "type": "input" }, "vox": { "type": "gain" },
            "verb": { "type": "reverb" }, "loop": { "type": "looper" }, "out": { "type": "output" } },
          "connections": [ "mic -> vox -> verb -> loop -> out" ],
          "snapshots": { "wet": { "params": { "verb.dryWetMix": 80 } } },
          "performance": [ { "label": "Voice", "to": "vox.gain", "min": -40, "max": 6 }, { "label": "Verb", "to": "verb.bypass" },
            { "label": "Both", "to": ["vox.gain", "verb.dryWetMix"] } ] }
        """
    let registry = UnitRegistry(StandardUnits.types)
    let rack = try! RackReader(registry: registry).read(text: text, file: "fuzz.json")
    let plan = try! GraphCompiler(registry: registry).compile(rack, options: GraphCompiler.Options(maxFrames: 64))
    return RemoteView(plan: plan, songs: ["one", "two"], song: 0, canBypass: { $0 != "input" && $0 != "output" })
}()

/// libFuzzer entry: the bytes as an OSC datagram (liblo's decoder, then the address space)
/// and as a WebSocket text message (the JSON requests); a valid command is applied to a
/// copy of the state. Nothing may crash, hang or trap. Thread: libFuzzer's.
func fuzzRemote(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data, size <= 65536 else { return 0 }
    var bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let decoded = bytes.withUnsafeMutableBytes { OSCPacket.decode($0) }
    var state = view.state
    if case .success(let packet) = decoded {
        _ = packet.encoded()
        if case .success(.command(let c)) = OSCAddressSpace.request(packet, view: view) { state.set(c.address, c.value) }
    }
    if let text = String(validating: bytes, as: UTF8.self),
       case .success(.command(let c)) = WebProtocol.request(text, view: view) {
        if c.kind == .perform, view.performance.indices.contains(Int(c.index)) {
            for (a, v) in view.performance[Int(c.index)].values(at: c.value) { state.set(a, v) }
        } else {
            state.set(c.address, c.value)
        }
    }
    let after = RemoteView(copying: view, state: state)
    _ = OSCAddressSpace.changes(from: view, to: after)
    _ = WebProtocol.changes(from: view, to: after)
    return 0
}

extension RemoteView {
    init(copying v: RemoteView, state: ParameterState) {
        self = v
        self.state = state
    }
}
