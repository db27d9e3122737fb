/// A binary min-heap of indices: the graph compiler's ready list, so that ordering a rack
/// of many units stays O(n log n). Thread: control (a value).
struct IndexHeap {
    private var items: [Int] = []

    init(_ values: [Int]) {
        for v in values { push(v) }
    }

    var isEmpty: Bool { items.isEmpty }

    mutating func push(_ value: Int) {
        items.append(value)
        var i = items.count - 1
        while i > 0 {
            let parent = (i - 1) / 2
            if items[parent] <= items[i] { break }
            items.swapAt(parent, i)
            i = parent
        }
    }

    /// The smallest index, removed.
    mutating func pop() -> Int? {
        guard let first = items.first else { return nil }
        let last = items.removeLast()
        if items.isEmpty { return first }
        items[0] = last
        var i = 0
        while true {
            let l = 2 * i + 1
            let r = l + 1
            var smallest = i
            if l < items.count && items[l] < items[smallest] { smallest = l }
            if r < items.count && items[r] < items[smallest] { smallest = r }
            if smallest == i { break }
            items.swapAt(i, smallest)
            i = smallest
        }
        return first
    }
}
