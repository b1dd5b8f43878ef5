//! Generators and harness of `properties.rs`.

pub mod attention;
pub mod cast;
pub mod chains;
pub mod constants;
pub mod families;
pub mod harness;
pub mod model;
pub mod movement;
pub mod normalization;
pub mod reduction;
