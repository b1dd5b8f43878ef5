//! The E5 of a bundle: per function one block of operations, `Cast -> AneInference ->
//! Cast` around every engine segment and a `CpuInference` per layer left to the CPU, each
//! with its argument frame and attributes in sections of their own (docs/formats/e5.md).

use super::descriptor::{self, HostTensor};
use super::{Bundle, EngineStep, FunctionBundle, Step};
use crate::Error;
use anec_codegen::e5::*;
use sha2::{Digest, Sha256};
use std::collections::HashMap;

/// A tensor an operation reads or writes: its symbol name, layout and byte size.
type Slot = (String, TensorDescriptorT, u64);

/// Alignment of each tensor in a function's intermediate buffer.
const INTERMEDIATE_ALIGN: u64 = 64;

/// The E5 program of a bundle.
pub fn program(b: &Bundle) -> Result<E5ProgramT, Error> {
    let mut w = Writer { file: b.file.clone(), ..Writer::default() };
    for f in &b.functions {
        function(&mut w, b, f)?;
    }
    Ok(E5ProgramT {
        symbol_names: Some(w.symbols),
        build_info: Some(Box::new(build_info(b))),
        sections: Some(w.sections),
        format_version: FORMAT_VERSION,
    })
}

/// The seven build-info pairs: no machine paths, only names and versions.
fn build_info(b: &Bundle) -> BuildInfoT {
    let pairs = [
        ("built-for-profiling", "false".to_string()),
        ("input-file-path", b.input_name.clone()),
        ("compiler", "anec".to_string()),
        ("compiler-version", env!("CARGO_PKG_VERSION").to_string()),
        ("register-image", "ZinAneTdHw_v10".to_string()),
        ("e5-format-version", FORMAT_VERSION.to_string()),
        ("on-device-compilation", "false".to_string()),
    ];
    let entries = pairs.into_iter().map(|(k, v)| BuildInfoEntryT { key: Some(k.into()), value: Some(v) });
    BuildInfoT { entries: Some(entries.collect()) }
}

/// Symbols and sections collected over the functions.
#[derive(Default)]
struct Writer {
    file: String,
    symbols: Vec<String>,
    index: HashMap<String, u32>,
    sections: Vec<SectionT>,
}

impl Writer {
    /// The index of symbol `name`, added on first use.
    fn symbol(&mut self, name: &str) -> Result<u32, Error> {
        if let Some(&i) = self.index.get(name) {
            return Ok(i);
        }
        let i = u32::try_from(self.symbols.len()).map_err(|_| bundle_error(&self.file, "more than 2^32 symbols"))?;
        self.symbols.push(name.to_string());
        self.index.insert(name.to_string(), i);
        Ok(i)
    }

    fn section(&mut self, name: String, kind: SectionKind, fill: impl FnOnce(&mut SectionT)) {
        let mut s = SectionT { name: Some(name), kind, ..Default::default() };
        fill(&mut s);
        self.sections.push(s);
    }
}

/// The operations of one function, in the order they run.
struct Ops<'a> {
    function: &'a str,
    list: Vec<OperationT>,
    /// Bytes of every tensor the operations read or write, by name.
    sizes: Vec<(String, u64)>,
}

impl Ops<'_> {
    /// Adds operation `Op<n>_<type>` with its two sections.
    fn push(
        &mut self,
        w: &mut Writer,
        ty: OpType,
        io: (&[Slot], &[Slot]),
        ports: Vec<IOPortT>,
        attrs: OpAttrsT,
    ) -> Result<(), Error> {
        let name = format!("Op{}_{}", self.list.len(), ty.variant_name().unwrap_or("Op"));
        let prefix = format!("{}.{name}", self.function);
        let (inputs, outputs) = io;
        let mut ids = |list: &[Slot]| -> Result<Vec<u32>, Error> {
            list.iter()
                .map(|(n, _, size)| {
                    self.sizes.push((n.clone(), *size));
                    w.symbol(n)
                })
                .collect()
        };
        let (in_ids, out_ids) = (ids(inputs)?, ids(outputs)?);
        let operands =
            |list: &[Slot]| list.iter().map(|(_, d, _)| OperandT { descriptor: Some(Box::new(d.clone())) }).collect();
        let frame = ArgFrameT { inputs: Some(operands(inputs)), outputs: Some(operands(outputs)), ports: Some(ports) };
        w.section(format!("{prefix}.__arg_frame"), SectionKind::ArgFrame, |s| s.arg_frame = Some(Box::new(frame)));
        w.section(format!("{prefix}.__op_attrs"), SectionKind::OpAttrs, |s| s.attrs = attrs);
        self.list.push(OperationT {
            name: Some(name),
            op_type: ty,
            inputs: Some(in_ids),
            outputs: Some(out_ids),
            arg_frame: Some(format!("{prefix}.__arg_frame")),
            attrs_section: Some(format!("{prefix}.__op_attrs")),
        });
        Ok(())
    }
}

/// One function's section and its operations' sections.
fn function(w: &mut Writer, b: &Bundle, f: &FunctionBundle) -> Result<(), Error> {
    let mut ops = Ops { function: &f.name, list: Vec::new(), sizes: Vec::new() };
    let single = f.steps.iter().filter(|s| matches!(s, Step::Engine(_))).count() == 1;
    for step in &f.steps {
        match step {
            Step::Engine(e) => engine(w, &mut ops, b, e, single)?,
            Step::Cpu(c) => {
                let io = |ts: &[HostTensor]| ts.iter().map(host_operand).collect::<Vec<_>>();
                let attrs = OpAttrsT::CpuInferenceAttrs(Box::new(c.attrs.clone()));
                ops.push(w, OpType::CpuInference, (&io(&c.inputs), &io(&c.outputs)), Vec::new(), attrs)?;
            }
        }
    }
    let inputs = f.inputs.iter().map(|t| w.symbol(&t.name)).collect::<Result<Vec<_>, _>>()?;
    let outputs = f.outputs.iter().map(|t| w.symbol(&t.name)).collect::<Result<Vec<_>, _>>()?;
    let external: Vec<&str> = f.inputs.iter().chain(&f.outputs).map(|t| t.name.as_str()).collect();
    let (intermediates, size) = place_intermediates(w, &ops.sizes, &external)?;
    let block = BlockT { name: Some("block0".into()), operations: Some(ops.list) };
    let func = FunctionT {
        name: Some(f.name.clone()),
        anehash_path: Some(String::new()),
        blocks: Some(vec![block]),
        inputs: Some(inputs),
        outputs: Some(outputs),
        intermediates: Some(intermediates),
        intermediate_size: size,
    };
    w.section(format!("{}.__function", f.name), SectionKind::Function, |s| s.function = Some(Box::new(func)));
    Ok(())
}

/// Every tensor that is not an input or output of the function, at 64-byte aligned offsets
/// of one buffer in first-use order.
fn place_intermediates(
    w: &mut Writer,
    sizes: &[(String, u64)],
    external: &[&str],
) -> Result<(Vec<AliasSymbolT>, u64), Error> {
    let (mut out, mut next): (Vec<AliasSymbolT>, u64) = (Vec::new(), 0);
    for (name, size) in sizes {
        if external.contains(&name.as_str()) || out.iter().any(|a| a.name.as_deref() == Some(name)) {
            continue;
        }
        let addr_offset = u32::try_from(next).map_err(|_| bundle_error(&w.file, "intermediate buffer beyond 4 GiB"))?;
        out.push(AliasSymbolT { name: Some(name.clone()), symbol_index: w.symbol(name)?, addr_offset });
        next = (next + size).div_ceil(INTERMEDIATE_ALIGN) * INTERMEDIATE_ALIGN;
    }
    Ok((out, next))
}

/// A host tensor as an operand.
fn host_operand(t: &HostTensor) -> Slot {
    (t.name.clone(), descriptor::host(t), t.byte_size())
}

/// Casts in, the inference, casts out.
fn engine(w: &mut Writer, ops: &mut Ops<'_>, b: &Bundle, e: &EngineStep, single: bool) -> Result<(), Error> {
    let hwx = &e.compiled.hwx;
    let addrs =
        anec_codegen::tensor_addresses(hwx).map_err(|source| Error::Codegen { file: e.file.clone(), source })?;
    let bound = |t: &HostTensor| -> Result<(usize, &anec_codegen::BoundTensor), Error> {
        let found =
            hwx.tensors.iter().enumerate().find(|(_, b)| b.name.strip_suffix("@output").unwrap_or(&b.name) == t.name);
        found.ok_or_else(|| bundle_error(&b.file, &format!("program {} binds no tensor `{}`", e.file, t.name)))
    };
    let segment = e.file.strip_suffix(".hwx").unwrap_or(&e.file);
    let ane_name =
        |t: &HostTensor| if single { format!("{}_ane", t.name) } else { format!("{}_ane@{segment}", t.name) };
    let mut ane_in = Vec::new();
    let mut ports = Vec::new();
    for (list, inbound) in [(&e.inputs, true), (&e.outputs, false)] {
        for t in list {
            let (i, bt) = bound(t)?;
            let d = descriptor::engine(t, bt).map_err(|m| bundle_error(&b.file, &m))?;
            let va = addrs.get(i).copied().unwrap_or_default();
            ports.push(IOPortT { name: Some(bt.name.clone()), byte_size: bt.section_size, aperture_va: va });
            let ane = (ane_name(t), d.clone(), bt.section_size);
            if inbound {
                cast(w, ops, host_operand(t), ane.clone(), t.dtype, d.storage_type)?;
            }
            ane_in.push(ane);
        }
    }
    let outs = ane_in.split_off(e.inputs.len());
    let attrs = AneInferenceAttrsT {
        procedure_name: Some(hwx.network.clone()),
        anehash: Some(hex(&Sha256::digest(e.bytes()))),
        program_symbol: Some(e.file.clone()),
        intermediate_buffer_handle: 1,
        compiler_options: Some(b.options.clone()),
    };
    ops.push(w, OpType::AneInference, (&ane_in, &outs), ports, OpAttrsT::AneInferenceAttrs(Box::new(attrs)))?;
    for (t, ane) in e.outputs.iter().zip(outs) {
        let dtype = ane.1.storage_type;
        cast(w, ops, ane, host_operand(t), dtype, t.dtype)?;
    }
    Ok(())
}

/// A Cast from one layout and element type to another.
fn cast(
    w: &mut Writer,
    ops: &mut Ops<'_>,
    from: Slot,
    to: Slot,
    src: TensorDataType,
    dst: TensorDataType,
) -> Result<(), Error> {
    let attrs = OpAttrsT::CastAttrs(Box::new(CastAttrsT { src_dtype: src, dst_dtype: dst, component_pack: 1 }));
    ops.push(w, OpType::Cast, (&[from], &[to]), Vec::new(), attrs)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn bundle_error(file: &str, message: &str) -> Error {
    Error::Bundle { file: file.to_string(), message: message.to_string() }
}
