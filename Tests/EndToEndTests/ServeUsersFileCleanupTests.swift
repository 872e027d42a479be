import Foundation
import SharelaneTestSupport
import Testing

/// `serve -- CMD`'s users file, every token in it, does not outlive a serve killed with SIGKILL past the
/// next start: it lives in this user's runtime folder, named for its serve, and the next `serve -- CMD`
/// removes the folders of serves that are gone.
@Suite struct ServeUsersFileCleanupTests {
    @Test func aKilledServesUsersFileIsRemovedByTheNextStart() async throws {
        let scratch = try TemporaryDirectory("e2e-users-file")
        let runtime = scratch.url.appendingPathComponent("runtime")
        try FileManager.default.createDirectory(at: runtime, withIntermediateDirectories: false)
        let told = scratch.file("users-path")
        let recipe = BuiltProducts.packageRoot.appendingPathComponent("Recipes/sharelane.yaml").path
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_RUNTIME_DIR"] = runtime.path
        let fixed = environment
        let process = try StartedProcess(
            [
                "serve", "--store", "memory:", "--recipe", recipe, "--", "/bin/sh", "-c",
                "echo \"$SHARELANE_USERS\" > \(told); sleep 60",
            ], environment: fixed, log: URL(fileURLWithPath: told + ".out"))
        defer { process.killBlocking() }
        @Sendable func written() -> String {
            (try? String(contentsOfFile: told, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        }
        let pid = process.processIdentifier
        // Killed as soon as the command told the file, from a thread of its own: the command runs for a minute.
        _ = await process.once({ !written().isEmpty }) { kill(pid, SIGKILL) }
        let usersFile = written()
        process.killBlocking()
        // In the runtime folder, and left behind: a SIGKILL runs no code of serve's.
        let parent = runtime.appendingPathComponent("sharelane").path
        #expect(usersFile.hasPrefix(parent + "/fixture-"), "\(usersFile)")
        #expect(FileManager.default.fileExists(atPath: usersFile))
        let mode = try FileManager.default.attributesOfItem(atPath: parent)[.posixPermissions] as? Int
        #expect(mode == 0o700, "\(String(mode ?? 0, radix: 8))")

        let next = try await SharelaneBinary.run(
            ["serve", "--store", "memory:", "--", "true"], environment: ["XDG_RUNTIME_DIR": runtime.path])
        #expect(next.status == 0, "\(next.output)")
        #expect(!FileManager.default.fileExists(atPath: usersFile), "the killed serve's users file is gone")
        #expect(try FileManager.default.contentsOfDirectory(atPath: parent).isEmpty)
    }
}
