import StageDrivers

/// `stagerack devices`: sound devices and what they accept, readable over ssh.
enum DevicesCommand {
    static let help = """
        usage: stagerack devices [--no-probe]

        Lists the ALSA PCM devices for playback and capture (name to use with --playback /
        --capture, description, and what each hardware device accepts: sample formats,
        channels, rates), and the sequencer's MIDI ports. --no-probe skips opening devices.
        """

    static func run(_ args: [String]) throws -> Int32 {
        let a = try Arguments(args, valueOptions: [], flagOptions: ["--no-probe"])
        DeviceList.quietALSAMessages()  // listing a machine without cards makes alsa-lib complain
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
        // The sequencer's MIDI ports: the names a rack's midi.connect patterns match.
        do {
            let seq = try ALSASequencer(name: "StageRack devices")
            let ports = try seq.ports().filter { $0.client != seq.clientID && $0.client != 0 }
            Console.out("MIDI ports (\(ports.count); match them in a rack with \"midi\": { \"connect\": [\"NAME*\"] }):")
            for p in ports {
                let direction = p.isReadable && p.isWritable ? "in/out" : p.isReadable ? "sends" : p.isWritable ? "receives" : "-"
                Console.out("  \(p.client):\(p.port)  \(p.clientName): \(p.portName)  (\(direction))")
            }
        } catch {
            Console.out("MIDI ports: none (\(error))")
        }
        return 0
    }
}
