//! `dump_file` and `diff_files` on an `.e5` built in memory: a function running
//! Cast -> AneInference -> Cast and one CpuInference, plus one unreferenced section.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use anec_codegen::e5::*;
use anec_codegen::write_e5;
use anec_tools::{diff_files, dump_file, ToolError};

/// A descriptor of an fp16 tensor of `dims` (outermost first) stored densely.
fn descriptor(dims: &[u64], ty: TensorDataType) -> TensorDescriptorT {
    let size = if ty == TensorDataType::Float32 { 4 } else { 2 };
    let mut stride: Vec<u64> = dims.iter().rev().scan(size, |s, d| Some(std::mem::replace(s, *s * d))).collect();
    stride.reverse();
    let w = dims.last().copied().unwrap_or(1);
    TensorDescriptorT {
        dim: Some(dims.to_vec()),
        stride: Some(stride),
        width: w,
        height: 1,
        channels: dims.first().copied().unwrap_or(1),
        batch_number: 1,
        sequence_length: 1,
        stride_width: size,
        stride_height: 64,
        stride_channels: 64,
        stride_batch_number: 64 * dims.first().copied().unwrap_or(1),
        stride_sequence_length: 64 * dims.first().copied().unwrap_or(1),
        storage_type: ty,
        component_pack: 1,
    }
}

fn operand(dims: &[u64], ty: TensorDataType) -> OperandT {
    OperandT { descriptor: Some(Box::new(descriptor(dims, ty))) }
}

/// The frame and attribute sections of one operation, and the operation.
fn op(name: &str, ty: OpType, io: (u32, u32), frame: ArgFrameT, attrs: OpAttrsT) -> (Vec<SectionT>, OperationT) {
    let (f, a) = (format!("{name}.__arg_frame"), format!("{name}.__op_attrs"));
    let sections = vec![
        SectionT {
            name: Some(f.clone()),
            kind: SectionKind::ArgFrame,
            arg_frame: Some(Box::new(frame)),
            ..Default::default()
        },
        SectionT { name: Some(a.clone()), kind: SectionKind::OpAttrs, attrs, ..Default::default() },
    ];
    let op = OperationT {
        name: Some(name.into()),
        op_type: ty,
        inputs: Some(vec![io.0]),
        outputs: Some(vec![io.1]),
        arg_frame: Some(f),
        attrs_section: Some(a),
    };
    (sections, op)
}

fn cast(src: TensorDataType, dst: TensorDataType) -> OpAttrsT {
    OpAttrsT::CastAttrs(Box::new(CastAttrsT { src_dtype: src, dst_dtype: dst, component_pack: 1 }))
}

fn frame(i: OperandT, o: OperandT, ports: Vec<IOPortT>) -> ArgFrameT {
    ArgFrameT { inputs: Some(vec![i]), outputs: Some(vec![o]), ports: Some(ports) }
}

fn port(name: &str, byte_size: u64, aperture_va: u64) -> IOPortT {
    IOPortT { name: Some(name.into()), byte_size, aperture_va }
}

/// `x` (fp32) -> Cast -> `x16` -> AneInference -> `y16` -> Cast -> `y` (fp32) ->
/// CpuInference (reduce_log_sum_exp over axis 1) -> `z`.
fn program() -> E5ProgramT {
    const F16: TensorDataType = TensorDataType::Float16;
    const F32: TensorDataType = TensorDataType::Float32;
    let names = ["x", "x16", "y16", "y", "z", "main"].map(String::from).to_vec();
    let ane = AneInferenceAttrsT {
        procedure_name: Some("main".into()),
        anehash: Some("ab".repeat(32)),
        program_symbol: Some("main.hwx".into()),
        intermediate_buffer_handle: 1,
        compiler_options: Some("-t h13g".into()),
    };
    let axes =
        CpuConstantT { dtype: Some("int32".into()), shape: Some(vec![1]), data: Some(1i32.to_le_bytes().to_vec()) };
    let cpu = CpuInferenceAttrsT {
        op: Some("reduce_log_sum_exp".into()),
        layer: Some("lse".into()),
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
                constant: Some(Box::new(axes)),
            },
        ]),
        location: Some("model.mil:7:5".into()),
    };
    let ops = [
        op(
            "Op0_Cast",
            OpType::Cast,
            (0, 1),
            frame(operand(&[3, 8], F32), operand(&[3, 8], F16), vec![]),
            cast(F32, F16),
        ),
        op(
            "Op1_AneInference",
            OpType::AneInference,
            (1, 2),
            frame(
                operand(&[3, 8], F16),
                operand(&[3, 8], F16),
                vec![port("x16", 192, 0x3000_4000), port("y16", 192, 0x3000_8000)],
            ),
            OpAttrsT::AneInferenceAttrs(Box::new(ane)),
        ),
        op(
            "Op2_Cast",
            OpType::Cast,
            (2, 3),
            frame(operand(&[3, 8], F16), operand(&[3, 8], F32), vec![]),
            cast(F16, F32),
        ),
        op(
            "Op3_CpuInference",
            OpType::CpuInference,
            (3, 4),
            frame(operand(&[3, 8], F32), operand(&[3, 1], F32), vec![]),
            OpAttrsT::CpuInferenceAttrs(Box::new(cpu)),
        ),
    ];
    let function = FunctionT {
        name: Some("main".into()),
        anehash_path: Some(String::new()),
        blocks: Some(vec![BlockT {
            name: Some("main".into()),
            operations: Some(ops.iter().map(|o| o.1.clone()).collect()),
        }]),
        inputs: Some(vec![0]),
        outputs: Some(vec![4]),
        intermediates: Some(vec![
            AliasSymbolT { name: Some("x16".into()), symbol_index: 1, addr_offset: 0 },
            AliasSymbolT { name: Some("y16".into()), symbol_index: 2, addr_offset: 0x100 },
            AliasSymbolT { name: Some("y".into()), symbol_index: 3, addr_offset: 0x200 },
        ]),
        intermediate_size: 0x300,
    };
    let mut sections = vec![SectionT {
        name: Some("main".into()),
        kind: SectionKind::Function,
        function: Some(Box::new(function)),
        ..Default::default()
    }];
    sections.extend(ops.into_iter().flat_map(|o| o.0));
    sections.push(SectionT {
        name: Some("spare.__op_attrs".into()),
        kind: SectionKind::OpAttrs,
        attrs: cast(F16, F16),
        ..Default::default()
    });
    let entries = [("compiler", "anec"), ("version", "0.1"), ("target", "h13g")]
        .map(|(k, v)| BuildInfoEntryT { key: Some(k.into()), value: Some(v.into()) })
        .to_vec();
    E5ProgramT {
        symbol_names: Some(names),
        build_info: Some(Box::new(BuildInfoT { entries: Some(entries) })),
        sections: Some(sections),
        format_version: FORMAT_VERSION,
    }
}

fn bytes(p: &E5ProgramT) -> Vec<u8> {
    write_e5(p).unwrap()
}

/// The section named `name`.
fn section<'a>(p: &'a mut E5ProgramT, name: &str) -> &'a mut SectionT {
    p.sections.as_mut().unwrap().iter_mut().find(|s| s.name.as_deref() == Some(name)).unwrap()
}

#[test]
fn dump_lists_every_field() {
    let text = dump_file(&bytes(&program())).unwrap();
    insta::assert_snapshot!("e5_program", text);
}

#[test]
fn a_file_equals_itself() {
    let b = bytes(&program());
    assert_eq!(diff_files(&b, &b).unwrap(), vec![]);
}

#[test]
fn a_changed_anehash_is_reported_at_its_location() {
    let mut p = program();
    let OpAttrsT::AneInferenceAttrs(a) = &mut section(&mut p, "Op1_AneInference.__op_attrs").attrs else { panic!() };
    a.anehash = Some("cd".repeat(32));
    let d = diff_files(&bytes(&program()), &bytes(&p)).unwrap();
    let locations: Vec<&str> = d.iter().map(|d| d.location.as_str()).collect();
    assert_eq!(locations, ["function main op Op1_AneInference attrs anehash"], "{d:#?}");
    assert_eq!(d[0].left, format!("{:?}", "ab".repeat(32)));
    assert_eq!(d[0].right, format!("{:?}", "cd".repeat(32)));
}

#[test]
fn a_changed_stride_is_reported_at_its_location() {
    let mut p = program();
    let frame = section(&mut p, "Op2_Cast.__arg_frame").arg_frame.as_mut().unwrap();
    frame.outputs.as_mut().unwrap()[0].descriptor.as_mut().unwrap().stride_height = 128;
    let d = diff_files(&bytes(&program()), &bytes(&p)).unwrap();
    let text: Vec<String> = d.iter().map(ToString::to_string).collect();
    assert_eq!(text, ["function main op Op2_Cast frame output 0 stride_height: 64 -> 128"]);
}

#[test]
fn a_changed_constant_is_reported_by_its_hash() {
    let mut p = program();
    let OpAttrsT::CpuInferenceAttrs(c) = &mut section(&mut p, "Op3_CpuInference.__op_attrs").attrs else { panic!() };
    c.arguments.as_mut().unwrap()[1].constant.as_mut().unwrap().data = Some(2i32.to_le_bytes().to_vec());
    let d = diff_files(&bytes(&program()), &bytes(&p)).unwrap();
    let locations: Vec<&str> = d.iter().map(|d| d.location.as_str()).collect();
    assert_eq!(locations, ["function main op Op3_CpuInference attrs arg axes sha256"], "{d:#?}");
}

#[test]
fn damaged_files_are_errors_not_panics() {
    let b = bytes(&program());
    for cut in [0, 3, 4, 16, b.len() / 4, b.len() / 2] {
        let e = dump_file(&b[..cut]).unwrap_err();
        assert!(matches!(e, ToolError::Unrecognized { .. }), "{cut}: {e}");
        assert!(e.to_string().starts_with("not a .hwx file"), "{e}");
        assert!(matches!(diff_files(&b, &b[..cut]), Err(ToolError::Input { side: "right", .. })));
    }
    // Any cut: an error or (when only trailing padding went) a listing, never a panic.
    for cut in 0..b.len() {
        let _ = dump_file(&b[..cut]);
    }
    for at in 0..b.len() {
        let mut bad = b.clone();
        bad[at] ^= 0x5a;
        if let Ok(text) = dump_file(&bad) {
            assert!(!text.is_empty());
            let _ = diff_files(&b, &bad);
        }
    }
}

#[test]
fn an_e5_does_not_compare_with_a_hwx() {
    let e5 = bytes(&program());
    let path =
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/fixtures/apple-h13/hwx/relu.hwx");
    let hwx = std::fs::read(path).unwrap();
    let e = diff_files(&e5, &hwx).unwrap_err();
    assert_eq!(e, ToolError::KindsDiffer { left: "e5", right: "hwx" });
    assert_eq!(e.to_string(), "cannot compare a .e5 file with a .hwx file: the kinds differ");
}

#[test]
fn a_removed_port_is_reported_once() {
    let mut p = program();
    let frame = section(&mut p, "Op1_AneInference.__arg_frame").arg_frame.as_mut().unwrap();
    frame.ports.as_mut().unwrap().pop();
    let d = diff_files(&bytes(&program()), &bytes(&p)).unwrap();
    let text: Vec<String> = d.iter().map(ToString::to_string).collect();
    assert_eq!(
        text,
        [
            "file size: 0xdc0 -> 0xd98",
            "function main op Op1_AneInference frame port y16: byte_size=192 aperture_va=0x30008000 -> (absent)"
        ]
    );
}
