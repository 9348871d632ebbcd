/// The engine's names for the public types an app finds nested under the type they belong to
/// (`Source.Kind`, `CacheError.Upstream`, `Cache.LoadingState`, …): the library's surface stays
/// small for an app (issue 56), while the engine, the command line and the server keep the
/// short names they were written with. Package access: an app never sees these.
package typealias SourceKind = Source.Kind
package typealias SourceOption = Source.Option
package typealias SourceSettings = Source.Settings
package typealias SourceStatus = Source.Status
package typealias RemovalLimit = Source.RemovalLimit
package typealias UpstreamError = CacheError.Upstream
package typealias DatabaseError = CacheError.Database
package typealias HorizonCause = CacheError.HorizonCause
package typealias FetchRequest = Fetcher.Request
package typealias FetchResponse = Fetcher.Response
package typealias ChangeCounts = SyncReport.Counts
