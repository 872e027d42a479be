import ShareKit

extension Plan {
    /// What a plan shows for the value of an `ENCRYPTED` field where it hides it.
    public static let hiddenEncryptedValue = PlannedValue.text("(encrypted; --show-encrypted shows it)")

    /// The plan with the values of the fields the recipe's schema declares `ENCRYPTED` hidden: what a markdown
    /// plan posted on a pull request, or a JSON plan handed to a script, shows unless asked. CloudKit encrypts
    /// those values on Apple's servers; a plan is read by many more people than the store.
    public func hidingEncryptedValues() -> Plan {
        guard let encrypted = encryptedFields, !encrypted.isEmpty else { return self }
        let qualified = Set(encrypted)
        // A deleted record's type is not always known: then any encrypted field of that name is hidden.
        let names = Set(encrypted.compactMap { $0.split(separator: ".", maxSplits: 1).last.map(String.init) })
        var plan = self
        for index in plan.changes.indices where plan.changes[index].kind == .record {
            let type = plan.changes[index].record?.recordType
            for attribute in plan.changes[index].attributes.indices {
                let name = plan.changes[index].attributes[attribute].name
                guard plan.changes[index].attributes[attribute].isField,
                    type.map({ qualified.contains("\($0).\(name)") }) ?? names.contains(name)
                else { continue }
                if plan.changes[index].attributes[attribute].before != nil {
                    plan.changes[index].attributes[attribute].before = Self.hiddenEncryptedValue
                }
                if plan.changes[index].attributes[attribute].after != nil {
                    plan.changes[index].attributes[attribute].after = Self.hiddenEncryptedValue
                }
            }
        }
        return plan
    }
}
