#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension String {
    /// printf-style formatting of numbers: `String(cFormat: "%.2f", 1.5)` → `1.50`, the same in
    /// every locale (the C locale: `cache` never calls setlocale).
    package init(cFormat format: String, _ arguments: CVarArg...) {
        self = withVaList(arguments) { list in
            var buffer = [CChar](repeating: 0, count: 64)
            let needed = Int(vsnprintf(&buffer, buffer.count, format, list))
            if needed >= buffer.count {
                buffer = [CChar](repeating: 0, count: needed + 1)
                _ = withVaList(arguments) { again in vsnprintf(&buffer, buffer.count, format, again) }
            }
            return buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        }
    }
}
