#if canImport(Glibc)
    import Glibc
#endif

/// Gives the memory of worlds let go back to the system.
///
/// serve keeps freed memory for the requests to come (`ProcessMemory.keepFreedMemory`), and glibc returns
/// only what is free at the top of a heap: the pages of worlds removed or emptied, spread through the heaps,
/// would stay with the process at its largest. A reset or a removal is rare beside requests, so it is the
/// moment to hand them back (`malloc_trim`), at the cost of a few page faults for the next requests.
enum FreedMemory {
    static func giveBack() {
        #if canImport(Glibc)
            // `malloc_trim` is in <malloc.h>, which Swift's Glibc module leaves out: found by name instead.
            guard let symbol = dlsym(nil, "malloc_trim") else { return }
            let trim = unsafeBitCast(symbol, to: (@convention(c) (Int) -> Int32).self)
            _ = trim(0)
        #endif
    }
}
