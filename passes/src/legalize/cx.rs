//! The context a validator reads an op through, and the [`Rejection`] it returns.
//!
//! Validators run after the IR verifier, so attributes have their documented kinds; the
//! readers here still return `None` (or a neutral value) for anything missing, so a
//! validator never panics on a module that skipped verification.

use super::{Rejection, Route, Stage};
use crate::target::{Family, FeatureByte, Limits, Target};
use anec_ir::{Attr, Module, Op, OpCode, TensorType};

/// Axis names in the engine's N, C, D, H, W order (as `anec` attributes spell them).
pub(crate) const AXIS_NAMES: [&str; 5] = ["batch", "channel", "depth", "height", "width"];

/// One-letter axis names in N, C, D, H, W order, for messages.
pub(crate) const AXIS_LETTERS: [&str; 5] = ["N", "C", "D", "H", "W"];

/// The result of one validator: accepted, or the first rule the layer breaks.
pub(crate) type Check = Result<(), Rejection>;

/// Dimensions in N, C, D, H, W order.
pub(crate) fn dims5(t: &TensorType) -> [u32; 5] {
    [t.n, t.c, t.d, t.h, t.w]
}

/// What one validator sees: the op, its module, the chip and the route.
pub(crate) struct Cx<'a> {
    /// The module holding the op.
    pub m: &'a Module,
    /// The op being validated.
    pub op: &'a Op,
    /// The chip.
    pub target: Target,
    /// How the op reached the compiler.
    pub route: Route,
}

impl<'a> Cx<'a> {
    /// The type of operand `k`.
    pub fn operand(&self, k: usize) -> Option<TensorType> {
        self.op.operands.get(k).and_then(|&id| self.m.ty(id)).copied()
    }

    /// The types of every operand (unknown ids are skipped).
    pub fn operands(&self) -> Vec<TensorType> {
        self.op.operands.iter().filter_map(|&id| self.m.ty(id)).copied().collect()
    }

    /// The type of the first result.
    pub fn result(&self) -> Option<TensorType> {
        self.op.results.first().and_then(|&id| self.m.ty(id)).copied()
    }

    /// The op producing operand `k`, if it is not a module input.
    pub fn producer(&self, k: usize) -> Option<&'a Op> {
        self.op.operands.get(k).and_then(|&id| self.m.producer(id))
    }

    /// Whether operand `k` is a compile-time constant (produced by `anec.constant`).
    pub fn operand_is_constant(&self, k: usize) -> bool {
        self.producer(k).is_some_and(|p| p.opcode == OpCode::Constant)
    }

    /// Whether operand `k` is fp16.
    pub fn operand_is_fp16(&self, k: usize) -> bool {
        self.operand(k).is_some_and(|t| t.dtype == anec_ir::DType::F16)
    }

    /// An integer attribute.
    pub fn int(&self, name: &str) -> Option<i64> {
        self.op.attr(name).and_then(Attr::as_int)
    }

    /// An integer-array attribute (empty when missing).
    pub fn ints(&self, name: &str) -> Vec<i64> {
        self.op.attr(name).and_then(Attr::as_int_array).unwrap_or_default()
    }

    /// A string attribute.
    pub fn str(&self, name: &str) -> Option<&'a str> {
        self.op.attr(name).and_then(Attr::as_str)
    }

    /// A boolean attribute (`false` when missing).
    pub fn flag(&self, name: &str) -> bool {
        self.op.attr(name).and_then(Attr::as_bool).unwrap_or(false)
    }

    /// A float attribute (integers widen).
    pub fn float(&self, name: &str) -> Option<f64> {
        self.op.attr(name).and_then(Attr::as_float)
    }

    /// An axis-name attribute, as an index into N, C, D, H, W.
    pub fn axis(&self, name: &str) -> Option<usize> {
        let s = self.str(name)?;
        AXIS_NAMES.iter().position(|n| *n == s)
    }

    /// An array of axis names, as indices (unknown names are skipped).
    pub fn axes(&self, name: &str) -> Vec<usize> {
        let Some(items) = self.op.attr(name).and_then(Attr::as_array) else { return Vec::new() };
        items.iter().filter_map(Attr::as_str).filter_map(|s| AXIS_NAMES.iter().position(|n| *n == s)).collect()
    }

    /// The chip's value of a feature byte.
    pub fn byte(&self, b: FeatureByte) -> u8 {
        self.target.feature(b)
    }

    /// The chip's limits.
    pub fn limits(&self) -> &'static Limits {
        self.target.limits()
    }

    /// A rejection at validation with the seed's (formatted) reject string.
    pub fn reject(&self, rule: impl Into<String>) -> Rejection {
        Rejection { rule: rule.into(), feature: None, suggestion: None, stage: Stage::Validation }
    }

    /// Rejects with `rule` unless feature byte `b` is set on the chip.
    pub fn need_byte(&self, b: FeatureByte, rule: &str) -> Check {
        if self.byte(b) != 0 {
            return Ok(());
        }
        Err(self.reject(rule).byte(self.target, b))
    }

    /// Rejects with `rule` when the chip's family is below `floor` (a route's family floor).
    pub fn need_family(&self, floor: Family, why: &str, rule: &str) -> Check {
        if self.target.family() >= floor {
            return Ok(());
        }
        let fam = self.target.family().name();
        let text = format!("family floor {} ({why}); {} is family {fam}", floor.name(), self.target.name());
        Err(Rejection { feature: Some(text), ..self.reject(rule) })
    }
}

impl Rejection {
    /// Names feature byte `b` and its value on `target`.
    pub fn byte(mut self, target: Target, b: FeatureByte) -> Self {
        let v = target.feature(b);
        self.feature = Some(format!("feature byte {:#05x} ({}) = {v} on {}", b.offset(), b.name(), target.name()));
        self
    }

    /// Names a limit (its key in `anec --print target-features`) and its value on `target`.
    pub fn limit(mut self, target: Target, key: &str, value: impl std::fmt::Display) -> Self {
        self.feature = Some(format!("limit {key} = {value} on {}", target.name()));
        self
    }

    /// Adds a concrete suggestion.
    pub fn suggest(mut self, text: impl Into<String>) -> Self {
        self.suggestion = Some(text.into());
        self
    }

    /// Marks the rejection as one of code generation (the validator passes).
    pub fn at_codegen(mut self) -> Self {
        self.stage = Stage::CodeGeneration;
        self
    }
}
