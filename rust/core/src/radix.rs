//! A stable LSD radix sort on `u64` keys, parallel over the crate's pool.
//!
//! Only the bits that vary between keys are sorted on (bits every key shares
//! are skipped: f32 scores widened to f64 have 29 zero low bits, and
//! probabilities share most of their exponent), in as few passes of at most
//! [`MAX_DIGIT`] bits as that allows. Each pass scatters the input as
//! [`STREAMS`] interleaved streams: contiguous slices of the input, each with
//! its own write offsets placed after the earlier streams' rows of the same
//! digit, so the sort stays stable; runs of one digit no longer serialise on
//! one offset counter, and the streams split evenly across threads. The
//! result does not depend on the thread count (a sort has one answer).

use rayon::prelude::*;

use crate::parallel::Pool;

/// Widest digit: 2048 buckets per stream keep their write positions in L1/L2.
const MAX_DIGIT: u32 = 11;
/// Interleaved input streams per pass.
const STREAMS: usize = 8;

/// A shared output pointer for the scatter: every stream writes only to its
/// own, disjoint offsets (see `scatter`).
#[derive(Clone, Copy)]
struct Out<T>(*mut T);
// SAFETY: the pointer is only used for writes to disjoint indices, one
// writer per index, while the owning buffer outlives the parallel section.
unsafe impl<T: Send> Send for Out<T> {}
// SAFETY: as above.
unsafe impl<T: Send> Sync for Out<T> {}

impl<T> Out<T> {
    /// Write `x` at index `i`.
    ///
    /// # Safety
    /// `i` is in bounds of the buffer and no other write targets it.
    unsafe fn write(&self, i: usize, x: T) {
        // SAFETY: forwarded to the caller.
        unsafe { self.0.add(i).write(x) }
    }
}

/// Sort `v` by `key` (stable).
pub fn sort_by_key<T: Copy + Send + Sync>(
    v: &mut Vec<T>,
    key: impl Fn(&T) -> u64 + Sync,
    pool: &Pool,
) {
    let n = v.len();
    if n <= 1024 {
        v.sort_by_key(&key);
        return;
    }
    let parallel = pool.parallel_for(n);
    let fold = |a: (u64, u64), b: (u64, u64)| (a.0 | b.0, a.1 & b.1);
    let (all_or, all_and) = if parallel {
        pool.install(|| {
            v.par_chunks(1 << 16)
                .map(|c| {
                    c.iter()
                        .fold((0, u64::MAX), |a, x| fold(a, (key(x), key(x))))
                })
                .reduce(|| (0, u64::MAX), fold)
        })
    } else {
        v.iter()
            .fold((0, u64::MAX), |a, x| fold(a, (key(x), key(x))))
    };
    let varying = all_or ^ all_and;
    if varying == 0 {
        return;
    }
    let lo = varying.trailing_zeros();
    let bits = 64 - varying.leading_zeros() - lo;
    let passes = bits.div_ceil(MAX_DIGIT);
    let width = bits.div_ceil(passes);
    let buckets = 1_usize << width;
    let mask = (buckets - 1) as u64;
    let len = n / STREAMS;
    // Stream s holds rows [s * len, (s + 1) * len), the last one also the tail.
    let range = |s: usize| s * len..if s + 1 == STREAMS { n } else { (s + 1) * len };
    let mut buf: Vec<T> = v.clone();
    let mut offsets = vec![0_usize; buckets * STREAMS];
    for p in 0..passes {
        let shift = lo + width * p;
        let digit = |x: &T| ((key(x) >> shift) & mask) as usize;
        // This digit's histogram per stream (rows move between streams
        // after every pass, so it is counted each time).
        let count_stream = |s: usize| {
            let mut h = vec![0_usize; buckets];
            for x in v.get(range(s)).unwrap_or(&[]) {
                if let Some(c) = h.get_mut(digit(x)) {
                    *c += 1;
                }
            }
            h
        };
        let hists: Vec<Vec<usize>> = if parallel {
            pool.install(|| (0..STREAMS).into_par_iter().map(count_stream).collect())
        } else {
            (0..STREAMS).map(count_stream).collect()
        };
        let count = |s: usize, d: usize| hists.get(s).and_then(|h| h.get(d)).copied().unwrap_or(0);
        if (0..buckets).any(|d| (0..STREAMS).map(|s| count(s, d)).sum::<usize>() == n) {
            continue; // every key has the same digit here
        }
        let mut run = 0;
        for d in 0..buckets {
            for s in 0..STREAMS {
                if let Some(o) = offsets.get_mut(s * buckets + d) {
                    *o = run;
                }
                run += count(s, d);
            }
        }
        let out = Out(buf.as_mut_ptr());
        let src: &[T] = v;
        // Stream groups: one per task, the streams of a group interleaved.
        let groups = if parallel && pool.threads() > 1 { 2 } else { 1 };
        let per = STREAMS / groups;
        let scatter = |(g, offs): (usize, &mut [usize])| {
            let slices: Vec<&[T]> = (g * per..(g + 1) * per)
                .map(|s| src.get(range(s)).unwrap_or(&[]))
                .collect();
            if per == STREAMS {
                scatter_group::<T, STREAMS>(&slices, offs, buckets, &digit, out);
            } else {
                scatter_group::<T, { STREAMS / 2 }>(&slices, offs, buckets, &digit, out);
            }
        };
        let chunks = offsets.chunks_mut(per * buckets).enumerate();
        if groups > 1 {
            pool.install(|| chunks.collect::<Vec<_>>().into_par_iter().for_each(scatter));
        } else {
            chunks.for_each(scatter);
        }
        std::mem::swap(v, &mut buf);
    }
}

/// Scatter `PER` interleaved streams (`slices`, equal lengths except the last,
/// which may be longer) through their offsets `offs` (`buckets` per stream).
#[inline]
fn scatter_group<T: Copy, const PER: usize>(
    slices: &[&[T]],
    offs: &mut [usize],
    buckets: usize,
    digit: &impl Fn(&T) -> usize,
    out: Out<T>,
) {
    let Ok(slices) = <[&[T]; PER]>::try_from(slices) else {
        return;
    };
    let common = slices.iter().map(|s| s.len()).min().unwrap_or(0);
    let mut put = |j: usize, x: &T| {
        if let Some(o) = offs.get_mut(j * buckets + digit(x)) {
            // SAFETY: `*o` lies in `0..n` (the offsets of all streams and
            // digits partition `0..n`) and each index is written exactly
            // once, by this stream.
            unsafe { out.write(*o, *x) };
            *o += 1;
        }
    };
    for i in 0..common {
        for (j, s) in slices.iter().enumerate() {
            if let Some(x) = s.get(i) {
                put(j, x);
            }
        }
    }
    for (j, s) in slices.iter().enumerate() {
        for x in s.get(common..).unwrap_or(&[]) {
            put(j, x);
        }
    }
}
