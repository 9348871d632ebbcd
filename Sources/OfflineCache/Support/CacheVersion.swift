/// The version this build reports with `--version` and in its User-Agent.
public enum CacheVersion {
    public static let string = "0.1.0"
}
