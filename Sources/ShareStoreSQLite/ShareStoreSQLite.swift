// The ShareStoreSQLite module; see Docs/Architecture.md.
