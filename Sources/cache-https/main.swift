import Foundation
import OfflineCache

// cache-https: the https fetcher of `cache`, a program of its own so that `cache` does not load
// FoundationNetworking and libcurl on every run (reads included). `cache` starts it for each
// https request, writes one request (JSON) to its stdin, and reads the answer from its stdout
// in frames (see HTTPSWire). It is not meant to be run by hand.

if isatty(STDIN_FILENO) != 0 {
    FileHandle.standardError.write(Data("cache-https: started by cache for https sources; it reads a request on stdin\n".utf8))
    exit(64)
}
let input = FileHandle.standardInput.readDataToEndOfFile()
guard let wire = try? JSONDecoder().decode(HTTPSWire.Request.self, from: input), let request = wire.fetchRequest else {
    FileHandle.standardError.write(Data("cache-https: the request on stdin is not one cache sends\n".utf8))
    exit(64)
}
HTTPExchange(request: request, output: FrameWriter(fd: STDOUT_FILENO)).run()
exit(0)
