import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A folder of case files, one an exchange, in the order of their numbers (`0001-auth-signin.json`, …).
public enum Recording {
    /// The case files of `folder`, in order.
    /// - Throws: `ParityError.notARecording` when the folder is missing, is a file, or holds no case file.
    public static func caseFiles(in folder: String) throws -> [String] {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder) else {
            throw ParityError.notARecording(folder: folder, reason: "there is no such folder")
        }
        guard isFolder.boolValue else {
            throw ParityError.notARecording(folder: folder, reason: "it is a file, not a folder of case files")
        }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        let numbered = names.compactMap { name -> (Int, String)? in
            guard name.hasSuffix(".json"), let number = Int(name.prefix { $0.isNumber }) else { return nil }
            return (number, name)
        }
        guard !numbered.isEmpty else {
            throw ParityError.notARecording(folder: folder, reason: "it holds no case file (NNNN-….json)")
        }
        return numbered.sorted { ($0.0, $0.1) < ($1.0, $1.1) }.map { (folder as NSString).appendingPathComponent($0.1) }
    }

    /// How many case files `folder` holds already (none when it does not exist).
    public static func existingCount(in folder: String) -> Int {
        (try? caseFiles(in: folder).count) ?? 0
    }

    /// Reads every case file of `folder`, in order.
    /// - Throws: `ParityError` naming the first file that is not a case file.
    public static func read(_ folder: String) throws -> [(file: String, exchange: RecordedExchange)] {
        try caseFiles(in: folder).map { file in
            guard let data = FileManager.default.contents(atPath: file) else {
                throw ParityError.damaged(file: file, line: nil, column: nil, reason: "cannot be read")
            }
            return (file, try RecordedExchange(fileData: data, file: file))
        }
    }

    /// Writes a case file readable by its owner only (mode 0600) from the moment it exists: the whole text to a
    /// new file beside it, then moved over its place, so that no reader sees half of it.
    /// - Throws: an `NSError` of the POSIX domain, its description the system's reason.
    public static func write(_ text: String, to file: String) throws {
        let folder = (file as NSString).deletingLastPathComponent
        let partial = (folder as NSString).appendingPathComponent(
            ".\((file as NSString).lastPathComponent).\(ProcessInfo.processInfo.processIdentifier).partial")
        func failure(_ reason: String) -> NSError {
            let code = errno
            unlink(partial)
            return NSError(domain: NSPOSIXErrorDomain, code: Int(code), userInfo: [NSLocalizedDescriptionKey: reason])
        }
        let descriptor = open(partial, O_WRONLY | O_CREAT | O_EXCL | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw failure(String(cString: strerror(errno))) }
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let wrote = bytes[offset...].withUnsafeBytes { systemWrite(descriptor, $0.baseAddress, $0.count) }
            if wrote < 0 {
                if errno == EINTR { continue }
                let reason = String(cString: strerror(errno))
                close(descriptor)
                throw failure(reason)
            }
            offset += wrote
        }
        close(descriptor)
        guard rename(partial, file) == 0 else { throw failure(String(cString: strerror(errno))) }
    }

    /// The file name of the `number`th exchange.
    public static func fileName(number: Int, exchange: RecordedExchange) -> String {
        String(format: "%04d", number) + "-\(exchange.operationName).json"
    }
}

/// The system's `write(2)`, which `Recording.write` hides by its name.
private func systemWrite(_ descriptor: Int32, _ bytes: UnsafeRawPointer?, _ count: Int) -> Int {
    write(descriptor, bytes, count)
}
