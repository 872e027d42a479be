// The CloudKitWire module; see Docs/Architecture.md.
