import Foundation
import Testing

@testable import Strata

/// Strata's version hashes are Core Data's, byte for byte: checked against hashes Core Data
/// computed (CoreStore's published version locks, which are entity version hashes) and
/// checksums and digests Xcode and Core Data wrote (an Xcode store header, a VoiceMemos model's
/// `VersionInfo.plist` and store metadata).
@Suite struct CoreDataVersionHashTests {
    typealias B = ModelBuilder

    static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    /// A CoreStore version lock: the 32-byte hash as four little-endian 64-bit words.
    static func lock(_ words: [UInt64]) -> Data {
        Data(words.flatMap { withUnsafeBytes(of: $0.littleEndian, Array.init) })
    }

    @Test("SHA-256 and SHA-512 give FIPS 180-4's test vectors")
    func digests() {
        #expect(
            Self.hex(SHA2.sha256(Array("abc".utf8)))
                == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(Self.hex(SHA2.sha256([])) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(
            Self.hex(SHA2.sha256(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)))
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        #expect(
            Self.hex(SHA2.sha512(Array("abc".utf8)))
                == "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f"
        )
        let long = Array(
            "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu"
                .utf8)
        #expect(
            Self.hex(SHA2.sha512(long))
                == "8e959b75dae313da8cf4f72814fc143f8f7779c6eb9f7fa17299aeadb6889018501d289e4900f7e4331b99dec4b5433ac7d329eeb6dd26545e96e55b874be909"
        )
        #expect(
            Self.hex(SHA2.sha256([UInt8](repeating: 0x61, count: 1_000_000)))
                == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test(
        "entity version hashes equal Core Data's: attributes, to-one and ordered to-many relationships, subentities, transients"
    )
    func entityHashes() {
        // CoreStore's VersionLock documentation: Animal and Person, a to-one pair.
        let animal = B.entity("Animal", [B.attribute("species", .string, isOptional: false)])
        let person = B.entity("Person", [B.attribute("name", .string, isOptional: false)])
        B.inverse(B.relationship("master", from: animal, to: person), B.relationship("pet", from: person, to: animal))
        let model = B.model([animal, person])
        #expect(
            model.entitiesByName["Animal"]?.versionHash
                == Self.lock([0x2698_c812_ebbc_3b97, 0x751e_3fa3_f04c_f9, 0x51f_d460_d3ba_bc82, 0x92b4_ba73_5b5a_3053]))
        #expect(
            model.entitiesByName["Person"]?.versionHash
                == Self.lock([
                    0xae40_60a5_9f99_0ef0, 0x8ac8_3a6e_1411_c130, 0xa29f_ea58_e2e3_8ab6, 0x2071_bb7e_33d7_7887,
                ]))

        // CoreStore's DynamicModelTests: Dog is a subentity of Animal with an ordered to-many
        // relationship to itself; Person has a relationship that is its own entity's, and
        // transient attributes, which are not hashed.
        let animal2 = B.entity(
            "Animal", [B.attribute("species", .string, isOptional: false), B.attribute("color", .transformable)])
        let dog = B.entity(
            "Dog",
            [B.attribute("nickname", .string, isOptional: false), B.attribute("age", .integer64, isOptional: false)])
        animal2.subentities = [dog]
        let person2 = B.entity(
            "Person",
            [
                B.attribute("title", .string, isOptional: false), B.attribute("name", .string, isOptional: false),
                B.attribute("job", .transformable, isOptional: false),
            ])
        let displayName = B.attribute("displayName", .string)
        displayName.isTransient = true
        person2.properties.append(displayName)
        B.inverse(
            B.relationship("master", from: animal2, to: person2),
            B.relationship("pets", from: person2, to: animal2, toMany: true))
        B.inverse(
            B.relationship("friends", from: dog, to: dog, toMany: true, isOrdered: true),
            B.relationship("friendedBy", from: dog, to: dog, toMany: true))
        B.inverse(
            B.relationship("spouse", from: person2, to: person2),
            B.relationship("_spouseInverse", from: person2, to: person2))
        let model2 = B.model([animal2, dog, person2])
        #expect(
            model2.entitiesByName["Animal"]?.versionHash
                == Self.lock([
                    0x1b59_d511_0196_95cf, 0xdeb9_7e86_c5ef_f179, 0x1cf_d807_4564_6cb3, 0x4ff9_9416_175b_5b9a,
                ]))
        #expect(
            model2.entitiesByName["Dog"]?.versionHash
                == Self.lock([
                    0xad6_de93_adc5_565d, 0x7897_e512_53eb_a5a3, 0xd12b_9ce0_b136_00f3, 0x5a48_27cd_794c_d15e,
                ]))
        #expect(
            model2.entitiesByName["Person"]?.versionHash
                == Self.lock([
                    0xf3e6_ba60_16bb_edc6, 0x50de_df64_f0eb_a490, 0xa320_88a0_ee83_468d, 0xb72d_1d0b_37bd_0992,
                ]))
        // Freezing keeps the hashes.
        let before = model2.entityVersionHashesByName
        model2.freeze()
        #expect(model2.entityVersionHashesByName == before)
    }

    @Test("the version checksum and the version hashes digest equal Xcode's and Core Data's")
    func checksumAndDigest() throws {
        func hashes(_ base64: [String: String]) -> [String: Data] { base64.mapValues { Data(base64Encoded: $0)! } }
        // The header of an Xcode mapping model's xcmapping.xml.
        let xcode = hashes([
            "XDDevAttributeMapping": "0plcXXRN7XHKl5CcF+fwriFmUpON3ZtcI/AfK748aWc=",
            "XDDevEntityMapping": "qeN1Ym3TkWN1G6dU9RfX6Kd2ccEvcDVWHpd3LpLgboI=",
            "XDDevMappingModel": "EqtMzvRnVZWkXwBHu4VeVGy8UyoOe+bi67KC79kphlQ=",
            "XDDevPropertyMapping": "XN33V44TTGY4JETlMoOB5yyTKxB+u4slvDIinv0rtGA=",
            "XDDevRelationshipMapping": "akYY9LhehVA/mCb4ATLWuI9XGLcjpm14wWL1oEBtIcs=",
        ])
        #expect(CoreDataVersionHash.checksum(of: xcode) == "bMpud663vz0bXQE24C6Rh4MvJ5jVnzsD2sI3njZkKbc=")
        #expect(
            CoreDataVersionHash.digest(of: xcode)
                == "+Hmc2uYZK6og+Pvx5GUJ7oW75UG4V/ksQanTjfTKUnxyGWJRMtB5tIRgVwGsrd7lz/QR57++wbvWsr6nxwyS0A==")
        // A VoiceMemos model: Xcode's VersionInfo.plist checksum.
        let voiceMemos = hashes([
            "DatabaseProperty": "DdeyItMrmgzYUVyA8NUAc8cS1Sr4LwwTo+KneZZrPBI=",
            "EntityRevision": "MCYSLwlQNrzkytEuk0Paa2vv7h+rbxnn3DWtIuHpxa0=",
            "Folder": "BTuJxZB4F1ci2UMqAPo0Fx2Oif08rXM0z+/UQoivHc0=",
            "Migration": "C9+RC8Owb0OTnIogkfdqVeaZV1hChUC6VuqvEwC0DUU=",
            "Recording": "l+6Nf+h4pgpvs9n/EqyKB5n5y0F2UwNh6/6d/evM+L8=",
            "CloudRecording": "eDRSMKhHO1yeaP22HJ2TLfs1Mqv60ahZ6N80EotR8wM=",
        ])
        #expect(CoreDataVersionHash.checksum(of: voiceMemos) == "f2VnefWShYEiB9Sc058A/GWR/33tzv6vFKYxARhArH0=")

        // A model's checksum is that of its entities' hashes; a store records both, and the digest.
        let animal = B.entity("Animal", [B.attribute("species", .string, isOptional: false)])
        let model = B.model([animal])
        #expect(model.versionChecksum == CoreDataVersionHash.checksum(of: ["Animal": animal.versionHash]))
        let metadata = StoreMetadataFile.metadata(for: model, storeID: "S")
        #expect(metadata[StoreModelVersionChecksumKey] as? String == model.versionChecksum)
        #expect(metadata[StoreModelVersionHashesKey] as? [String: Data] == model.entityVersionHashesByName)
        #expect(model.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata))
    }

    @Test("a store that recorded Strata's earlier 8-byte hashes still opens with its model, unmigrated")
    func legacyStoreMetadata() {
        let note = B.entity("Note", [B.attribute("title", .string)])
        let model = B.model([note])
        var metadata = StoreMetadataFile.metadata(for: model, storeID: "S")
        metadata[StoreMetadataFile.layoutHashesKey] = nil
        metadata[StoreModelVersionHashesKey] = ["Note": note.layoutHash]
        #expect(model.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata))
        metadata[StoreModelVersionHashesKey] = ["Note": Data(repeating: 1, count: 8)]
        #expect(!model.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata))
        // A fetch index changes the layout but not Core Data's hash: the store needs its index.
        let indexed = B.entity("Note", [B.attribute("title", .string)])
        indexed.indexes = [
            FetchIndexDescription(
                name: "byTitle",
                elements: [
                    FetchIndexElementDescription(property: indexed.attributesByName["title"]!, collationType: .binary)
                ])
        ]
        let indexedModel = B.model([indexed])
        #expect(indexed.versionHash == note.versionHash)
        #expect(
            !indexedModel.isConfiguration(
                withName: nil, compatibleWithStoreMetadata: StoreMetadataFile.metadata(for: model, storeID: "S")))
    }
}
