import SharelaneCLI

await SharelaneCommand.runFromCommandLine()
