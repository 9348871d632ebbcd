/// Reading a record's nested values into its source's `NestedShapes`.
extension NestedShapes {
    /// Notes what the top-level field `field` holds, from its canonical JSON.
    mutating func visit(_ field: String, canonical bytes: ArraySlice<UInt8>) throws(JSONCursor.Failure) {
        let result: Result<Void, JSONCursor.Failure> = bytes.withUnsafeBufferPointer { raw in
            var cursor = JSONCursor(raw)
            return Result { () throws(JSONCursor.Failure) in try visit(field, &cursor) }
        }
        try result.get()
    }

    /// Notes what the top-level field `field` holds, at the cursor.
    mutating func visit(_ field: String, _ cursor: inout JSONCursor) throws(JSONCursor.Failure) {
        switch cursor.peek() {
        case UInt8(ascii: "{"): try visitObject([field], &cursor)
        case UInt8(ascii: "["): try visitList(field, &cursor)
        default: try cursor.skipValue()
        }
    }

    private mutating func visitObject(_ path: [String], _ cursor: inout JSONCursor) throws(JSONCursor.Failure) {
        try cursor.readObject { cursor, key throws(JSONCursor.Failure) in
            let inner = path + [key]
            if cursor.peek() == UInt8(ascii: "{"), inner.count < Self.maxDepth {
                try self.visitObject(inner, &cursor)
                return
            }
            if Self.isScalar(cursor.peek()) { self.addObjectField(inner) }
            try cursor.skipValue()
        }
    }

    private mutating func visitList(_ name: String, _ cursor: inout JSONCursor) throws(JSONCursor.Failure) {
        let list = self.list(name)
        try cursor.readArray { cursor, _ throws(JSONCursor.Failure) in
            if cursor.peek() == UInt8(ascii: "{") {
                try cursor.readObject { cursor, key throws(JSONCursor.Failure) in
                    if Self.isScalar(cursor.peek()) { self.addListField(list, key) }
                    try cursor.skipValue()
                }
                return
            }
            if Self.isScalar(cursor.peek()) { self.addListScalar(list) }
            try cursor.skipValue()
        }
    }

    /// A string, number or boolean starts here (null has no type to give a column).
    static func isScalar(_ byte: UInt8?) -> Bool {
        guard let byte else { return false }
        return byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "-") || (0x30...0x39).contains(byte)
            || byte == UInt8(ascii: "t") || byte == UInt8(ascii: "f")
    }

    /// Notes what the top-level field `field` holds, from a decoded value (the tree path).
    mutating func visit(_ field: String, _ node: JSONNode) {
        switch node {
        case .object: visitObject([field], node)
        case .array(let items):
            let list = self.list(field)
            for item in items {
                if case .object(let keys, let values) = item {
                    for (key, value) in zip(keys, values) where value.isScalar { addListField(list, key) }
                } else if item.isScalar {
                    addListScalar(list)
                }
            }
        default: break
        }
    }

    private mutating func visitObject(_ path: [String], _ node: JSONNode) {
        guard case .object(let keys, let values) = node else { return }
        for (key, value) in zip(keys, values) {
            let inner = path + [key]
            if case .object = value, inner.count < Self.maxDepth { visitObject(inner, value) } else if value.isScalar { addObjectField(inner) }
        }
    }
}
