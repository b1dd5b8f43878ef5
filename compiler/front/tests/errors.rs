//! One test per error kind, on small netplists written to a temporary directory; every
//! message is one line naming the file, the entry and the key.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use anec_front::{parse_netplist, parse_netplist_bytes, FrontError, Subject};
use common::*;
use plist::{Dictionary, Value};
use std::path::Path;

/// Parses `top` in a directory holding `w.bin` (9 fp16 values) and returns the error.
fn err_of(top: &Dictionary) -> FrontError {
    let dir = weights_dir(9);
    match parse_in(dir.path(), top) {
        Ok(m) => panic!("expected an error, parsed {}", summary(&m)),
        Err(e) => e,
    }
}

/// The conv network with `edit` applied to its top-level dictionary.
fn conv_top(edit: impl FnOnce(&mut Dictionary)) -> Dictionary {
    let mut t = top(conv_net());
    edit(&mut t);
    t
}

fn params(t: &mut Dictionary) -> &mut Dictionary {
    at(t, &["net", "layer", "Params"])
}

fn unit(t: &mut Dictionary) -> &mut Dictionary {
    at(t, &["net", "layer"])
}

/// A network whose unit `layer` is a neuron of type `ty`.
fn neuron_top(ty: &str) -> Dictionary {
    let unit =
        dict(&[("Bottom", s("image")), ("Params", Value::Dictionary(dict(&[("Type", s(ty))]))), ("Type", s("Neuron"))]);
    top(net_with(unit, &["absent.bin"]))
}

fn assert_one_line(e: &FrontError) {
    let msg = e.to_string();
    assert!(!msg.contains('\n'), "{msg}");
}

#[test]
fn missing_key_names_unit_key_and_params() {
    let e = err_of(&conv_top(|t| {
        params(t).remove("KernelWidth");
    }));
    let FrontError::MissingKey { site, key, within } = &e else { panic!("{e:?}") };
    assert_eq!((key.as_str(), within.as_str()), ("KernelWidth", " in Params"));
    assert_eq!(site.subject, Subject::Unit("layer".into()));
    assert!(site.line > 0);
    assert_eq!(e.to_string(), format!("t.plist:{}: unit 'layer': missing key 'KernelWidth' in Params", site.line));
}

#[test]
fn wrong_type_names_expected_and_found() {
    let e = err_of(&conv_top(|t| {
        params(t).insert("KernelHeight".into(), s("1"));
    }));
    assert!(matches!(&e, FrontError::WrongType { key, .. } if key == "KernelHeight"), "{e:?}");
    assert!(e.to_string().ends_with("key 'KernelHeight' in Params must be an integer, found a string"), "{e}");
    let e = err_of(&conv_top(|t| {
        unit(t).insert("Bottom".into(), int(3));
    }));
    assert!(matches!(&e, FrontError::WrongType { key, .. } if key == "Bottom"), "{e:?}");
}

#[test]
fn unknown_unit_type_is_an_error_not_a_skip() {
    let e = err_of(&conv_top(|t| {
        unit(t).insert("Type".into(), s("Pooling"));
    }));
    assert!(matches!(&e, FrontError::UnknownUnitType { unit_type, .. } if unit_type == "Pooling"), "{e:?}");
    assert!(e.to_string().contains("unit 'layer': unknown unit Type 'Pooling' (supported: Conv,"), "{e}");
}

#[test]
fn unknown_bottom_and_forward_references() {
    let e = err_of(&conv_top(|t| {
        unit(t).insert("Bottom".into(), s("nothing"));
    }));
    assert!(matches!(&e, FrontError::UnknownBottom { bottom, .. } if bottom == "nothing"), "{e:?}");
    // A bottom must be an earlier unit: list a second unit before the one it reads.
    let e = err_of(&conv_top(|t| {
        let relu = dict(&[
            ("Bottom", s("layer")),
            ("Params", Value::Dictionary(dict(&[("Type", s("ReLU"))]))),
            ("Type", s("Neuron")),
        ]);
        let net = at(t, &["net"]);
        net.insert("relu".into(), Value::Dictionary(relu));
        net.insert("Units".into(), strs(&["relu", "layer"]));
    }));
    let FrontError::UnknownBottom { site, bottom } = &e else { panic!("{e:?}") };
    assert_eq!((&site.subject, bottom.as_str()), (&Subject::Unit("relu".into()), "layer"));
    let e = err_of(&conv_top(|t| {
        at(t, &["net", "probs@output"]).insert("Bottom".into(), s("ghost"));
    }));
    let FrontError::UnknownBottom { site, .. } = &e else { panic!("{e:?}") };
    assert_eq!(site.subject, Subject::Output("probs@output".into()));
}

#[test]
fn missing_weight_file_names_the_path_as_written() {
    let e = err_of(&conv_top(|t| {
        at(t, &["net"]).insert("Weights".into(), strs(&["absent.bin"]));
    }));
    let FrontError::MissingWeightFile { index, path, .. } = &e else { panic!("{e:?}") };
    assert_eq!((*index, path.as_str()), (0, "absent.bin"));
    assert!(e.to_string().contains("unit 'layer': weight file 'absent.bin' (Weights[0]) cannot be opened"), "{e}");
}

#[test]
fn weight_data_past_end_of_file() {
    let e = err_of(&conv_top(|t| {
        params(t).insert("KernelOffset".into(), int(2));
    }));
    let FrontError::WeightOutOfRange { offset, size, len, .. } = &e else { panic!("{e:?}") };
    assert_eq!((*offset, *size, *len), (2, 18, 18));
    assert!(
        e.to_string()
            .ends_with("weight data past end of file 'w.bin': KernelOffset in Params 2 + 18 bytes > file length 18"),
        "{e}"
    );
}

#[test]
fn weight_index_out_of_range() {
    let e = err_of(&conv_top(|t| {
        params(t).insert("KernelIndex".into(), int(3));
    }));
    assert!(matches!(&e, FrontError::BadValue { key, .. } if key == "KernelIndex"), "{e:?}");
}

#[test]
fn unsupported_version_and_missing_version() {
    let e = err_of(&conv_top(|t| {
        t.insert("Version".into(), s("1.0.8"));
    }));
    assert!(matches!(&e, FrontError::UnsupportedVersion { version, .. } if version == "1.0.8"), "{e:?}");
    let e = err_of(&conv_top(|t| {
        t.remove("Version");
    }));
    let FrontError::MissingKey { site, key, .. } = &e else { panic!("{e:?}") };
    assert_eq!((&site.subject, key.as_str()), (&Subject::TopLevel, "Version"));
}

#[test]
fn each_form_has_its_version() {
    let e = err_of(&conv_top(|t| {
        t.insert("Version".into(), s("1.0.10"));
    }));
    let FrontError::UnsupportedVersion { version, supported, .. } = &e else { panic!("{e:?}") };
    assert_eq!(
        (version.as_str(), *supported),
        ("1.0.10", "1.0.9 for the Networks/Units form, 1.0.10 with a ProcedureList")
    );
    let e = err_of(&conv_top(|t| {
        t.insert("ProcedureList".into(), Value::Array(Vec::new()));
    }));
    assert_eq!(
        e.to_string(),
        "t.plist: unsupported netplist Version '1.0.9' (supported: 1.0.10 for the ProcedureList form)"
    );
}

#[test]
fn syntax_and_io_errors() {
    let e = parse_netplist_bytes(b"not a plist <<<", "t.plist", Path::new("."));
    assert!(matches!(e, Err(FrontError::Syntax { .. })), "{e:?}");
    let e = parse_netplist_bytes(&xml_array(), "t.plist", Path::new("."));
    assert!(matches!(&e, Err(FrontError::Syntax { message, .. }) if message.contains("an array")), "{e:?}");
    let e = parse_netplist(Path::new("/nonexistent/dir/net.plist"));
    assert!(matches!(e, Err(FrontError::Io { .. })), "{e:?}");
}

fn xml_array() -> Vec<u8> {
    let mut out = Vec::new();
    Value::Array(vec![int(1)]).to_writer_xml(&mut out).expect("xml");
    out
}

#[test]
fn bad_values() {
    let cases: [(&str, Dictionary); 6] = [
        (
            "KernelMode",
            conv_top(|t| {
                params(t).insert("KernelMode".into(), s("Sparse"));
            }),
        ),
        ("Type", neuron_top("Dirac")),
        (
            "InputType",
            conv_top(|t| {
                at(t, &["net", "image"]).insert("InputType".into(), s("Float64"));
            }),
        ),
        (
            "Step",
            conv_top(|t| {
                params(t).insert("Step".into(), Value::Array(vec![int(1), int(1), int(2)]));
            }),
        ),
        (
            "OutputType",
            conv_top(|t| {
                at(t, &["net", "probs@output"]).insert("OutputType".into(), s("Float32"));
            }),
        ),
        ("OutputChannels", {
            let mut t = neuron_top("ReLU");
            unit(&mut t).insert("OutputChannels".into(), int(5));
            t
        }),
    ];
    for (want, t) in cases {
        let e = err_of(&t);
        let FrontError::BadValue { key, .. } = &e else { panic!("{want}: {e:?}") };
        assert_eq!(key, want, "{e}");
    }
    let e = err_of(&neuron_top("Dirac"));
    assert!(e.to_string().contains("unknown neuron type 'Dirac' (supported: relu, sigmoid"), "{e}");
}

#[test]
fn shape_errors() {
    let reshape = dict(&[
        ("Bottom", s("image")),
        (
            "Params",
            Value::Dictionary(dict(&[
                ("ReshapedChannel", int(2)),
                ("ReshapedHeight", int(1)),
                ("ReshapedWidth", int(1)),
            ])),
        ),
        ("Type", s("Reshape")),
    ]);
    let e = err_of(&top(net_with(reshape, &[])));
    assert!(matches!(e, FrontError::Shape { .. }), "{e:?}");
    let e = err_of(&conv_top(|t| {
        params(t).insert("KernelHeight".into(), int(3));
    }));
    assert!(e.to_string().contains("kernel height 3 exceeds the padded input height"), "{e}");
    let e = err_of(&conv_top(|t| {
        unit(t).insert("OutputChannels".into(), int(2));
        unit(t).insert("NumGroups".into(), int(3));
    }));
    assert!(matches!(e, FrontError::Shape { .. }), "{e:?}");
}

#[test]
fn entry_and_port_errors_name_their_subject() {
    let e = err_of(&conv_top(|t| {
        at(t, &["net"]).insert("Units".into(), strs(&["layer", "ghost"]));
    }));
    assert!(e.to_string().ends_with("network 'net': missing key 'ghost' (listed in Units)"), "{e}");
    let e = err_of(&conv_top(|t| {
        at(t, &["net", "image"]).remove("InputChannels");
    }));
    let FrontError::MissingKey { site, .. } = &e else { panic!("{e:?}") };
    assert_eq!(site.subject, Subject::Input("image".into()));
    let e = err_of(&conv_top(|t| {
        at(t, &["net", "probs@output"]).remove("Bottom");
    }));
    assert!(e.to_string().contains("output 'probs@output': missing key 'Bottom'"), "{e}");
}

#[test]
fn every_message_is_one_line_and_names_the_file() {
    let tops = [
        conv_top(|t| {
            params(t).remove("KernelWidth");
        }),
        conv_top(|t| {
            unit(t).insert("Type".into(), s("Pooling"));
        }),
        conv_top(|t| {
            at(t, &["net"]).insert("Weights".into(), strs(&["absent.bin"]));
        }),
        neuron_top("Dirac"),
    ];
    let mut all = String::new();
    for t in &tops {
        let e = err_of(t);
        assert_one_line(&e);
        assert!(e.to_string().starts_with("t.plist:"), "{e}");
        all.push_str(&format!("{e}\n"));
    }
    insta::assert_snapshot!(all);
}

#[test]
fn duplicate_names() {
    let e = err_of(&conv_top(|t| {
        let relu = dict(&[
            ("Bottom", s("layer")),
            ("Name", s("layer")),
            ("Params", Value::Dictionary(dict(&[("Type", s("ReLU"))]))),
            ("Type", s("Neuron")),
        ]);
        let net = at(t, &["net"]);
        net.insert("relu".into(), Value::Dictionary(relu));
        net.insert("Units".into(), strs(&["layer", "relu"]));
    }));
    assert!(e.to_string().contains("unit 'relu': key 'Name': 'layer' is already the name of another unit"), "{e}");
    let e = err_of(&conv_top(|t| {
        at(t, &["net"]).insert("Inputs".into(), strs(&["image", "image"]));
    }));
    assert!(e.to_string().ends_with("network 'net': key 'Inputs': 'image' is listed twice"), "{e}");
}
