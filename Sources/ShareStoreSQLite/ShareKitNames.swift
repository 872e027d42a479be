import ShareKit

/// GRDB has a `Record` class too; in this module `Record` is always CloudKit's record, whichever files
/// import GRDB.
typealias Record = ShareKit.Record
