#if canImport(Glibc)
    import Glibc
#endif

/// How sharelane has the C allocator (glibc's) grow and keep its heaps.
enum ProcessMemory {
    /// How much more than asked for a heap is made ready at once (glibc's `M_TOP_PAD`; its default is 128 KB).
    ///
    /// A thread's heap is a 64 MB reservation that glibc makes usable a few pages at a time as it grows, a
    /// system call (`mprotect`) each time: an apply of 10,000 records made about 5,800 of them, a twelfth of the
    /// plan's time. With this padding each heap is made usable whole when it is created (about 40 calls). Pages
    /// not written to are not resident: peak memory does not change.
    static let heapGrowthBytes: Int32 = 64 << 20

    /// Freed memory at the top of the heap kept for reuse, not returned (glibc's `M_TRIM_THRESHOLD`).
    static let keptBytes: Int32 = 128 << 20
    /// Blocks up to this size come from the heap, where freed memory is kept, rather than from a mapping of
    /// their own that is returned when freed (glibc's `M_MMAP_THRESHOLD`; its default is 128 KB).
    static let heapBlockBytes: Int32 = 4 << 20

    /// Every command: heaps grow by `heapGrowthBytes`.
    static func growInLargeSteps() {
        set(topPad: heapGrowthBytes)
    }

    /// `sharelane serve`: freed memory is kept. A 200-record answer is about 100 KB, written, copied into the
    /// response and freed on every request. glibc gave such memory back to the system as soon as it was freed
    /// and faulted it in again for the next request: 35 page faults a request, a tenth of the server's CPU time.
    /// Kept, the next request reuses it (2 page faults a request). The price is memory the server held at its
    /// busiest, up to `keptBytes` per allocator arena, which stays with the process instead of going back to the
    /// system.
    static func keepFreedMemory() {
        set(trimThreshold: keptBytes, mmapThreshold: heapBlockBytes)
    }

    /// Sets glibc's allocator parameters given; nothing where the C library is not glibc.
    private static func set(topPad: Int32? = nil, trimThreshold: Int32? = nil, mmapThreshold: Int32? = nil) {
        #if canImport(Glibc)
            // `mallopt` is in <malloc.h>, which Swift's Glibc module leaves out: found by name instead. The
            // parameter numbers are <malloc.h>'s M_TRIM_THRESHOLD (-1), M_TOP_PAD (-2) and M_MMAP_THRESHOLD (-3).
            guard let symbol = dlsym(nil, "mallopt") else { return }
            let mallopt = unsafeBitCast(symbol, to: (@convention(c) (Int32, Int32) -> Int32).self)
            if let trimThreshold { _ = mallopt(-1, trimThreshold) }
            if let topPad { _ = mallopt(-2, topPad) }
            if let mmapThreshold { _ = mallopt(-3, mmapThreshold) }
        #endif
    }
}
