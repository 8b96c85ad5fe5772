import Foundation

#if canImport(FoundationXML)
import FoundationXML
#endif

/// One element of a parsed XML file: its name, attributes, line and children.
struct ModelXMLElement {
    /// The element's name, such as `entity`.
    var name: String
    /// The element's attributes.
    var attributes: [String: String]
    /// The line the element starts on (1-based, as the parser reports it).
    var line: Int
    /// The child elements, in document order.
    var children: [ModelXMLElement] = []
    /// The text directly inside the element (model files keep everything in attributes; an
    /// Xcode mapping model's `xcmapping.xml` keeps values as text).
    var text = ""

    /// The value of the attribute `key`, if present.
    subscript(_ key: String) -> String? { attributes[key] }

    /// The children named `name`.
    func children(named name: String) -> [ModelXMLElement] {
        children.filter { $0.name == name }
    }
}

/// Parses an XML file into a tree of ``ModelXMLElement``s with FoundationXML's `XMLParser`.
enum ModelXMLDocument {
    /// Parses `data`.
    ///
    /// - Parameters:
    ///   - data: the XML.
    ///   - path: the file's path, for errors.
    /// - Returns: the root element.
    /// - Throws: ``ModelError`` ``ModelError/Code/malformedXML`` with the line and column of the
    ///   first error, or the line of the first byte that is not ASCII when the data is not UTF-8.
    static func parse(_ data: Data, path: String) throws -> ModelXMLElement {
        // Xcode writes UTF-8; FoundationXML on Linux traps on a name that is not UTF-8.
        if String(data: data, encoding: .utf8) == nil {
            let valid = data.prefix { $0 < 0x80 }
            let line = valid.count(where: { $0 == UInt8(ascii: "\n") }) + 1
            throw ModelError(
                .malformedXML, "malformed XML at line \(line): the file is not UTF-8 text", path: path, line: line)
        }
        let builder = TreeBuilder()
        let parser = XMLParser(data: withDataInEveryProcessingInstruction(data))
        parser.shouldProcessNamespaces = false
        parser.shouldResolveExternalEntities = false
        parser.delegate = builder
        let succeeded = parser.parse()
        // The parser may recover from an error, report success and report a later, vaguer error
        // in `parserError`; the delegate keeps the first error with the position it happened at.
        if let first = builder.firstError {
            throw ModelError(
                .malformedXML,
                "malformed XML at line \(first.line), column \(first.column): \(describe(first.code))",
                path: path, line: first.line, cause: first.error)
        }
        if !succeeded || parser.parserError != nil {
            let code = (parser.parserError as NSError?)?.code ?? 0
            throw ModelError(
                .malformedXML,
                "malformed XML at line \(parser.lineNumber), column \(parser.columnNumber): \(describe(code))",
                path: path, line: parser.lineNumber, cause: parser.parserError)
        }
        guard let root = builder.root else {
            throw ModelError(.malformedXML, "malformed XML: the document has no root element", path: path)
        }
        return root
    }

    /// `data` with a space before the `?>` of every processing instruction without data
    /// (`<?name?>`): FoundationXML on Linux passes such an instruction's missing data to
    /// `strlen` and crashes, while with the space its data is empty, as Apple's parser reports
    /// it. Model files hold no processing instructions but the XML declaration, which has data.
    static func withDataInEveryProcessingInstruction(_ data: Data) -> Data {
        let bytes = [UInt8](data)
        let (open, question, close) = (UInt8(ascii: "<"), UInt8(ascii: "?"), UInt8(ascii: ">"))
        var output: [UInt8] = []
        var copied = 0
        var index = 0
        while index + 1 < bytes.count {
            guard bytes[index] == open, bytes[index + 1] == question else {
                index += 1
                continue
            }
            var end = index + 2
            while end < bytes.count, bytes[end] > 0x20, bytes[end] != question, bytes[end] != open {
                end += 1
            }
            if end > index + 2, end + 1 < bytes.count, bytes[end] == question, bytes[end + 1] == close {
                output += bytes[copied..<end]
                output.append(UInt8(ascii: " "))
                copied = end
            }
            index = end
        }
        guard copied > 0 else { return data }
        output += bytes[copied...]
        return Data(output)
    }

    /// A sentence for a parser error code. The codes are libxml2's `xmlParserErrors`, which
    /// Foundation's `XMLParser` reports on every platform.
    static func describe(_ code: Int) -> String {
        let reason: String
        switch code {
        case 4: reason = "the document is empty"
        case 5: reason = "the document ends before its elements are closed, or goes on after its root element"
        case 9: reason = "an invalid character"
        case 26: reason = "an undeclared entity"
        case 38: reason = "a '<' inside an attribute value"
        case 39: reason = "an attribute value without quotes"
        case 40: reason = "an attribute value that is not closed"
        case 41: reason = "an attribute without a value"
        case 42: reason = "an attribute that appears twice in one element"
        case 65: reason = "a missing space"
        case 68: reason = "a missing name"
        case 72: reason = "a missing '<'"
        case 73: reason = "a missing '>'"
        case 76: reason = "a closing tag that does not match the open element"
        case 77: reason = "an element that is not closed"
        default: reason = "a syntax error"
        }
        return "\(reason) (XML parser error \(code))"
    }

    /// The parser's delegate: builds the tree.
    private final class TreeBuilder: NSObject, XMLParserDelegate {
        /// The elements opened and not yet closed, outermost first.
        var stack: [ModelXMLElement] = []
        /// The root, once closed.
        var root: ModelXMLElement?
        /// The first error the parser reported, where it happened.
        var firstError: (code: Int, line: Int, column: Int, error: any Error)?

        func parser(_ parser: XMLParser, parseErrorOccurred parseError: any Error) {
            guard firstError == nil else { return }
            firstError = ((parseError as NSError).code, parser.lineNumber, parser.columnNumber, parseError)
            // No `abortParsing()` here: libxml2 stops at a fatal error by itself, and stopping it
            // from inside its error callback makes the next chunk dereference a freed input
            // (a crash the model-file fuzzer found in FoundationXML on Linux).
        }

        func parser(
            _ parser: XMLParser,
            didStartElement elementName: String,
            namespaceURI: String?,
            qualifiedName qName: String?,
            attributes attributeDict: [String: String] = [:]
        ) {
            stack.append(ModelXMLElement(name: elementName, attributes: attributeDict, line: parser.lineNumber))
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) {
            guard !stack.isEmpty else { return }
            stack[stack.count - 1].text += string
        }

        func parser(
            _ parser: XMLParser,
            didEndElement elementName: String,
            namespaceURI: String?,
            qualifiedName qName: String?
        ) {
            guard let element = stack.popLast() else { return }
            if stack.isEmpty {
                root = element
            } else {
                stack[stack.count - 1].children.append(element)
            }
        }
    }
}
