import StageCore

/// What to tell a performer whose rack names a plugin that is not installed: the nearest
/// installed URIs, and the Debian package that ships plugins under that URI's prefix.
/// Thread: control.
enum LV2Suggestions {
    /// URI prefixes of plugin collections Debian packages.
    static let packages: [(prefix: String, package: String)] = [
        ("http://drobilla.net/plugins/mda/", "mda-lv2"),
        ("http://gareus.org/oss/lv2/", "x42-plugins"),
        ("http://lsp-plug.in/plugins/lv2/", "lsp-plugins-lv2"),
        ("urn:zamaudio:", "zam-plugins"),
        ("http://calf.sourceforge.net/plugins/", "calf-plugins"),
        ("http://plugin.org.uk/swh-plugins/", "swh-lv2"),
        ("urn:dragonfly:", "dragonfly-reverb-lv2"),
        ("http://michaelwillis.github.io/dragonfly-reverb", "dragonfly-reverb-lv2"),
        ("http://breakfastquay.com/rdf/lv2-rubberband", "rubberband-lv2"),
        ("http://guitarix.sourceforge.net/plugins/", "guitarix-lv2"),
        ("http://invadarecords.com/plugins/lv2/", "invada-studio-plugins-lv2"),
        ("http://eq10q.sourceforge.net/", "eq10q"),
        ("http://tytel.org/helm", "helm"),
    ]

    static func missing(_ uri: String, _ installed: [LV2PluginSummary]) -> String {
        var text = "no LV2 plugin \"\(uri)\" is installed"
        if !uri.contains(":") {
            text += "; \"plugin\" is a plugin's URI, such as \"http://gareus.org/oss/lv2/fil4#mono\""
        }
        if let (prefix, package) = packages.first(where: { uri.hasPrefix($0.prefix) }),
            !installed.contains(where: { $0.uri.hasPrefix(prefix) })
        {
            text += "; it looks like one of Debian's \(package) (sudo apt install \(package))"
        }
        let near = nearest(uri, installed)
        if !near.isEmpty {
            text += " (did you mean " + near.map { "\"\($0)\"" }.joined(separator: " or ") + "?)"
        } else {
            text += "; `stagerack units lv2` lists the \(counted(installed.count, "installed plugin"))"
        }
        return text
    }

    /// Up to three installed URIs close to `uri`: a typo of a URI; else URIs or names that
    /// contain the text after the URI's last `/` or `#` (`…/mda/DeEs` finds `…/mda/DeEss`).
    static func nearest(_ uri: String, _ installed: [LV2PluginSummary]) -> [String] {
        let uris = installed.map(\.uri)
        if let c = Suggest.closest(to: uri, in: uris) { return [c] }
        let tail = uri.split(whereSeparator: { $0 == "/" || $0 == "#" || $0 == ":" }).last.map(String.init) ?? uri
        let word = tail.lowercased().filter { $0.isLetter || $0.isNumber }
        guard word.count >= 3 else { return [] }
        let hits = installed.filter { p in
            let u = p.uri.lowercased().filter { $0.isLetter || $0.isNumber }
            let n = p.name.lowercased().filter { $0.isLetter || $0.isNumber }
            return u.contains(word) || n.contains(word)
        }
        return Array(hits.prefix(3).map(\.uri))
    }
}
