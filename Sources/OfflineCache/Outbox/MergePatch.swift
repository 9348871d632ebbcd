import FoundationEssentials

/// JSON merge patch, RFC 7396 §2: an object patch changes the members it names (recursively
/// for objects), `null` removes one; anything else replaces the target whole.
enum MergePatch {
    static func apply(_ patch: JSONValue, to target: JSONValue?) -> JSONValue {
        guard case .object(let changes) = patch else { return patch }
        var members: [(String, JSONValue)] = []
        if case .object(let existing)? = target { members = existing }
        for (name, value) in changes {
            let index = members.firstIndex { $0.0 == name }
            if case .null = value {
                if let index { members.remove(at: index) }
                continue
            }
            let merged = apply(value, to: index.map { members[$0].1 })
            if let index { members[index].1 = merged } else { members.append((name, merged)) }
        }
        return .object(members)
    }

    /// The patch that turns `from` into `to` (both objects): what changed, `null` for what went.
    /// Used to send a whole-record edit as a patch.
    static func diff(from: JSONValue, to: JSONValue) -> JSONValue {
        guard case .object(let old) = from, case .object(let new) = to else { return to }
        var patch: [(String, JSONValue)] = []
        for (name, value) in new {
            guard let before = old.first(where: { $0.0 == name })?.1 else {
                patch.append((name, value))
                continue
            }
            guard before.compact != value.compact else { continue }
            if case .object = before, case .object = value { patch.append((name, diff(from: before, to: value))) } else { patch.append((name, value)) }
        }
        for (name, _) in old where !new.contains(where: { $0.0 == name }) { patch.append((name, .null)) }
        return .object(patch)
    }
}
