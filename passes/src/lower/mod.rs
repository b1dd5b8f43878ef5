//! Lowering a MIL function to the anec dialect.
//!
//! [`lower_mil`] walks the function's statements in order with an environment mapping each
//! MIL variable to what it is on the engine side ([`Val`]): a runtime tensor (an anec
//! value with its MIL shape), a compile-time tensor (from `const`, `constexpr_*`, or an op
//! folded over constants), a deferred flatten (see `flatten_fc.rs`), or poison (its
//! producer failed and was reported). Each statement is lowered by the function of its op
//! family, one file per family; the ops it emits are named after the statement when it
//! succeeds and removed when it fails, so every error is collected and reported as a
//! [`Diagnostic`] naming the op, its result and why, without cascading into its users.
//!
//! Conventions (documented in `docs/mil.md`, "Lowering to the anec dialect"): the rank
//! mapping of `layout.rs`; runtime tensors are f16 whatever their MIL precision (but
//! `bool`, `uint8` and `int8` inputs, 8-bit tensors only a `cast` reads: `cast.rs`); weights
//! keep their source precision (fp32 stays f32, everything else becomes f16); op names
//! come from the MIL `name` attribute or the first result; helper ops a statement needs
//! before its result op are `<name>_tmp_<k>`; outputs are `<var>@output`.

mod activation;
pub use activation::ACTIVATIONS;
mod attention;
mod cast;
mod consts;
mod conv;
mod conv_transpose;
mod cx;
mod elementwise;
mod flatten_fc;
mod hidden;
mod layout;
mod linear;
mod logic;
mod norm;
mod peephole;
mod pool;
mod recurrent;
mod reduce;
mod shape;
mod softmax;
mod spatial;
mod tensor;

use anec_ir::mil::{Function, LineIndex, MilModel, ScalarType, Span, Stmt, Type};
use anec_ir::{verify_module, Blob, DType, Diagnostic, Location, Module, Port};
use cx::{Cx, Fail, LResult, Rt, Val};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// Lowers function `function` of a MIL model to an anec module, or returns every problem
/// found (unknown function, unsupported ops or parameters, each with its source position).
pub fn lower_mil(model: &MilModel, function: &str) -> Result<Module, Vec<Diagnostic>> {
    let Some(func) = model.program.function(function) else {
        return Err(vec![unknown_function(model, function)]);
    };
    let mut lw = Lowerer::new(model, func);
    lw.add_inputs();
    for stmt in &func.body {
        lw.statement(stmt);
    }
    lw.add_outputs();
    lw.finish()
}

/// A MIL statement (or function input or output) that did not lower, for `anec check`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unlowered {
    /// The MIL op (`topk`), or `input` / `output` for a function port.
    pub op: String,
    /// The statement's name (its `name` attribute or first result), or the port's.
    pub name: String,
    /// Where it is.
    pub location: Location,
    /// Why: the diagnostic's message, or that an input did not lower.
    pub reason: String,
}

/// Lowers what can be lowered of function `function`: the module of the statements that
/// lowered (a statement whose input did not lower is left out too) and one [`Unlowered`]
/// per statement or port left out, in source order. The error is for an unknown function.
pub fn lower_mil_partial(model: &MilModel, function: &str) -> Result<(Module, Vec<Unlowered>), Vec<Diagnostic>> {
    let Some(func) = model.program.function(function) else {
        return Err(vec![unknown_function(model, function)]);
    };
    let mut lw = Lowerer::new(model, func);
    lw.add_inputs();
    for stmt in &func.body {
        lw.statement(stmt);
    }
    lw.add_outputs();
    Ok((lw.module, lw.unlowered))
}

/// The diagnostic for a function name the program does not have.
fn unknown_function(model: &MilModel, function: &str) -> Diagnostic {
    let names: Vec<&str> = model.program.functions.iter().map(|f| f.name.as_str()).collect();
    let text = model.text.as_deref().map(Arc::from);
    let list = if names.is_empty() { "none".to_string() } else { names.join(", ") };
    Diagnostic::new(&model.file, text, Span::NONE, format!("the program has no function `{function}`"))
        .with_note(format!("functions: {list}"))
}

/// A weight blob waiting for its op's final name.
struct PendingResource {
    /// Index of the op in the module.
    op: usize,
    /// The attribute referring to it.
    attr: String,
    /// The bytes.
    blob: Blob,
}

/// The state of one lowering.
pub(crate) struct Lowerer<'m> {
    model: &'m MilModel,
    func: &'m Function,
    text: Option<Arc<str>>,
    /// Line starts of `text`, for the location of every op.
    lines: Option<LineIndex>,
    module: Module,
    env: HashMap<String, Val>,
    names: HashSet<String>,
    diags: Vec<Diagnostic>,
    pending: Vec<PendingResource>,
    /// For each variable, the indices of the statements reading it.
    readers: HashMap<&'m str, Vec<usize>>,
    /// What did not lower, for [`lower_mil_partial`].
    unlowered: Vec<Unlowered>,
}

/// The network name for a function: `net` for `main` (the name Apple's netplists give the
/// single network of a CoreML model, and the name the program's thread carries), else the
/// function's own name.
fn module_name(function: &str) -> String {
    if function == "main" {
        "net".to_string()
    } else {
        function.to_string()
    }
}

impl<'m> Lowerer<'m> {
    fn new(model: &'m MilModel, func: &'m Function) -> Self {
        Lowerer {
            model,
            func,
            text: model.text.as_deref().map(Arc::from),
            lines: model.text.as_deref().map(LineIndex::new),
            module: Module::new(module_name(&func.name)),
            env: HashMap::new(),
            names: HashSet::new(),
            diags: Vec::new(),
            pending: Vec::new(),
            readers: flatten_fc::readers(func),
            unlowered: Vec::new(),
        }
    }

    /// The source location of a span.
    fn location(&self, span: Span) -> Location {
        let file = self.model.file.clone();
        match &self.lines {
            Some(lines) if !span.is_none() => {
                let (line, col) = lines.line_col(span);
                let c = |v: usize| u32::try_from(v).unwrap_or(u32::MAX);
                Location { file, line: c(line), col: c(col) }
            }
            _ => Location { file, line: 0, col: 0 },
        }
    }

    /// Records an error at `span`.
    fn error(&mut self, span: Span, message: String) {
        self.diags.push(Diagnostic::new(&self.model.file, self.text.clone(), span, message));
    }

    /// Records an error about a port or statement that is left out of the module.
    fn left_out(&mut self, op: &str, name: &str, span: Span, message: String) {
        let location = self.location(span);
        self.unlowered.push(Unlowered { op: op.into(), name: name.into(), location, reason: message.clone() });
        self.error(span, message);
    }

    /// `name`, or `name_1`, `name_2`, ... when taken; marks the result as used.
    fn unique(&mut self, name: &str) -> String {
        let mut candidate = name.to_string();
        let mut k = 1;
        while self.names.contains(&candidate) {
            candidate = format!("{name}_{k}");
            k += 1;
        }
        self.names.insert(candidate.clone());
        candidate
    }

    /// Adds the function inputs as module inputs.
    fn add_inputs(&mut self) {
        for p in &self.func.inputs {
            let name = p.name.name.clone();
            match input_type(&p.ty) {
                Ok((shape, dtype)) => {
                    let ty = match layout::anec_type(&shape) {
                        Ok(ty) => anec_ir::TensorType { dtype, ..ty },
                        Err(e) => {
                            self.left_out("input", &name, p.name.span, format!("cannot lower input `{name}`: {e}"));
                            self.env.insert(name, Val::Poison);
                            continue;
                        }
                    };
                    let value = self.module.add_value(ty);
                    let loc = self.location(p.name.span);
                    let port = Port { name: name.clone(), value, layout: Default::default(), loc };
                    self.module.inputs.push(port);
                    self.names.insert(name.clone());
                    self.env.insert(name, Val::Rt(Rt { id: value, ty, shape }));
                }
                Err(e) => {
                    self.left_out("input", &name, p.name.span, format!("cannot lower input `{name}`: {e}"));
                    self.env.insert(name, Val::Poison);
                }
            }
        }
    }

    /// Lowers one statement, binding its results (poison when it fails).
    fn statement(&mut self, stmt: &'m Stmt) {
        let (values, ops) = (self.module.values.len(), self.module.ops.len());
        let result = {
            let mut cx = Cx::new(self, stmt);
            declared_static(stmt).and_then(|()| dispatch(&mut cx)).and_then(|vals| cx.check_results(vals))
        };
        match result {
            Ok(vals) => {
                self.name_ops(stmt, ops, &vals);
                for (out, val) in stmt.outputs.iter().zip(vals) {
                    self.env.insert(out.name.name.clone(), val);
                }
            }
            Err(fail) => {
                self.module.values.truncate(values);
                self.module.ops.truncate(ops);
                self.pending.clear();
                let var = stmt.outputs.first().map_or("none", |o| o.name.name.as_str());
                let name = stmt.name_attr().unwrap_or(var).to_string();
                match fail {
                    Fail::Msg(reason) => {
                        let message = format!("cannot lower `{}` (result `{var}`): {reason}", stmt.op.name);
                        self.left_out(&stmt.op.name, &name, stmt.span, message);
                    }
                    Fail::Poisoned => {
                        let location = self.location(stmt.span);
                        let reason = format!(
                            "not lowered: an input of `{}` comes from a statement that did not lower",
                            stmt.op.name
                        );
                        self.unlowered.push(Unlowered { op: stmt.op.name.clone(), name, location, reason });
                    }
                }
                for out in &stmt.outputs {
                    self.env.insert(out.name.name.clone(), Val::Poison);
                }
            }
        }
    }

    /// Names the ops a statement emitted (from index `first`) and files their resources.
    fn name_ops(&mut self, stmt: &Stmt, first: usize, vals: &[Val]) {
        let base = stmt
            .name_attr()
            .map(str::to_string)
            .or_else(|| stmt.outputs.first().map(|o| o.name.name.clone()))
            .unwrap_or_else(|| stmt.op.name.clone());
        let loc = self.location(stmt.span);
        let mut tmp = 0;
        for i in first..self.module.ops.len() {
            let defines = |k: usize| match vals.get(k) {
                Some(Val::Rt(rt)) => self.module.ops[i].results.contains(&rt.id),
                _ => false,
            };
            let wanted = match (0..vals.len()).find(|&k| defines(k)) {
                Some(0) => base.clone(),
                Some(k) => stmt.outputs.get(k).map_or_else(|| format!("{base}_{k}"), |o| o.name.name.clone()),
                None => {
                    tmp += 1;
                    format!("{base}_tmp_{}", tmp - 1)
                }
            };
            let name = self.unique(&wanted);
            let op = &mut self.module.ops[i];
            op.name = name;
            op.loc = loc.clone();
        }
        for p in std::mem::take(&mut self.pending) {
            let Some(op) = self.module.ops.get_mut(p.op) else { continue };
            let key = format!("{}.{}", op.name, p.attr);
            if let Some(anec_ir::Attr::Resource { name, .. }) = op.attrs.get_mut(&p.attr) {
                name.clone_from(&key);
            }
            self.module.resources.insert(key, p.blob);
        }
    }

    /// Adds the function outputs as module outputs `<var>@output`.
    fn add_outputs(&mut self) {
        for out in &self.func.outputs {
            let var = out.name.as_str();
            match self.env.get(var) {
                Some(Val::Rt(rt)) if rt.ty.dtype.size() == 1 => {
                    let message = format!(
                        "output `{var}` is an 8-bit input returned as it is; the engine returns fp16 tensors: \
                         return `cast(dtype = string(\"fp16\"), x = {var})`"
                    );
                    self.left_out("output", var, out.span, message);
                }
                Some(Val::Rt(rt)) => {
                    let loc = self.location(out.span);
                    let port = Port { name: format!("{var}@output"), value: rt.id, layout: Default::default(), loc };
                    self.module.outputs.push(port);
                }
                Some(Val::Poison) => {}
                Some(Val::Const(_)) => {
                    let message =
                        format!("output `{var}` is a compile-time constant; the engine returns only computed tensors");
                    self.left_out("output", var, out.span, message);
                }
                Some(Val::Flatten(_)) | None => {
                    self.left_out("output", var, out.span, format!("output `{var}` is not defined"))
                }
            }
        }
    }

    /// The module, verified, or every error.
    fn finish(mut self) -> Result<Module, Vec<Diagnostic>> {
        if !self.diags.is_empty() {
            return Err(self.diags);
        }
        drop_dead_ops(&mut self.module);
        match verify_module(&self.module) {
            Ok(()) => Ok(self.module),
            Err(errs) => Err(errs
                .into_iter()
                .map(|e| {
                    let message = format!("internal error: the lowered module fails verification: {e}");
                    Diagnostic::new(&self.model.file, self.text.clone(), Span::NONE, message)
                        .with_note("this is a compiler bug: the MIL lowering emitted an invalid op")
                })
                .collect()),
        }
    }
}

/// Removes the ops whose results nothing reads and no output names (a reshape another one
/// folded away, `Cx::emit`), with their weight blobs.
fn drop_dead_ops(m: &mut Module) {
    let mut uses: HashMap<anec_ir::ValueId, usize> = HashMap::new();
    for v in m.ops.iter().flat_map(|op| op.operands.iter()).chain(m.outputs.iter().map(|p| &p.value)) {
        *uses.entry(*v).or_default() += 1;
    }
    // Operands are defined before their users: one pass from the end finds every dead op.
    let mut dead = vec![false; m.ops.len()];
    for (i, op) in m.ops.iter().enumerate().rev() {
        if op.results.iter().all(|r| uses.get(r).copied().unwrap_or(0) == 0) {
            dead[i] = true;
            for v in &op.operands {
                uses.entry(*v).and_modify(|n| *n = n.saturating_sub(1));
            }
        }
    }
    for op in m.ops.iter().zip(&dead).filter(|(_, d)| **d).map(|(op, _)| op) {
        m.resources.retain(|k, _| !k.strip_prefix(op.name.as_str()).is_some_and(|rest| rest.starts_with('.')));
    }
    m.retain_ops(|i| !dead[i]);
}

/// The MIL shape of a function input, which must be a static tensor, and the element type
/// it has on the engine: fp16 for fp16 and fp32 inputs, 8-bit for `bool` (values 0 and 1,
/// as `U8`), `uint8` and `int8` inputs, which only a `cast` to fp16 or fp32 may read (the
/// engine computes in fp16; `cast.rs`).
fn input_type(ty: &Type) -> Result<(Vec<u64>, DType), String> {
    match ty {
        Type::Tensor { dtype, .. } | Type::Scalar(dtype) => {
            let engine = match dtype {
                ScalarType::Fp16 | ScalarType::Fp32 => DType::F16,
                ScalarType::Bool | ScalarType::Uint8 => DType::U8,
                ScalarType::Int8 => DType::I8,
                other => return Err(format!("{other} inputs are not supported (the engine computes in fp16)")),
            };
            let shape = ty.static_shape().ok_or_else(|| "dynamic shapes (`?`) are not supported".to_string())?;
            Ok((shape, engine))
        }
        Type::State(_) => Err("state inputs are not supported".into()),
        other => Err(format!("inputs of type {other:?} are not supported")),
    }
}

/// Rejects statements whose declared results have dynamic shapes.
fn declared_static(stmt: &Stmt) -> LResult<()> {
    for out in &stmt.outputs {
        if out.ty.shape().is_some() && out.ty.static_shape().is_none() {
            return Err(Fail::Msg(format!(
                "result `{}` has a dynamic shape (`?`), which is not supported",
                out.name.name
            )));
        }
    }
    Ok(())
}

/// Lowers a statement by its op type.
fn dispatch(cx: &mut Cx<'_, '_>) -> LResult<Vec<Val>> {
    if let Some(folded) = consts::try_fold(cx) {
        return folded;
    }
    let op = cx.stmt.op.name.as_str();
    match op {
        "const" => consts::const_op(cx),
        op if op.starts_with("constexpr_") => consts::constexpr(cx),
        "linear" => linear::linear(cx),
        "lstm" => recurrent::lstm(cx),
        "gru" => recurrent::gru(cx),
        "matmul" => linear::matmul(cx),
        "conv" => conv::conv(cx),
        "conv_transpose" => conv_transpose::conv_transpose(cx),
        "max_pool" | "avg_pool" => pool::pool(cx),
        "layer_norm" => norm::layer_norm(cx),
        "batch_norm" => norm::batch_norm(cx),
        "instance_norm" => norm::instance_norm(cx),
        "softmax" => softmax::softmax(cx),
        "scaled_dot_product_attention" => attention::sdpa(cx),
        "add" | "sub" | "mul" | "real_div" | "maximum" | "minimum" | "pow" => elementwise::binary(cx),
        "equal" | "not_equal" | "less" | "less_equal" | "greater" | "greater_equal" => logic::compare(cx),
        "logical_and" | "logical_or" | "logical_xor" => logic::logical(cx),
        "logical_not" => logic::logical_not(cx),
        "select" => logic::select(cx),
        "reshape" => shape::reshape(cx),
        "transpose" => shape::transpose(cx),
        "expand_dims" | "squeeze" => shape::expand_or_squeeze(cx),
        "concat" => shape::concat(cx),
        "tile" => shape::tile(cx),
        "split" => shape::split(cx),
        "slice_by_index" => shape::slice_by_index(cx),
        "slice_by_size" => shape::slice_by_size(cx),
        "identity" => shape::identity(cx),
        "cast" => cast::cast(cx),
        "reduce_argmax" | "reduce_argmin" => hidden::arg_reduce(cx),
        op if op.starts_with("reduce_") => reduce::reduce(cx),
        "topk" => hidden::topk(cx),
        "argsort" => hidden::argsort(cx),
        "pad" => hidden::pad(cx),
        "gather" => hidden::gather(cx),
        "local_response_norm" => hidden::lrn(cx),
        "non_maximum_suppression" => hidden::nms(cx),
        "pixel_shuffle" | "pixel_unshuffle" | "depth_to_space" | "space_to_depth" => spatial::depth_space(cx),
        "space_to_batch" | "batch_to_space" => spatial::space_batch(cx),
        "upsample_bilinear" | "upsample_nearest_neighbor" | "resize_bilinear" | "resize_nearest_neighbor" => {
            spatial::resize(cx)
        }
        "crop_resize" => spatial::crop_resize(cx),
        "affine" => spatial::affine(cx),
        "resample" => spatial::resample(cx),
        op if activation::handles(op) => activation::activation(cx),
        other => Err(Fail::Msg(format!("the anec dialect has no lowering for MIL op `{other}`"))),
    }
}
