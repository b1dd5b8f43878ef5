//! Whole-compile speed: `anec compile` work (read, lower, validate, encode, write the
//! container bytes) on the ironmill MNIST `model.mil`, on Apple's conv netplist and on the
//! shipped transformer-block example.

#![allow(missing_docs, clippy::panic)]

use criterion::{criterion_group, criterion_main, Criterion};
use std::path::{Path, PathBuf};

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/fixtures").join(rel)
}

fn compile(path: &Path) -> usize {
    let opts = anec::Options::new(anec::Target::H13g);
    match anec::compile_file(path, &opts).and_then(|c| c.hwx_bytes()) {
        Ok(bytes) => bytes.len(),
        Err(e) => panic!("{}: {e}", path.display()),
    }
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("compile");
    let mnist = fixture("mil/real/jafreck+ironmill__test-q_base.mlmodelc.model.mil");
    group.bench_function("mnist_mil", |b| b.iter(|| compile(&mnist)));
    let conv = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/conformance/conv.plist");
    group.bench_function("conv_netplist", |b| b.iter(|| compile(&conv)));
    let block = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/transformer_block/model.mil");
    group.bench_function("transformer_block_mil", |b| b.iter(|| compile(&block)));
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
