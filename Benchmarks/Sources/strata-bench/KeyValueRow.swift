import BenchSupport
import Foundation
import Workloads

/// The reference rows as the key-value baselines (RocksDB, LMDB) store them: one encoding, shared
/// by both, holding what SQLite's `department` and `employee` tables hold.
///
/// A key is the entity's byte (0 department, 1 employee) and the primary key as a big-endian
/// `Int64`, so that keys sort by entity and then by primary key, and one entity is one range.
/// A value is the row's fields in a compact binary form: fixed-width fields first (little-endian),
/// then each string and the photo as a LEB128 length and its bytes:
///
/// - employee: `salary` (8 bytes), `hired` in seconds since 1970 (8), the department's key (8),
///   flags (1: bit 0 `active`, bit 1 a photo follows), `name`, `notes`, then `photo` when present;
/// - department: `budget`'s bits (8), `name`.
///
/// Neither baseline compresses a value itself: RocksDB compresses its blocks (LZ4), LMDB stores
/// pages as they are.
enum KeyValueRow {
    /// The entity byte of a department's key.
    static let departmentPrefix: UInt8 = 0
    /// The entity byte of an employee's key.
    static let employeePrefix: UInt8 = 1
    /// The length of every key.
    static let keyLength = 9
    /// Where `salary` sits in an employee's value (W7 rewrites it in place).
    static let salaryOffset = 0
    private static let flagsOffset = 24
    private static let nameOffset = 25

    /// Writes the key of `key` under `prefix` into `buffer`, which holds ``keyLength`` bytes.
    static func writeKey(_ prefix: UInt8, _ key: Int64, into buffer: inout [UInt8]) {
        buffer[0] = prefix
        withUnsafeBytes(of: key.bigEndian) { bytes in
            for index in 0..<8 { buffer[1 + index] = bytes[index] }
        }
    }

    /// A fresh key of `key` under `prefix`.
    static func key(_ prefix: UInt8, _ key: Int64) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: keyLength)
        writeKey(prefix, key, into: &buffer)
        return buffer
    }

    /// The primary key in an encoded key.
    static func primaryKey(_ key: UnsafeRawBufferPointer) -> Int64 {
        Int64(bigEndian: key.loadUnaligned(fromByteOffset: 1, as: Int64.self))
    }

    /// Replaces `buffer`'s contents with the value of `employee`.
    static func encode(_ employee: Employee, into buffer: inout [UInt8]) {
        buffer.removeAll(keepingCapacity: true)
        append(employee.salary, to: &buffer)
        append(Int64(employee.hired.timeIntervalSince1970), to: &buffer)
        append(Dataset.departmentKey(employee.department), to: &buffer)
        buffer.append((employee.active ? 1 : 0) | (employee.photo != nil ? 2 : 0))
        append(employee.name, to: &buffer)
        append(employee.notes, to: &buffer)
        if let photo = employee.photo {
            appendLength(photo.count, to: &buffer)
            buffer.append(contentsOf: photo)
        }
    }

    /// Replaces `buffer`'s contents with the value of `department`.
    static func encode(_ department: Department, into buffer: inout [UInt8]) {
        buffer.removeAll(keepingCapacity: true)
        append(Int64(bitPattern: department.budget.bitPattern), to: &buffer)
        append(department.name, to: &buffer)
    }

    /// Overwrites the salary in an employee's value.
    static func setSalary(_ salary: Int64, in value: inout [UInt8]) {
        withUnsafeBytes(of: salary.littleEndian) { bytes in
            for index in 0..<8 { value[salaryOffset + index] = bytes[index] }
        }
    }

    /// The name and salary in an employee's value.
    static func nameAndSalary(_ value: UnsafeRawBufferPointer) throws -> (name: String, salary: Int64) {
        guard value.count > nameOffset else { throw BenchError("an employee value of \(value.count) bytes") }
        let salary = Int64(littleEndian: value.loadUnaligned(fromByteOffset: salaryOffset, as: Int64.self))
        var offset = nameOffset
        let name = try string(value, at: &offset)
        return (name, salary)
    }

    /// The notes in an employee's value.
    static func notes(_ value: UnsafeRawBufferPointer) throws -> String {
        guard value.count > nameOffset else { throw BenchError("an employee value of \(value.count) bytes") }
        var offset = nameOffset
        let nameLength = try length(value, at: &offset)
        offset += nameLength
        return try string(value, at: &offset)
    }

    private static func append(_ value: Int64, to buffer: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { buffer.append(contentsOf: $0) }
    }

    private static func append(_ string: String, to buffer: inout [UInt8]) {
        appendLength(string.utf8.count, to: &buffer)
        buffer.append(contentsOf: string.utf8)
    }

    /// Appends `length` as LEB128: 7 bits a byte, the high bit set on every byte but the last.
    private static func appendLength(_ length: Int, to buffer: inout [UInt8]) {
        var remaining = UInt(length)
        while remaining >= 0x80 {
            buffer.append(UInt8(truncatingIfNeeded: remaining) | 0x80)
            remaining >>= 7
        }
        buffer.append(UInt8(remaining))
    }

    /// Reads a LEB128 length at `offset`, advancing it; throws when it runs past the value.
    private static func length(_ value: UnsafeRawBufferPointer, at offset: inout Int) throws -> Int {
        var result = 0
        var shift = 0
        while true {
            guard offset < value.count, shift < 63 else { throw BenchError("a length past the end of a value") }
            let byte = value[offset]
            offset += 1
            result |= Int(byte & 0x7F) << shift
            if byte < 0x80 { break }
            shift += 7
        }
        guard result <= value.count - offset else { throw BenchError("a string past the end of a value") }
        return result
    }

    /// Reads a length-prefixed string at `offset`, advancing past it.
    private static func string(_ value: UnsafeRawBufferPointer, at offset: inout Int) throws -> String {
        let count = try length(value, at: &offset)
        let bytes = UnsafeRawBufferPointer(rebasing: value[offset..<offset + count])
        offset += count
        return String(decoding: bytes, as: UTF8.self)
    }
}
