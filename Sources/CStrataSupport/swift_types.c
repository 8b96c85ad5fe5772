#include "strata_support.h"

#include <string.h>

#if defined(__linux__)

// The runtime's record of one image's metadata sections (the stable prefix of
// `MetadataSections` in the Swift runtime's `SwiftShims/MetadataSections.h`: a version, the
// image's base address, two unused words, then one range per section, in this order).
typedef struct {
    uintptr_t start;
    size_t length;
} strata_section_range;

typedef struct {
    uintptr_t version;
    const void *base_address;
    void *unused0;
    void *unused1;
    strata_section_range swift5_protocols;
    strata_section_range swift5_protocol_conformances;
    strata_section_range swift5_type_metadata;
} strata_metadata_sections;

// Exported by libswiftCore on ELF platforms (what Swift Testing enumerates tests with); weak,
// so that an image without the runtime still links.
extern void swift_enumerateAllMetadataSections(
    bool (*body)(const strata_metadata_sections *sections, void *context), void *context) __attribute__((weak));

/// A metadata accessor's result (`MetadataResponse`): the metadata and its state.
typedef struct {
    const void *metadata;
    uintptr_t state;
} strata_metadata_response;

/// A non-generic type's metadata accessor, called with a `MetadataRequest` (0: complete, blocking).
typedef strata_metadata_response (*strata_metadata_accessor)(uintptr_t request) __attribute__((swiftcall));

/// The target of the relative pointer stored at `field` (a 32-bit offset from the field itself).
static const void *strata_relative(const int32_t *field, int32_t offset) {
    return (const char *)field + offset;
}

struct strata_type_search {
    const char *name;
    size_t name_length;
    bool prefix;
    uint32_t kind;
    bool top_level;
    const void **metadata;
    size_t capacity;
    size_t count;
};

// A type context descriptor starts with: flags (kind in the low 5 bits, 0x80 when generic), the
// parent (a relative indirectable pointer: low bit set when it points at a pointer), the name
// (relative, a C string) and the metadata access function (relative).
static void strata_visit_descriptor(const int32_t *descriptor, struct strata_type_search *search) {
    uint32_t flags = (uint32_t)descriptor[0];
    if ((flags & 0x1f) != search->kind || (flags & 0x80) != 0) return;
    if (search->top_level) {
        int32_t offset = descriptor[1];
        if (offset == 0) return;
        const void *parent = strata_relative(&descriptor[1], offset & ~1);
        if (offset & 1) parent = *(const void *const *)parent;
        // A module's context descriptor has kind 0.
        if (parent == NULL || (*(const uint32_t *)parent & 0x1f) != 0) return;
    }
    if (descriptor[2] == 0 || descriptor[3] == 0) return;
    const char *name = strata_relative(&descriptor[2], descriptor[2]);
    if (search->prefix ? strncmp(name, search->name, search->name_length) != 0 : strcmp(name, search->name) != 0) return;
    strata_metadata_accessor accessor = (strata_metadata_accessor)strata_relative(&descriptor[3], descriptor[3]);
    const void *metadata = accessor(0).metadata;
    if (metadata == NULL) return;
    if (search->count < search->capacity) search->metadata[search->count] = metadata;
    search->count += 1;
}

// Each type metadata record is a 32-bit relative pointer whose low two bits say how it points:
// 0 at the descriptor, 1 at a pointer to it (2 and 3 name Objective-C classes).
static bool strata_visit_sections(const strata_metadata_sections *sections, void *context) {
    struct strata_type_search *search = context;
    const int32_t *records = (const int32_t *)sections->swift5_type_metadata.start;
    size_t count = sections->swift5_type_metadata.length / sizeof(int32_t);
    for (size_t index = 0; index < count; index++) {
        int32_t record = records[index];
        int32_t offset = record & ~3;
        if (offset == 0) continue;
        const void *target = strata_relative(&records[index], offset);
        switch (record & 3) {
        case 0: break;
        case 1: target = *(const void *const *)target; break;
        default: continue;
        }
        if (target != NULL) strata_visit_descriptor(target, search);
    }
    return true;
}

static bool strata_count_sections(const strata_metadata_sections *sections, void *context) {
    (void)sections;
    *(size_t *)context += 1;
    return true;
}

size_t strata_swift_types(
    const char *name, bool prefix, uint32_t kind, bool top_level, const void **metadata, size_t capacity) {
    if (swift_enumerateAllMetadataSections == NULL) return 0;
    struct strata_type_search search = {name, strlen(name), prefix, kind, top_level, metadata, capacity, 0};
    swift_enumerateAllMetadataSections(strata_visit_sections, &search);
    return search.count;
}

size_t strata_swift_image_count(void) {
    if (swift_enumerateAllMetadataSections == NULL) return 0;
    size_t count = 0;
    swift_enumerateAllMetadataSections(strata_count_sections, &count);
    return count;
}

#else

size_t strata_swift_types(
    const char *name, bool prefix, uint32_t kind, bool top_level, const void **metadata, size_t capacity) {
    (void)name;
    (void)prefix;
    (void)kind;
    (void)top_level;
    (void)metadata;
    (void)capacity;
    return 0;
}

size_t strata_swift_image_count(void) { return 0; }

#endif
