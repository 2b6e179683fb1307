//! Which vector extensions this CPU has, checked once per process: the
//! kernels compiled for AVX-512 or AVX2 beside their portable form pick one
//! from these.

use std::sync::OnceLock;

/// AVX-512 F, DQ, VL and BW (every AVX-512 CPU this project meets has the
/// four), with AVX2 and the bit-count instructions beside them.
#[must_use]
pub fn avx512() -> bool {
    static HAS: OnceLock<bool> = OnceLock::new();
    *HAS.get_or_init(|| {
        #[cfg(target_arch = "x86_64")]
        {
            std::arch::is_x86_feature_detected!("avx512f")
                && std::arch::is_x86_feature_detected!("avx512dq")
                && std::arch::is_x86_feature_detected!("avx512vl")
                && std::arch::is_x86_feature_detected!("avx512bw")
                && avx2()
        }
        #[cfg(not(target_arch = "x86_64"))]
        false
    })
}

/// AVX2, with the bit-count instructions (POPCNT, BMI1) every AVX2 CPU has.
#[must_use]
pub fn avx2() -> bool {
    static HAS: OnceLock<bool> = OnceLock::new();
    *HAS.get_or_init(|| {
        #[cfg(target_arch = "x86_64")]
        {
            std::arch::is_x86_feature_detected!("avx2")
                && std::arch::is_x86_feature_detected!("popcnt")
                && std::arch::is_x86_feature_detected!("bmi1")
        }
        #[cfg(not(target_arch = "x86_64"))]
        false
    })
}
