//! The statement context: reading a statement's arguments and emitting anec ops.
//!
//! Arguments resolve through the environment: a variable name gives what its producer
//! left ([`Val`]); an inline typed value is decoded into a compile-time [`Tensor`]. Ops are
//! appended to the module with a placeholder name; the driver names them (and files their
//! weight blobs under `<name>.<attr>`) once the whole statement has lowered.

use super::flatten_fc::{self, Flatten};
use super::layout;
use super::tensor::Tensor;
use super::{Lowerer, PendingResource};
use anec_ir::mil::{Arg, ScalarType, Stmt, Value, ValueData};
use anec_ir::{Attr, Attrs, Blob, Location, Op, OpCode, TensorType, ValueId};
use std::rc::Rc;

/// Why a statement did not lower.
#[derive(Debug)]
pub(crate) enum Fail {
    /// A reason to report.
    Msg(String),
    /// An input was poisoned by an earlier, already reported, failure.
    Poisoned,
}

impl From<String> for Fail {
    fn from(s: String) -> Self {
        Fail::Msg(s)
    }
}

impl From<&str> for Fail {
    fn from(s: &str) -> Self {
        Fail::Msg(s.to_string())
    }
}

/// The result of lowering something.
pub(crate) type LResult<T> = Result<T, Fail>;

/// A runtime tensor: an anec value holding a MIL tensor laid out by `layout.rs`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Rt {
    /// The anec value.
    pub id: ValueId,
    /// Its anec type (`layout::anec_type(shape)`).
    pub ty: TensorType,
    /// The MIL shape.
    pub shape: Vec<u64>,
}

/// What a MIL variable is during lowering.
#[derive(Debug, Clone)]
pub(crate) enum Val {
    /// Computed on the engine.
    Rt(Rt),
    /// Known at compile time.
    Const(Rc<Tensor>),
    /// A flatten whose only reader may fold it into a convolution.
    Flatten(Rc<Flatten>),
    /// Its producer failed.
    Poison,
}

/// The context of one statement.
pub(crate) struct Cx<'a, 'm> {
    /// The lowering state.
    pub lw: &'a mut Lowerer<'m>,
    /// The statement.
    pub stmt: &'m Stmt,
    /// Whether integer results are index tensors the engine returns fp16-encoded (set by
    /// the ranking lowerings: `topk`, `argsort`, `reduce_argmax`, ...).
    index_results: bool,
    /// Whether bool results are computed at run time as fp16 0 and 1 (set by the
    /// comparisons and logical ops, `logic.rs`).
    bool_results: bool,
}

impl<'a, 'm> Cx<'a, 'm> {
    /// A context for a statement.
    pub fn new(lw: &'a mut Lowerer<'m>, stmt: &'m Stmt) -> Self {
        Cx { lw, stmt, index_results: false, bool_results: false }
    }

    /// Accepts bool results: the engine computes them as fp16 0 and 1.
    pub fn allow_bool_results(&mut self) {
        self.bool_results = true;
    }

    /// Accepts integer results: they hold indices, which the engine computes as fp16
    /// values (exact below 2048).
    pub fn allow_index_results(&mut self) {
        self.index_results = true;
    }

    /// The op type (`conv`).
    pub fn op(&self) -> &'m str {
        &self.stmt.op.name
    }

    /// The argument `key`.
    pub fn arg(&self, key: &str) -> Option<&'m Arg> {
        self.stmt.arg(key)
    }

    /// Resolves argument `key`; `None` when absent.
    pub fn val(&self, key: &str) -> LResult<Option<Val>> {
        match self.arg(key) {
            None => Ok(None),
            Some(Arg::Tuple(..)) => Err(Fail::Msg(format!("`{key}` must be one value, not a tuple"))),
            Some(arg) => self.resolve(arg, key).map(Some),
        }
    }

    /// Resolves argument `key` as a list (a tuple, or one value).
    pub fn vals(&self, key: &str) -> LResult<Vec<Val>> {
        match self.arg(key) {
            None => Err(Fail::Msg(format!("missing input `{key}`"))),
            Some(Arg::Tuple(items, _)) => items.iter().map(|a| self.resolve(a, key)).collect(),
            Some(arg) => Ok(vec![self.resolve(arg, key)?]),
        }
    }

    fn resolve(&self, arg: &Arg, key: &str) -> LResult<Val> {
        match arg {
            Arg::Name(id) => match self.lw.env.get(&id.name) {
                Some(Val::Poison) => Err(Fail::Poisoned),
                Some(Val::Rt(rt)) if rt.ty.dtype.size() == 1 && self.op() != "cast" => {
                    Err(Fail::Msg(self.eight_bit_read(key, &id.name)))
                }
                Some(v) => Ok(v.clone()),
                None => Err(Fail::Msg(format!("`{key}` names `{}`, which is not defined before", id.name))),
            },
            Arg::Value(v) => Ok(Val::Const(Rc::new(self.value_tensor(v).map_err(|e| format!("`{key}`: {e}"))?))),
            Arg::Tuple(..) => Err(Fail::Msg(format!("`{key}` holds a nested tuple"))),
        }
    }

    /// Why argument `key` may not read the 8-bit input `var`: the engine computes in fp16,
    /// and only `cast` converts (`cast.rs`).
    fn eight_bit_read(&self, key: &str, var: &str) -> String {
        let dtype = self.lw.func.inputs.iter().find(|p| p.name.name == var).and_then(|p| p.ty.dtype());
        let dtype = dtype.map_or("8-bit".to_string(), |d| d.to_string());
        format!(
            "argument `{key}` is `{var}`, an 8-bit input ({dtype}): the engine computes in fp16, so only \
             `cast` to fp16 or fp32 may read it; cast it first (`cast(dtype = string(\"fp16\"), x = {var})`)"
        )
    }

    /// Decodes an inline typed value.
    pub fn value_tensor(&self, v: &Value) -> Result<Tensor, String> {
        let dtype = v.ty.dtype().ok_or("only tensor values are supported")?;
        let shape = v.ty.static_shape().ok_or("dynamic shapes (`?`) are not supported")?;
        match &v.data {
            ValueData::Literal(lit) => Tensor::from_literal(dtype, shape, lit),
            ValueData::BlobFile { .. } => {
                let key = v.data.blob_key().ok_or("the BLOBFILE reference is malformed")?;
                let blob = self
                    .lw
                    .model
                    .blobs
                    .get(&key)
                    .ok_or_else(|| format!("the weights at {} offset {} were not loaded", key.path, key.offset))?;
                Tensor::from_blob(dtype, shape, blob)
            }
        }
    }

    /// A required runtime tensor input; constants become `anec.constant` values and a
    /// deferred flatten is emitted.
    pub fn input(&mut self, key: &str) -> LResult<Rt> {
        let val = self.val(key)?.ok_or_else(|| format!("missing input `{key}`"))?;
        self.runtime(val, key)
    }

    /// `val` as a runtime tensor (see [`Cx::input`]).
    pub fn runtime(&mut self, val: Val, key: &str) -> LResult<Rt> {
        match val {
            Val::Rt(rt) => Ok(rt),
            Val::Const(t) => super::consts::materialize(self, &t).map_err(|e| match e {
                Fail::Msg(m) => Fail::Msg(format!("`{key}` is a compile-time constant that {m}")),
                other => other,
            }),
            Val::Flatten(f) => flatten_fc::materialize(self, &f),
            Val::Poison => Err(Fail::Poisoned),
        }
    }

    /// An optional compile-time tensor input.
    pub fn konst(&self, key: &str) -> LResult<Option<Rc<Tensor>>> {
        match self.val(key)? {
            None => Ok(None),
            Some(Val::Const(t)) => Ok(Some(t)),
            Some(Val::Poison) => Err(Fail::Poisoned),
            Some(_) => {
                Err(Fail::Msg(format!("`{key}` must be a compile-time constant, but it is computed at run time")))
            }
        }
    }

    /// A required compile-time tensor input.
    pub fn req_konst(&self, key: &str) -> LResult<Rc<Tensor>> {
        self.konst(key)?.ok_or_else(|| Fail::Msg(format!("missing input `{key}`")))
    }

    /// An optional list of integers.
    pub fn ints(&self, key: &str) -> LResult<Option<Vec<i64>>> {
        let Some(t) = self.konst(key)? else { return Ok(None) };
        t.as_i64().map(Some).ok_or_else(|| Fail::Msg(format!("`{key}` must hold integers")))
    }

    /// An optional integer.
    pub fn int(&self, key: &str) -> LResult<Option<i64>> {
        match self.ints(key)?.as_deref() {
            None => Ok(None),
            Some([v]) => Ok(Some(*v)),
            Some(other) => Err(Fail::Msg(format!("`{key}` must be one integer, got {} values", other.len()))),
        }
    }

    /// An optional float scalar.
    pub fn float(&self, key: &str) -> LResult<Option<f32>> {
        let Some(t) = self.konst(key)? else { return Ok(None) };
        t.scalar().map(Some).ok_or_else(|| Fail::Msg(format!("`{key}` must be one number")))
    }

    /// An optional boolean.
    pub fn boolean(&self, key: &str) -> LResult<Option<bool>> {
        Ok(self.int(key)?.map(|v| v != 0))
    }

    /// An optional string.
    pub fn string(&self, key: &str) -> LResult<Option<String>> {
        let Some(t) = self.konst(key)? else { return Ok(None) };
        t.string().map(|s| Some(s.to_string())).ok_or_else(|| Fail::Msg(format!("`{key}` must be a string")))
    }

    /// Appends an op producing one value of type `ty`, after the rewrites of
    /// `peephole` (which may return an existing value instead).
    pub fn emit(&mut self, opcode: OpCode, operands: &[ValueId], ty: TensorType, attrs: Attrs) -> ValueId {
        match super::peephole::rewrite(self, opcode, operands, ty, &attrs) {
            Some(v) => v,
            None => self.emit_with(opcode, operands, ty, attrs, Vec::new()),
        }
    }

    /// Appends an op as it is (no rewrite).
    pub(crate) fn emit_plain(&mut self, opcode: OpCode, operands: &[ValueId], ty: TensorType, attrs: Attrs) -> ValueId {
        self.emit_with(opcode, operands, ty, attrs, Vec::new())
    }

    /// The module being built.
    pub(crate) fn module(&self) -> &anec_ir::Module {
        &self.lw.module
    }

    /// Appends an op with weight blobs: each `(attr, blob, type)` becomes a
    /// `dense_resource` attribute named after the op once it is named.
    pub fn emit_with(
        &mut self,
        opcode: OpCode,
        operands: &[ValueId],
        ty: TensorType,
        mut attrs: Attrs,
        resources: Vec<(&str, Blob, TensorType)>,
    ) -> ValueId {
        let m = &mut self.lw.module;
        let result = m.add_value(ty);
        let index = m.ops.len();
        for (attr, blob, rty) in resources {
            attrs.insert(attr.to_string(), Attr::Resource { name: String::new(), ty: rty });
            self.lw.pending.push(PendingResource { op: index, attr: attr.to_string(), blob });
        }
        let op = Op {
            opcode,
            name: String::new(),
            operands: operands.to_vec(),
            results: vec![result],
            attrs,
            loc: Location::default(),
        };
        self.lw.module.ops.push(op);
        result
    }

    /// Appends an op whose result holds a MIL tensor of `shape`.
    pub fn emit_rt(&mut self, opcode: OpCode, operands: &[ValueId], shape: Vec<u64>, attrs: Attrs) -> LResult<Rt> {
        let ty = layout::anec_type(&shape)?;
        let id = self.emit(opcode, operands, ty, attrs);
        Ok(Rt { id, ty, shape })
    }

    /// Checks the lowered results against the statement's declared results.
    pub fn check_results(&self, vals: Vec<Val>) -> LResult<Vec<Val>> {
        if vals.len() != self.stmt.outputs.len() {
            let (got, want) = (vals.len(), self.stmt.outputs.len());
            return Err(Fail::Msg(format!("lowering produced {got} results, the statement declares {want}")));
        }
        for (val, out) in vals.iter().zip(&self.stmt.outputs) {
            let shape = match val {
                Val::Rt(rt) => {
                    let dtype = out.ty.dtype();
                    let index = self.index_results
                        && dtype.is_some_and(|d| !d.is_float() && !matches!(d, ScalarType::Bool | ScalarType::String));
                    let boolean = self.bool_results && dtype == Some(ScalarType::Bool);
                    if !index && !boolean && !matches!(dtype.map(|d| d.name()), Some("fp16" | "fp32")) {
                        let d = dtype.map_or("non-tensor".to_string(), |d| d.to_string());
                        return Err(Fail::Msg(format!(
                            "a {d} result computed at run time is not supported (the engine computes in fp16)"
                        )));
                    }
                    &rt.shape
                }
                Val::Const(t) => &t.shape,
                Val::Flatten(f) => &f.shape,
                Val::Poison => continue,
            };
            if let Some(declared) = out.ty.static_shape() {
                if &declared != shape {
                    let name = &out.name.name;
                    return Err(Fail::Msg(format!(
                        "`{name}` is declared {declared:?} but the lowering computes {shape:?}"
                    )));
                }
            }
        }
        Ok(vals)
    }
}

/// An integer array attribute.
pub(crate) fn ints_attr<T: Copy + Into<i64>>(v: &[T]) -> Attr {
    Attr::Array(v.iter().map(|&x| Attr::Int(x.into())).collect())
}

/// An axis-name attribute.
pub(crate) fn axis_attr(axis: usize) -> Attr {
    Attr::Str(layout::AXIS_NAMES.get(axis).copied().unwrap_or("?").to_string())
}

/// An array of axis names.
pub(crate) fn axes_attr(axes: &[usize]) -> Attr {
    Attr::Array(axes.iter().map(|&a| axis_attr(a)).collect())
}

/// Attributes from `(key, value)` pairs.
pub(crate) fn attrs<const K: usize>(pairs: [(&str, Attr); K]) -> Attrs {
    pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
}
