/// The nested parts of a json source's records, as its views show them: the scalar fields of
/// nested objects (`owner.login`, to `maxDepth` keys), columns of `cached_NAME` named with `__`;
/// and for each top-level list field, what its items hold, for its child view
/// `cached_NAME__FIELD`. Each in the order first seen.
package struct NestedShapes: Sendable, Equatable {
    /// Scalars deeper than this many keys (`a.b.c.d`) get no column; they stay in the record.
    package static let maxDepth = 3

    /// A top-level list field's items: scalars (a `value` column), and the scalar fields of
    /// the objects among them (a column each).
    package struct List: Sendable, Equatable {
        package var name: String
        package var hasScalars = false
        package var fields: [String] = []
    }

    package private(set) var objectFields: [[String]] = []
    package private(set) var lists: [List] = []
    private var seenPaths: Set<[String]> = []
    private var listIndex: [String: Int] = [:]
    private var seenListFields: Set<[String]> = []

    package init() {}

    package var isEmpty: Bool { objectFields.isEmpty && lists.isEmpty }

    mutating func addObjectField(_ path: [String]) {
        if seenPaths.insert(path).inserted { objectFields.append(path) }
    }

    /// The list's index, added the first time it is seen.
    mutating func list(_ name: String) -> Int {
        if let index = listIndex[name] { return index }
        listIndex[name] = lists.count
        lists.append(List(name: name))
        return lists.count - 1
    }

    mutating func addListScalar(_ list: Int) { lists[list].hasScalars = true }

    mutating func addListField(_ list: Int, _ field: String) {
        if seenListFields.insert([lists[list].name, field]).inserted { lists[list].fields.append(field) }
    }

    /// Another page's shapes after these.
    mutating func merge(_ other: NestedShapes) {
        for path in other.objectFields { addObjectField(path) }
        for list in other.lists {
            let index = self.list(list.name)
            if list.hasScalars { addListScalar(index) }
            for field in list.fields { addListField(index, field) }
        }
    }

    package static func == (a: NestedShapes, b: NestedShapes) -> Bool { a.objectFields == b.objectFields && a.lists == b.lists }
}
