/// How a long sync advances, for a progress line.
package enum SyncProgress: Sendable {
    case downloading(bytes: Int, total: Int?)
    case reconciling(rows: Int, total: Int)
    case finished
}
