import StageCore
import StageDrivers
import StageService

#if canImport(Glibc)
import Glibc
#endif

/// The `stagerack` command: dispatches to one command per file.
let version = "0.1.0"

let usage = """
    StageRack \(version): a live performance rack for Linux.

    usage: stagerack COMMAND [ARGS]

    commands:
      play [RACK] [...]                    run a rack live on ALSA (mic in, speakers out)
      render RACK --output OUT.wav [...]   render a rack offline (file in, file out)
      validate RACK...                     check rack files, every problem with line:column
      devices                              ALSA sound devices and what they accept
      units [TYPE]                         unit types with their parameters
      graph RACK                           the rack as a Graphviz DOT digraph
      midi-monitor [RACK]                  incoming MIDI and what the rack maps it to
      learn RACK --param UNIT.PARAM        map the next control moved (--write: into the file)
      soundcheck RACK [--input FILE]       guide a take (live input or a file), propose the strip (--write)
      latency [--period 32,64,128] [...]   measure the round trip through the interface (cable loop)
      install-service [--rack PATH] [...]  install the binary, racks and the systemd service

    stagerack COMMAND --help shows a command's options; stagerack --version the version.
    """

let commands: [String: (help: String, run: ([String]) throws -> Int32)] = [
    "play": (PlayCommand.help, PlayCommand.run),
    "render": (RenderCommand.help, RenderCommand.run),
    "validate": (ValidateCommand.help, ValidateCommand.run),
    "units": (UnitsCommand.help, UnitsCommand.run),
    "devices": (DevicesCommand.help, DevicesCommand.run),
    "graph": (GraphCommand.help, GraphCommand.run),
    "midi-monitor": (MIDIMonitorCommand.help, MIDIMonitorCommand.run),
    "learn": (LearnCommand.help, LearnCommand.run),
    "soundcheck": (SoundcheckCommand.help, SoundcheckCommand.run),
    "latency": (LatencyCommand.help, LatencyCommand.run),
    "install-service": (InstallServiceCommand.help, InstallServiceCommand.run),
]

@MainActor
func main() -> Int32 {
    let args = Array(CommandLine.arguments.dropFirst())
    guard let first = args.first else {
        Console.err(usage)
        return 2
    }
    if first == "--help" || first == "-h" || first == "help" {
        Console.out(usage)
        return 0
    }
    if first == "--version" {
        Console.out("stagerack \(version)")
        return 0
    }
    guard let command = commands[first] else {
        Console.err("stagerack: unknown command \"\(first)\"\(Suggest.hint(for: first, in: Array(commands.keys)))\n\n\(usage)")
        return 2
    }
    ALSAMessages.route()  // alsa-lib's own lines become "warning: alsa-lib: ..." log lines
    let rest = Array(args.dropFirst())
    if rest.contains("--help") || rest.contains("-h") {
        Console.out(command.help)
        return 0
    }
    // Errors as log lines ("error: ..."), one per problem, for the terminal and the journal.
    do {
        return try command.run(rest)
    } catch let e as RackError {
        for d in e.diagnostics { Log.error(d.description) }
        return 1
    } catch let e as SettingsError {
        for p in e.problems { Log.error(p) }
        return e.onCommandLine ? 2 : 78  // 78 = EX_CONFIG: the service is not restarted
    } catch let e as ALSAError {
        Log.error("stagerack \(first): \(e)")
        return 1
    } catch let e as UsageError {
        Console.err("stagerack \(first): \(e.message)")
        return 2
    } catch {
        Log.error("stagerack \(first): \(error)")
        return 1
    }
}

exit(main())
