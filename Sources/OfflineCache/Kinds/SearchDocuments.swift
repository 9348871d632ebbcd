/// What `cache search` indexes of a storage's rows: documents of text, each known by a key
/// (`doc`) within its source. A joke or a record is one document; an account's transactions
/// are one document per vendor, so a million transactions of a few hundred vendors index as a
/// few hundred documents.
struct SearchDocuments: Sendable {
    /// The document a logged change touches: SQL over `c`, a `changes` row (NULL where the change
    /// cannot alter any document).
    let changedDocument: String
    /// The view column (of `cached_*`) that holds a row's document key.
    let column: String
    /// The columns of a row `search` shows whose text the document holds (`record`: the string
    /// values inside a record's JSON): where a hit's match is looked for, to name its field.
    let indexed: [String]
    /// `SELECT doc, text` of the source `?1`'s documents, every one or (`only`) those whose key
    /// is in the JSON array `?2`. A document whose text is NULL is left out (a record without
    /// strings).
    let documents: @Sendable (_ only: Bool) -> String
}
