// The Lanes module; see Docs/Architecture.md.
