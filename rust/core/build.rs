//! Builds the vectorized sort (Highway's vqsort) when the system has Google
//! Highway's contrib library (Debian: `libhwy-dev`), found by pkg-config;
//! without it, or with `CMETRICS_NO_VQSORT` set, the radix sorts serve alone.

fn main() {
    println!("cargo::rustc-check-cfg=cfg(cmetrics_vqsort)");
    println!("cargo::rerun-if-env-changed=CMETRICS_NO_VQSORT");
    println!("cargo::rerun-if-changed=csrc/vqsort.cc");
    if std::env::var_os("CMETRICS_NO_VQSORT").is_some()
        || std::env::var("CARGO_CFG_TARGET_ARCH").as_deref() != Ok("x86_64")
    {
        return;
    }
    let Ok(hwy) = pkg_config::Config::new()
        .atleast_version("1.0")
        .probe("libhwy-contrib")
    else {
        return;
    };
    let mut build = cc::Build::new();
    build
        .cpp(true)
        .file("csrc/vqsort.cc")
        .flag_if_supported("-std=c++17");
    for dir in &hwy.include_paths {
        build.include(dir);
    }
    if build.try_compile("cmetrics_vqsort").is_ok() {
        println!("cargo::rustc-cfg=cmetrics_vqsort");
    } else {
        println!("cargo::warning=libhwy-contrib found but the vqsort shim did not build: radix sorts only");
    }
}
