/// A count with its noun in the right number, for messages: `counted(1, "switch")` is
/// "1 switch", `counted(3, "switch")` "3 switches", `counted(0, "unit")` "0 units".
/// The plural is the singular + "s" (+ "es" after s, x, z, ch, sh) unless given.
/// Thread: any (not for the render path: it builds a string).
public func counted(_ count: Int, _ singular: String, _ plural: String? = nil) -> String {
    "\(count) \(count == 1 || count == -1 ? singular : plural ?? pluralOf(singular))"
}

/// The regular English plural of a noun: "switch" → "switches", "xrun" → "xruns".
public func pluralOf(_ noun: String) -> String {
    let sibilant = ["s", "x", "z", "ch", "sh"].contains { noun.hasSuffix($0) }
    return noun + (sibilant ? "es" : "s")
}
