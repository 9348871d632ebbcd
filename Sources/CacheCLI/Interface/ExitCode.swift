import OfflineCache

/// The exit codes the README and docs/reference.md list under "Exit codes" (the BSD sysexits values).
enum ExitCode {
    static let success: Int32 = 0
    static let usage: Int32 = 64
    static let dataError: Int32 = 65
    static let noInput: Int32 = 66
    static let unavailable: Int32 = 69
    static let cannotCreate: Int32 = 73
    static let ioError: Int32 = 74
    static let temporaryFailure: Int32 = 75
    static let noPermission: Int32 = 77
    static let configuration: Int32 = 78

    /// The one mapping from an error to its exit code.
    static func of(_ error: Error, hadCachedRows: Bool = true) -> Int32 {
        switch error {
        case is UsageError, is ReadOnlyQuery.Refused: return usage
        case is SearchIndexDamaged: return ioError
        case SourcesFile.Refusal.notJSON: return dataError
        case SourcesFile.Refusal.unreadable: return noInput
        case is SourcesFile.Refusal: return usage
        case let error as UpstreamError: return of(error, hadCachedRows: hadCachedRows)
        case let error as CacheError: return of(error)
        case let error as DatabaseError: return of(error)
        case let failure as SyncReport.Failure:
            switch failure {
            case .upstream(let error): return of(error, hadCachedRows: hadCachedRows)
            case .database(let error): return of(error)
            case .source(let error): return of(error)
            case .held: return dataError
            }
        default: return ioError
        }
    }

    static func of(_ error: UpstreamError, hadCachedRows: Bool) -> Int32 {
        switch error {
        case .unreachable: return hadCachedRows ? temporaryFailure : unavailable
        case .timedOut, .decodeTimedOut, .truncated, .rateLimited: return temporaryFailure
        case .tls: return unavailable
        case .httpStatus(let status, _, _):
            switch status {
            case 401, 403: return noPermission
            case 408, 429, 500...599: return temporaryFailure
            default: return dataError
            }
        case .badData, .envelope, .tooLarge, .tooManyRedirects: return dataError
        case .unsafeScheme, .badURL, .missingToken, .unfilledVariable, .badToken, .caFile, .notAFile: return configuration
        case .noFile: return noInput
        case .tokenRefused: return noPermission
        }
    }

    static func of(_ error: CacheError) -> Int32 {
        switch error {
        case .noDatabase, .noSuchSource, .noSuchRun, .beforeHistory, .noSuchRow: return noInput
        case .cannotCreate, .cannotWrite: return cannotCreate
        case .newerSchema, .invalidSource, .notACache, .readOnly, .replica: return configuration
        case .sourceExists, .refusedEdit, .invalidSearch: return usage
        case .versionMismatch: return dataError
        case .sourceReplaced: return temporaryFailure
        case .database(let error): return of(error)
        case .refreshFailed(_, let upstream?): return of(upstream, hadCachedRows: true)
        case .refreshFailed: return temporaryFailure
        case .failed: return ioError
        }
    }

    static func of(_ error: DatabaseError) -> Int32 {
        if error.isPermission { return noPermission }
        if error.isBusy { return temporaryFailure }
        return ioError
    }
}
