#!/usr/bin/env bash
# Regenerates the Rust code of the E5 schema (codegen/src/e5/generated/: mod.rs and one
# file per table, enum and union under e5_rt/fb/).
# Needs flatc 25.12.19, the version of the `flatbuffers` crate (FLATC=path/to/flatc; how to
# build it: docs/formats/e5.md). The output is committed; a build never runs flatc.
set -euo pipefail
cd "$(dirname "$0")/../.."
FLATC="${FLATC:-flatc}"
version="$("$FLATC" --version)"
if [ "$version" != "flatc version 25.12.19" ]; then
  echo "need flatc 25.12.19 (the flatbuffers crate's version), found: $version" >&2
  exit 1
fi
out=codegen/src/e5/generated
rm -rf "$out"
"$FLATC" --rust --gen-object-api --rust-module-root-file -o "$out" codegen/src/e5/schema/e5.fbs
# The object-API structs are the content model the driver builds with struct expressions
# from another crate, which #[non_exhaustive] forbids.
find "$out" -name '*.rs' -exec sed -i '/^#\[non_exhaustive\]$/d' {} +
