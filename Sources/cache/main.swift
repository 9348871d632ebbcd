import CacheCLI
import Glibc
import OfflineCache

exit(CLI.main(arguments: Array(CommandLine.arguments.dropFirst()), environment: processEnvironment()))
