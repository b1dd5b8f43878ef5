//! Family floors: the minimum capability family of an op where it is not a feature byte
//! that gates it (seed 003, "Two compile routes and their gates").
//!
//! The conversion route from a high-level model is gated by a minimum-family trait on each
//! operation; the direct-authoring route by the feature bytes the validators read. The two
//! agree except where this table says otherwise, and the table is the one place the
//! difference lives:
//!
//! - whole-tensor `GlobalArgMinMax`: the conversion route floors it at family A15 (ANEForge
//!   `_targets.py`: global_argmax/argmin -> A15), while the direct route gates it on byte
//!   0x4f2, set from the A13 family (the M1) on: rejected through conversion on the M1,
//!   runs through direct authoring on the same chip;
//! - `sin` and `cos` neurons: family A15 (ANEForge: decomposed below it); they have no
//!   direct-authoring bridge (seed 003), so the floor holds on both routes;
//! - every op on the conversion route: family A13 ([`CONVERSION_FLOOR`]; ANEForge: "MIL is
//!   only supported for H13+ ANE architectures", so h11 and h12 take no MIL model).

use super::cx::{Check, Cx};
use super::Route;
use crate::target::{Family, FeatureByte};
use anec_ir::OpCode;

/// One family floor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Floor {
    /// The op it gates.
    pub op: OpCode,
    /// For `anec.neuron`, the mode it gates (`None`: every instance of the op).
    pub mode: Option<&'static str>,
    /// The first family that runs it.
    pub family: Family,
    /// The routes it applies to.
    pub routes: &'static [Route],
    /// The reject string.
    pub rule: &'static str,
    /// Where the floor comes from.
    pub source: &'static str,
}

const CONVERSION: &[Route] = &[Route::Conversion];

/// The first family the conversion (MIL) route compiles for at all.
pub const CONVERSION_FLOOR: Family = Family::A13;

/// The compiler's message below [`CONVERSION_FLOOR`].
const CONVERSION_RULE: &str = "MIL is only supported for H13+ ANE architectures";
const BOTH: &[Route] = &[Route::Conversion, Route::Direct];

/// Every family floor.
pub const FLOORS: [Floor; 3] = [
    Floor {
        op: OpCode::GlobalArgMinMax,
        mode: None,
        family: Family::A15,
        routes: CONVERSION,
        rule: "GlobalArgMinMax is not available on this architecture through the conversion route",
        source: "ANEForge _targets.py op floor (global_argmax/argmin -> A15); seed 003",
    },
    Floor {
        op: OpCode::Neuron,
        mode: Some("sin"),
        family: Family::A15,
        routes: BOTH,
        rule: "This platform doesn't support Neuron sin",
        source: "ANEForge _targets.py op floor (sin -> A15); seed 003: no direct-authoring bridge",
    },
    Floor {
        op: OpCode::Neuron,
        mode: Some("cos"),
        family: Family::A15,
        routes: BOTH,
        rule: "This platform doesn't support Neuron cos",
        source: "ANEForge _targets.py op floor (cos -> A15); seed 003: no direct-authoring bridge",
    },
];

/// The floor of `op` (with neuron `mode`) on `route`, if one applies.
pub fn conversion_floor(op: OpCode, mode: Option<&str>, route: Route) -> Option<&'static Floor> {
    FLOORS.iter().find(|f| f.op == op && f.routes.contains(&route) && (f.mode.is_none() || f.mode == mode))
}

/// Rejects an op below its family floor on the route it came by.
pub(super) fn check(cx: &Cx<'_>) -> Check {
    if cx.route == Route::Conversion {
        let why = "conversion route: ANEForge _targets.py, family older is below the MIL floor";
        cx.need_family(CONVERSION_FLOOR, why, CONVERSION_RULE)
            .map_err(|r| r.suggest("author the network directly (a netplist) for this chip"))?;
    }
    let Some(floor) = conversion_floor(cx.op.opcode, cx.str("mode"), cx.route) else { return Ok(()) };
    let why = format!("{} route: {}", cx.route.name(), floor.source);
    cx.need_family(floor.family, &why, floor.rule).map_err(|r| match direct_alternative(cx, floor) {
        Some(s) => r.suggest(s),
        None => r,
    })
}

/// The direct-authoring way around a conversion floor, where the chip's byte allows it.
fn direct_alternative(cx: &Cx<'_>, floor: &Floor) -> Option<String> {
    let direct_open = floor.op == OpCode::GlobalArgMinMax
        && cx.route == Route::Conversion
        && cx.byte(FeatureByte::GlobalArgMinMax) != 0;
    direct_open.then(|| {
        format!(
            "author the layer directly as a GlobalArgMinMax netplist unit: the direct route gates it on feature \
             byte 0x4f2, which is 1 on {}",
            cx.target.name()
        )
    })
}
