import FoundationEssentials

/// `${VAR}` in a source's URL or a header value: kept as written (the database and an export hold
/// the name, never the value) and filled in from the environment at each fetch. `$${` writes a
/// literal `${`. In a URL the braces are kept percent-encoded (`$%7BVAR%7D`), as a URL holds them.
package enum TemplateText {
    /// The variables `text` names, in order, each once.
    package static func variables(in text: String) -> [String] {
        var names: [String] = []
        scan(text) { piece in
            if case .variable(let name) = piece, !names.contains(name) { names.append(name) }
        }
        return names
    }

    /// `text` with each variable's value from `environment`; the first variable unset (or empty),
    /// or set to a value holding a control character such as a newline, is the failure.
    package static func expanded(_ text: String, _ environment: [String: String]) -> Result<String, Unfilled> {
        var out = ""
        var unfilled: Unfilled?
        scan(text) { piece in
            switch piece {
            case .text(let literal): out += literal
            case .variable(let name):
                guard let value = environment[name], !value.isEmpty else { if unfilled == nil { unfilled = .unset(name) }; return }
                if value.unicodeScalars.contains(where: Source.Header.isControl), unfilled == nil { unfilled = .control(name) }
                out += value
            }
        }
        return unfilled.map { .failure($0) } ?? .success(out)
    }

    package enum Unfilled: Error, Equatable {
        case unset(String)
        case control(String)
        package var variable: String {
            switch self {
            case .unset(let name), .control(let name): name
            }
        }
    }

    /// A URL's text with each variable as people write it, `${VAR}`, not as the URL keeps it.
    package static func asWritten(_ text: String) -> String {
        guard text.contains("$%7B") || text.contains("$%7b") else { return text }
        var out = ""
        scan(text) { piece in
            switch piece {
            case .text(let literal): out += literal
            case .variable(let name): out += "${\(name)}"
            }
        }
        return out
    }

    private enum Piece { case text(String), variable(String) }

    /// Splits `text` into literal text and `${NAME}` (or `$%7BNAME%7D`) variables; `$${` (or
    /// `$$%7B`) is a literal `${`. A `${` without a valid name and closing brace is literal text.
    private static func scan(_ text: String, _ visit: (Piece) -> Void) {
        let scalars = Array(text.unicodeScalars)
        var literal = String.UnicodeScalarView()
        var index = 0
        func opening(at position: Int) -> Int? {
            guard position < scalars.count, scalars[position] == "$" else { return nil }
            if position + 1 < scalars.count, scalars[position + 1] == "{" { return 2 }
            if position + 3 < scalars.count, scalars[position + 1] == "%", scalars[position + 2] == "7",
               scalars[position + 3] == "B" || scalars[position + 3] == "b" { return 4 }
            return nil
        }
        while index < scalars.count {
            // `$${`: a literal `${`, written as the rest of the text writes it.
            if scalars[index] == "$", let width = opening(at: index + 1) {
                literal.append(contentsOf: scalars[(index + 1)..<(index + 1 + width)])
                index += 1 + width
                continue
            }
            if let width = opening(at: index) {
                var end = index + width
                var name = ""
                while end < scalars.count, scalars[end].isASCII,
                      Character(scalars[end]).isLetter || scalars[end] == "_" || (!name.isEmpty && Character(scalars[end]).isNumber) {
                    name.unicodeScalars.append(scalars[end])
                    end += 1
                }
                let closing: Int? = end < scalars.count && scalars[end] == "}" ? 1
                    : end + 2 < scalars.count && scalars[end] == "%" && scalars[end + 1] == "7" && (scalars[end + 2] == "D" || scalars[end + 2] == "d") ? 3 : nil
                if !name.isEmpty, let closing {
                    if !literal.isEmpty { visit(.text(String(literal))); literal = String.UnicodeScalarView() }
                    visit(.variable(name))
                    index = end + closing
                    continue
                }
            }
            literal.append(scalars[index])
            index += 1
        }
        if !literal.isEmpty { visit(.text(String(literal))) }
    }
}
