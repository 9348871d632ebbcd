import OfflineCache

/// The commands of local edits (`cache edit`, `push`, `outbox` and its actions), declared as
/// every command is (see `CommandTable.declarations`, which lists them in their place).
extension CommandTable {
    static let localEdits: [CommandDeclaration] = [
        CommandDeclaration(CommandSpec(
            name: "edit",
            overview: "Edit a record of a source that can be written (--write-url, --create-url): the change is shown at once — list, export, the views and serve mark the row pending — and queued in the outbox, in one transaction. It is sent by 'cache push' or the next 'cache sync', never lost, applied once where the upstream honours Idempotency-Key. Exits 0 with 'queued' and never waits for the network unless --wait.",
            arguments: [ArgumentSpec(label: "<name>", help: "The source.", completion: .sources),
                        ArgumentSpec(label: "<key>", help: "The record's key (none with --create).", optional: true)],
            exclusive: [["--set", "--json", "--replace", "--delete", "--create"]],
            examples: ["cache edit tasks 7 --set done=true --set note='call back'", "cache edit tasks 7 --json '{\"done\": true, \"note\": null}'",
                       "cache edit tasks 7 --delete", "cache edit tasks --create '{\"title\": \"buy milk\"}' --wait"]),
            start: Command.Edit(),
            options: [
                .values("--set", "field=value", help: "Set a top-level field; the value is read as JSON when it parses (true, 42, null, \"text\"), else as text. Repeatable.", \.set, .text),
                .value("--json", "object", help: "Change the record by a JSON merge patch (RFC 7396): the fields given change, null removes one.", \.patch, .text),
                .value("--replace", "object", help: "Put this whole record in place of the cached one (its key fields as they are).", \.replace, .text),
                .flag("--delete", help: "Remove the record (shown as pending removal until the upstream applies it).", \.delete),
                .value("--create", "object", help: "Create a record (posted to --create-url); without its key fields it has a local key until the upstream numbers it.", \.create, .text),
                .optionalValue("--wait", "duration", help: "Send it now and wait for the upstream's answer (default: 30s): exit 0 once applied, 1 for a conflict or a rejection, 75 if it is still queued.", bare: 30, \.wait, .duration()),
            ]) { edit, positionals, command throws(UsageError) in
            guard let name = positionals.first else { throw UsageError(message: "Missing <name>: the source whose record to edit.", command: command) }
            edit.name = name
            if edit.create != nil {
                guard positionals.count <= 2 else { throw UsageError(message: "Unexpected argument '\(positionals[2])'.", command: command) }
                edit.key = positionals.count == 2 ? positionals[1] : nil
            } else {
                edit.key = try Positionals.two(positionals, ("<name>", "<key>"), command).1
            }
            guard !edit.set.isEmpty || edit.patch != nil || edit.replace != nil || edit.delete || edit.create != nil else {
                throw UsageError(message: "Say what to change: --set FIELD=VALUE, --json OBJECT, --replace OBJECT, --delete or --create OBJECT.", command: command)
            }
            for pair in edit.set where !pair.contains("=") || pair.hasPrefix("=") {
                throw UsageError(message: "Invalid value '\(pair)' for '--set': expected FIELD=VALUE, such as done=true.", command: command)
            }
            return .edit(edit)
        },
        CommandDeclaration(CommandSpec(
            name: "push",
            overview: "Send the queued local edits of sources (default: every source) to their upstreams now, backoff or not: a record's edits in order, one at a time; different records side by side. Each request carries Idempotency-Key (the same on every retry of it) and If-Match, or reads the record first, so a change never overwrites one it did not see. Exit 0 when every edit sent applied; 1 when one met a conflict or was rejected; 75 when some stay queued after a failure that may pass; when a source's push stopped, what stopped it: 77 for credentials refused, 78 for a missing token, 65 for a read the upstream refused.",
            arguments: [ArgumentSpec(label: "<name>", help: "Sources whose edits to push (default: every source).", optional: true, repeated: true,
                                     completion: .sources)],
            examples: ["cache push", "cache push tasks --plan", "cache push --json"]),
            start: Command.Push(),
            options: [.flag("--plan", help: "List the edits that would be sent, and send nothing.", \.plan),
                      .flag("--json", help: "Print what the push did as one JSON object.", \.json)]) { push, positionals, _ throws(UsageError) in
            push.names = positionals
            return .push(push)
        },
        CommandDeclaration(CommandSpec(
            name: "outbox",
            overview: "List the local edits not yet applied, oldest first: source, key, id, operation, state (queued, in_flight, conflict, rejected or blocked), attempts and the last answer. 'cache outbox show ID', 'retry ID', 'drop ID' and 'resolve NAME KEY --take local|remote' decide about one. Nothing in the outbox expires on its own.",
            arguments: [ArgumentSpec(label: "<name>", help: "Only these sources' edits.", optional: true, repeated: true, completion: .sources)],
            examples: ["cache outbox", "cache outbox tasks --json", "cache outbox resolve tasks 7 --take local"]),
            start: Command.Resolving(),
            options: [.flag("--json", help: "Print a JSON array.", \.json), .flag("--all", help: "Also the edits applied or dropped.", \.all)]) { listing, positionals, _ throws(UsageError) in
            .outbox(.list(names: positionals, all: listing.all, json: listing.json))
        },
        CommandDeclaration(CommandSpec(
            name: "outbox show",
            overview: "Show one edit: what it changes, the version it was made on, the upstream's (for a conflict), its requests' answers and its life.",
            arguments: [ArgumentSpec(label: "<id>", help: "The edit's id, or its first 8 characters or more.")]),
            start: Printing(), options: [.flag("--json", help: "Print a JSON object.", \.json)]) { printing, positionals, command throws(UsageError) in
            .outbox(.show(id: try Positionals.exactlyOne(positionals, "<id>", command), json: printing.json))
        },
        CommandDeclaration(CommandSpec(
            name: "outbox retry",
            overview: "Queue a conflict, rejected or blocked edit again, as a new request with a new Idempotency-Key (a conflict's onto the upstream's version). It goes with the next push.",
            arguments: [ArgumentSpec(label: "<id>", help: "The edit's id, or its first 8 characters or more.")])) { positionals, command throws(UsageError) in
            .outbox(.retry(id: try Positionals.exactlyOne(positionals, "<id>", command)))
        },
        CommandDeclaration(CommandSpec(
            name: "outbox drop",
            overview: "Drop an edit not yet applied: it is never sent, and the row shows what is left.",
            arguments: [ArgumentSpec(label: "<id>", help: "The edit's id, or its first 8 characters or more.")])) { positionals, command throws(UsageError) in
            .outbox(.drop(id: try Positionals.exactlyOne(positionals, "<id>", command)))
        },
        CommandDeclaration(CommandSpec(
            name: "outbox resolve",
            overview: "Resolve a record's conflict: --take local sends the edit again onto the upstream's version (a new request); --take remote drops it and shows the upstream's record.",
            arguments: [ArgumentSpec(label: "<name>", help: "The source.", completion: .sources), ArgumentSpec(label: "<key>", help: "The record's key.")],
            required: ["--take"],
            examples: ["cache outbox resolve tasks 7 --take local"]),
            start: Command.Resolving(),
            options: [.value("--take", "local|remote", help: "Whose version wins.", completion: .choices(["local", "remote"]), \.take, .choice(["local", "remote"]))]) { resolving, positionals, command throws(UsageError) in
            let (name, key) = try Positionals.two(positionals, ("<name>", "<key>"), command)
            return .outbox(.resolve(name: name, key: key, takeLocal: resolving.take == "local"))
        },
    ]
}
