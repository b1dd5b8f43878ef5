//! Parsing speed of textual MIL: the 630 KB streaming encoder of FluidAudio's Parakeet EOU
//! model (parse + check), and printing it back.

#![allow(missing_docs, clippy::panic)]

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::hint::black_box;
use std::path::Path;

const FILE: &str = "FluidInference+FluidAudio__ParakeetEOU_1280ms_streaming_encoder.model.mil";

fn text() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/fixtures/mil/real").join(FILE);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn bench(c: &mut Criterion) {
    let text = text();
    let mut group = c.benchmark_group("mil");
    group.throughput(Throughput::Bytes(text.len() as u64));
    group.bench_function("parse_streaming_encoder", |b| {
        b.iter(|| anec_front::mil::parse_program(black_box(&text), FILE).map(|p| p.functions.len()))
    });
    let program = anec_front::mil::parse_program(&text, FILE).unwrap_or_else(|e| panic!("{e:?}"));
    group.bench_function("print_streaming_encoder", |b| {
        b.iter(|| anec_ir::mil::print::print_program(black_box(&program)))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
