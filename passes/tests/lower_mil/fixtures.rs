//! Every MIL fixture (Apple's coremlc output and generated files) lowers or reports
//! errors that name the op and its line; it never panics. Every weight is zeros of its
//! declared type (most fixtures ship no weight file): the op mix is what is tested. The
//! reports are reviewed snapshots.

use anec_ir::mil::zero_blobs;
use anec_passes::lower::lower_mil;

fn report(dir: &str) -> String {
    let root = format!("{}/../../shared/fixtures/mil/{dir}", env!("CARGO_MANIFEST_DIR"));
    let mut names: Vec<String> = std::fs::read_dir(&root)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".mil"))
        .collect();
    names.sort();
    let mut out = String::new();
    for name in names {
        let text = std::fs::read_to_string(format!("{root}/{name}")).unwrap();
        let program = anec_front::mil::parse_program(&text, &name).unwrap();
        let blobs = zero_blobs(&program);
        let fname = program.functions.first().map(|f| f.name.clone()).unwrap_or_default();
        let model = anec_ir::mil::MilModel { program, blobs, file: name.clone(), text: Some(text) };
        match lower_mil(&model, &fname) {
            Ok(m) => out.push_str(&format!("{name}: ok, {} ops\n", m.ops.len())),
            Err(errs) => {
                out.push_str(&format!("{name}: {} errors\n", errs.len()));
                for e in &errs {
                    out.push_str(&format!("  {e}\n"));
                }
            }
        }
    }
    out
}

#[test]
fn real_fixtures() {
    insta::assert_snapshot!(report("real"));
}

#[test]
fn generated_fixtures() {
    insta::assert_snapshot!(report("generated"));
}
