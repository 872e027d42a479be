import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The small process that leads the process group of a long-running program sharelane starts (a lane's
/// `sh:` step, an outside action, the command of `serve -- CMD`), so that the group never outlives sharelane.
///
/// A process group survives the process that made it: when sharelane is killed outright (SIGKILL, the out of
/// memory killer) nothing is left to stop the group, and its programs run on under init for ever. The guard is
/// sharelane's own executable started again in a mode of its own (`takeOverIfAsked`, the first thing `main`
/// does): it starts the program in its group, waits for it, and ends as the program ended (its status, or the
/// signal that ended it), so the caller sees the program's end. When sharelane goes away first, the guard
/// sends the group SIGTERM, and SIGKILL when it has not ended within the grace period.
///
/// It watches its parent by `getppid()` (a process whose parent ends is given to another), never by
/// `PR_SET_PDEATHSIG`, which fires when the *thread* that started the guard ends: a thread of Swift's
/// concurrency may end while sharelane runs on.
///
/// It also starts the program with every signal at its default and none blocked, glibc's reserved signals
/// (32 and 33) included: glibc's `posix_spawn` sets those to ignored in the program it starts unless the
/// attributes name them, and `sigfillset` leaves them out, so the guard names them itself.
///
/// Linux only: elsewhere the program is started directly, as it was before.
public enum ProcessGroupGuard {
    /// The first argument that makes sharelane a guard. Not a command: nobody types it.
    static let marker = "__sharelane-process-group-guard"

    private static let guardExecutable = Mutex<String?>(nil)

    /// Becomes the guard when this process was started as one (it then never returns); otherwise remembers
    /// that this executable can guard the programs it starts. `main` calls it before anything else.
    public static func takeOverIfAsked() {
        #if os(Linux)
            let arguments = CommandLine.arguments
            if arguments.count > 1, arguments[1] == marker {
                exit(runGuard(Array(arguments.dropFirst(2))))
            }
            guardExecutable.withLock { $0 = ownExecutable() }
        #endif
    }

    #if os(Linux)
        /// The command that starts `arguments` under a guard, or nil when this process cannot guard (a test
        /// bundle, another platform): the program is then started directly.
        /// - Throws: `ChildProcess.LaunchFailure` when the program does not exist or is not executable.
        static func guarded(
            _ arguments: [String], environment: [String: String], directory: String?, grace: Duration
        ) throws -> [String]? {
            guard let executable = guardExecutable.withLock({ $0 }), let program = arguments.first else { return nil }
            let path = try resolved(program, searchPath: environment["PATH"], directory: directory)
            let (seconds, attoseconds) = grace.components
            let graceMilliseconds = max(0, seconds * 1000 + attoseconds / 1_000_000_000_000_000)
            // The program's own name stays its first argument, as a shell would give it (a multi-call binary
            // reads it).
            return [executable, marker, String(getpid()), String(graceMilliseconds), path, "--"] + arguments
        }

        /// The program as a path the guard can execute: as it is when it holds a `/` (relative to `directory`,
        /// where it runs), otherwise the first executable file of that name on `searchPath`, as a shell finds it.
        /// - Throws: `ChildProcess.LaunchFailure` when there is no such executable file, as the program would
        ///   have been refused had it been started directly.
        static func resolved(_ program: String, searchPath: String?, directory: String?) throws -> String {
            func executable(_ path: String) -> Bool {
                var status = stat()
                return stat(path, &status) == 0 && status.st_mode & S_IFMT == S_IFREG && access(path, X_OK) == 0
            }
            if program.contains("/") {
                let full = program.hasPrefix("/") ? program : (directory ?? ".") + "/" + program
                guard executable(full) else {
                    throw ChildProcess.LaunchFailure(program: program, notFound: true, reason: "not executable")
                }
                return program
            }
            let folders = (searchPath ?? "/usr/local/bin:/usr/bin:/bin").split(
                separator: ":", omittingEmptySubsequences: false)
            for folder in folders {
                let candidate = (folder.isEmpty ? "." : String(folder)) + "/" + program
                if executable(candidate) { return candidate }
            }
            throw ChildProcess.LaunchFailure(program: program, notFound: true, reason: "not found")
        }

        /// This executable's path (`/proc/self/exe` when the file was replaced or removed since it started).
        private static func ownExecutable() -> String {
            var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
            guard count > 0 else { return "/proc/self/exe" }
            let path = String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            return path.hasSuffix(" (deleted)") ? "/proc/self/exe" : path
        }

        /// The guard's life: `PARENT-PID GRACE-MS PATH -- NAME ARGUMENTS…`. Returns the status to exit with, or
        /// ends by the signal that ended the program.
        private static func runGuard(_ arguments: [String]) -> Int32 {
            guard arguments.count >= 5, let parent = pid_t(arguments[0]), let grace = Int(arguments[1]),
                arguments[3] == "--"
            else {
                FileHandle.standardError.write(Data("sharelane: this mode is sharelane's own\n".utf8))
                return 2
            }
            let path = arguments[2]
            let command = Array(arguments.dropFirst(4))
            // A stop sent to the group reaches the guard too: it must outlive the program to report its end. A
            // handler (never an ignored signal) is what the program would otherwise inherit.
            for signalNumber in [SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGALRM, SIGPIPE] {
                handle(signalNumber, with: ignoreSignal)
            }
            // SIGCHLD is waited for (`sigtimedwait`), so it is blocked here; the program gets an empty mask.
            var childSignal = sigset_t()
            sigemptyset(&childSignal)
            sigaddset(&childSignal, SIGCHLD)
            pthread_sigmask(SIG_BLOCK, &childSignal, nil)
            guard getppid() == parent else { return 128 + SIGTERM }

            let child: pid_t
            switch spawnWhenFree(path, command) {
            case .success(let pid): child = pid
            case .failure(let code):
                let reason = String(cString: strerror(code))
                FileHandle.standardError.write(Data("sharelane: cannot run \(command[0]): \(reason)\n".utf8))
                return code == ENOENT ? 127 : 126
            }
            var status: Int32 = 0
            while true {
                let reaped = waitpid(child, &status, WNOHANG)
                if reaped == child { break }
                if reaped < 0, errno != EINTR { return 1 }
                if getppid() != parent {
                    endGroup(child: child, graceMilliseconds: grace, waiting: &childSignal)
                }
                // Wakes when the program ends, when a signal comes, or every 100 ms to look at the parent.
                var info = siginfo_t()
                var pause = timespec(tv_sec: 0, tv_nsec: 100_000_000)
                _ = sigtimedwait(&childSignal, &info, &pause)
            }
            // Ends as the program ended: with its status, or by its signal (no core file of the guard's own).
            if status & 0x7f == 0 { return (status >> 8) & 0xff }
            let signalNumber = status & 0x7f
            var noCore = rlimit(rlim_cur: 0, rlim_max: 0)
            _ = setrlimit(__rlimit_resource_t(RLIMIT_CORE.rawValue), &noCore)
            handle(signalNumber, with: nil)
            var all = sigset_t()
            sigemptyset(&all)
            pthread_sigmask(SIG_SETMASK, &all, nil)
            kill(getpid(), signalNumber)
            return 128 + signalNumber
        }

        /// sharelane went away: the group is told (SIGTERM), then killed when its program has not ended
        /// within the grace period, or at once when it has (what it left in the background goes with it).
        private static func endGroup(child: pid_t, graceMilliseconds: Int, waiting: inout sigset_t) -> Never {
            let group = getpgrp() == getpid() ? -getpid() : child
            kill(group, SIGTERM)
            let deadline = Date().addingTimeInterval(Double(graceMilliseconds) / 1000)
            var status: Int32 = 0
            while Date() < deadline, waitpid(child, &status, WNOHANG) == 0 {
                var info = siginfo_t()
                var pause = timespec(tv_sec: 0, tv_nsec: 50_000_000)
                _ = sigtimedwait(&waiting, &info, &pause)
            }
            kill(group, SIGKILL)
            // Not in a group of its own: the guard ends by itself.
            exit(128 + SIGKILL)
        }

        private enum Spawned {
            case success(pid_t)
            case failure(Int32)
        }

        /// Starts the program with every signal at its default and an empty mask, in the guard's group.
        /// Starts the program, waiting up to two seconds while its file is busy (ETXTBSY). A script written just
        /// before is busy while any process still holds it open for writing, and that includes a process another
        /// thread of its writer forked in the meantime, until that one executes its own program: a moment, or
        /// longer on a loaded machine. A shell would fail at once; the wait makes a script written by a test or
        /// a build step start as it does on a quiet machine.
        private static func spawnWhenFree(_ path: String, _ command: [String]) -> Spawned {
            var waited = 0
            while true {
                let result = spawn(path, command)
                guard case .failure(ETXTBSY) = result, waited < 2_000 else { return result }
                usleep(20_000)
                waited += 20
            }
        }

        private static func spawn(_ path: String, _ command: [String]) -> Spawned {
            var attributes = posix_spawnattr_t()
            posix_spawnattr_init(&attributes)
            defer { posix_spawnattr_destroy(&attributes) }
            var defaults = sigset_t()
            sigfillset(&defaults)
            // glibc's reserved signals, which sigfillset leaves out and sigaddset refuses: set in the bits
            // themselves (signal N is bit N - 1 of the first word), so the program does not start with them
            // ignored. The attribute is copied as it is, and glibc resets each signal it names.
            withUnsafeMutableBytes(of: &defaults) { bytes in
                let word = bytes.load(as: UInt64.self)
                bytes.storeBytes(of: word | (1 << 31) | (1 << 32), as: UInt64.self)
            }
            sigdelset(&defaults, SIGKILL)
            sigdelset(&defaults, SIGSTOP)
            posix_spawnattr_setsigdefault(&attributes, &defaults)
            var none = sigset_t()
            sigemptyset(&none)
            posix_spawnattr_setsigmask(&attributes, &none)
            posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))
            let argv: [UnsafeMutablePointer<CChar>?] = command.map { strdup($0) } + [nil]
            defer { for pointer in argv { free(pointer) } }
            var pid: pid_t = 0
            let code = posix_spawn(&pid, path, nil, &attributes, argv, environ)
            return code == 0 ? .success(pid) : .failure(code)
        }

        private static func handle(_ signalNumber: Int32, with handler: (@convention(c) (Int32) -> Void)?) {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = handler
            sigemptyset(&action.sa_mask)
            action.sa_flags = 0
            sigaction(signalNumber, &action, nil)
        }
    #else
        static func guarded(
            _ arguments: [String], environment: [String: String], directory: String?, grace: Duration
        ) throws -> [String]? { nil }
    #endif
}

/// The guard's handler of the signals sent to its group: it does nothing (the program decides).
private func ignoreSignal(_: Int32) {}
