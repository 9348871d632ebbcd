import CacheCLI
import Glibc
import OfflineCache

// A write past a file-size limit fails with an error the command reports, rather than killing
// the process mid-write.
signal(SIGXFSZ, SIG_IGN)
exit(CLI.main(arguments: Array(CommandLine.arguments.dropFirst()), environment: processEnvironment()))
