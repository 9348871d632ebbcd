import FoundationEssentials

/// Makes data safe to show on a terminal: C0 controls but newline and tab (ESC starts escape
/// sequences, CR overwrites a line, BEL rings), DEL, C1 controls and the bidirectional overrides
/// (U+202A–U+202E, U+2066–U+2069, which reorder what is shown) become visible escapes. In JSON
/// they become JSON escapes (`\u0085`), so the text parses to the same data.
package enum TerminalSafe {
    /// Upstream text may carry terminal escapes; show them as text instead of obeying them.
    package static func escapeControl(_ text: String) -> String {
        // The controls a header may not hold, and the bidirectional overrides that reorder what
        // a terminal shows.
        func isControl(_ scalar: Unicode.Scalar) -> Bool {
            Source.Header.isControl(scalar) || (0x202A...0x202E).contains(scalar.value) || (0x2066...0x2069).contains(scalar.value)
        }
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        var out = ""
        for scalar in text.unicodeScalars {
            if isControl(scalar) {
                out += "\\u{\(String(scalar.value, radix: 16))}"
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    package enum Format { case json, text }

    package static func escaped(_ bytes: [UInt8], as format: Format) -> [UInt8] {
        guard bytes.contains(where: { $0 < 0x20 && $0 != 0x0A && $0 != 0x09 || $0 == 0x7F || $0 == 0xC2 || $0 == 0xE2 }) else {
            return bytes
        }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count + 64)
        func escape(_ scalar: UInt32) {
            let hex = String(scalar, radix: 16)
            let text = format == .json ? "\\u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex : "\\u{\(hex)}"
            out.append(contentsOf: text.utf8)
        }
        var i = 0
        while i < bytes.count {
            let byte = bytes[i]
            if (byte < 0x20 && byte != 0x0A && byte != 0x09) || byte == 0x7F {
                escape(UInt32(byte)); i += 1; continue
            }
            // C1: U+0080–U+009F, encoded C2 80–C2 9F.
            if byte == 0xC2, i + 1 < bytes.count, (0x80...0x9F).contains(bytes[i + 1]) {
                escape(UInt32(bytes[i + 1])); i += 2; continue
            }
            // U+202A–U+202E (E2 80 AA–AE) and U+2066–U+2069 (E2 81 A6–A9).
            if byte == 0xE2, i + 2 < bytes.count {
                let (b1, b2) = (bytes[i + 1], bytes[i + 2])
                if b1 == 0x80 && (0xAA...0xAE).contains(b2) { escape(0x2000 + UInt32(b2 - 0x80)); i += 3; continue }
                if b1 == 0x81 && (0xA6...0xA9).contains(b2) { escape(0x2040 + UInt32(b2 - 0x80)); i += 3; continue }
            }
            out.append(byte); i += 1
        }
        return out
    }
}
