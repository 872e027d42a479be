// The Emulator module; see Docs/Architecture.md.
