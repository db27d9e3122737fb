import CALSA

/// The sound cards the kernel has, as ALSA numbers and names them (`hw:CARD=ID`), for
/// messages about a device that cannot be opened. Thread: control.
public enum SoundCards {
    public struct Card: Sendable, Equatable {
        /// The card number (`hw:N`), which can change from one boot to the next.
        public var index: Int
        /// The card's id (`hw:CARD=ID`), e.g. `USB`, `Loopback`, `PCH`.
        public var id: String
        /// Its name, e.g. "USB Audio CODEC".
        public var name: String
    }

    /// Every card, in number order; empty on a machine without sound hardware (or without
    /// ALSA in its kernel).
    public static func list() -> [Card] {
        var cards: [Card] = []
        var index: Int32 = -1
        while snd_card_next(&index) == 0 && index >= 0 {
            var ctl: OpaquePointer?
            var info: OpaquePointer?
            var id = "\(index)"
            var name = ""
            if snd_ctl_open(&ctl, "hw:\(index)", 0) == 0, let ctl {
                if snd_ctl_card_info_malloc(&info) == 0, let info {
                    if snd_ctl_card_info(ctl, info) == 0 {
                        id = String(cString: snd_ctl_card_info_get_id(info))
                        name = String(cString: snd_ctl_card_info_get_name(info))
                    }
                    snd_ctl_card_info_free(info)
                }
                snd_ctl_close(ctl)
            }
            cards.append(Card(index: Int(index), id: id, name: name))
        }
        return cards
    }
}
