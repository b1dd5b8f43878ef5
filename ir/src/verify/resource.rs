//! Resource references: every `dense_resource` attribute, wherever it sits in an op's
//! attributes (arrays included), names a blob of [`Module::resources`] whose element type
//! is the attribute's and whose size is `elements * dtype size` bytes.

use super::VerifyError;
use crate::attr::Attr;
use crate::module::{Module, Op};

/// Checks every resource reference of every op.
pub(super) fn check(m: &Module, errs: &mut Vec<VerifyError>) {
    for (i, op) in m.ops.iter().enumerate() {
        for (key, attr) in &op.attrs {
            check_attr(m, i, op, key, attr, errs);
        }
    }
}

/// Checks one attribute, descending into arrays.
fn check_attr(m: &Module, i: usize, op: &Op, key: &str, attr: &Attr, errs: &mut Vec<VerifyError>) {
    match attr {
        Attr::Array(items) => {
            for item in items {
                check_attr(m, i, op, key, item, errs);
            }
        }
        Attr::Resource { name, ty } => {
            if let Some(msg) = problem(m, name, ty) {
                errs.push(VerifyError::for_op(i, op, format!("attribute `{key}`: {msg}")));
            }
        }
        _ => {}
    }
}

/// What is wrong with a reference to blob `name` of type `ty`, if anything.
fn problem(m: &Module, name: &str, ty: &crate::types::TensorType) -> Option<String> {
    let Some(blob) = m.resources.get(name) else {
        return Some(format!("resource '{name}' is not in the module's resources"));
    };
    if blob.dtype != ty.dtype {
        return Some(format!("resource '{name}' holds {} elements but the attribute type is {ty}", blob.dtype));
    }
    let want = u128::from(ty.elements()) * ty.dtype.size() as u128;
    let have = blob.bytes.len() as u128;
    (have != want).then(|| format!("resource '{name}' holds {have} bytes, {ty} needs {want}"))
}

#[cfg(test)]
mod tests {
    use crate::opcode::OpCode;
    use crate::testutil::*;
    use crate::types::DType;

    #[test]
    fn rejects_missing_blob() {
        let mut m = sample(OpCode::Conv);
        m.resources.clear();
        assert_rejects(&m, "attribute `weights`: resource 'my_layer.weights' is not in the module's resources");
    }

    #[test]
    fn rejects_dtype_mismatch() {
        let mut m = sample(OpCode::Conv);
        if let Some(b) = m.resources.get_mut("my_layer.weights") {
            b.dtype = DType::U8;
        }
        assert_rejects(&m, "holds ui8 elements but the attribute type is tensor<4x3x3x3xf16>");
    }
}
