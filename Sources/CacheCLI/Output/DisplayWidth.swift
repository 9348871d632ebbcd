/// How many terminal columns text takes, as terminals draw it: CJK and emoji take two,
/// combining marks, joiners and variation selectors none, escape sequences none. Lines of the
/// human output are cut to the terminal's width with these, so nothing wraps.
enum DisplayWidth {
    /// The columns one user-perceived character takes.
    static func of(_ character: Character) -> Int {
        var width = 0
        for scalar in character.unicodeScalars {
            if scalar.value == 0xFE0F { return 2 }  // emoji presentation asked for
            width = max(width, of(scalar))
        }
        return width
    }

    static func of(_ scalar: Unicode.Scalar) -> Int {
        let value = scalar.value
        switch scalar.properties.generalCategory {
        case .nonspacingMark, .enclosingMark, .format: return 0
        case .control: return 0
        default: break
        }
        if (0xFE00...0xFE0F).contains(value) || (0xE0100...0xE01EF).contains(value) { return 0 }
        if scalar.properties.isEmojiPresentation { return 2 }
        return isWide(value) ? 2 : 1
    }

    /// East Asian Wide and Fullwidth blocks (Unicode's EastAsianWidth W and F, by block).
    private static func isWide(_ value: UInt32) -> Bool {
        switch value {
        case 0x1100...0x115F, 0x231A...0x231B, 0x2329...0x232A, 0x2E80...0x303E, 0x3041...0x33FF,
             0x3400...0x4DBF, 0x4E00...0x9FFF, 0xA000...0xA4CF, 0xA960...0xA97F, 0xAC00...0xD7A3,
             0xF900...0xFAFF, 0xFE10...0xFE19, 0xFE30...0xFE6F, 0xFF00...0xFF60, 0xFFE0...0xFFE6,
             0x1B000...0x1B2FF, 0x1F200...0x1F2FF, 0x20000...0x2FFFD, 0x30000...0x3FFFD:
            return true
        default:
            return false
        }
    }

    /// The columns `text` takes; escape sequences (colours) take none.
    static func of(_ text: String) -> Int {
        var width = 0
        var inEscape = false
        for character in text {
            if inEscape {
                if let ascii = character.asciiValue, (0x40...0x7E).contains(ascii), character != "[" { inEscape = false }
            } else if character == "\u{1B}" {
                inEscape = true
            } else {
                width += of(character)
            }
        }
        return width
    }

    /// `text` in at most `columns` columns: cut with `…` (or `ellipsis`) when it is wider.
    /// Escape sequences are kept, and a cut line ends with a reset so no colour runs on.
    static func fit(_ text: String, _ columns: Int, ellipsis: String = "…") -> String {
        guard of(text) > columns else { return text }
        let room = max(0, columns - of(ellipsis))
        var out = ""
        var width = 0
        var inEscape = false
        var sawEscape = false
        for character in text {
            if inEscape {
                out.append(character)
                if let ascii = character.asciiValue, (0x40...0x7E).contains(ascii), character != "[" { inEscape = false }
                continue
            }
            if character == "\u{1B}" {
                inEscape = true
                sawEscape = true
                out.append(character)
                continue
            }
            let next = of(character)
            if width + next > room { break }
            width += next
            out.append(character)
        }
        return out + ellipsis + (sawEscape ? "\u{1B}[0m" : "")
    }

    /// `text` padded with spaces to `columns` columns (never cut).
    static func pad(_ text: String, _ columns: Int) -> String {
        text + String(repeating: " ", count: max(0, columns - of(text)))
    }
}
