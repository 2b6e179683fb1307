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

/// Whether the CPU is Intel's (CPUID leaf 0 names the vendor). Some kernels
/// order their instructions per vendor: the same results, different ports.
#[must_use]
pub fn intel() -> bool {
    static IS: OnceLock<bool> = OnceLock::new();
    *IS.get_or_init(|| {
        #[cfg(target_arch = "x86_64")]
        {
            // CPUID leaf 0 names the vendor in EBX, EDX, ECX.
            #[allow(unused_unsafe)]
            // SAFETY: CPUID exists on every x86-64 CPU.
            let id = unsafe { std::arch::x86_64::__cpuid(0) };
            (id.ebx, id.edx, id.ecx) == (0x756e_6547, 0x4965_6e69, 0x6c65_746e)
        }
        #[cfg(not(target_arch = "x86_64"))]
        false
    })
}

/// `fn $name`, running the `#[inline(always)]` function `$body` (same
/// arguments, no result) compiled for the widest vectors this CPU has: AVX-512 (as
/// [`avx512`] checks it), AVX2 ([`avx2`]), or the baseline, chosen at run
/// time. Generic parameters take one bound each, and are inferred from the
/// arguments.
macro_rules! widest {
    (
        $(#[$attr:meta])*
        $vis:vis fn $name:ident $(<$($g:ident: $bound:path),*>)?
            ($($arg:ident: $ty:ty),* $(,)?) => $body:path
    ) => {
        $(#[$attr])*
        $vis fn $name $(<$($g: $bound),*>)? ($($arg: $ty),*) {
            #[cfg(target_arch = "x86_64")]
            {
                #[target_feature(enable = "avx512f,avx512dq,avx512vl,avx512bw,avx2,popcnt,bmi1")]
                unsafe fn wide $(<$($g: $bound),*>)? ($($arg: $ty),*) {
                    $body($($arg),*);
                }
                #[target_feature(enable = "avx2,popcnt,bmi1")]
                unsafe fn narrow $(<$($g: $bound),*>)? ($($arg: $ty),*) {
                    $body($($arg),*);
                }
                if $crate::cpu::avx512() {
                    // SAFETY: the CPU has the features `wide` is compiled for.
                    unsafe { wide($($arg),*) };
                    return;
                }
                if $crate::cpu::avx2() {
                    // SAFETY: the CPU has the features `narrow` is compiled for.
                    unsafe { narrow($($arg),*) };
                    return;
                }
            }
            $body($($arg),*);
        }
    };
}

pub(crate) use widest;
