import Foundation
import Recipe
import SharelaneTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `include:` and `!asset` name files; a FIFO (or a socket, a device) in their place is refused at the
/// recipe's place without being opened: opening a FIFO to read it waits for a writer, and validate waited
/// forever.
@Suite("Inputs that are not regular files")
struct NotRegularFileTests {
    @Test("an include: naming a FIFO is refused at the include, and an !asset naming one at the asset")
    func fifoRefused() throws {
        let scratch = try TemporaryDirectory("fifo")
        let fifo = scratch.file("pipe")
        try #require(mkfifo(fifo, 0o600) == 0, "mkfifo: \(String(cString: strerror(errno)))")
        let recipe = try scratch.write(
            "r.yaml",
            """
            sharelane: 1
            name: r
            include: [pipe]
            users: { alice: { email: a@example.com } }
            owner: alice
            zones:
              Z:
                records:
                  photo: { type: Photo, fields: { image: !asset pipe } }
            """)
        let errors = FIFOWriter.whileLoading(fifo) { loadErrors(recipe) }
        #expect(
            errors.map(\.description).sorted()
                == [
                    "\(recipe):3:11: error: included file \(fifo) is a FIFO (named pipe), not a regular file; include "
                        + "recipe files",
                    "\(recipe):9:46: error: asset file `pipe` is a FIFO (named pipe), not a regular file",
                ].sorted())
    }

    @Test("the recipe named on the command line may still be a pipe")
    func recipeFromAPipe() throws {
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        let text = "sharelane: 1\nname: piped\nusers: { alice: { email: a@example.com } }\nowner: alice\n"
        _ = text.withCString { write(ends[1], $0, strlen($0)) }
        close(ends[1])
        defer { close(ends[0]) }
        let recipe = try RecipeLoader(environment: [:]).load(path: "/dev/fd/\(ends[0])")
        #expect(recipe.name == "piped")
    }
}

/// Opens the FIFO's writing end again and again on a thread of its own while `body` runs, closing it each
/// time at once: if the code under test opened the FIFO to read it, it reads an empty file and the test fails
/// instead of waiting forever. After `body`, a reader that does not wait lets the writer's last open return.
private final class FIFOWriter: @unchecked Sendable {
    private let lock = NSLock()
    private var stopped = false
    private let path: String

    private init(_ path: String) { self.path = path }

    static func whileLoading<T>(_ path: String, _ body: () -> T) -> T {
        let writer = FIFOWriter(path)
        let done = DispatchSemaphore(value: 0)
        Thread {
            while !writer.lock.withLock({ writer.stopped }) {
                let fd = open(path, O_WRONLY)
                if fd >= 0 { close(fd) }
            }
            done.signal()
        }.start()
        let result = body()
        writer.lock.withLock { writer.stopped = true }
        // Kept open until the thread ends, so that an open it starts after this returns at once.
        let reader = open(path, O_RDONLY | O_NONBLOCK)
        done.wait()
        if reader >= 0 { close(reader) }
        return result
    }
}
