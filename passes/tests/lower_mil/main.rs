//! MIL -> anec lowering tests: per op family, a small MIL program lowered and printed
//! (reviewed insta snapshots; every module passes `verify_module` inside `lower_mil`) and
//! the errors of what does not lower; plus the real MNIST model.

#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

mod common;

mod activation;
mod attention;
mod cast;
mod conv;
mod driver;
mod elementwise;
mod fixtures;
mod hidden;
mod linear;
mod model;
mod netplist;
mod norm;
mod recurrent;
mod reduce;
mod shape;
mod weights;
