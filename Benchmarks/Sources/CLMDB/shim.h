// LMDB's C API (Debian's liblmdb-dev), for strata-bench's LMDB baseline.
#include <lmdb.h>
