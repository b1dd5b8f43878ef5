//! Robustness of the textual MIL parser: truncations, byte flips, insertions and deletions
//! of every corpus file (a prefix window of the 630 KB one) never panic; every error
//! carries the text and a span inside it; whatever still parses prints and re-parses to
//! the same program. Deep nesting of every bracket kind stops with an error instead of
//! overflowing the stack.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use anec_front::mil::{parse_program, MAX_DEPTH};
use anec_ir::mil::print::print_program;
use std::path::{Path, PathBuf};

/// Bytes of the large file used (its first statements).
const LARGE_WINDOW: usize = 48 * 1024;
/// Files above this size are cut to [`LARGE_WINDOW`].
const LARGE: usize = 100 * 1024;

/// xorshift64* with a fixed seed: the same mutations on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Bytes and snippets that matter to the grammar.
const PIECES: [&str; 24] = [
    "(", ")", "[", "]", "{", "}", "<", ">", ",", "=", ";", "?", "-", "->", "\"", "\\", "0x", "p", ".", "9", "inf", "é",
    " ", "\n",
];

fn corpus() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/fixtures/mil");
    let mut files = Vec::new();
    for dir in ["real", "generated"] {
        for e in std::fs::read_dir(root.join(dir)).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "mil") {
                files.push(p);
            }
        }
    }
    files.sort();
    assert!(files.len() >= 19, "corpus incomplete: {}", files.len());
    files
}

/// The text used for a file: whole, or the window of a large one cut at a line end.
fn sample(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    if text.len() <= LARGE {
        return text;
    }
    let cut = text[..LARGE_WINDOW].rfind('\n').unwrap();
    text[..cut].to_string()
}

/// Parses `text`; errors must hold the text and a span inside it, successes must
/// survive printing.
fn check(text: &str, what: &str) {
    match parse_program(text, "fuzz.mil") {
        Err(errors) => {
            assert!(!errors.is_empty(), "{what}: empty error list");
            for d in errors {
                assert_eq!(d.text.as_deref(), Some(text), "{what}: diagnostic without the text");
                assert!(text.get(d.span.range()).is_some(), "{what}: span {:?} outside the text", d.span);
                assert!(!d.message.is_empty());
            }
        }
        Ok(p) => {
            let printed = print_program(&p);
            let again = parse_program(&printed, "printed.mil").unwrap_or_else(|e| panic!("{what}: {e:?}"));
            assert_eq!(again, p, "{what}: print/parse changed the program");
        }
    }
}

fn mutate(text: &str, rng: &mut Rng, name: &str) {
    let bytes = text.as_bytes();
    let n = bytes.len();
    for i in 0..250 {
        let cut = if i < 150 { n * i / 150 } else { rng.below(n) };
        check(&String::from_utf8_lossy(&bytes[..cut]), &format!("{name}: cut at {cut}"));
    }
    for _ in 0..250 {
        let at = rng.below(n);
        let mut b = bytes.to_vec();
        b[at] = PIECES[rng.below(PIECES.len())].as_bytes()[0];
        check(&String::from_utf8_lossy(&b), &format!("{name}: flip at {at}"));
    }
    for _ in 0..100 {
        let at = rng.below(n);
        let piece = PIECES[rng.below(PIECES.len())];
        let mut b = bytes[..at].to_vec();
        b.extend_from_slice(piece.as_bytes());
        b.extend_from_slice(&bytes[at..]);
        check(&String::from_utf8_lossy(&b), &format!("{name}: insert {piece:?} at {at}"));
    }
    for _ in 0..100 {
        let at = rng.below(n);
        let len = 1 + rng.below(8);
        let mut b = bytes[..at].to_vec();
        b.extend_from_slice(&bytes[(at + len).min(n)..]);
        check(&String::from_utf8_lossy(&b), &format!("{name}: delete {len} at {at}"));
    }
}

#[test]
fn mutated_corpus_never_panics() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for path in corpus() {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let text = sample(&path);
        check(&text, &name);
        mutate(&text, &mut rng, &name);
    }
}

#[test]
fn deep_nesting_is_an_error_not_a_stack_overflow() {
    let wrap = |open: &str, inner: &str, close: &str, n: usize| format!("{}{inner}{}", open.repeat(n), close.repeat(n));
    let stmt = |ty: &str, value: &str| {
        format!("program(1.3)\n{{\n    func main<ios18>() {{\n        {ty} v = const()[val = {value}];\n    }} -> (v);\n}}\n")
    };
    let n = 200_000;
    let cases = [
        stmt("tensor<int32, [1]>", &format!("tensor<int32, [1]>({})", wrap("[", "1", "]", n))),
        stmt("tensor<int32, [1]>", &format!("tensor<int32, [1]>({})", wrap("(", "1", ")", n))),
        stmt("tensor<int32, [1]>", &format!("tensor<int32, [1]>({})", wrap("{{", "1, 2", "}}", n))),
        stmt("tensor<int32, [1]>", &wrap("(", "v", ")", n)),
        stmt(&wrap("state<", "fp16", ">", n), "fp16(1.0)"),
        stmt(&wrap("list<", "fp16", ", 2>", n), "fp16(1.0)"),
        stmt(&wrap("dict<string, ", "fp16", ">", n), "fp16(1.0)"),
    ];
    for text in cases {
        let errors = parse_program(&text, "deep.mil").unwrap_err();
        assert_eq!(errors[0].message, format!("nesting deeper than {MAX_DEPTH} levels"), "{}", &text[..120]);
    }
}

#[test]
fn nesting_up_to_the_limit_is_accepted() {
    let depth = MAX_DEPTH - 2;
    let ty = format!("{}fp16{}", "list<".repeat(depth), ", 1>".repeat(depth));
    let lit = format!("{}1.0{}", "[".repeat(depth), "]".repeat(depth));
    let text = format!(
        "program(1.3)\n{{\n    func main<ios18>() {{\n        {ty} v = const()[val = {ty}({lit})];\n    }} -> (v);\n}}\n"
    );
    let p = parse_program(&text, "deep.mil").unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(parse_program(&print_program(&p), "printed.mil").unwrap(), p);
}
