/// Sample-exact comparison for tests that need bit-exact output (dry paths, limiters
/// below threshold, block-size invariance). Thread: any.
extension Measure {
    /// The first index at which `a` and `b` differ (bit for bit, so NaN ≠ NaN and
    /// 0 ≠ −0), or the shorter length when one is a prefix of the other; nil when equal.
    public static func firstDifference(_ a: ArraySlice<Float>, _ b: ArraySlice<Float>) -> Int? {
        let n = min(a.count, b.count)
        var i = 0
        var ia = a.startIndex
        var ib = b.startIndex
        while i < n {
            if a[ia].bitPattern != b[ib].bitPattern { return i }
            i += 1
            ia += 1
            ib += 1
        }
        return a.count == b.count ? nil : n
    }

    public static func firstDifference(_ a: [Float], _ b: [Float]) -> Int? { firstDifference(a[...], b[...]) }
}
