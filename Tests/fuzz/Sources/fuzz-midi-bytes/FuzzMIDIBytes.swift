import StageCore
import StageUnits

/// The rack whose mappings the parsed messages go through: one of every kind of mapping
/// (14-bit, NRPN/RPN, relative encoders, buttons, steps, tap tempo, preset actions, clock).
private let mappingRack = """
    { "format": 2, "units": { "mic": { "type": "input" }, "vox": { "type": "gain" },
        "mix": { "type": "mixer", "inputs": 2 }, "dly": { "type": "delay", "params": { "sync": "1/8" } },
        "out": { "type": "output" } },
      "connections": [ "mic -> vox -> dly -> mix:1", "mix -> out" ],
      "midi": { "clock": true, "programs": "presets", "map": [
        { "cc": 7, "channel": 1, "to": "mix.gain1", "min": -40, "max": 6, "takeover": "pickup", "feedback": true },
        { "cc": 8, "to": "mix.gain2", "min": 6, "max": -40, "curve": "exp", "takeover": "scale" },
        { "cc": 1, "hires": true, "to": "vox.gain", "feedback": true },
        { "nrpn": 1234, "to": "mix.pan1", "feedback": true, "sensitivity": 100 },
        { "rpn": 0, "hires": false, "to": "mix.pan2" },
        { "cc": 16, "mode": "relative-twos", "sensitivity": 100, "to": "dly.lopassCutoff", "curve": "log" },
        { "cc": 17, "mode": "relative-signbit", "sensitivity": 0.01, "to": "mix.gain" },
        { "cc": 18, "mode": "relative-offset", "to": "mix.gain", "curve": [ -20, -10, 0 ] },
        { "cc": 80, "button": "toggle", "to": "vox.bypass", "feedback": true },
        { "cc": 81, "button": "momentary", "to": "mix.mute2" },
        { "cc": 82, "button": "trigger", "to": "mix.gain2", "max": -12 },
        { "cc": 20, "to": "dly.sync", "curve": [ "off", "1/4", "1/8 dotted" ] },
        { "note": 36, "channel": 10, "to": "mix.mute1" },
        { "note": 37, "channel": 10, "action": "tap-tempo" },
        { "cc": 90, "action": "next-preset" } ] } }
    """

private let mapper: MIDIMapper = {
    let registry = UnitRegistry(StandardUnits.types)
    let rack = try! RackReader(registry: registry).read(text: mappingRack, file: "fuzz.json")
    let plan = try! GraphCompiler(registry: registry).compile(rack, options: GraphCompiler.Options(maxFrames: 64))
    return MIDIMapper(plan: plan, presetsByDefault: true)
}()

/// libFuzzer entry: the bytes as a live MIDI stream (running status, real-time bytes
/// inside messages, SysEx), each message mapped at a time that moves with the bytes (so
/// tap tempo, clock and 14-bit pairing see fast and slow input). Thread: libFuzzer's.
func fuzzMIDIBytes(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data else { return 0 }
    var parser = MIDIByteParser()
    var time: Int64 = 0
    var seconds = 1000.0
    for i in 0..<size {
        let byte = data[i]
        time += Int64(byte & 0x0F) * 97
        seconds += Double(byte & 0x07) * 0.004
        parser.feed(byte) { message in
            mapper.handle(message, at: time, seconds: seconds) { _ in }
        }
    }
    mapper.poll(seconds: seconds + 1) { _ in }
    return 0
}
