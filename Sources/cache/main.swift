import CacheCLI
import Foundation

exit(CLI.main(arguments: Array(CommandLine.arguments.dropFirst()),
              environment: ProcessInfo.processInfo.environment))
