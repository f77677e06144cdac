//! Finds librig and its headers, links the crate against it, and checks the
//! declarations of src/lib.rs against the headers: a C program built from
//! layout.c with the headers prints the sizes, alignments, offsets and
//! constants the C compiler sees, as Rust constants the layout test
//! compares with Rust's (tests/layout.rs).
//!
//! Where librig is: RIG_LIB_DIR and RIG_INCLUDE_DIR if set, else what
//! `pkg-config --libs --cflags rig` says (PKG_CONFIG_PATH for a prefix
//! install; the build tree's rig-uninstalled.pc for the tree).
use std::env;
use std::path::PathBuf;
use std::process::Command;

fn pkg_config(args: &[&str]) -> Vec<String> {
    let output = Command::new("pkg-config")
        .args(args)
        .arg("rig")
        .output()
        .expect("rig-sys: pkg-config did not run: install it, or set RIG_LIB_DIR and RIG_INCLUDE_DIR");
    if !output.status.success() {
        panic!(
            "rig-sys: pkg-config finds no rig ({}): set PKG_CONFIG_PATH to the install's lib/pkgconfig, \
             or RIG_LIB_DIR and RIG_INCLUDE_DIR",
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    String::from_utf8(output.stdout).unwrap().split_whitespace().map(str::to_owned).collect()
}

fn directories(env_name: &str, pkg_flag: &str, prefix: &str) -> Vec<String> {
    println!("cargo:rerun-if-env-changed={env_name}");
    if let Ok(dir) = env::var(env_name) {
        return vec![dir];
    }
    pkg_config(&[pkg_flag])
        .into_iter()
        .filter_map(|word| word.strip_prefix(prefix).map(str::to_owned))
        .collect()
}

fn main() {
    println!("cargo:rerun-if-env-changed=PKG_CONFIG_PATH");
    println!("cargo:rerun-if-changed=layout.c");
    let lib_dirs = directories("RIG_LIB_DIR", "--libs-only-L", "-L");
    let include_dirs = directories("RIG_INCLUDE_DIR", "--cflags-only-I", "-I");
    for dir in &lib_dirs {
        println!("cargo:rustc-link-search=native={dir}");
    }
    println!("cargo:rustc-link-lib=dylib=rig");
    // Dependents (the rig crate's build script) learn where librig is.
    println!("cargo:lib_dirs={}", lib_dirs.join(":"));

    let out = PathBuf::from(env::var("OUT_DIR").unwrap());
    let program = out.join("layout");
    let cc = env::var("CC").unwrap_or_else(|_| "cc".to_owned());
    let mut compile = Command::new(&cc);
    compile.arg("-std=c11").arg("layout.c").arg("-o").arg(&program);
    for dir in &include_dirs {
        compile.arg(format!("-I{dir}"));
    }
    let status = compile.status().unwrap_or_else(|e| panic!("rig-sys: {cc} did not run: {e}"));
    assert!(status.success(), "rig-sys: layout.c did not compile against rig's headers");
    let printed = Command::new(&program).output().expect("rig-sys: the layout program did not run");
    assert!(printed.status.success(), "rig-sys: the layout program failed");
    let mut layout = String::from_utf8(printed.stdout).unwrap();
    // The headers the declarations follow, for the test that each of their
    // functions is declared.
    layout += &format!("pub const INCLUDE_DIRS: &[&str] = &{include_dirs:?};\n");
    std::fs::write(out.join("layout.rs"), layout).unwrap();
}
