#!/usr/bin/env node
// Compiles ../../sframe.ksy with the official Kaitai Struct compiler (JS build)
// into sfview's two Python parsers, both from the same description:
//
// - sframe_debug.py, in debug mode: every parsed field records its start and
//   end offset in `_debug` (the app highlights and explains bytes from those);
// - sframe.py, without the position records: about three times faster, for
//   decoding whole sections (dump, check, unwind) where values are enough.
//
// It also writes sframe_docs.py: the `doc:` of every type, field, instance and
// enum value of the .ksy, which the app shows as field help, and the width of
// every bit field (or, for a value instance marked `-bits: [high, low]`, the
// bits it takes from its word), which the app uses for its bit-by-bit breakdowns.
//
// And sframe_layout.py (see layout.js): the fixed-size records as struct
// formats, for whole-section passes that decode without Kaitai objects.
//
// Usage: node tools/kaitai/compile.js [OUT_DIR]   (default: sfview/generated)
"use strict";
const fs = require("fs");
const path = require("path");
const yaml = require("js-yaml");
const compiler = require("kaitai-struct-compiler");
const { layoutModule } = require("./layout");

const repo = path.resolve(__dirname, "..", "..");
const ksyPath = path.join(repo, "sframe.ksy");
const outDir = path.resolve(process.argv[2] || path.join(repo, "sfview", "generated"));

const BANNER =
  "# GENERATED from sframe.ksy by tools/kaitai/compile.js with kaitai-struct-compiler " +
  compiler.version + ".\n# Do not edit: change sframe.ksy and run `node tools/kaitai/compile.js`.\n";

function bitWidth(type) {
  const m = /^b(\d+)$/.exec(type || "");
  return m ? Number(m[1]) : undefined;
}

function describeAttrs(attrs) {
  const out = {};
  for (const [name, spec] of attrs) {
    const entry = { doc: (spec.doc || "").trim() };
    if (typeof spec.type === "string") entry.type = spec.type;
    // A type chosen by `switch-on`: every type it may be (an editor needs their sign and width).
    if (spec.type && spec.type.cases) entry.cases = [...new Set(Object.values(spec.type.cases))];
    if (bitWidth(spec.type)) entry.bits = bitWidth(spec.type);
    if (spec.enum) entry.enum = spec.enum;
    // `valid:` a single number: a constant (the magic), which reads best in hex.
    if (typeof spec.valid === "number") entry.valid = spec.valid;
    // `-bits: [high, low]` (a key the compiler ignores): where a value instance's bits sit in its word.
    if (spec["-bits"]) entry.at = spec["-bits"];
    out[name] = entry;
  }
  return out;
}

function describeType(spec) {
  const seq = (spec.seq || []).map((s) => [s.id, s]);
  const inst = Object.entries(spec.instances || {});
  return {
    doc: (spec.doc || "").trim(),
    seq: seq.map(([id]) => id),
    fields: describeAttrs(seq.concat(inst)),
  };
}

// Types nest (those under `section` inherit its byte order); their names are
// unique, so the documentation lists them flat.
function collectTypes(spec, into) {
  for (const [name, sub] of Object.entries(spec.types || {})) {
    into[name] = describeType(sub);
    collectTypes(sub, into);
  }
  return into;
}

function describe(ksy) {
  const types = collectTypes(ksy, { [ksy.meta.id]: describeType(ksy) });
  const enums = {};
  for (const [name, values] of Object.entries(ksy.enums || {})) {
    enums[name] = {};
    for (const [value, v] of Object.entries(values)) {
      enums[name][value] = typeof v === "string" ? { id: v, doc: "" } : { id: v.id, doc: (v.doc || "").trim() };
    }
  }
  return { types, enums };
}

async function main() {
  const ksy = yaml.load(fs.readFileSync(ksyPath, "utf8"));
  fs.mkdirSync(outDir, { recursive: true });
  const written = [];
  for (const [debug, suffix] of [[false, ""], [true, "_debug"]]) {
    const files = await compiler.compile("python", ksy, null, debug);
    for (const [name, text] of Object.entries(files)) {
      const out = name.replace(/\.py$/, suffix + ".py");
      fs.writeFileSync(path.join(outDir, out), BANNER + text);
      written.push(out);
    }
  }
  const docs = describe(ksy);
  const py =
    BANNER +
    '"""The documentation written in sframe.ksy, by type, field and enum value."""\n\n' +
    "TYPES = " + JSON.stringify(docs.types, null, 4) + "\n\n" +
    "ENUMS = " + JSON.stringify(docs.enums, null, 4) + "\n";
  fs.writeFileSync(path.join(outDir, "sframe_docs.py"), py);
  written.push("sframe_docs.py");
  fs.writeFileSync(path.join(outDir, "sframe_layout.py"), BANNER + layoutModule(ksy));
  written.push("sframe_layout.py");
  console.log("wrote " + written.map((f) => path.join(outDir, f)).join(", "));
}

main().catch((err) => {
  console.error("compile failed: " + (err && err.stack ? err.stack : JSON.stringify(err)));
  process.exit(1);
});
