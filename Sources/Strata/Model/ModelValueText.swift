import Foundation

/// Reads the numbers and Booleans of a model file's default values and limits in every form
/// Xcode writes and accepts: `12`, `12.0`, `1e3`, `YES`/`NO` for numbers; `YES`/`NO`,
/// `true`/`false` and `1`/`0` for Booleans.
enum ModelValueText {
    /// A whole number: an integer, `YES` (1), `NO` (0), or a floating-point text with no
    /// fractional part (`0.0`, `1e3`); `nil` otherwise, also for `2.5`.
    static func integer(_ text: String) -> Int64? {
        if let exact = Int64(text) { return exact }
        if let flag = flag(text) { return flag ? 1 : 0 }
        guard let number = Double(text), number.rounded(.towardZero) == number else { return nil }
        return Int64(exactly: number)
    }

    /// `number` as the Swift type of an integer attribute type, `nil` when it does not fit.
    static func fit(_ number: Int64, to type: AttributeType) -> Any? {
        switch type {
        case .integer16AttributeType: Int16(exactly: number)
        case .integer32AttributeType: Int32(exactly: number)
        default: number
        }
    }

    /// A floating-point number, or `YES` (1) and `NO` (0).
    static func double(_ text: String) -> Double? {
        if let number = Double(text) { return number }
        return flag(text).map { $0 ? 1 : 0 }
    }

    /// A decimal number, read without rounding through `Double`, or `YES` (1) and `NO` (0).
    static func decimal(_ text: String) -> Decimal? {
        if let flag = flag(text) { return flag ? 1 : 0 }
        guard Double(text) != nil else { return nil }
        return Decimal(string: text, locale: Locale(identifier: "en_US_POSIX"))
    }

    /// A Boolean: `YES`/`NO`, `true`/`false` (any case), or a number (non-zero is `true`).
    static func boolean(_ text: String) -> Bool? {
        if let flag = flag(text) { return flag }
        return Double(text).map { $0 != 0 }
    }

    /// `YES`/`true` or `NO`/`false`, in any case.
    private static func flag(_ text: String) -> Bool? {
        switch text.lowercased() {
        case "yes", "true": true
        case "no", "false": false
        default: nil
        }
    }
}
