// The Planner module; see Docs/Architecture.md.
