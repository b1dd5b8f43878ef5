//! Cutting networks into segments (`passes::segment`): a MIL function around its CPU
//! statements (first, last, consecutive ones; constants copied into every segment that
//! reads them; inputs and outputs of each segment) and an anec module around the layers
//! that run alone.

#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

use anec_ir::mil::Function;
use anec_passes::segment::{self, module, Step};
use std::collections::BTreeSet;

const MIL: &str = r#"program(1.3)
{
    func main<ios18>(tensor<fp16, [1, 4, 8]> x, tensor<fp16, [1, 4, 8]> z) {
        tensor<fp16, [1, 4, 8]> a = relu(x = x)[name = string("a")];
        tensor<fp16, [1, 4, 8]> c = const()[name = string("c"), val = tensor<fp16, [1, 4, 8]>(BLOBFILE(path = string("@model_path/weights/weight.bin"), offset = uint64(64)))];
        tensor<fp16, [1, 4, 8]> b = add(x = a, y = c)[name = string("b")];
        tensor<fp16, [1, 4, 8]> d = sigmoid(x = b)[name = string("d")];
        tensor<fp16, [1, 4, 8]> e = tanh(x = d)[name = string("e")];
        tensor<fp16, [1, 4, 8]> f = mul(x = e, y = c)[name = string("f")];
        tensor<fp16, [1, 4, 8]> g = add(x = f, y = z)[name = string("g")];
    } -> (g, b);
}
"#;

fn function() -> Function {
    let program = anec_front::parse_mil_program(MIL, "t.mil").unwrap();
    program.functions.into_iter().next().unwrap()
}

/// (name, inputs, outputs, body ops) of an engine step; ("cpu", inputs, outputs, [op]) of
/// a CPU step.
type Shape = (String, Vec<String>, Vec<String>, Vec<String>);

fn shape(f: &Function, steps: &[Step]) -> Vec<Shape> {
    steps
        .iter()
        .map(|s| match s {
            Step::Engine(g) => (
                g.name.clone(),
                g.inputs.iter().map(|p| p.name.name.clone()).collect(),
                g.outputs.iter().map(|o| o.name.clone()).collect(),
                g.body.iter().map(|b| b.op.name.clone()).collect(),
            ),
            Step::Cpu { stmt, inputs, outputs } => {
                ("cpu".into(), inputs.clone(), outputs.clone(), vec![f.body[*stmt].op.name.clone()])
            }
        })
        .collect()
}

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

#[test]
fn cpu_statements_in_the_middle_and_consecutive() {
    let f = function();
    // d = sigmoid (index 3) and e = tanh (index 4) on the CPU.
    let steps = segment::cut(&f, &BTreeSet::from([3, 4])).unwrap();
    assert_eq!(
        shape(&f, &steps),
        [
            ("main_0".into(), strings(&["x"]), strings(&["b"]), strings(&["const", "relu", "add"])),
            ("cpu".into(), strings(&["b"]), strings(&["d"]), strings(&["sigmoid"])),
            ("cpu".into(), strings(&["d"]), strings(&["e"]), strings(&["tanh"])),
            ("main_1".into(), strings(&["e", "z"]), strings(&["g"]), strings(&["const", "mul", "add"])),
        ]
    );
}

#[test]
fn cpu_statements_first_and_last() {
    let f = function();
    let steps = segment::cut(&f, &BTreeSet::from([0, 6])).unwrap();
    let s = shape(&f, &steps);
    assert_eq!(s[0], ("cpu".into(), strings(&["x"]), strings(&["a"]), strings(&["relu"])));
    assert_eq!(s[1].0, "main_0");
    assert_eq!(s[1].1, strings(&["a"]));
    assert_eq!(s[1].2, strings(&["b", "f"]), "b is returned, f read by the CPU step");
    assert_eq!(s[2], ("cpu".into(), strings(&["f", "z"]), strings(&["g"]), strings(&["add"])));
    assert_eq!(s.len(), 3);
}

#[test]
fn constants_and_out_of_range_indices_are_refused() {
    let f = function();
    assert!(segment::cut(&f, &BTreeSet::from([1])).unwrap_err().contains("constant"));
    assert!(segment::cut(&f, &BTreeSet::from([40])).unwrap_err().contains("not in function"));
}

#[test]
fn a_module_is_cut_around_the_layers_that_run_alone() {
    let text =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/bundle/hidden_cut.mlir")).unwrap();
    let m = anec_ir::parse_module(&text).unwrap();
    let parts = module::cut(&m, module::cuts_own_segment).unwrap();
    let ops: Vec<Vec<&str>> = parts.iter().map(|p| p.ops.iter().map(|o| o.name.as_str()).collect()).collect();
    assert_eq!(ops, [vec!["qr"], vec!["scale", "attn"], vec!["y"]]);
    let ports = |p: &anec_ir::Module| {
        let names = |l: &[anec_ir::Port]| l.iter().map(|q| q.name.clone()).collect::<Vec<_>>();
        (names(&p.inputs), names(&p.outputs))
    };
    assert_eq!(ports(&parts[0]), (strings(&["q"]), strings(&["qr"])));
    assert_eq!(ports(&parts[1]), (strings(&["qr", "k", "v"]), strings(&["attn"])));
    assert_eq!(ports(&parts[2]), (strings(&["attn"]), strings(&["y@output"])));
    assert!(parts[1].resources.contains_key("scale.value"), "the constant's weights travel with it");
    for p in &parts {
        anec_ir::verify::verify_module(p).unwrap();
    }
    let whole = module::cut(&m, |_| false).unwrap();
    assert_eq!(whole, vec![m]);
}
