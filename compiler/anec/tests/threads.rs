//! The same input gives the same bytes whatever the thread count: a model whose banks are
//! packed on several threads (each over a megabyte: two 1024 x 1024 fp16 convolutions)
//! compiled with one thread and with four, into the same path.

#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)] // tests fail loudly

use std::process::Command;

mod common;

use common::write_model;

#[test]
fn one_thread_and_four_give_the_same_program() {
    let dir = tempfile::tempdir().unwrap();
    write_model(dir.path());
    let out = dir.path().join("out");
    let compile = |threads: &str| {
        let o = Command::new(env!("CARGO_BIN_EXE_anec"))
            .args(["compile", dir.path().join("model.mil").to_str().unwrap(), "-o", out.to_str().unwrap()])
            .env("RAYON_NUM_THREADS", threads)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        std::fs::read(out.join("model.hwx")).unwrap()
    };
    let one = compile("1");
    assert!(one.len() > 4 << 20, "the banks are large enough to be packed in parallel");
    assert_eq!(one, compile("4"));
}
