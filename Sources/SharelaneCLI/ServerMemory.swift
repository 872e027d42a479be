#if canImport(Glibc)
    import Glibc
#endif

/// How `sharelane serve` has the C allocator keep memory it frees (issue 18, the emulator under load).
///
/// A 200-record answer is about 100 KB, written, copied into the response and freed on every request. glibc
/// gave such memory back to the system as soon as it was freed and faulted it in again for the next
/// request: 35 page faults a request, a tenth of the server's CPU time. Kept, the next request reuses it
/// (2 page faults a request). The price is memory the server held at its busiest, up to `keptBytes` per
/// allocator arena, which stays with the process instead of going back to the system.
enum ServerMemory {
    /// Freed memory at the top of the heap kept for reuse, not returned (glibc's `M_TRIM_THRESHOLD`).
    static let keptBytes: Int32 = 128 << 20
    /// Blocks up to this size come from the heap, where freed memory is kept, rather than from a mapping of
    /// their own that is returned when freed (glibc's `M_MMAP_THRESHOLD`; its default is 128 KB).
    static let heapBlockBytes: Int32 = 4 << 20

    /// Sets both for this process; nothing where the C library is not glibc.
    static func keepFreedMemory() {
        #if canImport(Glibc)
            // `mallopt` is in <malloc.h>, which Swift's Glibc module leaves out: found by name instead. The
            // parameter numbers are <malloc.h>'s M_TRIM_THRESHOLD (-1) and M_MMAP_THRESHOLD (-3).
            guard let symbol = dlsym(nil, "mallopt") else { return }
            let mallopt = unsafeBitCast(symbol, to: (@convention(c) (Int32, Int32) -> Int32).self)
            _ = mallopt(-1, keptBytes)
            _ = mallopt(-3, heapBlockBytes)
        #endif
    }
}
