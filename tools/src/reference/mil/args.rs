//! Reading a MIL statement's arguments: variables from the environment, inline literals
//! and BLOBFILE weights decoded on the spot.

use super::value::{from_blob, from_literal, MTensor};
use crate::tensor::Tensor;
use anec_ir::mil::{Arg, MilModel, ScalarType, Stmt, Value, ValueData};
use std::collections::HashMap;
use std::rc::Rc;

/// The variables defined so far.
pub(crate) type Env = HashMap<String, Rc<MTensor>>;

/// The context of one statement.
pub(crate) struct Sx<'a> {
    /// The model (for blobs).
    pub model: &'a MilModel,
    /// The variables defined before the statement.
    pub env: &'a Env,
    /// The statement.
    pub stmt: &'a Stmt,
}

/// Decodes an inline typed value (literal or BLOBFILE).
pub(crate) fn decode_value(model: &MilModel, v: &Value) -> Result<MTensor, String> {
    let dtype = v.ty.dtype().ok_or("only tensor values are supported")?;
    let shape = v.ty.static_shape().ok_or("dynamic shapes (`?`) are not supported")?;
    let shape: Vec<usize> =
        shape.iter().map(|&d| usize::try_from(d).map_err(|_| "extent too large")).collect::<Result<_, _>>()?;
    match &v.data {
        ValueData::Literal(lit) => from_literal(dtype, shape, lit),
        ValueData::BlobFile { .. } => {
            let key = v.data.blob_key().ok_or("the BLOBFILE reference is malformed")?;
            let blob = model
                .blobs
                .get(&key)
                .ok_or_else(|| format!("the weights at {} offset {} were not loaded", key.path, key.offset))?;
            from_blob(dtype, shape, blob)
        }
    }
}

impl Sx<'_> {
    /// The op type.
    pub fn op(&self) -> &str {
        &self.stmt.op.name
    }

    fn resolve(&self, arg: &Arg, key: &str) -> Result<Rc<MTensor>, String> {
        match arg {
            Arg::Name(id) => self
                .env
                .get(&id.name)
                .cloned()
                .ok_or_else(|| format!("`{key}` names `{}`, which is not defined", id.name)),
            Arg::Value(v) => decode_value(self.model, v).map(Rc::new).map_err(|e| format!("`{key}`: {e}")),
            Arg::Tuple(..) => Err(format!("`{key}` holds a nested tuple")),
        }
    }

    /// Argument `key`, if present (one value, not a tuple).
    pub fn value(&self, key: &str) -> Result<Option<Rc<MTensor>>, String> {
        match self.stmt.arg(key) {
            None => Ok(None),
            Some(Arg::Tuple(..)) => Err(format!("`{key}` must be one value, not a tuple")),
            Some(arg) => self.resolve(arg, key).map(Some),
        }
    }

    /// Argument `key` as a list (a tuple, or one value).
    pub fn values(&self, key: &str) -> Result<Vec<Rc<MTensor>>, String> {
        match self.stmt.arg(key) {
            None => Err(format!("missing input `{key}`")),
            Some(Arg::Tuple(items, _)) => items.iter().map(|a| self.resolve(a, key)).collect(),
            Some(arg) => Ok(vec![self.resolve(arg, key)?]),
        }
    }

    /// A required argument.
    pub fn req(&self, key: &str) -> Result<Rc<MTensor>, String> {
        self.value(key)?.ok_or_else(|| format!("missing input `{key}`"))
    }

    /// A required numeric argument as an f32 tensor.
    pub fn x(&self, key: &str) -> Result<Tensor, String> {
        self.req(key)?.to_f32().map_err(|e| format!("`{key}`: {e}"))
    }

    /// An optional numeric argument as an f32 tensor.
    pub fn opt_x(&self, key: &str) -> Result<Option<Tensor>, String> {
        self.value(key)?.map(|t| t.to_f32().map_err(|e| format!("`{key}`: {e}"))).transpose()
    }

    /// An optional single number.
    pub fn float(&self, key: &str) -> Result<Option<f32>, String> {
        let Some(t) = self.opt_x(key)? else { return Ok(None) };
        match t.data.as_slice() {
            [v] => Ok(Some(*v)),
            other => Err(format!("`{key}` must be one number, got {} values", other.len())),
        }
    }

    /// An optional single number, `default` when absent.
    pub fn float_or(&self, key: &str, default: f32) -> Result<f32, String> {
        Ok(self.float(key)?.unwrap_or(default))
    }

    /// A required single number.
    pub fn req_float(&self, key: &str) -> Result<f32, String> {
        self.float(key)?.ok_or_else(|| format!("missing input `{key}`"))
    }

    /// An optional list of integers.
    pub fn ints(&self, key: &str) -> Result<Option<Vec<i64>>, String> {
        self.value(key)?.map(|t| t.to_i64().map_err(|e| format!("`{key}`: {e}"))).transpose()
    }

    /// An optional single integer.
    pub fn int(&self, key: &str) -> Result<Option<i64>, String> {
        match self.ints(key)?.as_deref() {
            None => Ok(None),
            Some([v]) => Ok(Some(*v)),
            Some(other) => Err(format!("`{key}` must be one integer, got {} values", other.len())),
        }
    }

    /// An optional boolean.
    pub fn bool(&self, key: &str) -> Result<Option<bool>, String> {
        Ok(self.int(key)?.map(|v| v != 0))
    }

    /// An optional string.
    pub fn string(&self, key: &str) -> Result<Option<String>, String> {
        self.value(key)?.map(|t| t.to_str().map(str::to_string).map_err(|e| format!("`{key}`: {e}"))).transpose()
    }

    /// The declared element type of result `k`.
    pub fn out_dtype(&self, k: usize) -> Option<ScalarType> {
        self.stmt.outputs.get(k).and_then(|o| o.ty.dtype())
    }

    /// The float type of result 0 (fp32 when undeclared or not a float).
    pub fn float_dtype(&self) -> ScalarType {
        self.out_dtype(0).filter(|d| d.is_float()).unwrap_or(ScalarType::Fp32)
    }

    /// One float result of the statement's declared float type.
    pub fn one(&self, t: Tensor) -> Vec<MTensor> {
        vec![MTensor::float(self.float_dtype(), t)]
    }
}
