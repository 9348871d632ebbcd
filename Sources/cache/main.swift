import CacheCLI
import FoundationEssentials
import Glibc

exit(CLI.main(arguments: Array(CommandLine.arguments.dropFirst()),
              environment: ProcessInfo.processInfo.environment))
