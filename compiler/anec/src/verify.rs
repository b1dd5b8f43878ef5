//! The check every generated program passes before anything is written: the program is
//! read back from its own bytes as the engine would see it (the simulator's decoder:
//! every field within its width and a modelled value, the TD chain, the BAR table) and
//! each task is checked without running it (`SimProgram::verify`: L2 regions inside the
//! L2 and apart, DMA boxes and kernel chunks inside their buffers). A failure is a
//! compiler bug: an internal error naming the layer, exit status 101, nothing on disk.

use crate::Error;
use anec_codegen::Hwx;
use anec_ir::mil::SharedBytes;
use anec_tools::sim::SimProgram;

/// Checks the program `bytes` written from `hwx`; `file` names the input in the error.
pub fn program(bytes: &SharedBytes, hwx: &Hwx, file: &str) -> Result<(), Error> {
    let checked = SimProgram::load_shared(bytes.clone()).and_then(|p| p.verify());
    checked.map_err(|e| {
        let layer = e.td().and_then(|td| hwx.task_layers.get(td)).cloned();
        Error::Unverified {
            file: file.to_string(),
            layer: layer.unwrap_or_else(|| "the program".into()),
            reason: e.to_string(),
        }
    })
}
