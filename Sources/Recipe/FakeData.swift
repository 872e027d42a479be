/// Small embedded word lists for `{{fake.*}}` values. Changing them changes every generated recipe's data,
/// so treat them as frozen.
enum FakeData {
    static let firstNames = [
        "Ada", "Alan", "Amara", "Ana", "Ben", "Bianca", "Carlos", "Chen", "Dara", "David", "Elena", "Emeka",
        "Farah", "Felix", "Grace", "Hana", "Hugo", "Ines", "Ivan", "Jamal", "Jana", "Kai", "Keiko", "Lars",
        "Leila", "Lucas", "Maya", "Mei", "Nadia", "Noah", "Olga", "Omar", "Priya", "Quinn", "Rafael", "Rosa",
        "Sami", "Sofia", "Tariq", "Tess", "Uma", "Victor", "Wen", "Xavier", "Yara", "Yusuf", "Zoe", "Zane",
    ]
    static let lastNames = [
        "Abara", "Berg", "Costa", "Dubois", "Eriksen", "Fischer", "Garcia", "Haddad", "Ito", "Jensen", "Kowalski",
        "Larsen", "Mbeki", "Novak", "Okafor", "Patel", "Quintero", "Rossi", "Sato", "Tanaka", "Umar", "Varga",
        "Weber", "Xu", "Yilmaz", "Zhang", "Moreau", "Nguyen", "Silva", "Kim", "Lopez", "Ivanova",
    ]
    static let domains = ["example.com", "example.org", "example.net"]
    static let words = [
        "alpha", "amber", "anchor", "apple", "arch", "atlas", "autumn", "basil", "beacon", "birch", "breeze",
        "bridge", "canyon", "cedar", "cloud", "comet", "coral", "crane", "dawn", "delta", "dune", "ember", "fern",
        "field", "fjord", "flint", "forest", "garden", "glacier", "harbor", "hazel", "heron", "island", "ivory",
        "jasmine", "juniper", "lagoon", "lantern", "lemon", "maple", "meadow", "mint", "moss", "nectar", "north",
        "oak", "ocean", "olive", "orchid", "pebble", "pine", "plum", "prairie", "quartz", "rain", "river", "saffron",
        "sage", "sand", "shore", "silver", "spruce", "stone", "summit", "thyme", "tide", "timber", "valley",
        "velvet", "willow", "winter", "yarrow", "zephyr",
    ]
    static let verbs = [
        "bring", "check", "plan", "pack", "book", "call", "visit", "clean", "cook", "fix", "paint", "read", "send",
        "share", "sort", "water", "write", "order", "pick", "buy",
    ]
}

/// Produces one `{{fake.*}}` value from a stable random stream.
enum FakeValue {
    /// 2020-01-01T00:00:00Z in milliseconds.
    static let dateRangeStart: Int64 = 1_577_836_800_000
    /// 2030-01-01T00:00:00Z in milliseconds.
    static let dateRangeEnd: Int64 = 1_893_456_000_000

    static func name(_ random: inout StableRandom) -> String {
        "\(random.pick(FakeData.firstNames)) \(random.pick(FakeData.lastNames))"
    }

    static func email(_ random: inout StableRandom) -> String {
        let first = random.pick(FakeData.firstNames).lowercased()
        let last = random.pick(FakeData.lastNames).lowercased()
        return "\(first).\(last)\(random.next(below: 100))@\(random.pick(FakeData.domains))"
    }

    static func word(_ random: inout StableRandom) -> String { random.pick(FakeData.words) }

    static func sentence(_ random: inout StableRandom) -> String {
        let count = 4 + Int(random.next(below: 6))
        var text = random.pick(capitalizedVerbs)
        for _ in 1..<count {
            text += " "
            text += random.pick(FakeData.words)
        }
        text += "."
        return text
    }

    /// `FakeData.verbs`, each with a capital first letter, in the same order.
    private static let capitalizedVerbs = FakeData.verbs.map(\.capitalizedFirst)

    /// A whole minute between 2020 and 2030, in milliseconds since 1970.
    static func date(_ random: inout StableRandom) -> Int64 {
        let minutes = (dateRangeEnd - dateRangeStart) / 60_000
        return dateRangeStart + random.next(in: 0...(minutes - 1)) * 60_000
    }
}

extension String {
    var capitalizedFirst: String { prefix(1).uppercased() + dropFirst() }
}
