#!/usr/bin/env node
// Compiles ../../sframe.ksy with the official Kaitai Struct compiler (JS build)
// into sfview's Python parser, in debug mode so that every parsed field records
// its start and end offset (the app highlights bytes from those).
//
// It also writes sframe_docs.py: the `doc:` of every type, field, instance and
// enum value of the .ksy, which the app shows as field help, and the width of
// every bit field, which the app uses for its bit-by-bit breakdowns.
//
// Usage: node tools/kaitai/compile.js [OUT_DIR]   (default: sfview/generated)
"use strict";
const fs = require("fs");
const path = require("path");
const yaml = require("js-yaml");
const compiler = require("kaitai-struct-compiler");

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
    if (bitWidth(spec.type)) entry.bits = bitWidth(spec.type);
    if (spec.enum) entry.enum = spec.enum;
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

function describe(ksy) {
  const types = { [ksy.meta.id]: describeType(ksy) };
  for (const [name, spec] of Object.entries(ksy.types || {})) types[name] = describeType(spec);
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
  const files = await compiler.compile("python", ksy, null, true);
  fs.mkdirSync(outDir, { recursive: true });
  for (const [name, text] of Object.entries(files)) {
    fs.writeFileSync(path.join(outDir, name), BANNER + text);
  }
  const docs = describe(ksy);
  const py =
    BANNER +
    '"""The documentation written in sframe.ksy, by type, field and enum value."""\n\n' +
    "TYPES = " + JSON.stringify(docs.types, null, 4) + "\n\n" +
    "ENUMS = " + JSON.stringify(docs.enums, null, 4) + "\n";
  fs.writeFileSync(path.join(outDir, "sframe_docs.py"), py);
  console.log("wrote " + Object.keys(files).concat(["sframe_docs.py"]).map((f) => path.join(outDir, f)).join(", "));
}

main().catch((err) => {
  console.error("compile failed: " + (err && err.stack ? err.stack : JSON.stringify(err)));
  process.exit(1);
});
