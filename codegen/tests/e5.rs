//! The `.e5` writer and reader: the root layout the seed measured, a round trip of random
//! consistent programs, and the consistency checks refusing what they must.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use anec_codegen::e5::{self, *};
use anec_codegen::{read_e5, write_e5, CodegenError};
use proptest::prelude::*;

/// A tensor descriptor with its fields taken from `seed`.
fn descriptor(seed: u64, dims: &[u64]) -> TensorDescriptorT {
    let stride: Vec<u64> = dims
        .iter()
        .scan(2u64, |s, d| {
            let v = *s;
            *s *= d;
            Some(v)
        })
        .collect();
    TensorDescriptorT {
        dim: Some(dims.to_vec()),
        stride: Some(stride),
        width: seed % 97 + 1,
        height: seed % 13 + 1,
        channels: seed % 7 + 1,
        batch_number: 1,
        sequence_length: 1,
        stride_width: 2,
        stride_height: 64,
        stride_channels: 64 * (seed % 13 + 1),
        storage_type: if seed.is_multiple_of(2) { TensorDataType::Float16 } else { TensorDataType::Float32 },
        component_pack: (seed % 3) as i32,
        ..Default::default()
    }
}

/// The attributes of an operation of type `ty`.
fn attrs(ty: OpType, seed: u64) -> OpAttrsT {
    match ty {
        OpType::Cast => OpAttrsT::CastAttrs(Box::new(CastAttrsT {
            src_dtype: TensorDataType::Float32,
            dst_dtype: TensorDataType::Float16,
            component_pack: 1,
        })),
        OpType::AneInference => OpAttrsT::AneInferenceAttrs(Box::new(AneInferenceAttrsT {
            procedure_name: Some(format!("p{seed}")),
            anehash: Some(format!("{seed:064x}")),
            program_symbol: Some(format!("main.{seed}.hwx")),
            intermediate_buffer_handle: (seed % 2) as u32,
            compiler_options: Some("-t h13g".into()),
        })),
        _ => OpAttrsT::CpuInferenceAttrs(Box::new(CpuInferenceAttrsT {
            op: Some("reduce_log_sum_exp".into()),
            layer: Some(format!("layer{seed}")),
            opset: Some("CoreML7".into()),
            arguments: Some(vec![
                CpuArgumentT {
                    name: Some("x".into()),
                    kind: CpuArgumentKind::Operand,
                    operands: Some(vec![0]),
                    constant: None,
                },
                CpuArgumentT {
                    name: Some("axes".into()),
                    kind: CpuArgumentKind::Constant,
                    operands: None,
                    constant: Some(Box::new(CpuConstantT {
                        dtype: Some("int32".into()),
                        shape: Some(vec![1]),
                        data: Some((seed as u32).to_le_bytes().to_vec()),
                    })),
                },
            ]),
            location: Some(format!("model.mil:{seed}:5")),
        })),
    }
}

/// A consistent program: `ops[f]` lists the operation types of function f, each with one
/// input and one output over `symbols` names.
fn program(ops: &[Vec<u8>], symbols: u32, seed: u64) -> E5ProgramT {
    let mut sections = Vec::new();
    let mut names = (0..symbols).map(|i| format!("t{i}")).collect::<Vec<_>>();
    for (f, types) in ops.iter().enumerate() {
        let mut operations = Vec::new();
        for (k, &t) in types.iter().enumerate() {
            let ty = [OpType::Cast, OpType::AneInference, OpType::CpuInference][usize::from(t % 3)];
            let name = format!("f{f}_Op{k}");
            let (i, o) = ((k as u32) % symbols, (k as u32 + 1) % symbols);
            let frame = ArgFrameT {
                inputs: Some(vec![OperandT { descriptor: Some(Box::new(descriptor(seed + k as u64, &[1, 3, 8]))) }]),
                outputs: Some(vec![OperandT { descriptor: Some(Box::new(descriptor(seed * 3 + k as u64, &[8]))) }]),
                ports: Some(vec![IOPortT { name: Some(format!("t{i}")), byte_size: 64, aperture_va: 0x3000_4000 }]),
            };
            sections.push(SectionT {
                name: Some(format!("{name}.__arg_frame")),
                kind: SectionKind::ArgFrame,
                arg_frame: Some(Box::new(frame)),
                ..Default::default()
            });
            sections.push(SectionT {
                name: Some(format!("{name}.__op_attrs")),
                kind: SectionKind::OpAttrs,
                attrs: attrs(ty, seed),
                ..Default::default()
            });
            operations.push(OperationT {
                name: Some(name.clone()),
                op_type: ty,
                inputs: Some(vec![i]),
                outputs: Some(vec![o]),
                arg_frame: Some(format!("{name}.__arg_frame")),
                attrs_section: Some(format!("{name}.__op_attrs")),
            });
        }
        let function = FunctionT {
            name: Some(format!("fn{f}")),
            anehash_path: Some(String::new()),
            blocks: Some(vec![BlockT { name: Some("main".into()), operations: Some(operations) }]),
            inputs: Some(vec![0]),
            outputs: Some(vec![symbols - 1]),
            intermediates: Some(vec![AliasSymbolT { name: Some("t0".into()), symbol_index: 0, addr_offset: 64 }]),
            intermediate_size: 128,
        };
        sections.insert(
            0,
            SectionT {
                name: Some(format!("fn{f}")),
                kind: SectionKind::Function,
                function: Some(Box::new(function)),
                ..Default::default()
            },
        );
        names.push(format!("fn{f}"));
    }
    let entries =
        (0..7).map(|i| BuildInfoEntryT { key: Some(format!("k{i}")), value: Some(format!("v{seed}")) }).collect();
    E5ProgramT {
        symbol_names: Some(names),
        build_info: Some(Box::new(BuildInfoT { entries: Some(entries) })),
        sections: Some(sections),
        format_version: e5::FORMAT_VERSION,
    }
}

#[test]
fn the_root_has_the_measured_vtable_and_version() {
    let bytes = write_e5(&program(&[vec![0, 1, 0]], 4, 7)).unwrap();
    assert_eq!(e5::root_vtable(&bytes).unwrap(), [0x0c, 0, 0x14, 0, 4, 0, 8, 0, 0x0c, 0, 0x10, 0]);
    let root = u32::from_le_bytes(bytes[0..4].try_into().unwrap()) as usize;
    assert_eq!(bytes[root + 16..root + 20], 4i32.to_le_bytes());
}

#[test]
fn the_same_program_gives_the_same_bytes() {
    let p = program(&[vec![0, 1, 2, 0], vec![1]], 6, 3);
    assert_eq!(write_e5(&p).unwrap(), write_e5(&p.clone()).unwrap());
}

proptest! {
    #[test]
    fn programs_round_trip(ops in prop::collection::vec(prop::collection::vec(any::<u8>(), 1..6), 1..4),
                           symbols in 2u32..40, seed in any::<u32>()) {
        let p = program(&ops, symbols, u64::from(seed));
        let bytes = write_e5(&p).unwrap();
        let back = read_e5(&bytes).unwrap();
        prop_assert_eq!(&back, &p);
        prop_assert_eq!(write_e5(&back).unwrap(), bytes);
    }

    #[test]
    fn damaged_buffers_are_errors_not_panics(cut in 0usize..4000, flip in any::<u8>(), at in any::<usize>()) {
        let bytes = write_e5(&program(&[vec![0, 1, 2, 0]], 5, 9)).unwrap();
        let _ = read_e5(&bytes[..cut.min(bytes.len())]);
        let mut bad = bytes.clone();
        let i = at % bad.len();
        bad[i] ^= flip;
        let _ = read_e5(&bad);
    }
}

fn invalid(p: &E5ProgramT) -> String {
    match write_e5(p) {
        Err(CodegenError::Invalid(m)) | Err(CodegenError::BadValue { what: m, .. }) => m,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[test]
fn inconsistent_programs_are_refused() {
    let good = program(&[vec![0, 1, 0]], 4, 1);
    let mut p = good.clone();
    p.format_version = 3;
    assert_eq!(invalid(&p), "E5 format_version");
    let mut p = good.clone();
    p.symbol_names.as_mut().unwrap().truncate(1);
    assert!(invalid(&p).contains("names symbol"), "{}", invalid(&p));
    let mut p = good.clone();
    p.sections.as_mut().unwrap()[2].attrs = OpAttrsT::NONE;
    assert!(invalid(&p).contains("does not hold exactly that payload"), "{}", invalid(&p));
    let mut p = good.clone();
    p.sections.as_mut().unwrap().retain(|s| s.name.as_deref() != Some("f0_Op1.__op_attrs"));
    assert_eq!(invalid(&p), "operation `f0_Op1` has no attributes section");
    for bad in ["../main.hwx", "/etc/passwd", "dir/main.hwx", "..", ""] {
        let mut p = good.clone();
        for s in p.sections.as_mut().unwrap() {
            if let OpAttrsT::AneInferenceAttrs(a) = &mut s.attrs {
                a.program_symbol = Some(bad.into());
            }
        }
        assert!(invalid(&p).contains("is not a file name beside the .e5"), "{bad}: {}", invalid(&p));
    }
    let mut p = good;
    let s = p.sections.as_mut().unwrap();
    s[2].attrs = s[4].attrs.clone();
    assert!(invalid(&p).contains("attributes of another type"), "{}", invalid(&p));
}
