/// Xcode's derived attributes: `<attribute derived="YES" derivationExpression="…">`.
extension ModelFileReader {
    /// A derived attribute with the expression of `element`; the model's validation checks
    /// that Strata computes it.
    ///
    /// - Throws: ``ModelError`` ``ModelError/Code/invalidModel`` naming the entity, attribute and
    ///   expression when the expression is missing or does not parse.
    func derivedAttribute(
        _ element: ModelXMLElement, name: String, entity: String
    ) throws -> DerivedAttributeDescription {
        let text = try required(
            "derivationExpression", of: element, what: "derived attribute \(entity).\(name)", entity: entity,
            property: name)
        guard let expression = DerivationExpression.parse(text) else {
            throw error(
                .invalidModel,
                "derived attribute \(entity).\(name) has the expression \"\(text)\", which Strata does not read (supported: key paths, now(), lowercase:(key), uppercase:(key), canonical:(key), count:, sum:, min:, max:, average: and @count, @sum, @min, @max, @avg)",
                at: element, entity: entity, property: name)
        }
        let attribute = DerivedAttributeDescription()
        attribute.derivationExpression = expression
        return attribute
    }
}
