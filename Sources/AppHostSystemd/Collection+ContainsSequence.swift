extension Collection where Element: Equatable {
    /// Whether `sequence` occurs in this collection: the standard library's own search, so the
    /// daemon does not link `_StringProcessing` (and its regex engine) for one substring test.
    func contains(sequence: some Collection<Element>) -> Bool {
        var start = startIndex
        while true {
            if self[start...].starts(with: sequence) { return true }
            guard start != endIndex else { return false }
            formIndex(after: &start)
        }
    }
}
