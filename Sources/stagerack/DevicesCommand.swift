import StageDrivers

/// `stagerack devices`: sound devices and what they accept, readable over ssh.
enum DevicesCommand {
    static let help = """
        usage: stagerack devices [--no-probe]

        Lists the ALSA PCM devices for playback and capture (name to use with --playback /
        --capture, description, and what each hardware device accepts: sample formats,
        channels, rates). --no-probe skips opening devices.
        """

    static func run(_ args: [String]) throws -> Int32 {
        let a = try Arguments(args, valueOptions: [], flagOptions: ["--no-probe"])
        let devices = DeviceList.pcmDevices(probe: !a.flags.contains("--no-probe"))
        if devices.isEmpty {
            Console.out("no ALSA PCM devices (is a sound card connected? see `aplay -l`)")
        }
        for (title, pick) in [("playback", { (d: DeviceList.PCMDevice) in d.playback }), ("capture", { $0.capture })] {
            let list = devices.filter(pick)
            Console.out("\(title) devices (\(list.count)):")
            for d in list {
                Console.out("  \(d.name)")
                if !d.description.isEmpty { Console.out("      \(d.description)") }
                if let accepts = d.accepts { Console.out("      accepts: \(accepts)") }
            }
        }
        Console.out("MIDI ports: see `aconnect -l` (the sequencer listing comes with the MIDI layer)")
        return 0
    }
}
