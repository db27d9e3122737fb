import StageCore

/// The names of StageRack's JACK ports: every output unit's channels by its id
/// (`main_1`, `main_2`), device channels no output plays on `out_N`; the capture channels
/// the input units pick from `in_N`. Thread: any (values).
public enum JackPortNames {
    /// One name per playback channel (`channels` of them), from the rack's outputs.
    public static func outputs(_ outputs: [PlanOutput], channels: Int) -> [String] {
        (0..<channels).map { k in
            for o in outputs {
                if let position = o.deviceChannels.firstIndex(of: k) { return "\(o.unitID)_\(position + 1)" }
            }
            return "out_\(k + 1)"
        }
    }

    /// One name per capture channel.
    public static func inputs(channels: Int) -> [String] { (0..<channels).map { "in_\($0 + 1)" } }
}
