/// The placeholders that choose from a list: `{{pick: [a, b, c]}}` (the recipe's own list) and the held
/// cities of `{{fake.city(Portugal)}}`, `{{fake.country(Lisbon, Porto)}}` and `{{fake.location(Japan)}}`.
///
/// Their mistakes carry the offset 0 (the placeholder itself): `Template.Compiled` moves it to where the
/// placeholder's `{{` is written, so the error points at the faulty pick rather than at the field.
enum TemplateChoices {
    /// A city of `FakeData`, with its country and the coordinates of its centre.
    typealias City = (name: String, country: String, latitude: Double, longitude: Double)

    /// The generators that may be held to countries or cities.
    static let heldKinds = ["fake.city", "fake.country", "fake.location"]

    /// Every city a held placeholder may choose from: the frozen list of `{{fake.city}}`, then the cities
    /// only held placeholders use (so that adding them changed no unheld city).
    static let allCities: [City] = FakeData.cities + FakeData.heldCities

    /// Whether `expression` is a pick (`pick:` and its list), written with or without a space.
    static func isPick(_ expression: String) -> Bool {
        expression.hasPrefix("pick:") || expression.hasPrefix("pick :")
    }

    /// Reads `pick: [CHOICE, …]`: choices separated by commas, each trimmed, a choice in double quotes
    /// taken as written (it may hold a comma or spaces at its ends).
    static func pick(_ expression: String) -> Result<[String], TemplateError> {
        let example = "`{{pick: [Lisbon, Porto, \"Faro, Algarve\"]}}`"
        let list = Template.trimmed(Substring(expression.drop { $0 != ":" }.dropFirst()))
        guard list.hasPrefix("["), list.hasSuffix("]"), list.count >= 2 else {
            return .failure(
                TemplateError(
                    message: "`{{\(expression)}}`: write the choices in square brackets, separated by commas: "
                        + example,
                    offset: 0))
        }
        let inside = list.dropFirst().dropLast()
        guard !Template.trimmed(inside).isEmpty else {
            return .failure(
                TemplateError(
                    message: "`{{\(expression)}}` has nothing to pick from; list at least one choice: \(example)",
                    offset: 0))
        }
        var choices: [String] = []
        var current = ""
        var quoted = false
        var wasQuoted = false
        func finish() -> TemplateError? {
            let choice = wasQuoted ? current : Template.trimmed(Substring(current))
            if choice.isEmpty && !wasQuoted {
                return TemplateError(
                    message: "`{{\(expression)}}`: choice \(choices.count + 1) is empty; remove the extra comma, "
                        + "or write an empty choice as `\"\"`",
                    offset: 0)
            }
            choices.append(choice)
            current = ""
            wasQuoted = false
            return nil
        }
        for character in inside {
            if quoted {
                if character == "\"" { quoted = false } else { current.append(character) }
            } else if character == "\"" {
                guard Template.trimmed(Substring(current)).isEmpty, !wasQuoted else {
                    return .failure(
                        TemplateError(
                            message: "`{{\(expression)}}`: a quote inside choice \(choices.count + 1); quote the "
                                + "whole choice (\(example))",
                            offset: 0))
                }
                current = ""
                quoted = true
                wasQuoted = true
            } else if character == "," {
                if let error = finish() { return .failure(error) }
            } else if wasQuoted {
                guard character == " " || character == "\t" else {
                    return .failure(
                        TemplateError(
                            message: "`{{\(expression)}}`: text after the quoted choice \(choices.count + 1); put "
                                + "a comma between choices (\(example))",
                            offset: 0))
                }
            } else {
                current.append(character)
            }
        }
        guard !quoted else {
            return .failure(
                TemplateError(
                    message: "`{{\(expression)}}`: choice \(choices.count + 1) opens a `\"` it does not close",
                    offset: 0))
        }
        if let error = finish() { return .failure(error) }
        return .success(choices)
    }

    /// Whether `expression` is a held city: `fake.city(…)`, `fake.country(…)` or `fake.location(…)`.
    static func heldKind(_ expression: String) -> String? {
        guard expression.hasSuffix(")") else { return nil }
        return heldKinds.first { expression.hasPrefix($0 + "(") }
    }

    /// The cities that `fake.city(A, B, …)` may choose from: each argument a country (all of its cities) or a
    /// city, in the order of `allCities`, each once.
    static func heldCities(_ expression: String, kind: String) -> Result<[City], TemplateError> {
        let names = expression.dropFirst(kind.count + 1).dropLast()
            .split(separator: ",", omittingEmptySubsequences: false)
            .map { Template.trimmed($0) }
        let countries = Array(Set(allCities.map(\.country))).sorted()
        guard !names.contains(where: \.isEmpty) else {
            return .failure(
                TemplateError(
                    message: "`{{\(expression)}}`: name countries or cities, separated by commas "
                        + "(`{{\(kind)(Portugal)}}`, `{{\(kind)(Lisbon, Porto, Faro)}}`)",
                    offset: 0))
        }
        var wanted = Set<String>()
        for name in names {
            let key = name.lowercased()
            let matches = allCities.filter { $0.country.lowercased() == key || $0.name.lowercased() == key }
            guard !matches.isEmpty else {
                var message = "`{{\(expression)}}`: `\(name)` is neither a country nor a city that \(kind) knows"
                if let hint = Suggestion.closest(to: name, in: countries + allCities.map(\.name)) {
                    message += "; did you mean `\(hint)`?"
                } else {
                    message += " (countries: \(countries.joined(separator: ", ")))"
                }
                message += " For places of your own, write `{{pick: [A, B, C]}}`."
                return .failure(TemplateError(message: message, offset: 0))
            }
            for city in matches { wanted.insert(city.name) }
        }
        return .success(allCities.filter { wanted.contains($0.name) })
    }
}
