import SharelaneCLI

SharelaneCommand.prepareProcess()
await SharelaneCommand.runFromCommandLine()
