import CALSA

/// The ALSA PCM devices this machine offers, for `stagerack devices`. Thread: control.
public enum DeviceList {
    /// Stops alsa-lib printing its own messages (a machine with no card makes it complain
    /// while listing). Thread: control.
    public static func quietALSAMessages() { stage_alsa_quiet_errors() }

    public struct PCMDevice: Sendable {
        /// The name to pass to `--playback`/`--capture` (e.g. `hw:CARD=USB,DEV=0`).
        public var name: String
        public var description: String
        public var playback: Bool
        public var capture: Bool
        /// What it accepts, when it could be opened: formats, channels, rates.
        public var accepts: String?
    }

    /// Every PCM device name ALSA knows (hints), with what each accepts when probed.
    public static func pcmDevices(probe: Bool = true) -> [PCMDevice] {
        var hints: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
        guard snd_device_name_hint(-1, "pcm", &hints) == 0, let list = hints else { return [] }
        defer { snd_device_name_free_hint(list) }
        var devices: [PCMDevice] = []
        var i = 0
        while let hint = list[i] {
            i += 1
            func get(_ id: String) -> String? {
                guard let p = snd_device_name_get_hint(hint, id) else { return nil }
                defer { free(p) }
                return String(cString: p)
            }
            guard let name = get("NAME"), name != "null" else { continue }
            // Channel-layout aliases of the same card add nothing for a stage rack.
            if ["surround", "front:", "rear:", "center_lfe:", "side:"].contains(where: { name.hasPrefix($0) }) { continue }
            let io = get("IOID")
            let desc = (get("DESC") ?? "").split(separator: "\n").joined(separator: " - ")
            var d = PCMDevice(name: name, description: desc, playback: io != "Input", capture: io != "Output")
            if probe && (name.hasPrefix("hw:") || name.hasPrefix("plughw:") || name == "default") {
                d.accepts = describe(name, capture: !d.playback)
            }
            devices.append(d)
        }
        return devices
    }

    /// Formats, channel and rate ranges a device accepts, or why it could not be opened.
    static func describe(_ name: String, capture: Bool) -> String {
        var pcm: OpaquePointer?
        let stream = capture ? SND_PCM_STREAM_CAPTURE : SND_PCM_STREAM_PLAYBACK
        let r = snd_pcm_open(&pcm, name, stream, Int32(SND_PCM_NONBLOCK))
        guard r == 0, let pcm else { return "cannot open: \(String(cString: snd_strerror(r)))" }
        defer { snd_pcm_close(pcm) }
        var hwp: OpaquePointer?
        guard snd_pcm_hw_params_malloc(&hwp) == 0, let hw = hwp else { return "?" }
        defer { snd_pcm_hw_params_free(hw) }
        guard snd_pcm_hw_params_any(pcm, hw) >= 0 else { return "?" }
        let formats = PCMSampleFormat.allCases.filter { snd_pcm_hw_params_test_format(pcm, hw, $0.alsaFormat) == 0 }
        var cmin: UInt32 = 0
        var cmax: UInt32 = 0
        var rmin: UInt32 = 0
        var rmax: UInt32 = 0
        var dir: Int32 = 0
        snd_pcm_hw_params_get_channels_min(hw, &cmin)
        snd_pcm_hw_params_get_channels_max(hw, &cmax)
        snd_pcm_hw_params_get_rate_min(hw, &rmin, &dir)
        snd_pcm_hw_params_get_rate_max(hw, &rmax, &dir)
        let ch = cmin == cmax ? "\(cmin) ch" : "\(cmin)…\(cmax) ch"
        let rates = rmin == rmax ? "\(rmin) Hz" : "\(rmin)…\(rmax) Hz"
        return "\(formats.map(\.rawValue).joined(separator: " ")), \(ch), \(rates)"
    }
}

#if canImport(Glibc)
import Glibc
#endif
