/// A nested value's shape without its values: its keys, brackets and the kinds of its scalars,
/// read straight from canonical JSON bytes (no whitespace). Records of one API mostly repeat a
/// few shapes, so a shape seen before brings no new column and needs no walk; a run of list
/// items of one shape counts once, so lists of any length share a skeleton.
enum ShapeSkeleton {
    /// Writes the skeleton of the canonical JSON value `bytes` into `out` (cleared first);
    /// false when the bytes are not canonical JSON as expected (the caller then walks them).
    static func write(_ bytes: ArraySlice<UInt8>, into out: inout [UInt8]) -> Bool {
        out.removeAll(keepingCapacity: true)
        var index = bytes.startIndex
        return value(bytes, &index, &out, depth: 0) && index == bytes.endIndex
    }

    private static func value(_ bytes: ArraySlice<UInt8>, _ index: inout Int, _ out: inout [UInt8], depth: Int) -> Bool {
        guard index < bytes.endIndex, depth < 64 else { return false }
        switch bytes[index] {
        case UInt8(ascii: "{"):
            out.append(UInt8(ascii: "{"))
            index += 1
            if index < bytes.endIndex, bytes[index] == UInt8(ascii: "}") { index += 1; out.append(UInt8(ascii: "}")); return true }
            while true {
                let start = index
                guard index < bytes.endIndex, bytes[index] == UInt8(ascii: "\""), skipString(bytes, &index) else { return false }
                out.append(contentsOf: bytes[start..<index])  // the key, kept
                guard index < bytes.endIndex, bytes[index] == UInt8(ascii: ":") else { return false }
                index += 1
                out.append(UInt8(ascii: ":"))
                guard value(bytes, &index, &out, depth: depth + 1), index < bytes.endIndex else { return false }
                index += 1
                switch bytes[index - 1] {
                case UInt8(ascii: ","): out.append(UInt8(ascii: ","))
                case UInt8(ascii: "}"): out.append(UInt8(ascii: "}")); return true
                default: return false
                }
            }
        case UInt8(ascii: "["):
            out.append(UInt8(ascii: "["))
            index += 1
            if index < bytes.endIndex, bytes[index] == UInt8(ascii: "]") { index += 1; out.append(UInt8(ascii: "]")); return true }
            var previous: Range<Int>?
            while true {
                let start = out.count
                guard value(bytes, &index, &out, depth: depth + 1), index < bytes.endIndex else { return false }
                // An item of the shape of the one before adds nothing.
                if let previous, out[previous].elementsEqual(out[start...]) { out.removeSubrange(start...) } else { previous = start..<out.count }
                index += 1
                switch bytes[index - 1] {
                case UInt8(ascii: ","): continue
                case UInt8(ascii: "]"): out.append(UInt8(ascii: "]")); return true
                default: return false
                }
            }
        case UInt8(ascii: "\""):
            guard skipString(bytes, &index) else { return false }
            out.append(UInt8(ascii: "s"))
            return true
        case let byte:
            // A number, true, false or null: its kind, not its value.
            out.append(byte == UInt8(ascii: "t") || byte == UInt8(ascii: "f") ? UInt8(ascii: "b") : byte == UInt8(ascii: "n") ? UInt8(ascii: "n") : UInt8(ascii: "0"))
            while index < bytes.endIndex, bytes[index] != UInt8(ascii: ","), bytes[index] != UInt8(ascii: "}"), bytes[index] != UInt8(ascii: "]") {
                index += 1
            }
            return true
        }
    }

    /// Moves past the string starting at `index` (its opening quote).
    private static func skipString(_ bytes: ArraySlice<UInt8>, _ index: inout Int) -> Bool {
        index += 1
        while index < bytes.endIndex {
            switch bytes[index] {
            case UInt8(ascii: "\\"): index += 2
            case UInt8(ascii: "\""): index += 1; return true
            default: index += 1
            }
        }
        return false
    }
}
