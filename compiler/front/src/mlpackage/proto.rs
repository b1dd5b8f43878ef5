//! The CoreML protobuf messages anec decodes (`Model`, the MIL `Program` tree), generated
//! at build time from `proto/model.proto` and `proto/mil.proto` (see `build.rs`).

#![allow(missing_docs, clippy::all, clippy::pedantic, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

include!(concat!(env!("OUT_DIR"), "/coreml.rs"));
