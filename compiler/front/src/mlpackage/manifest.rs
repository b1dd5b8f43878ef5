//! `Manifest.json` of an `.mlpackage`: which item is the root model and where it lies.
//!
//! ```json
//! { "fileFormatVersion": "1.0.0",
//!   "itemInfoEntries": { "<id>": { "path": "com.apple.CoreML/model.mlmodel", ... }, ... },
//!   "rootModelIdentifier": "<id>" }
//! ```
//! Item paths are relative to the package's `Data/` folder.

use crate::milblob::resolve_blob_path;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The manifest's file name inside the package.
pub const MANIFEST: &str = "Manifest.json";

#[derive(Debug, Deserialize)]
struct Manifest {
    #[serde(rename = "itemInfoEntries")]
    items: BTreeMap<String, Item>,
    #[serde(rename = "rootModelIdentifier")]
    root: String,
}

#[derive(Debug, Deserialize)]
struct Item {
    path: String,
}

/// The root model file named by `manifest_text` (a path under `pkg/Data`), checked to
/// exist inside the package. `Err` is the reason, one line.
pub fn root_model(pkg: &Path, manifest_text: &str) -> Result<PathBuf, String> {
    let m: Manifest = serde_json::from_str(manifest_text).map_err(|e| format!("not a package manifest: {e}"))?;
    let item =
        m.items.get(&m.root).ok_or_else(|| format!("the root model `{}` is not among the itemInfoEntries", m.root))?;
    resolve_blob_path(&item.path, &pkg.join("Data")).map_err(|e| format!("root model path {:?}: {e}", item.path))
}
