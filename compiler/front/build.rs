//! Generates the Rust types of the CoreML protobuf subset in `proto/` (read by the
//! `.mlpackage` front end). `protox` compiles the `.proto` files in pure Rust (no `protoc`
//! needed) and `prost-build` writes the message types to `OUT_DIR/coreml.rs`.

use std::path::Path;

fn main() {
    if let Err(e) = generate() {
        eprintln!("error generating the CoreML protobuf types: {e}");
        std::process::exit(1);
    }
}

fn generate() -> Result<(), Box<dyn std::error::Error>> {
    let files = ["proto/model.proto", "proto/mil.proto"];
    for f in files {
        println!("cargo:rerun-if-changed={f}");
    }
    println!("cargo:rerun-if-changed=build.rs");
    let fds = protox::compile(files.iter().map(Path::new), [Path::new("proto")])?;
    prost_build::Config::new().btree_map(["."]).compile_fds(fds)?;
    Ok(())
}
