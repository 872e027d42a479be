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
    /// What the verbs act on, and what describes it: `{{fake.sentence}}` reads as a to-do or a note.
    static let things = [
        "tickets", "passports", "groceries", "snacks", "sunscreen", "chargers", "camera", "maps", "umbrella",
        "jacket", "gift", "flowers", "bread", "coffee", "plants", "bikes", "tent", "lantern", "photos", "recipes",
        "invitations", "receipts", "boots", "picnic basket",
    ]
    static let qualities = [
        "spare", "warm", "fresh", "small", "old", "new", "extra", "blue", "heavy", "light", "good", "local", "shared",
        "second",
    ]
    static let moments = [
        "before the trip", "for the weekend", "after lunch", "by Friday", "for the party", "on the way home",
        "before the train", "for the kids", "next week", "tonight", "in the morning", "for the cabin",
    ]
    /// Kinds of place, for `{{fake.place}}` (`Cedar Market`).
    static let placeKinds = [
        "Market", "Café", "Museum", "Park", "Station", "Bridge", "Garden", "Gallery", "Beach", "Viewpoint",
        "Bakery", "Harbour", "Library", "Square", "Theatre", "Tower",
    ]
    /// Cities with their country and the coordinates of their centre, for `{{fake.city}}`, `{{fake.country}}`
    /// and `{{fake.location}}`.
    static let cities: [(name: String, country: String, latitude: Double, longitude: Double)] = [
        ("Lisbon", "Portugal", 38.7223, -9.1393), ("Porto", "Portugal", 41.1579, -8.6291),
        ("Madrid", "Spain", 40.4168, -3.7038), ("Barcelona", "Spain", 41.3874, 2.1686),
        ("Paris", "France", 48.8566, 2.3522), ("Lyon", "France", 45.7640, 4.8357),
        ("Rome", "Italy", 41.9028, 12.4964), ("Florence", "Italy", 43.7696, 11.2558),
        ("Venice", "Italy", 45.4408, 12.3155), ("Berlin", "Germany", 52.5200, 13.4050),
        ("Munich", "Germany", 48.1351, 11.5820), ("Vienna", "Austria", 48.2082, 16.3738),
        ("Prague", "Czechia", 50.0755, 14.4378), ("Amsterdam", "Netherlands", 52.3676, 4.9041),
        ("Copenhagen", "Denmark", 55.6761, 12.5683), ("Stockholm", "Sweden", 59.3293, 18.0686),
        ("Oslo", "Norway", 59.9139, 10.7522), ("Helsinki", "Finland", 60.1699, 24.9384),
        ("Reykjavik", "Iceland", 64.1466, -21.9426), ("Dublin", "Ireland", 53.3498, -6.2603),
        ("Edinburgh", "United Kingdom", 55.9533, -3.1883), ("London", "United Kingdom", 51.5074, -0.1278),
        ("Athens", "Greece", 37.9838, 23.7275), ("Istanbul", "Türkiye", 41.0082, 28.9784),
        ("Marrakesh", "Morocco", 31.6295, -7.9811), ("Cairo", "Egypt", 30.0444, 31.2357),
        ("Cape Town", "South Africa", -33.9249, 18.4241), ("Nairobi", "Kenya", -1.2921, 36.8219),
        ("Tokyo", "Japan", 35.6762, 139.6503), ("Kyoto", "Japan", 35.0116, 135.7681),
        ("Seoul", "South Korea", 37.5665, 126.9780), ("Singapore", "Singapore", 1.3521, 103.8198),
        ("Bangkok", "Thailand", 13.7563, 100.5018), ("Sydney", "Australia", -33.8688, 151.2093),
        ("Melbourne", "Australia", -37.8136, 144.9631), ("Auckland", "New Zealand", -36.8485, 174.7633),
        ("Vancouver", "Canada", 49.2827, -123.1207), ("Montreal", "Canada", 45.5017, -73.5673),
        ("San Francisco", "United States", 37.7749, -122.4194), ("New York", "United States", 40.7128, -74.0060),
        ("Mexico City", "Mexico", 19.4326, -99.1332), ("Lima", "Peru", -12.0464, -77.0428),
        ("Buenos Aires", "Argentina", -34.6037, -58.3816), ("Rio de Janeiro", "Brazil", -22.9068, -43.1729),
    ]
    /// More cities, chosen only by placeholders held to countries or cities (`{{fake.city(Portugal)}}`), so
    /// that a country has several: `{{fake.city}}` alone still draws from `cities`, whose data is frozen.
    static let heldCities: [(name: String, country: String, latitude: Double, longitude: Double)] = [
        ("Faro", "Portugal", 37.0194, -7.9304), ("Coimbra", "Portugal", 40.2033, -8.4103),
        ("Braga", "Portugal", 41.5454, -8.4265), ("Sintra", "Portugal", 38.8029, -9.3817),
        ("Évora", "Portugal", 38.5714, -7.9135), ("Cascais", "Portugal", 38.6979, -9.4215),
        ("Seville", "Spain", 37.3891, -5.9845), ("Valencia", "Spain", 39.4699, -0.3763),
        ("Granada", "Spain", 37.1773, -3.5986), ("Bilbao", "Spain", 43.2630, -2.9350),
        ("Nice", "France", 43.7102, 7.2620), ("Bordeaux", "France", 44.8378, -0.5792),
        ("Marseille", "France", 43.2965, 5.3698), ("Milan", "Italy", 45.4642, 9.1900),
        ("Naples", "Italy", 40.8518, 14.2681), ("Bologna", "Italy", 44.4949, 11.3426),
        ("Hamburg", "Germany", 53.5511, 9.9937), ("Cologne", "Germany", 50.9375, 6.9603),
        ("Salzburg", "Austria", 47.8095, 13.0550), ("Rotterdam", "Netherlands", 51.9244, 4.4777),
        ("Utrecht", "Netherlands", 52.0907, 5.1214), ("Gothenburg", "Sweden", 57.7089, 11.9746),
        ("Bergen", "Norway", 60.3913, 5.3221), ("Manchester", "United Kingdom", 53.4808, -2.2426),
        ("Bath", "United Kingdom", 51.3811, -2.3590), ("York", "United Kingdom", 53.9600, -1.0873),
        ("Thessaloniki", "Greece", 40.6401, 22.9444), ("Zurich", "Switzerland", 47.3769, 8.5417),
        ("Geneva", "Switzerland", 46.2044, 6.1432), ("Brussels", "Belgium", 50.8503, 4.3517),
        ("Bruges", "Belgium", 51.2093, 3.2247), ("Kraków", "Poland", 50.0647, 19.9450),
        ("Warsaw", "Poland", 52.2297, 21.0122), ("Budapest", "Hungary", 47.4979, 19.0402),
        ("Osaka", "Japan", 34.6937, 135.5023), ("Nara", "Japan", 34.6851, 135.8048),
        ("Hiroshima", "Japan", 34.3853, 132.4553), ("Sapporo", "Japan", 43.0618, 141.3545),
        ("Busan", "South Korea", 35.1796, 129.0756), ("Brisbane", "Australia", -27.4698, 153.0251),
        ("Perth", "Australia", -31.9505, 115.8605), ("Toronto", "Canada", 43.6532, -79.3832),
        ("Quebec City", "Canada", 46.8139, -71.2080), ("Chicago", "United States", 41.8781, -87.6298),
        ("Boston", "United States", 42.3601, -71.0589), ("Seattle", "United States", 47.6062, -122.3321),
        ("New Orleans", "United States", 29.9511, -90.0715), ("Oaxaca", "Mexico", 17.0732, -96.7266),
        ("Cusco", "Peru", -13.5320, -71.9675),
    ]
    /// What a shopping list holds, as nouns, for `{{fake.shopping}}`.
    static let shopping = [
        "Olive oil", "Oat milk", "Sourdough bread", "Eggs", "Cherry tomatoes", "Basmati rice", "Greek yoghurt",
        "Ground coffee", "Lemons", "Bananas", "Baby spinach", "Cheddar", "Butter", "Spaghetti", "Chickpeas",
        "Peanut butter", "Washing-up liquid", "Kitchen roll", "Toothpaste", "Honey", "Avocados", "Red onions",
        "Garlic", "Mozzarella", "Orange juice", "Granola", "Sparkling water", "Dark chocolate", "Fresh basil",
        "Frozen peas", "Tortillas", "Salmon fillets", "Bin bags", "Laundry detergent", "Apples", "Carrots",
        "Green tea", "Sea salt", "Sunscreen", "Batteries",
    ]
    /// What a to-do list holds, as nouns, for `{{fake.todo}}`.
    static let todos = [
        "Passport renewal", "Dentist appointment", "Car insurance", "Train tickets", "Tax return",
        "Boiler service", "Library books", "Hotel booking", "Travel adapter", "Photo album", "Bike repair",
        "Parcel return", "Museum tickets", "Restaurant booking", "School forms", "Spare keys", "Packing list",
        "Vet check-up", "Electricity bill", "Smoke alarm battery", "Wedding reply", "Birthday card",
        "Gutter cleaning", "Phone contract", "Flu jab", "Recycling day", "Visa application", "Airport transfer",
        "Gym membership", "Window cleaner",
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

    /// A to-do or a note of plausible words, 3–9 of them: `Pack the spare chargers before the train.`
    static func sentence(_ random: inout StableRandom) -> String {
        var text = random.pick(capitalizedVerbs)
        text += " the "
        if random.next(below: 2) == 0 {
            text += random.pick(FakeData.qualities)
            text += " "
        }
        text += random.pick(FakeData.things)
        if random.next(below: 3) != 0 {
            text += " "
            text += random.pick(FakeData.moments)
        }
        text += "."
        return text
    }

    /// A city, the same in every field of one record (`{{fake.city}}`, `{{fake.country}}` and
    /// `{{fake.location}}` of a record agree).
    static func city(_ random: inout StableRandom) -> (
        name: String, country: String, latitude: Double, longitude: Double
    ) {
        random.pick(FakeData.cities)
    }

    /// A point within about two kilometres of `city`'s centre, to four decimal places.
    static func location(
        near city: (name: String, country: String, latitude: Double, longitude: Double),
        _ random: inout StableRandom
    ) -> (latitude: Double, longitude: Double) {
        func offset() -> Double { Double(Int64(random.next(below: 401)) - 200) / 10_000 }
        func rounded(_ value: Double) -> Double { (value * 10_000).rounded() / 10_000 }
        return (rounded(city.latitude + offset()), rounded(city.longitude + offset()))
    }

    /// A place's name: a word and a kind of place (`Cedar Market`).
    static func place(_ random: inout StableRandom) -> String {
        "\(random.pick(FakeData.words).capitalizedFirst) \(random.pick(FakeData.placeKinds))"
    }

    /// Something to buy, as a noun (`Olive oil`).
    static func shopping(_ random: inout StableRandom) -> String { random.pick(FakeData.shopping) }

    /// Something to do, as a noun (`Dentist appointment`).
    static func todo(_ random: inout StableRandom) -> String { random.pick(FakeData.todos) }

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
