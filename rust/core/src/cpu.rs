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

/// The vendor's name from CPUID leaf 0 (EBX, EDX, ECX) and the family and
/// model from leaf 1 ([`family_of`], [`model_of`]), read once per process.
#[cfg(target_arch = "x86_64")]
fn identity() -> ([u32; 3], u32, u32) {
    static ID: OnceLock<([u32; 3], u32, u32)> = OnceLock::new();
    *ID.get_or_init(|| {
        #[allow(unused_unsafe)]
        // SAFETY: CPUID exists on every x86-64 CPU; leaf 1 on every one too.
        let (vendor, signature) = unsafe {
            let v = std::arch::x86_64::__cpuid(0);
            (v, std::arch::x86_64::__cpuid(1).eax)
        };
        (
            [vendor.ebx, vendor.edx, vendor.ecx],
            family_of(signature),
            model_of(signature),
        )
    })
}

/// The family in a CPUID leaf 1 signature (EAX): the base family, plus the
/// extended family where the base is 15.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
const fn family_of(signature: u32) -> u32 {
    let base = (signature >> 8) & 0xF;
    if base == 0xF {
        base + ((signature >> 20) & 0xFF)
    } else {
        base
    }
}

/// The model in a CPUID leaf 1 signature (EAX): the base model, with the
/// extended model above it where the base family is 15 (AMD) or 6 (Intel).
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
const fn model_of(signature: u32) -> u32 {
    let base = (signature >> 4) & 0xF;
    match (signature >> 8) & 0xF {
        0x6 | 0xF => base | (((signature >> 16) & 0xF) << 4),
        _ => base,
    }
}

/// Whether the CPU is Intel's ("GenuineIntel"). Some kernels order their
/// instructions per vendor: the same results, different ports.
#[must_use]
pub fn intel() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        identity().0 == [0x756e_6547, 0x4965_6e69, 0x6c65_746e]
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// The family of an AMD CPU ("AuthenticAMD"); `None` on every other CPU.
/// Family 0x19 is Zen 3 and Zen 4 (of which only Zen 4 has AVX-512, its
/// compress-stores to memory microcoded; [`amd_zen4`] tells them apart),
/// 0x1A Zen 5 (AVX-512 at full width, fast compress-stores).
#[must_use]
pub fn amd_family() -> Option<u32> {
    #[cfg(target_arch = "x86_64")]
    {
        let (vendor, family, _) = identity();
        (vendor == AMD).then_some(family)
    }
    #[cfg(not(target_arch = "x86_64"))]
    None
}

/// Whether the CPU is an AMD Zen 4 core: family 0x19, models 0x10-0x1F and
/// 0x60-0xAF (the rest of the family, models 0x00-0x0F and 0x20-0x5F, is
/// Zen 3; the table Linux keeps). A virtual machine may hide its AVX-512,
/// so the features alone do not tell a Zen 4 core from a Zen 3.
#[must_use]
pub fn amd_zen4() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        let (vendor, family, model) = identity();
        vendor == AMD && zen4_model(family, model)
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// Whether family `family`, model `model` is a Zen 4 core ([`amd_zen4`]).
#[must_use]
pub const fn zen4_model(family: u32, model: u32) -> bool {
    family == 0x19 && matches!(model, 0x10..=0x1F | 0x60..=0xAF)
}

/// "AuthenticAMD" as CPUID leaf 0 gives it (EBX, EDX, ECX).
#[cfg(target_arch = "x86_64")]
const AMD: [u32; 3] = [0x6874_7541, 0x6974_6e65, 0x444d_4163];

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

#[cfg(test)]
mod tests {
    use super::{family_of, model_of, zen4_model};

    #[test]
    fn families_read_from_known_signatures() {
        // AMD Zen 5 (EPYC 9005, family 26 model 2), Zen 4 (EPYC 9004, family
        // 25 model 17), Zen 2 (family 23); Intel Emerald Rapids (family 6,
        // model 207) and an old family-15 Pentium 4.
        assert_eq!(family_of(0x00B0_0F21), 0x1A);
        assert_eq!(family_of(0x00A1_0F11), 0x19);
        assert_eq!(family_of(0x0083_0F10), 0x17);
        assert_eq!(family_of(0x000C_06F2), 6);
        assert_eq!(family_of(0x0000_0F29), 0xF);
    }

    #[test]
    fn models_read_from_known_signatures() {
        // The same signatures, then Zen 3 (EPYC 7003, family 25 model 1;
        // Ryzen 5000, model 0x21) and Zen 4 (Ryzen 7000, model 0x61).
        assert_eq!(model_of(0x00B0_0F21), 0x02);
        assert_eq!(model_of(0x00A1_0F11), 0x11);
        assert_eq!(model_of(0x000C_06F2), 0xCF);
        assert_eq!(model_of(0x0000_0F29), 0x02);
        assert_eq!(model_of(0x0000_0521), 0x02);
        let zen = |signature| zen4_model(family_of(signature), model_of(signature));
        assert!(zen(0x00A1_0F11) && zen(0x00A6_0F12));
        assert!(!zen(0x00A0_0F11) && !zen(0x00A2_0F10) && !zen(0x00B0_0F21));
    }
}
