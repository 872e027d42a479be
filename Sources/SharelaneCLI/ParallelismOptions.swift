import ArgumentParser
import ShareKit

/// `--parallelism N` of `plan`, `apply` and `destroy` (Terraform's word): the most store requests under way at
/// once, reads and writes, retries and sign-ins included.
struct ParallelismOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "The most store requests under way at once.",
            discussion: """
                Over http: and cloudkit: each zone read or written, user signed in and share accepted is a \
                request; an apply's planning reads within the same bound. The embedded store writes one \
                transaction at a time whatever the number.
                """,
            valueName: "n"))
    var parallelism: Int = Parallelism.default

    func validate() throws {
        guard parallelism >= 1 else {
            throw ValidationError(
                "--parallelism must be 1 or more, not \(parallelism): it is how many store requests may be under way at once (default \(Parallelism.default))"
            )
        }
    }
}
