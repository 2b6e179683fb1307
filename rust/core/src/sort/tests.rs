//! The sorts against the standard library's, both algorithms, any thread count.

use super::*;

#[test]
fn radix_sort_sorts() {
    let mut next = crate::random::xorshift(12345);
    let mut v: Vec<u64> = (0..100_000)
        .map(|_| {
            let x = next();
            f64::from((x % 100_000) as f32 / 7.0).to_bits() // non-negative: the bits sort as the values
        })
        .collect();
    let mut want = v.clone();
    want.sort_unstable();
    radix_sort(&mut v);
    assert_eq!(v, want);
}
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

fn data(n: usize, seed: u64, distinct: u64) -> Vec<u64> {
    let mut next = crate::random::xorshift(seed | 1);
    (0..n).map(|_| next() % distinct).collect()
}

#[test]
fn blocks_and_merges_sort() {
    for threads in [1, 3] {
        let pool = Pool::new(threads).with_min_parallel(0);
        for (n, block, distinct) in [
            (0, 4, 10),
            (1, 4, 10),
            (1000, 7, 5),
            (1000, 64, 1 << 40),
            (5000, 1000, 3),
            (5000, 5000, 100),
        ] {
            let mut v = data(n, 42 + n as u64, distinct);
            let mut want = v.clone();
            want.sort_unstable();
            sort_keys_in_blocks(&mut v, block, &pool).unwrap();
            assert_eq!(v, want, "n {n} block {block} threads {threads}");
        }
    }
}

#[test]
fn both_sorts_give_the_same_keys_on_any_thread_count() {
    for threads in [1, 2, 3] {
        let pool = Pool::new(threads).with_min_parallel(0);
        for distinct in [7, u64::MAX] {
            let keys = data(200_003, 17, distinct);
            let mut want = keys.clone();
            want.sort_unstable();
            for by in [SortAlgorithm::Radix, SortAlgorithm::Vectorized] {
                let mut got = keys.clone();
                sort_keys_by(&mut got, by, &pool).unwrap();
                assert_eq!(got, want, "{by:?} threads {threads}");
                let mut narrow: Vec<u32> = keys.iter().map(|&k| k as u32).collect();
                let mut want32 = narrow.clone();
                want32.sort_unstable();
                sort_keys_by(&mut narrow, by, &pool).unwrap();
                assert_eq!(narrow, want32, "u32 {by:?} threads {threads}");
            }
        }
    }
}

#[test]
fn u128_keys_sort() {
    let pool = Pool::new(2).with_min_parallel(0);
    let mut v: Vec<u128> = data(3000, 7, 50)
        .into_iter()
        .zip(data(3000, 9, 1 << 50))
        .map(|(a, b)| (u128::from(a) << 64) | u128::from(b))
        .collect();
    let mut want = v.clone();
    want.sort_unstable();
    sort_keys_in_blocks(&mut v, 100, &pool).unwrap();
    assert_eq!(v, want);
}

/// `sort_u64_alone` against the standard sort on keys that differ only
/// below its truncation, in every way it handles them.
#[test]
fn u64_sort_with_a_second_look_at_the_low_bytes() {
    let pool = Pool::new(2).with_min_parallel(0);
    let n = 200_003;
    let wide = data(n, 11, u64::MAX);
    // The rows the sample looks at.
    let sampled: std::collections::HashSet<usize> = (0..1023).map(|i| i * n / 1023).collect();
    let hidden = |every: usize| -> Vec<u64> {
        wide.iter()
            .enumerate()
            .map(|(i, &k)| {
                if !sampled.contains(&i) && i % every == 1 {
                    (9 << 40) | (k & 0xFF_FFFF)
                } else {
                    k
                }
            })
            .collect()
    };
    let cases: Vec<(&str, Vec<u64>)> = vec![
        ("random", wide.clone()),
        ("small", data(1000, 3, 1 << 60)),
        // Pairs of rows sharing their high bytes: short runs put in order.
        (
            "pairs",
            wide.iter()
                .enumerate()
                .map(|(i, &k)| (wide[i / 2 * 2] & !0xFF_FFFF) | (k & 0xFF_FFFF))
                .collect(),
        ),
        // Ties only (runs of equal keys need no second sort).
        (
            "ties",
            data(n, 5, 300).into_iter().map(|k| k << 40).collect(),
        ),
        // Crowded keys all over the sample: the plain sort.
        (
            "crowded",
            wide.iter().map(|&k| (5 << 40) | (k & 0xFF_FFFF)).collect(),
        ),
        // Crowded keys hidden from the sample, under 1/4 of the rows: fixed run by run.
        ("hidden few", hidden(40)),
        // ... over 1/4 of the rows: the plain sort after all.
        ("hidden many", hidden(2)),
        // Short runs in a tenth of the rows, some seen by the sample (under 1/8 of its
        // neighbours): fixed run by run.
        (
            "short runs",
            wide.iter()
                .enumerate()
                .map(|(i, &k)| {
                    if i % 10 < 3 {
                        (wide[i / 3 * 3] & !0xFF_FFFF) | (k & 0xFF_FFFF)
                    } else {
                        k
                    }
                })
                .collect(),
        ),
        (
            "extremes",
            wide.iter()
                .map(|&k| if k % 3 == 0 { u64::MAX - k % 5 } else { k % 4 })
                .collect(),
        ),
    ];
    for (name, keys) in cases {
        let mut want = keys.clone();
        want.sort_unstable();
        // Both sorts, whichever this machine would choose.
        for by in [SortAlgorithm::Radix, SortAlgorithm::Vectorized] {
            let mut got = keys.clone();
            sort_u64_alone_by(&mut got, by, &pool).unwrap();
            assert_eq!(got, want, "{name} {by:?}");
            // High bytes in order (the low three bytes a payload), in blocks too.
            let mut high = keys.clone();
            sort_high_bits_alone_by(&mut high, 24, by, &pool).unwrap();
            assert!(
                high.windows(2).all(|w| w[0] >> 24 <= w[1] >> 24),
                "{name} {by:?}"
            );
            let (mut a, mut b) = (high, keys.clone());
            a.sort_unstable();
            b.sort_unstable();
            assert_eq!(a, b, "{name} {by:?}: the same keys");
            let mut narrow: Vec<u32> = keys.iter().map(|&k| (k >> 17) as u32).collect();
            let mut want32 = narrow.clone();
            want32.sort_unstable();
            sort_keys_alone_by(&mut narrow, by, &pool).unwrap();
            assert_eq!(narrow, want32, "{name} {by:?} u32");
        }
    }
    let flag = Arc::new(AtomicBool::new(true));
    let mut v = wide;
    assert_eq!(
        sort_u64_alone(&mut v, &Pool::new(1).with_stop(flag)),
        Err(crate::MetricError::Interrupted)
    );
}

#[test]
fn a_raised_flag_stops_the_sort() {
    let flag = Arc::new(AtomicBool::new(true));
    let pool = Pool::new(2).with_stop(flag);
    let mut v = data(1000, 3, 1000);
    assert_eq!(
        sort_keys_in_blocks(&mut v, 10, &pool),
        Err(crate::MetricError::Interrupted)
    );
}

/// `u32` keys shaped as the sort meets them: float32 probabilities packed
/// with an outcome bit (crowded exponents), uniform keys, few distinct keys,
/// keys equal in their high bits, one key.
fn u32_shapes(n: usize, seed: u64) -> Vec<(&'static str, Vec<u32>)> {
    let mut next = crate::random::xorshift(seed | 1);
    let mut unit = move || (next() >> 11) as f64 / (1_u64 << 53) as f64;
    let packed = |p: f32, hit: bool| p.to_bits() << 1 | u32::from(hit);
    vec![
        (
            "probabilities",
            (0..n)
                .map(|_| {
                    let x = unit();
                    packed((x * x * x) as f32, unit() < 0.1)
                })
                .collect(),
        ),
        (
            "uniform",
            (0..n)
                .map(|i| (i as u32).wrapping_mul(2_654_435_761))
                .collect(),
        ),
        ("few", (0..n).map(|i| (i % 5) as u32 * 70_001).collect()),
        (
            "low bits only",
            (0..n)
                .map(|i| 0x3f00_0000 | ((i * 7919) % 65_536) as u32)
                .collect(),
        ),
        ("one key", vec![0x1234_5678; n]),
        (
            "middle digit only",
            (0..n)
                .map(|i| 0x0100_0000 | (((i * 31) % 512) as u32) << 9)
                .collect(),
        ),
        (
            "low digit only",
            (0..n)
                .map(|i| 0x0100_0000 | ((i * 31) % 512) as u32)
                .collect(),
        ),
    ]
}

#[test]
fn the_bucket_sort_equals_the_standard_sort_and_lends_its_spare_again() {
    let pool = Pool::new(1);
    let mut spare = Vec::new();
    for n in [0, 1, 100, 70_000, 300_000] {
        for (shape, keys) in u32_shapes(n, 7 + n as u64) {
            let mut want = keys.clone();
            want.sort_unstable();
            for by in [SortAlgorithm::Radix, SortAlgorithm::Vectorized] {
                let mut got = keys.clone();
                sort_u32_alone_lending_by(&mut got, &mut spare, by, &pool).unwrap();
                assert_eq!(got, want, "{shape}, n = {n}, {by:?}");
            }
        }
    }
    // The spare kept the room of the largest sort that dealt into it.
    assert!(spare.capacity() >= 300_000);
}

#[test]
fn the_bucket_sort_takes_spread_keys_and_leaves_the_rest() {
    let mut spare = Vec::new();
    let n = 1 << 18;
    for (shape, keys) in u32_shapes(n, 3) {
        let mut v = keys.clone();
        let took = buckets::sort_u32_in_buckets(&mut v, &mut spare).unwrap();
        if took {
            // The spare holds the keys as they were.
            assert_eq!(spare, keys, "{shape}");
        }
        // Spread: at least MIN_MEAN keys per non-empty bucket of the high bits.
        let mut high: Vec<u32> = keys.iter().map(|k| k >> (32 - buckets::HIGH)).collect();
        high.sort_unstable();
        high.dedup();
        assert_eq!(took, n / high.len() >= buckets::MIN_MEAN, "{shape}");
        let mut want = keys.clone();
        if took {
            want.sort_unstable();
        }
        assert_eq!(v, want, "{shape}: sorted when taken, untouched otherwise");
    }
}

#[test]
fn the_ranking_states_bucket_sort_equals_the_standard_sort() {
    // Below 2^16 keys or 11 bits the radix sort alone; above, the buckets of
    // the top 11 bits, each sorted on its own (by counting passes up to 22
    // bits below the top ones, else by the radix sort; on any thread count).
    for threads in [1, 3] {
        let pool = Pool::new(threads).with_min_parallel(0);
        for (n, bits, distinct) in [
            (1000, 40, 1 << 40),
            (1 << 17, 10, 1 << 10),
            (1 << 17, 40, 1 << 40),
            (200_000, 24, 1000),
            (200_000, 33, 1 << 33),
            // A few large buckets: 22 and 19 bits below the top ones.
            (1 << 18, 33, 1 << 25),
            (1 << 18, 30, 1 << 21),
        ] {
            let src = data(n, 7 + n as u64 + u64::from(bits), distinct);
            // Below the top 11 bits: two passes, or one when the low or high
            // half of those bits is the same in every key.
            let low = u32::saturating_sub(bits, 11);
            let half = low.div_ceil(2);
            let low_fixed: Vec<u64> = src.iter().map(|&x| x & !((1 << half) - 1)).collect();
            let high_fixed: Vec<u64> = src
                .iter()
                .map(|&x| x & !(((1 << half) - 1) << half))
                .collect();
            for src in [src, low_fixed, high_fixed] {
                let mut want = src.clone();
                want.sort_unstable();
                let mut dst = vec![1, 2, 3];
                bucket_sort(&src, &mut dst, bits, &pool).unwrap();
                assert_eq!(dst, want, "n {n}, bits {bits}, threads {threads}");
            }
        }
    }
}
