//! The extension's allocator on Linux: jemalloc, with zeroed blocks of a
//! page or more zeroed by writing them ([`ALLOCATOR`]).
//!
//! The kernels' own allocations (sort keys, spare arrays, tables: hundreds
//! of megabytes a call at 10^7 rows) go through jemalloc, as polars' do.
//! glibc hands every block above 32 MiB back to the kernel when it is freed,
//! so each call faulted its buffers in and had them zeroed again; on a
//! virtual machine that returns freed memory to its host (free page
//! reporting) those faults cost seconds on some calls. jemalloc keeps freed
//! pages for the next call ([`MALLOC_CONF`]).
//!
//! jemalloc 5.3 makes arena 0 before it reads its `oversize_threshold`
//! setting, so arena 0 keeps the 8 MiB default, and with `narenas:1` every
//! thread allocates from it: each freed block of 8 MiB or more was handed
//! back to the kernel at once (`MADV_DONTNEED`), and the next call faulted it
//! in again ([`keep_freed_blocks`] lifts that threshold when the module loads).
//!
//! Only this module's allocations: the symbols are prefixed and not exported,
//! so Python's, numpy's and pyarrow's allocators are untouched. Its
//! thread-local state is of the general model (`disable_initial_exec_tls`):
//! a module loaded by `dlopen` after others cannot count on room in the
//! static TLS block.

use std::alloc::{GlobalAlloc, Layout};
use std::ffi::{c_void, CStr};
use tikv_jemallocator::Jemalloc;

/// Zeroed blocks of at least this many bytes are taken as plain blocks and
/// written with zeros: jemalloc zeroes a reused block of a page or more by
/// handing its pages back to the kernel (`MADV_DONTNEED`), so the kernel that
/// asked for it (`vec![0; n]`, a table a call) faulted every page in again,
/// a fault per 4 KiB where writing the zeros costs a fraction of that.
/// Measured on `cmetrics score --ranking off` of a 10^8-row Parquet file (the
/// class-ranking tables, 16 MB a thread a row group): 800 thousand faults
/// and 4.3-4.8 s of kernel time with jemalloc's zeroing, 60 thousand faults
/// and 1.1 s written (glibc's: 48-58 thousand, 1-3 s).
const WRITE_ZEROS_FROM: usize = 4096;

/// jemalloc, but zeroed blocks of [`WRITE_ZEROS_FROM`] bytes or more are
/// written with zeros rather than purged and faulted in.
pub struct Allocator;

// SAFETY: every method forwards to jemalloc's with the caller's layout; the
// zeroed allocation writes exactly the `layout.size()` bytes jemalloc gave.
unsafe impl GlobalAlloc for Allocator {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract, forwarded.
        unsafe { Jemalloc.alloc(layout) }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if layout.size() < WRITE_ZEROS_FROM {
            // SAFETY: the caller's contract, forwarded.
            return unsafe { Jemalloc.alloc_zeroed(layout) };
        }
        // SAFETY: the caller's contract; a non-null block holds `layout.size()` bytes.
        unsafe {
            let block = Jemalloc.alloc(layout);
            if !block.is_null() {
                std::ptr::write_bytes(block, 0, layout.size());
            }
            block
        }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract, forwarded.
        unsafe { Jemalloc.dealloc(ptr, layout) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller's contract, forwarded.
        unsafe { Jemalloc.realloc(ptr, layout, new_size) }
    }
}

/// The extension's allocator (Linux only; elsewhere the system's).
#[global_allocator]
static ALLOCATOR: Allocator = Allocator;

/// jemalloc's settings, read when it starts (the environment variable
/// `_RJEM_MALLOC_CONF` overrides them; polars sets it for its own jemalloc
/// when it is imported, `dirty_decay_ms:500,muzzy_decay_ms:1000`, and every
/// prefixed jemalloc that starts later in that process or its children reads
/// it too, so there freed blocks go back to the kernel within a second):
/// - `background_thread:true`: freed pages go back to the kernel from a
///   background thread, gradually over jemalloc's ten-second decay, idle or
///   not. Without it an arena is purged whole when its last thread exits,
///   and each call's watched kernel runs on a thread of its own (`error.rs`),
///   so every call's buffers were purged on return.
/// - `oversize_threshold:0`: no separate arena for blocks above 8 MiB, which
///   would purge them as soon as they are freed: they are the buffers worth
///   keeping.
/// - `narenas:1`: every thread allocates from the one arena made when the
///   module loads. By default each new thread (a call's watched kernel
///   thread, a pool's worker) may make an arena of its own, and jemalloc
///   5.3 does not survive failing to: under an address-space limit
///   (`RLIMIT_AS`) nearly reached, a thread whose arena could not be mapped
///   crashed in `tcache_arena_associate` (a `SIGSEGV` in 2 of 5 processes
///   run two at a time), where the shared arena's refused block is an
///   `OutOfMemoryError`. Two cores' threads rarely wait on its lock: their
///   small blocks come from their own caches.
#[export_name = "_rjem_malloc_conf"]
static MALLOC_CONF: &[u8; 54] = b"narenas:1,background_thread:true,oversize_threshold:0\0";

/// The arena every thread allocates from (`narenas:1`), as jemalloc names it.
const ARENA_OVERSIZE: &CStr = c"arena.0.oversize_threshold";

/// Let arena 0 keep freed blocks of every size for the background thread's
/// gradual decay, as [`MALLOC_CONF`]'s `oversize_threshold:0` asks: jemalloc
/// applies that setting only to arenas made after its start, not to arena 0,
/// whose blocks of 8 MiB or more (the one-vs-rest sort keys, the sorts' spare
/// arrays, a batch's buffers) were purged as soon as they were freed
/// (`extent_record`'s "oversize" shortcut), so every call faulted them in
/// again. Measured on `evaluate` with exact class ranking of a 10^7 x 10
/// float32 dump (AMD EPYC Zen 3 guest that returns freed memory to its
/// host): 6,400 page faults and 0.07-3.9 s of kernel time a call before,
/// 100-2,400 faults and mostly under 0.05 s after.
///
/// Returns jemalloc's error code when it refuses (the allocator then purges
/// as before: slower, never wrong).
pub fn keep_freed_blocks() -> Result<(), i32> {
    let mut never = usize::MAX;
    // SAFETY: a NUL-terminated name; the new value is a `size_t` of the size
    // given; no old value is asked for.
    let code = unsafe {
        tikv_jemalloc_sys::mallctl(
            ARENA_OVERSIZE.as_ptr(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            std::ptr::from_mut(&mut never).cast::<c_void>(),
            std::mem::size_of::<usize>(),
        )
    };
    if code == 0 {
        Ok(())
    } else {
        Err(code)
    }
}

/// Arena 0's oversize threshold in bytes: freed blocks of at least this size
/// are purged at once (`None` when jemalloc does not answer).
#[must_use]
pub fn oversize_threshold() -> Option<usize> {
    let mut value = 0_usize;
    let mut len = std::mem::size_of::<usize>();
    // SAFETY: a NUL-terminated name; `value` and `len` describe a `size_t`.
    let code = unsafe {
        tikv_jemalloc_sys::mallctl(
            ARENA_OVERSIZE.as_ptr(),
            std::ptr::from_mut(&mut value).cast::<c_void>(),
            std::ptr::from_mut(&mut len),
            std::ptr::null_mut(),
            0,
        )
    };
    (code == 0 && len == std::mem::size_of::<usize>()).then_some(value)
}
