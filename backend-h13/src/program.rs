//! Assembly of a whole program: bind buffers, lower each op to a task, encode and chain the
//! TDs, and fill the container model.

use crate::buffers;
use crate::chain;
use crate::consts::ConstSection;
use crate::deferred::Deferred;
use crate::encode::{encode_task, ChainPos, STREAM_BASE_WORDS};
use crate::error::BackendError;
use crate::generation::Compat;
use crate::lower::{self, lower_group};
use crate::task::Task;
use anec_codegen::hwx::model::{Hwx, Relocation};
use anec_passes::Validated;

/// Mach-O cpusubtype of H13.
pub const CPU_SUBTYPE_H13: u32 = 4;
/// Flavor-1 state word at +0x850 in every single-layer Apple program (7 for concat).
const STATE_850: u32 = 0x11;
/// Flavor-1 state word at +0x858 (3 in the Apple programs here).
const STATE_858: u32 = 3;

/// Options of the H13 code generator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// The `LC_IDENT` banner.
    pub ident: String,
    /// Which generation of Apple's compiler the program's form and values follow.
    pub compat: Compat,
}

/// A compiled program: the `.hwx` model and the memory plan it follows.
#[derive(Debug, Clone)]
pub struct Program {
    /// The container model.
    pub hwx: Hwx,
    /// Buffers, and every intermediate's place and lifetime.
    pub plan: anec_passes::plan::MemoryPlan,
    /// The weight banks still to be packed into `hwx.consts` (empty unless compiled by
    /// [`compile_deferred`]).
    pub deferred: Deferred,
}

/// Compiles a validated module into an `.hwx` program model.
pub fn compile(v: &Validated, opts: &Options) -> Result<Program, BackendError> {
    compile_with(v, opts, false)
}

/// [`compile`], leaving the dense weight banks unpacked: `hwx.consts` holds zero room in
/// their places and their symbols are unnamed until [`Deferred::fill`] packs them, into
/// the program file as it is written (`deferred.rs`).
pub fn compile_deferred(v: &Validated, opts: &Options) -> Result<Program, BackendError> {
    compile_with(v, opts, true)
}

fn compile_with(v: &Validated, opts: &Options, defer: bool) -> Result<Program, BackendError> {
    // Attention runs as its steps (`lower::attention`), and ops whose axes have no plan
    // between transposes (`lower::axis_moves`); the module is grouped again.
    // Nearest upsampling runs as reshapes and broadcasts (`lower::upsample`) and a matmul
    // over heads as one per head (`lower::matmul_heads`) first.
    let upsampled = lower::upsample::expand(v.module());
    let headed = lower::matmul_heads::expand(upsampled.as_ref().unwrap_or(v.module()));
    let headed = headed.or(upsampled);
    let base = headed.as_ref().unwrap_or(v.module());
    let attention = lower::attention::expand(base);
    let moved = lower::axis_moves::expand(attention.as_ref().unwrap_or(base));
    let expanded = moved.or(attention).or(headed);
    let m = expanded.as_ref().unwrap_or(v.module());
    let gen = opts.compat.data();
    let groups = crate::fuse::groups(m);
    let mut plan = if gen.l2_staging { lower::l2_pair::plan(m, &groups) } else { Default::default() };
    lower::l2_pair::keep_those_that_fit(m, &mut plan);
    let mut kept_at = Default::default();
    if gen.l2_staging {
        plan.kept.extend(lower::matmul::plan(m, &groups));
        kept_at = lower::kept_values(m, &groups);
        plan.kept.extend(kept_at.keys().map(|&v| (v, crate::task::L2Form::Standard)));
    }
    let mut unplaceable = lower::unplaceable(m, &plan);
    match unplaceable.len() {
        0 => {}
        1 => return Err(unplaceable.remove(0)),
        _ => return Err(BackendError::Several(unplaceable)),
    }
    let scratch = if gen.l2_staging { lower::scratch_needs(m, &groups, &plan.kept) } else { Default::default() };
    let mut bufs = buffers::bind(m, &groups, gen.bars, &plan.kept, &scratch)?;
    bufs.kept_at = kept_at;
    if gen.l2_staging {
        lower::matmul_dram::plan(m, &groups, &mut bufs);
    }
    let weights: usize = m.resources.values().map(|b| b.bytes.len()).sum();
    // fp32 weights shrink to fp16; the padding of each chunk to 64 bytes is the margin.
    let room = weights + weights / 16;
    let mut consts = if defer { ConstSection::deferring(room) } else { ConstSection::with_capacity(room) };
    lower::constant::place(m, &mut bufs, &mut consts)?;
    let (mut tasks, group_tasks, mut refused) = lower_all(m, &groups, &bufs, &mut consts, opts.compat.data());
    crate::hazard::mark_overwrites(&mut tasks);
    crate::hazard::mark_waits(&mut tasks);
    if tasks.is_empty() && refused.is_empty() {
        return Err(BackendError::Unsupported {
            line: 0,
            layer: m.name.clone(),
            op: "network".into(),
            reason: "the network has no layers".into(),
        });
    }
    // The tasks that lowered are encoded even when other layers did not lower, so that
    // every layer the encoders refuse is reported with them.
    let count = tasks.len() as u32;
    let mut images = Vec::with_capacity(tasks.len());
    for (i, t) in tasks.iter().enumerate() {
        match encode_task(t, ChainPos { index: i as u32, count }, opts.compat.data()) {
            Ok(image) => images.push(image),
            // Every layer refused at encoding is reported once, as lowering errors are.
            Err(e) => {
                let e = at_layer(m, e);
                if !refused.iter().any(|r| same_layer(r, &e)) {
                    refused.push(e);
                }
            }
        }
    }
    match refused.len() {
        0 => {}
        1 => return Err(refused.remove(0)),
        _ => return Err(BackendError::Several(refused)),
    }
    let chain = chain::link(images, opts.compat)?;
    let (consts, const_symbols, deferred) = consts.finish_deferred();
    let plan = crate::plan::report(m, &groups, &bufs, &group_tasks, tasks.len());
    let hwx = Hwx {
        cpu_subtype: CPU_SUBTYPE_H13,
        relocations: relocations(&tasks, &chain),
        task_layers: tasks.iter().map(|t| t.layer.clone()).collect(),
        text: chain.text,
        consts: consts.into(),
        td_count: count,
        td_words: chain.first_words - 1,
        state_850: STATE_850,
        state_858: STATE_858,
        network: m.name.clone(),
        tensors: bufs.tensors,
        const_symbols,
        ident: opts.ident.clone(),
        state_order: bufs.state_order,
    };
    Ok(Program { hwx, plan, deferred })
}

/// Lowers every group: the tasks of those that lower, the tasks of each group (first, one
/// past the last), and an error for every layer that fails rather than the first.
fn lower_all(
    m: &anec_ir::Module,
    groups: &[anec_passes::Group],
    bufs: &buffers::Buffers,
    consts: &mut ConstSection,
    gen: &crate::generation::Generation,
) -> (Vec<Task>, Vec<(usize, usize)>, Vec<BackendError>) {
    let mut tasks = Vec::with_capacity(groups.len());
    let mut spans = Vec::with_capacity(groups.len());
    let mut errs = Vec::new();
    for g in groups {
        let first = tasks.len();
        let lowered = lower_group(m, g, bufs, consts, gen).and_then(|mut t| {
            if let Some(prev) = tasks.last() {
                lower::link_after_kernel_writer(prev, &mut t, gen)?;
            }
            Ok(t)
        });
        match lowered {
            Ok(t) => tasks.extend(t),
            Err(e) => errs.push(at_layer(m, e)),
        }
        spans.push((first, tasks.len()));
    }
    for (name, from, to) in &bufs.copies {
        match lower::copy_tasks(name, *from, *to) {
            Ok(t) => tasks.extend(t),
            Err(e) => errs.push(e),
        }
    }
    (tasks, spans, errs)
}

/// TD byte offset of CoeffBaseAddr[0]; channel i's word follows at +4i.
const COEFF_BASE_ADDR: u16 = 0x74;

/// One relocation per kernel chunk and per streamed channel vector: the loader adds the
/// `__const` address to the CoeffBaseAddr (or header-stream base) word holding the
/// chunk's offset, wherever the task's stream put that word.
fn relocations(tasks: &[Task], chain: &chain::Chain) -> Vec<Relocation> {
    let mut out = Vec::new();
    for (i, t) in tasks.iter().enumerate() {
        // A runtime kernel's chunks are relative to its own buffer, not `__const`.
        let chunks = if t.runtime_kernel.is_some() { 0 } else { t.kernel.len() as u16 };
        let coeffs = (0..chunks).map(|c| COEFF_BASE_ADDR + 4 * c);
        let streams = t.vectors.streams().into_iter().zip(STREAM_BASE_WORDS).filter(|(c, _)| c.is_some());
        for w in coeffs.chain(streams.map(|(_, w)| w)) {
            if let Some(at) = chain.text_offset(i, w) {
                out.push(Relocation::const_word(at));
            }
        }
    }
    out
}

/// An encoder's refusal of a task, given the source line and op of the layer it names.
fn at_layer(m: &anec_ir::Module, e: BackendError) -> BackendError {
    match e {
        BackendError::Unsupported { line: 0, layer, op, reason } => match m.ops.iter().find(|o| o.name == layer) {
            Some(o) => BackendError::Unsupported { line: o.loc.line, layer, op: o.opcode.to_string(), reason },
            None => BackendError::Unsupported { line: 0, layer, op, reason },
        },
        other => other,
    }
}

/// True when both errors name the same layer.
fn same_layer(a: &BackendError, b: &BackendError) -> bool {
    match (a, b) {
        (BackendError::Unsupported { layer: x, .. }, BackendError::Unsupported { layer: y, .. }) => x == y,
        _ => false,
    }
}
