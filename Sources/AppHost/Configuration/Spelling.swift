/// Near misses of a name someone typed (`hook-deadlin`, `analytix`, `--cnfig`): the one
/// "did you mean" rule of the config file's keys, its service types and the command line.
package enum Spelling {
    /// The candidate within two edits of `word`, if exactly one is closest.
    package static func closest(to word: String, in candidates: some Sequence<String>) -> String? {
        var best: (name: String, distance: Int)?
        var isTied = false
        for candidate in candidates {
            let distance = editDistance(word, candidate)
            guard distance <= 2 else { continue }
            if let current = best, distance >= current.distance {
                if distance == current.distance { isTied = true }
                continue
            }
            best = (candidate, distance)
            isTied = false
        }
        return isTied ? nil : best?.name
    }

    /// Levenshtein distance, for short names only.
    package static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        if a.isEmpty || b.isEmpty { return max(a.count, b.count) }
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }
}
