//! The conformance harness over Apple's current compiler's programs
//! (`shared/fixtures/apple-h13-oracles/cases/*.json`): for a record, build the model
//! folder Apple compiled (its `model.mil`, and a well-formed MILBlob v2 `weights.bin`
//! holding the values Apple's compiler read, as the corpus README's "Weights" section
//! establishes), compile it with the library for `h13g`, and compare the program with the
//! record (`anec_tools::oracle`).

use anec_tools::oracle::record::Weights;
use anec_tools::oracle::{compare, form_ab_halfword, Comparison, Record};
use std::path::{Path, PathBuf};

/// The corpus folder.
pub fn cases_dir() -> PathBuf {
    crate::fixtures().join("apple-h13-oracles/cases")
}

/// Every record, in case-name order.
pub fn load_all() -> Result<Vec<Record>, String> {
    let dir = cases_dir();
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    paths.sort();
    paths
        .iter()
        .map(|p| {
            let text = std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()))?;
            Record::parse(&text).map_err(|e| format!("{}: {e}", p.display()))
        })
        .collect()
}

/// MILBlob dtype code of fp16.
const FP16_CODE: u32 = 1;
/// The halfword Apple's file was filled with after its header, by `value`.
fn fill(value: &str) -> Result<u16, String> {
    match value {
        "fp16(0x1p-1)" => Ok(0x3800),
        "distinct" => Ok(0x3801),
        other => Err(format!("unknown weights value '{other}'")),
    }
}

/// The values (fp16 bits) of each BLOBFILE constant, in MIL declaration order.
pub fn constant_values(w: &Weights) -> Result<Vec<Vec<u16>>, String> {
    let count = |shape: &[u64]| shape.iter().product::<u64>();
    let value = w.value.as_deref().unwrap_or_default();
    match (w.shape.as_ref(), w.shapes.as_ref(), w.record_offsets.as_ref()) {
        (_, Some(shapes), Some(_)) => {
            // Form C: constant i holds 0x3400 + i in every element.
            Ok(shapes.iter().enumerate().map(|(i, s)| vec![0x3400 + i as u16; count(s) as usize]).collect())
        }
        (Some(shape), None, None) => form_ab(std::slice::from_ref(shape), w.payload_bytes.unwrap_or(0), fill(value)?),
        (None, Some(shapes), None) => form_ab(shapes, w.payload_bytes.unwrap_or(0), fill(value)?),
        _ => Err(format!("unknown weights form {w:?}")),
    }
}

fn form_ab(shapes: &[Vec<u64>], payload: u64, fill: u16) -> Result<Vec<Vec<u16>>, String> {
    Ok(shapes
        .iter()
        .map(|s| (0..s.iter().product::<u64>()).map(|e| form_ab_halfword(e, payload, fill)).collect())
        .collect())
}

/// A MILBlob v2 file of fp16 blobs (64-byte header, then per blob a 64-byte record and
/// its data, 64-byte aligned), and each blob's record offset.
fn blob_file(blobs: &[Vec<u16>]) -> (Vec<u8>, Vec<u64>) {
    let mut out = vec![0u8; 64];
    out[0..4].copy_from_slice(&(blobs.len() as u32).to_le_bytes());
    out[4..8].copy_from_slice(&2u32.to_le_bytes());
    let mut offsets = Vec::new();
    for b in blobs {
        let rec = out.len();
        offsets.push(rec as u64);
        let mut meta = [0u8; 64];
        meta[0..4].copy_from_slice(&0xDEAD_BEEFu32.to_le_bytes());
        meta[4..8].copy_from_slice(&FP16_CODE.to_le_bytes());
        meta[8..16].copy_from_slice(&(2 * b.len() as u64).to_le_bytes());
        meta[16..24].copy_from_slice(&(rec as u64 + 64).to_le_bytes());
        out.extend_from_slice(&meta);
        out.extend(b.iter().flat_map(|h| h.to_le_bytes()));
        out.resize(out.len().div_ceil(64) * 64, 0);
    }
    (out, offsets)
}

/// The MIL text with the i-th `BLOBFILE(... offset = uint64(N))` pointing at `offsets[i]`.
fn repoint(mil: &str, offsets: &[u64]) -> Result<String, String> {
    let mut out = String::with_capacity(mil.len());
    let mut rest = mil;
    let mut i = 0;
    while let Some(at) = rest.find("BLOBFILE(") {
        let (head, tail) = rest.split_at(at);
        out.push_str(head);
        let key = "offset = uint64(";
        let k = tail.find(key).ok_or("BLOBFILE without an offset")?;
        let close = tail[k..].find(')').ok_or("unterminated offset")? + k;
        let off = offsets.get(i).ok_or("more BLOBFILE constants than the weights record describes")?;
        out.push_str(&tail[..k + key.len()]);
        out.push_str(&off.to_string());
        rest = &tail[close..];
        i += 1;
    }
    out.push_str(rest);
    if i != offsets.len() {
        return Err(format!("{i} BLOBFILE constants, the weights record describes {}", offsets.len()));
    }
    Ok(out)
}

/// Writes the record's model folder (`model.mil`, and `weights.bin` when it has BLOBFILE
/// constants) into `dir` and returns the `model.mil` path.
pub fn model_dir(r: &Record, dir: &Path) -> Result<PathBuf, String> {
    let mil = if r.weights.storage == "BLOBFILE" {
        let (bytes, offsets) = blob_file(&constant_values(&r.weights)?);
        std::fs::write(dir.join("weights.bin"), bytes).map_err(|e| e.to_string())?;
        repoint(&r.mil, &offsets)?
    } else {
        r.mil.clone()
    };
    let path = dir.join("model.mil");
    std::fs::write(&path, mil).map_err(|e| e.to_string())?;
    Ok(path)
}

/// How one record fared.
#[derive(Debug, Clone)]
pub enum Outcome {
    /// We compiled it: the comparison.
    Compared(Comparison),
    /// We could not compile it: the error.
    Rejected(String),
}

impl Outcome {
    /// True when the program is identical to Apple's.
    pub fn identical(&self) -> bool {
        matches!(self, Outcome::Compared(c) if c.identical())
    }
}

/// Compiles the record's model in `dir` and compares the program with the record.
pub fn run(r: &Record, dir: &Path) -> Result<Outcome, String> {
    let path = model_dir(r, dir)?;
    let opts = anec::Options::new(anec::Target::H13g);
    match anec::compile_file(&path, &opts) {
        Ok(c) => compare(&c.hwx, r).map(Outcome::Compared).map_err(|e| e.to_string()),
        // The folder is a fresh temporary one: name the file as the case's own.
        Err(e) => Ok(Outcome::Rejected(e.to_string().replace(&format!("{}/", dir.display()), ""))),
    }
}

/// Apple's program for a record, as far as the record holds it: Apple's task streams
/// (header words and register records exactly as recorded, each task at the offset its
/// predecessor's NextPointer names) in our program's container, with our constant section
/// and buffers. Meaningful when the constant sections hash equal and the tensors bind to
/// the same BARs, which the comparison checks.
pub fn apple_program(r: &Record, ours: &anec_codegen::Hwx) -> Result<anec_codegen::Hwx, String> {
    let mut text: Vec<u8> = Vec::new();
    let mut at = 0usize;
    for (i, t) in r.task_descriptors.iter().enumerate() {
        let header = t.header().map_err(|e| e.to_string())?;
        let writes = t.writes().map_err(|e| e.to_string())?;
        let mut words = header.clone();
        for (addr, count) in t.records().map_err(|e| e.to_string())? {
            words.push(((count - 1) << 26) | addr);
            for k in 0..count {
                let v = writes.get(&(addr + 4 * k)).ok_or(format!("task {i}: no value for {:#x}", addr + 4 * k))?;
                words.push(*v);
            }
        }
        text.resize(at, 0);
        text.extend(words.iter().flat_map(|w| w.to_le_bytes()));
        at = header.get(7).copied().unwrap_or(0) as usize;
    }
    let mut h = ours.clone();
    h.text = text;
    h.td_count = u32::try_from(r.task_descriptors.len()).map_err(|e| e.to_string())?;
    h.td_words = u32::try_from(r.program_descriptor.task_words_minus_one).map_err(|e| e.to_string())?;
    h.relocations.clear();
    Ok(h)
}
