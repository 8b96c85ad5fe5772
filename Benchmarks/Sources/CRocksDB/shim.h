// RocksDB's C API (Debian's librocksdb-dev), for strata-bench's RocksDB baseline.
#include <rocksdb/c.h>
