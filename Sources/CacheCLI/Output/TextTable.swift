/// Columns padded to their widest cell, in display columns. The last column (a URL, an error)
/// is the one that gives way on a terminal: cut with `…` while it keeps a useful width, else
/// moved to a line of its own under its row. Only when the other columns do not fit even so
/// are the ones named `droppable` (what another command shows too) left out, in their order.
final class TextTable {
    private var rows: [[String]]
    private let droppable: [Int]
    /// The least width the last column keeps on its row before it moves to a line of its own.
    static let usefulWidth = 24

    init(header: [String], droppable: [String] = []) {
        rows = [header]
        self.droppable = droppable.compactMap { header.firstIndex(of: $0) }
    }

    func add(_ row: [String]) { rows.append(row) }

    func render(columns: Int? = nil) -> String {
        let last = rows[0].count - 1
        let widths = rows[0].indices.map { column in rows.map { DisplayWidth.of($0[column]) }.max() ?? 0 }
        var shown = Array(rows[0].indices)
        func rest() -> Int { let kept = shown.filter { $0 != last }; return kept.map { widths[$0] }.reduce(0, +) + 2 * (kept.count - 1) }
        guard let columns, rest() + 2 + widths[last] > columns else { return lines(shown, widths, columns: columns, lastOnItsOwn: false) }
        // Every column kept while they fit with the last cut to a useful width, or with the last
        // on a line of its own; only then the droppable ones go.
        if rest() + 2 + Self.usefulWidth <= columns { return lines(shown, widths, columns: columns, lastOnItsOwn: false) }
        for column in droppable where rest() > columns { shown.removeAll { $0 == column } }
        return lines(shown, widths, columns: columns, lastOnItsOwn: rest() + 2 + Self.usefulWidth > columns)
    }

    private func lines(_ shown: [Int], _ widths: [Int], columns: Int?, lastOnItsOwn: Bool) -> String {
        let last = rows[0].count - 1
        let inline = lastOnItsOwn ? shown.filter { $0 != last } : shown
        var out: [String] = []
        for (index, row) in rows.enumerated() {
            let line = inline.map { column in
                column == inline.last ? row[column] : DisplayWidth.pad(row[column], widths[column])
            }.joined(separator: "  ")
            out.append(columns.map { DisplayWidth.fit(line, $0) } ?? line)
            // The header names the columns; a row's own last cell goes under it, indented.
            if lastOnItsOwn && index > 0 && !row[last].isEmpty {
                let below = "    " + row[last]
                out.append(columns.map { DisplayWidth.fit(below, $0) } ?? below)
            }
        }
        return out.joined(separator: "\n") + "\n"
    }
}
