#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The C library's byte routines, which the hot paths of the decoders and the sorts use (they are
/// vectorised where a Swift loop is not), and pages given back to the system.
package enum Memory {
    /// `memcmp`: negative, zero or positive as the first `count` bytes at `a` sort before, equal
    /// or after those at `b`, byte by byte.
    @inline(__always)
    package static func compare(_ a: UnsafeRawPointer, _ b: UnsafeRawPointer, count: Int) -> Int32 {
        count == 0 ? 0 : memcmp(a, b, count)
    }

    /// Whether `byte` is among the `count` bytes at `start` (`memchr`).
    @inline(__always)
    package static func contains(_ byte: UInt8, in start: UnsafeRawPointer, count: Int) -> Bool {
        count > 0 && memchr(start, Int32(byte), count) != nil
    }

    package static let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))

    /// The whole pages inside `count` bytes at `start` go back to the system (`MADV_DONTNEED`):
    /// they count no more toward the process's memory, and on Linux read as zeros from then on
    /// (the caller never reads them again).
    package static func giveBack(_ start: UnsafeRawPointer, count: Int) {
        let first = (Int(bitPattern: start) + pageSize - 1) / pageSize * pageSize
        let end = (Int(bitPattern: start) + count) / pageSize * pageSize
        guard end > first else { return }
        madvise(UnsafeMutableRawPointer(bitPattern: first), end - first, MADV_DONTNEED)
    }
}
