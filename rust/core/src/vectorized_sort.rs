//! The vectorized sort: Google Highway's vqsort (a SIMD quicksort that
//! dispatches to AVX-512, AVX2 or SSE4 at run time), used for the sorts of
//! plain `u32` and `u64` keys when the build found the library and the CPU
//! is one it was measured to win on.
//!
//! Which sort runs is decided once per process for each kind of key
//! ([`chosen_for`], [`Keys`]): `CMETRICS_SORT=radix` or
//! `CMETRICS_SORT=vectorized` forces one for every kind (the latter only
//! where it was built), `CMETRICS_SORT=u32=vectorized,u64=radix` one per
//! kind named ([`setting_for`]); otherwise the vectorized sort runs where
//! it was measured to win:
//! - Intel CPUs with AVX2, every kind: it sorts 10^7 keys about twice as
//!   fast as the radix sort (an Intel Xeon guest, Emerald Rapids, AVX-512:
//!   10^7 `u32` in 66 ms against 142 ms);
//! - AMD Zen 5 or later with AVX-512, every kind (an EPYC guest, family 26:
//!   10^7 `u64` keys 60-67 ms against 74-85 ms, `u32` on one thread 33-38
//!   ms against 58-69 ms);
//! - AMD Zen 4 (family 25 with AVX-512), plain `u64` keys only. Its
//!   compress-stores are microcoded: 10^7 `u32` keys take Highway's sort
//!   420-430 ms there against the radix sort's 40-51 ms, but `u64` keys
//!   (half as many lanes to a vector) 89-91 ms whatever their spread,
//!   against 81 ms for the radix sort of spread-out keys and 145 ms for
//!   keys crowded near two values (float64 probabilities near 0 and 1,
//!   which share their high bytes). Keys sorted by their high bytes alone
//!   stay on the radix sort, which skips the low bytes' passes.
//!
//! - AMD Zen 3 (family 25 without AVX-512; Highway's AVX2 sort), `u32` keys
//!   and plain `u64` keys (an EPYC guest, family 25 model 1: the AUROC of
//!   10^7 float32 probabilities 56-62 ms against 68-76 ms; of float64
//!   probabilities crowded near 0 and 1 117-120 ms against 129-132 ms, its
//!   AP 125-128 ms against 141-156 ms, at the price of 15 ms more on
//!   spread-out ones, 111-115 ms against 94-102 ms). Keys sorted by their
//!   high bytes alone stay on the radix sort (Kendall's tau of 10^7 pairs
//!   208-214 ms against 254-257 ms with the vectorized sort);
//! - AMD Zen 4 whose AVX-512 a guest hides (family 25, a Zen 4 model,
//!   [`crate::cpu::amd_zen4`]; Highway's AVX2 sort), `u32` keys only (an
//!   EPYC guest, family 25 model 17, each pair of processes alternated: the
//!   AUROC of 10^7 float32 probabilities 60-62 ms against 73 ms; of
//!   float64 probabilities 100 ms against 126-149 ms, Kendall's tau with
//!   one-sided ties 193-196 ms against 232-235 ms with the vectorized sort
//!   of `u64` keys, which keeps only the AP of float64 probabilities crowded
//!   near 0 and 1, 140 ms against 147-166 ms);
//!
//! and the radix sort everywhere else (Zen 2 and older were not measured).
//! Both sorts give the same sorted keys: the choice changes the time, never
//! a result.

use std::sync::OnceLock;

/// The sort the kernels use for plain integer keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SortAlgorithm {
    /// LSD/MSB radix sorts (`rdst`), on every machine.
    Radix,
    /// Highway's vqsort (built only where the library was found).
    Vectorized,
}

impl SortAlgorithm {
    /// The name `CMETRICS_SORT` takes.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Self::Radix => "radix",
            Self::Vectorized => "vectorized",
        }
    }
}

/// Whether this build carries the vectorized sort.
#[must_use]
pub const fn built() -> bool {
    cfg!(cmetrics_vqsort)
}

/// The kinds of keys the sort is chosen for (see the module's
/// documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keys {
    /// `u32` keys (float32 scores, packed).
    U32,
    /// `u64` keys sorted by all their bits.
    U64,
    /// `u64` keys sorted by their high bytes alone (a row index in the low
    /// bytes): the radix sort skips the low bytes' passes.
    U64HighBytes,
}

impl Keys {
    /// Every kind, in the order of [`Keys::name`]'s table.
    pub const ALL: [Self; 3] = [Self::U32, Self::U64, Self::U64HighBytes];

    /// The kind's name (`cmetrics._core.sort_algorithm` takes it).
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Self::U32 => "u32",
            Self::U64 => "u64",
            Self::U64HighBytes => "u64_high_bytes",
        }
    }

    /// The kind named `name` ([`Keys::name`]).
    #[must_use]
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.name() == name)
    }

    const fn index(self) -> usize {
        match self {
            Self::U32 => 0,
            Self::U64 => 1,
            Self::U64HighBytes => 2,
        }
    }
}

/// The sort chosen in this process for keys of the kind `keys` (see the
/// module's documentation).
#[must_use]
pub fn chosen_for(keys: Keys) -> SortAlgorithm {
    static CHOSEN: OnceLock<[SortAlgorithm; 3]> = OnceLock::new();
    let all = CHOSEN.get_or_init(|| {
        let forced = std::env::var("CMETRICS_SORT").ok();
        let cpu = Cpu {
            avx2: crate::cpu::avx2(),
            avx512: crate::cpu::avx512(),
            intel: crate::cpu::intel(),
            amd_family: crate::cpu::amd_family(),
            zen4: crate::cpu::amd_zen4(),
        };
        Keys::ALL.map(|k| choose(setting_for(forced.as_deref(), k), cpu.vectorized_wins(k)))
    });
    all.get(keys.index())
        .copied()
        .unwrap_or(SortAlgorithm::Radix)
}

/// What [`chosen_for`] knows of the CPU.
#[derive(Debug, Clone, Copy)]
pub struct Cpu {
    /// AVX2 ([`crate::cpu::avx2`]).
    pub avx2: bool,
    /// AVX-512 ([`crate::cpu::avx512`]).
    pub avx512: bool,
    /// An Intel CPU.
    pub intel: bool,
    /// An AMD CPU's family ([`crate::cpu::amd_family`]).
    pub amd_family: Option<u32>,
    /// A Zen 4 core, its AVX-512 shown or not ([`crate::cpu::amd_zen4`]).
    pub zen4: bool,
}

impl Cpu {
    /// Whether the vectorized sort was measured to win on this CPU for
    /// keys of the kind `keys`.
    #[must_use]
    pub fn vectorized_wins(self, keys: Keys) -> bool {
        // Zen 3 and Zen 4 share family 0x19; only Zen 4 has AVX-512, which
        // a guest may hide (then Highway's AVX2 sort runs on a Zen 4 core).
        let family_19 = self.amd_family == Some(0x19);
        let zen4 = family_19 && self.avx512;
        let zen4_avx2 = family_19 && self.zen4 && !self.avx512;
        let zen3 = family_19 && !self.zen4 && !self.avx512;
        let zen5_on = self.avx512 && self.amd_family.is_some_and(|f| f >= 0x1A);
        self.avx2
            && (self.intel
                || zen5_on
                || (keys == Keys::U64 && zen4)
                || (keys == Keys::U32 && zen4_avx2)
                || (keys != Keys::U64HighBytes && zen3))
    }
}

/// What `CMETRICS_SORT` (`setting`) says of keys of the kind `keys`: the
/// whole setting (`radix` or `vectorized`, for every kind), or, in a list
/// of `kind=sort` entries separated by commas (`u32=vectorized,u64=radix`),
/// the entry naming the kind; `None` when no entry names it.
#[must_use]
pub fn setting_for(setting: Option<&str>, keys: Keys) -> Option<&str> {
    let setting = setting?;
    if !setting.contains('=') {
        return Some(setting);
    }
    setting
        .split(',')
        .filter_map(|entry| entry.split_once('='))
        .find(|(kind, _)| kind.trim() == keys.name())
        .map(|(_, sort)| sort)
}

/// The choice of [`chosen_for`] from the environment's setting and whether
/// the CPU is one the vectorized sort was measured to win on.
#[must_use]
pub fn choose(forced: Option<&str>, wins_here: bool) -> SortAlgorithm {
    let vectorized = built()
        && match forced.map(str::trim) {
            Some("radix") => false,
            Some("vectorized") => true,
            _ => wins_here,
        };
    if vectorized {
        SortAlgorithm::Vectorized
    } else {
        SortAlgorithm::Radix
    }
}

#[cfg(cmetrics_vqsort)]
mod ffi {
    extern "C" {
        pub fn cmetrics_vqsort_u64(keys: *mut u64, n: usize);
        pub fn cmetrics_vqsort_u32(keys: *mut u32, n: usize);
    }
}

/// Sort `u64` keys ascending with the vectorized sort; false (nothing done)
/// when this build has none.
pub fn sort_u64(v: &mut [u64]) -> bool {
    #[cfg(cmetrics_vqsort)]
    {
        // SAFETY: the pointer and length are those of a live, exclusively
        // borrowed slice; the C side sorts exactly `n` keys in place.
        unsafe { ffi::cmetrics_vqsort_u64(v.as_mut_ptr(), v.len()) };
        true
    }
    #[cfg(not(cmetrics_vqsort))]
    {
        let _ = v;
        false
    }
}

/// Sort `u32` keys ascending with the vectorized sort; false (nothing done)
/// when this build has none.
pub fn sort_u32(v: &mut [u32]) -> bool {
    #[cfg(cmetrics_vqsort)]
    {
        // SAFETY: as in `sort_u64`.
        unsafe { ffi::cmetrics_vqsort_u32(v.as_mut_ptr(), v.len()) };
        true
    }
    #[cfg(not(cmetrics_vqsort))]
    {
        let _ = v;
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_choice_follows_the_setting_then_the_cpu() {
        let vectorized = if built() {
            SortAlgorithm::Vectorized
        } else {
            SortAlgorithm::Radix
        };
        assert_eq!(choose(Some("radix"), true), SortAlgorithm::Radix);
        assert_eq!(choose(Some(" vectorized "), false), vectorized);
        assert_eq!(choose(None, true), vectorized);
        assert_eq!(choose(None, false), SortAlgorithm::Radix);
        assert_eq!(choose(Some("other"), false), SortAlgorithm::Radix);
        // One setting for every kind, or one per kind named.
        let list = Some("u32=radix, u64 = vectorized ,bad");
        assert_eq!(setting_for(list, Keys::U32), Some("radix"));
        assert_eq!(setting_for(list, Keys::U64), Some(" vectorized "));
        assert_eq!(setting_for(list, Keys::U64HighBytes), None);
        assert_eq!(
            setting_for(Some("radix"), Keys::U64HighBytes),
            Some("radix")
        );
        assert_eq!(setting_for(None, Keys::U32), None);
        assert_eq!(
            choose(setting_for(list, Keys::U32), true),
            SortAlgorithm::Radix
        );
        assert_eq!(choose(setting_for(list, Keys::U64), false), vectorized);
        assert_eq!(SortAlgorithm::Vectorized.name(), "vectorized");
    }

    #[test]
    fn each_kind_of_key_has_the_sort_measured_to_win_on_the_cpu() {
        let cpu = |intel, amd_family, avx512| Cpu {
            avx2: true,
            avx512,
            intel,
            amd_family,
            zen4: amd_family == Some(0x19) && avx512,
        };
        let wins = |c: Cpu| Keys::ALL.map(|k| c.vectorized_wins(k));
        // Intel, AVX2 or AVX-512: every kind.
        assert_eq!(wins(cpu(true, None, false)), [true; 3]);
        // Zen 5: every kind; Zen 4: plain u64 keys only; Zen 3 (family 25, no
        // AVX-512): u32 and plain u64 keys; Zen 2 (not measured): none.
        assert_eq!(wins(cpu(false, Some(0x1A), true)), [true; 3]);
        assert_eq!(wins(cpu(false, Some(0x19), true)), [false, true, false]);
        assert_eq!(wins(cpu(false, Some(0x19), false)), [true, true, false]);
        // A Zen 4 core whose AVX-512 is hidden: u32 keys only.
        let zen4_avx2 = Cpu {
            zen4: true,
            ..cpu(false, Some(0x19), false)
        };
        assert_eq!(wins(zen4_avx2), [true, false, false]);
        assert_eq!(wins(cpu(false, Some(0x17), false)), [false; 3]);
        // Zen 5 without AVX-512 enabled (a guest may hide it), or no AVX2.
        assert_eq!(wins(cpu(false, Some(0x1A), false)), [false; 3]);
        let zen3_without_avx2 = Cpu {
            avx2: false,
            ..cpu(false, Some(0x19), false)
        };
        assert_eq!(wins(zen3_without_avx2), [false; 3]);
        let old = Cpu {
            avx2: false,
            ..cpu(true, None, false)
        };
        assert_eq!(wins(old), [false; 3]);
        for k in Keys::ALL {
            assert_eq!(Keys::from_name(k.name()), Some(k));
        }
        assert_eq!(Keys::from_name("u16"), None);
    }

    #[test]
    fn the_vectorized_sort_sorts_every_kind_of_key() {
        let mut next = crate::random::xorshift(0x9E37_79B9_7F4A_7C15);
        for n in [0usize, 1, 2, 3, 17, 64, 1000, 100_003] {
            let cases: [Vec<u64>; 4] = [
                (0..n).map(|_| next()).collect(),
                (0..n).map(|_| next() % 3).collect(),
                (0..n)
                    .map(|i| if i % 2 == 0 { u64::MAX } else { 0 })
                    .collect(),
                (0..n as u64).rev().collect(),
            ];
            for keys in cases {
                let mut want = keys.clone();
                want.sort_unstable();
                let mut got = keys.clone();
                assert_eq!(sort_u64(&mut got), built());
                if built() {
                    assert_eq!(got, want, "u64, {n} keys");
                }
                let narrow: Vec<u32> = keys.iter().map(|&k| (k >> 32) as u32 ^ k as u32).collect();
                let mut want32 = narrow.clone();
                want32.sort_unstable();
                let mut got32 = narrow;
                assert_eq!(sort_u32(&mut got32), built());
                if built() {
                    assert_eq!(got32, want32, "u32, {n} keys");
                }
            }
        }
    }
}
