import StageCore

extension WebProtocol {
    /// `{"type":"soundcheck","go":"start"}` (optional `"sing"` and `"quiet"` seconds: the
    /// guide's lengths, 20 and 3 by default), `"go":"apply"` (the proposal set live and
    /// written into the rack file) or `"go":"cancel"`. Thread: the web server's.
    static func soundcheckRequest(_ node: JSONNode, view: RemoteView) -> Result<WebRequest, RemoteError> {
        let g = view.state.generation
        switch node["go"]?.value.string {
        case "start":
            var sing: Float = 0
            var quietTenths = 0
            if let s = node["sing"] {
                guard let n = s.value.number, SoundcheckGuide.singRange.contains(n) else {
                    return .failure(RemoteError("soundcheck: \"sing\" must be \(Int(SoundcheckGuide.singRange.lowerBound))…\(Int(SoundcheckGuide.singRange.upperBound)) seconds"))
                }
                sing = Float(n)
            }
            if let q = node["quiet"] {
                guard let n = q.value.number, SoundcheckGuide.quietRange.contains(n) else {
                    return .failure(RemoteError("soundcheck: \"quiet\" must be 2.5…\(Int(SoundcheckGuide.quietRange.upperBound)) seconds"))
                }
                quietTenths = Int((n * 10).rounded())
            }
            return .success(.command(RemoteCommand(kind: .soundcheck, generation: g, parameter: quietTenths, value: sing, index: 0)))
        case "apply": return .success(.command(RemoteCommand(kind: .soundcheck, generation: g, index: 1)))
        case "cancel": return .success(.command(RemoteCommand(kind: .soundcheck, generation: g, index: 2)))
        default: return .failure(RemoteError("soundcheck: \"go\" must be \"start\", \"apply\" or \"cancel\""))
        }
    }

    /// The soundcheck as the page shows it: `{"step":"sing","secondsLeft":12,"peak":-14}`,
    /// then `{"step":"proposal","summary":"...","values":[{"target":"comp.threshold",
    /// "value":-31.5,"text":"-31.5","reason":"..."}],"notes":[...]}` or `{"step":"refused",
    /// "message":"..."}`; `null` when none is under way.
    static func soundcheckFields(_ s: RemoteSoundcheck?) -> String {
        guard let s else { return "null" }
        var fields = ["\"step\":\(quote(s.step.rawValue))"]
        switch s.step {
        case .quiet, .sing: fields += ["\"secondsLeft\":\(s.secondsLeft)", "\"peak\":\(number(s.peakDB))"]
        case .analysing: break
        case .refused: fields.append("\"message\":\(quote(s.message))")
        case .proposal:
            let offer = s.offer ?? SoundcheckOffer(summary: "", values: [], notes: [])
            let values = offer.values.map { v in
                "{\"target\":\(quote(v.unit + "." + v.parameter)),\"value\":\(number(v.value)),\"text\":\(quote(v.json)),\"reason\":\(quote(v.reason))}"
            }
            fields += ["\"summary\":\(quote(offer.summary))", "\"values\":[\(values.joined(separator: ","))]",
                       "\"notes\":[\(offer.notes.map(quote).joined(separator: ","))]"]
        }
        return "{\(fields.joined(separator: ","))}"
    }
}
