//! Thread pools owned by the crate and the chunking policy shared by every kernel.
//!
//! Kernels never use rayon's global pool: callers pass a thread count and the
//! work runs on a pool this module builds once per count and caches. A process
//! forked after a pool was built must not reuse it (the worker threads do not
//! exist in the child), so pools are keyed by process id as well and a child
//! builds fresh ones.
//!
//! Determinism: every reduction splits the input into chunks whose size depends
//! only on the input (never on the thread count) and combines the per-chunk
//! results in chunk order, so floating-point results are bit-identical at any
//! thread count. Integer counts are exact in any order.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use rayon::prelude::*;
use rayon::{ThreadPool, ThreadPoolBuilder};

use crate::error::{MetricError, Result};
use crate::memory::{bytes_of, try_with_capacity};

/// Below this many rows a kernel runs on the calling thread.
///
/// Calibrated with `benches/crossover.py` on the 2-core reference machine
/// (figures in `benches/README.md`): the confusion-matrix kernel on int32
/// labels with K = 10 is no faster on two threads than on one up to 2^18 rows
/// (0.95x; waking the second vCPU of a virtual machine costs tens of microseconds) and
/// 1.65x faster at 2^19, so work below 2^19 rows stays sequential.
pub const SEQUENTIAL_BELOW: usize = 1 << 19;

/// Rows per chunk of the parallel reductions (before any size adjustment a
/// kernel documents). 2^16 rows of two int32 arrays is 512 KiB: one chunk's
/// inputs stay in L2 while it is processed.
pub const BASE_CHUNK: usize = 1 << 16;

type PoolMap = HashMap<(u32, usize), Arc<ThreadPool>>;

fn pools() -> &'static Mutex<PoolMap> {
    static POOLS: OnceLock<Mutex<PoolMap>> = OnceLock::new();
    POOLS.get_or_init(|| Mutex::new(HashMap::new()))
}

/// Rows per unit of interruptible work: a chunk of this many rows is the
/// longest stretch a kernel runs without looking at its stop flag.
pub const CHECK_ROWS: usize = 1 << 20;

/// The number of threads used when a caller asks for 0 ("all cores").
pub fn available_threads() -> usize {
    std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
}

/// The most threads a pool may have: `max(16, 4 x cores)`. More only adds
/// the cost of starting and scheduling threads that wait for a core.
pub fn max_threads() -> usize {
    (4 * available_threads()).max(16)
}

/// A handle on the crate-owned pool for one thread count.
#[derive(Clone)]
pub struct Pool {
    threads: usize,
    inner: Option<Arc<ThreadPool>>,
    min_parallel: usize,
    stop: Option<Arc<AtomicBool>>,
}

impl Pool {
    /// The pool for `threads` threads (0 means all available cores; more than
    /// [`max_threads`] means that many). One thread means no pool at all:
    /// everything runs on the caller's thread.
    pub fn new(threads: usize) -> Self {
        let threads = if threads == 0 {
            available_threads()
        } else {
            threads.min(max_threads())
        };
        if threads <= 1 {
            return Self::sequential();
        }
        let key = (std::process::id(), threads);
        let mut map = match pools().lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        };
        if let Some(pool) = map.get(&key) {
            return Self {
                threads,
                inner: Some(Arc::clone(pool)),
                min_parallel: SEQUENTIAL_BELOW,
                stop: None,
            };
        }
        // Pools of a parent process are unusable in a forked child: forget them
        // (without joining their threads, which do not exist here).
        let pid = std::process::id();
        map.retain(|(owner, _), pool| {
            if *owner == pid {
                true
            } else {
                std::mem::forget(Arc::clone(pool));
                false
            }
        });
        let built = ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("cmetrics-{i}"))
            .build()
            .ok()
            .map(Arc::new);
        if let Some(pool) = &built {
            map.insert(key, Arc::clone(pool));
        }
        let threads = if built.is_some() { threads } else { 1 };
        Self {
            threads,
            inner: built,
            min_parallel: SEQUENTIAL_BELOW,
            stop: None,
        }
    }

    /// The same pool, stopped by `flag`: once it is set, [`Self::check`]
    /// fails and the kernel returns [`MetricError::Interrupted`].
    #[must_use]
    pub fn with_stop(mut self, flag: Arc<AtomicBool>) -> Self {
        self.stop = Some(flag);
        self
    }

    /// Whether the stop flag is raised.
    #[inline]
    pub fn stopped(&self) -> bool {
        self.stop
            .as_ref()
            .is_some_and(|f| f.load(Ordering::Relaxed))
    }

    /// `Err(Interrupted)` once the stop flag is raised.
    ///
    /// # Errors
    /// [`MetricError::Interrupted`] when the caller asked the kernel to stop.
    #[inline]
    pub fn check(&self) -> Result<()> {
        if self.stopped() {
            Err(MetricError::Interrupted)
        } else {
            Ok(())
        }
    }

    /// The same pool with another sequential threshold (used by
    /// `benches/crossover.py` to calibrate [`SEQUENTIAL_BELOW`]).
    #[must_use]
    pub fn with_min_parallel(mut self, rows: usize) -> Self {
        self.min_parallel = rows;
        self
    }

    /// A pool that runs everything on the calling thread.
    pub fn sequential() -> Self {
        Self {
            threads: 1,
            inner: None,
            min_parallel: SEQUENTIAL_BELOW,
            stop: None,
        }
    }

    /// The same pool without a stop flag (for work that must run to its end).
    #[must_use]
    pub fn without_stop(&self) -> Self {
        Self {
            stop: None,
            ..self.clone()
        }
    }

    /// The same stop flag on a pool that runs on the calling thread.
    #[must_use]
    pub fn sequential_like(&self) -> Self {
        Self {
            stop: self.stop.clone(),
            ..Self::sequential()
        }
    }

    /// Threads this pool runs on.
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// Whether work of `n` rows should be spread over the pool.
    pub fn parallel_for(&self, n: usize) -> bool {
        self.inner.is_some() && n >= self.min_parallel
    }

    /// Run `f` inside the pool (or on this thread when there is none).
    pub fn install<R: Send>(&self, f: impl FnOnce() -> R + Send) -> R {
        match &self.inner {
            Some(pool) => pool.install(f),
            None => f(),
        }
    }
}

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pool")
            .field("threads", &self.threads)
            .finish()
    }
}

/// Reserve room for `additional` more values in `v`, the new room backed by
/// transparent huge pages as in [`big_vec`] (a vector that grows by millions
/// of values at a time). Past 2^20 values exactly that room (no doubling: a
/// large reallocation moves pages, not bytes); below, at least doubling, so
/// that a vector grown by many small additions is not copied each time.
///
/// # Errors
/// [`MetricError::OutOfMemory`] naming `what` when the allocator refuses.
pub fn reserve_big<T>(v: &mut Vec<T>, additional: usize, what: &'static str) -> Result<()> {
    let grown = if v.len() + additional < 1 << 20 {
        v.try_reserve(additional)
    } else {
        v.try_reserve_exact(additional)
    };
    grown.map_err(|_| MetricError::OutOfMemory {
        what,
        bytes: bytes_of::<T>(v.len().saturating_add(additional)),
    })?;
    let size = std::mem::size_of::<T>();
    let start = v.as_ptr() as usize + v.len() * size;
    advise_huge(start, v.as_ptr() as usize + v.capacity() * size);
    Ok(())
}

/// Ask the kernel to back the whole 2 MiB pages of the address range
/// `start..end` (memory the caller owns and has not touched) with
/// transparent huge pages; elsewhere than on Linux, nothing.
fn advise_huge(start: usize, end: usize) {
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 1 << 21;
        let (a, b) = ((start + HUGE - 1) & !(HUGE - 1), end & !(HUGE - 1));
        if b > a {
            // SAFETY: the range lies inside an allocation of the caller's;
            // MADV_HUGEPAGE only changes how the kernel backs it (a failure
            // is harmless and ignored).
            unsafe {
                libc::madvise(a as *mut libc::c_void, b - a, libc::MADV_HUGEPAGE);
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (start, end);
}

/// An empty vector with room for `n` values whose large allocation is backed
/// by transparent huge pages where the kernel offers them on request
/// (`madvise`): filling 80 MB then takes about 40 page faults instead of
/// 20,000, which on the reference VM saves tens of milliseconds per buffer.
///
/// # Errors
/// [`MetricError::OutOfMemory`] naming `what` when the allocator refuses.
pub fn big_vec<T>(n: usize, what: &'static str) -> Result<Vec<T>> {
    let v: Vec<T> = try_with_capacity(n, what)?;
    let start = v.as_ptr() as usize;
    advise_huge(start, start + n * std::mem::size_of::<T>());
    Ok(v)
}

/// An atomic integer whose all-zero bytes are the value 0: the slots
/// [`zeroed_slots`] hands out. Sealed: only `AtomicU32` and `AtomicU64`.
pub trait ZeroSlot: Sync + sealed::Sealed {
    /// The largest value a slot holds.
    const MAX: u64;
    /// Store `value` (at most [`Self::MAX`]).
    fn put(&self, value: u64);
    /// The value stored.
    fn get(&self) -> u64;
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for std::sync::atomic::AtomicU32 {}
    impl Sealed for std::sync::atomic::AtomicU64 {}
}

impl ZeroSlot for AtomicU32 {
    const MAX: u64 = u32::MAX as u64;
    #[inline(always)]
    fn put(&self, value: u64) {
        // At most `MAX` by the caller's choice of slot (a wider value would
        // be cut to its low bits, never read out of bounds).
        #[allow(clippy::cast_possible_truncation)]
        self.store(value as u32, Ordering::Relaxed);
    }
    #[inline(always)]
    fn get(&self) -> u64 {
        u64::from(self.load(Ordering::Relaxed))
    }
}

impl ZeroSlot for AtomicU64 {
    const MAX: u64 = u64::MAX;
    #[inline(always)]
    fn put(&self, value: u64) {
        self.store(value, Ordering::Relaxed);
    }
    #[inline(always)]
    fn get(&self) -> u64 {
        self.load(Ordering::Relaxed)
    }
}

/// `n` atomic slots holding zero, huge-page backed as in [`big_vec`], for
/// threads that each write their own scattered slots at once. The zeros cost
/// no writing (a fresh allocation of zeros is made of untouched pages), so
/// each page is faulted in by the thread that first writes it.
///
/// # Errors
/// [`MetricError::OutOfMemory`] naming `what` when the allocator refuses.
pub fn zeroed_slots<S: ZeroSlot>(n: usize, what: &'static str) -> Result<Vec<S>> {
    let refused = || MetricError::OutOfMemory {
        what,
        bytes: bytes_of::<S>(n),
    };
    if n == 0 {
        return Ok(Vec::new());
    }
    let layout = std::alloc::Layout::array::<S>(n).map_err(|_| refused())?;
    // SAFETY: the layout has a non-zero size (n > 0).
    let ptr = unsafe { std::alloc::alloc_zeroed(layout) }.cast::<S>();
    if ptr.is_null() {
        return Err(refused());
    }
    advise_huge(ptr as usize, ptr as usize + layout.size());
    // SAFETY: `ptr` comes from the global allocator with the layout of `n`
    // values of `S`, an atomic integer (sealed) whose all-zero bytes are 0.
    Ok(unsafe { Vec::from_raw_parts(ptr, n, n) })
}

/// `(0..n).map(item)` collected into a vector (huge-page backed, see
/// [`big_vec`]), in parallel chunks of [`CHECK_ROWS`] when `pool` runs large
/// work in parallel. Stops between chunks once the pool's stop flag is raised.
///
/// # Errors
/// [`MetricError::Interrupted`].
pub fn collect_chunked<T: Copy + Send + Sync>(
    n: usize,
    item: impl Fn(usize) -> T + Send + Sync,
    pool: &Pool,
) -> Result<Vec<T>> {
    collect_chunked_folded(n, item, (), |(), _| (), |(), ()| (), pool).map(|(v, ())| v)
}

/// Values [`collect_chunked_folded`] writes before folding them: a stretch
/// of them stays in the first-level cache until `fold` has read it.
const FOLD_ROWS: usize = 1 << 12;

/// [`collect_chunked`], and a summary of the values folded in as they are
/// written: `fold(acc, stretch)` over each stretch of at most 4,096
/// values while it is still in cache (not a second read of the whole vector
/// from memory), the chunks' summaries combined by `join` from `zero`. The
/// stretches and chunks are fixed by `n` alone, so a `join` that is exact
/// (integer sums, flags) gives the same summary on any thread count.
///
/// # Errors
/// [`MetricError::Interrupted`].
pub fn collect_chunked_folded<T: Copy + Send + Sync, A: Copy + Send + Sync>(
    n: usize,
    item: impl Fn(usize) -> T + Send + Sync,
    zero: A,
    fold: impl Fn(A, &[T]) -> A + Send + Sync,
    join: impl Fn(A, A) -> A + Send + Sync,
    pool: &Pool,
) -> Result<(Vec<T>, A)> {
    let mut out: Vec<T> = big_vec(n, "a buffer of one value per row")?;
    let spare = out.spare_capacity_mut().get_mut(..n).unwrap_or_default();
    let fill = |(c, piece): (usize, &mut [std::mem::MaybeUninit<T>])| -> A {
        let mut acc = zero;
        if pool.stopped() {
            return acc;
        }
        for (s, stretch) in piece.chunks_mut(FOLD_ROWS).enumerate() {
            let base = c * CHECK_ROWS + s * FOLD_ROWS;
            for (i, slot) in stretch.iter_mut().enumerate() {
                slot.write(item(base + i));
            }
            // SAFETY: every slot of `stretch` was just written, and
            // `MaybeUninit<T>` has the size and alignment of `T`.
            let written =
                unsafe { std::slice::from_raw_parts(stretch.as_ptr().cast::<T>(), stretch.len()) };
            acc = fold(acc, written);
        }
        acc
    };
    let summary = if pool.parallel_for(n) {
        pool.install(|| {
            spare
                .par_chunks_mut(CHECK_ROWS)
                .enumerate()
                .map(fill)
                .reduce(|| zero, &join)
        })
    } else {
        spare
            .chunks_mut(CHECK_ROWS)
            .enumerate()
            .map(fill)
            .fold(zero, &join)
    };
    pool.check()?;
    // SAFETY: the flag was not raised, so every chunk ran and wrote each of
    // its slots: the first `n` values are initialised (`T: Copy` needs no drop).
    unsafe { out.set_len(n) };
    Ok((out, summary))
}
