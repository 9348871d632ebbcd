import FoundationEssentials

/// One entry of the change log: a row a reconcile inserted, updated or removed, or the rows a
/// sync loaded into an empty cache (`loaded`, with their count).
package struct ChangeRecord: Sendable, Equatable {
    package var id: Int
    package var runID: Int
    /// When the run that made the change finished.
    package var at: String
    package var source: String
    /// `account`, `transaction` or `joke`.
    package var rowKind: String
    package var rowID: String
    /// `inserted`, `updated`, `removed` or `loaded`.
    package var change: String
    /// The row's fields as JSON objects, before and after.
    package var before: String?
    package var after: String?
    /// How many rows a load inserted; nil for the other changes.
    package var rows: Int?
}
