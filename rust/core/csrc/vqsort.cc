// The C entry points of cmetrics' vectorized sort: Highway's vqsort (Google
// Highway's contrib library, found by pkg-config at build time; see build.rs).
// Highway picks the widest vector extension of the running CPU itself.
#include <cstddef>
#include <cstdint>

#include <hwy/contrib/sort/vqsort.h>

namespace {
// A Sorter keeps a small buffer of its own: one per thread.
const hwy::Sorter& sorter() {
  thread_local hwy::Sorter s;
  return s;
}
}  // namespace

extern "C" void cmetrics_vqsort_u64(uint64_t* keys, size_t n) {
  sorter()(keys, n, hwy::SortAscending());
}

extern "C" void cmetrics_vqsort_u32(uint32_t* keys, size_t n) {
  sorter()(keys, n, hwy::SortAscending());
}
