//! Helpers the integration tests share (each test crate uses some of them).
#![allow(dead_code)]

/// A small deterministic generator (no extra dependency).
pub fn lcg(seed: u64) -> impl FnMut() -> u64 {
    let mut s = seed;
    move || {
        s = s
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        s >> 33
    }
}

/// Marsaglia's xorshift64 (shifts 13, 7, 17) from a nonzero `seed`: whole
/// 64-bit words, where [`lcg`] gives 31 bits.
pub fn xorshift(seed: u64) -> impl FnMut() -> u64 {
    let mut x = seed;
    move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    }
}
