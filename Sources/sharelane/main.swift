import SharelaneCLI

await SharelaneCommand.main()
