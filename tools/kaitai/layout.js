// The fixed-size records of sframe.ksy as struct formats, for sframe_layout.py.
//
// Whole-section passes (dump, check) decode with Python's `struct` from these
// instead of building a Kaitai object per record. This reads the same .ksy the
// compiler reads, and understands a small set of constructs: integer types,
// user types made of bit fields filling a byte, `switch-on` and `if:` on the
// version, and `switch-on` over an enum. Anything else it refuses, by name,
// rather than guess at a layout.
"use strict";

const STRUCT_CHARS = { u1: "B", u2: "H", u4: "I", u8: "Q", s1: "b", s2: "h", s4: "i", s8: "q" };
const CHAR_SIZES = { B: 1, b: 1, H: 2, h: 2, I: 4, i: 4, Q: 8, q: 8 };

function refuse(where, what) {
  throw new Error(`layout: ${where}: ${what} is not a construct the layout generator understands`);
}

function bitWidth(type) {
  const m = /^b(\d+)$/.exec(typeof type === "string" ? type : "");
  return m ? Number(m[1]) : undefined;
}

function findType(ksy, name) {
  const walk = (spec) => {
    for (const [n, sub] of Object.entries(spec.types || {})) {
      if (n === name) return sub;
      const found = walk(sub);
      if (found) return found;
    }
    return undefined;
  };
  return walk(ksy) || refuse(name, "a missing type");
}

// `_parent.version OP N`, the only conditions the fixed records use.
function versionCondition(expr, version, where) {
  const m = /^_parent\.version\s*(==|!=|<=|>=|<|>)\s*(\d+)$/.exec(String(expr).trim());
  if (!m) refuse(where, "the condition `" + expr + "`");
  const n = Number(m[2]);
  const ops = { "==": version === n, "!=": version !== n, "<": version < n, ">": version > n };
  return { ...ops, "<=": version <= n, ">=": version >= n }[m[1]];
}

// A user type made only of bit fields filling one byte: [[name, lowest bit, width], ...] from the MSB down.
function bitFields(ksy, typeName, where) {
  const spec = findType(ksy, typeName);
  let pos = 0;
  const out = [];
  for (const f of spec.seq || []) {
    const width = bitWidth(f.type);
    if (!width || f.if !== undefined || f.repeat) refuse(`${where}.${f.id}`, "a field that is not a plain bit field");
    out.push([f.id, 8 - pos - width, width]);
    pos += width;
  }
  if (pos !== 8) refuse(where, `a bit-field type of ${pos} bits`);
  return out;
}

// The fields of a fixed-size record for one version: {size, format, fields: [[name, offset, char], ...]}.
function record(ksy, typeName, version) {
  const spec = findType(ksy, typeName);
  const fields = [];
  let offset = 0;
  for (const f of spec.seq || []) {
    const where = `${typeName}.${f.id}`;
    if (f.if !== undefined && !versionCondition(f.if, version, where)) continue;
    if (f.repeat || f.size !== undefined || f.contents) refuse(where, "a repeated or sized field");
    let type = f.type;
    if (type && typeof type === "object") {
      if (type["switch-on"] !== "_parent.version") refuse(where, "`switch-on: " + type["switch-on"] + "`");
      type = type.cases[String(version)] || type.cases._;
    }
    let ch = STRUCT_CHARS[type];
    if (!ch) {
      if (typeof type !== "string") refuse(where, "a field without a type");
      bitFields(ksy, type, where); // a bit byte: refused unless it is one
      ch = "B";
    }
    fields.push([f.id, offset, ch]);
    offset += CHAR_SIZES[ch];
  }
  return { size: offset, format: fields.map((f) => f[2]).join(""), fields };
}

// A field whose `switch-on` cases are `enum::value: type`: enum value -> struct char.
function enumSwitch(ksy, typeName, id) {
  const where = `${typeName}.${id}`;
  const field = (findType(ksy, typeName).seq || []).find((f) => f.id === id) || refuse(where, "a missing field");
  const type = field.type;
  if (!type || typeof type !== "object" || !type.cases) refuse(where, "a field that is not a switch");
  const out = {};
  for (const [key, t] of Object.entries(type.cases)) {
    const m = /^(\w+)::(\w+)$/.exec(key);
    const values = m && ksy.enums[m[1]];
    const entry = values && Object.entries(values).find(([, v]) => (typeof v === "string" ? v : v.id) === m[2]);
    if (!entry || !STRUCT_CHARS[t]) refuse(where, "the case `" + key + ": " + t + "`");
    out[entry[0]] = STRUCT_CHARS[t];
  }
  return out;
}

function layout(ksy) {
  const versions = Object.keys(ksy.enums.version).map(Number);
  return {
    versions,
    preamble: record(ksy, "preamble", 0),
    header: record(ksy, "header", 0),
    fde: Object.fromEntries(versions.map((v) => [v, record(ksy, "fde", v)])),
    fde_attr: record(ksy, "fde_attr", Math.max(...versions)),
    bits: Object.fromEntries(["flags", "fde_info", "fde_info2", "fre_info"].map((t) => [t, bitFields(ksy, t, t)])),
    fre_start_addr: enumSwitch(ksy, "fre", "start_addr"),
    fre_offset: enumSwitch(ksy, "fre", "offsets"),
  };
}

function pyRecord(r) {
  const fields = r.fields.map(([n, o, c]) => `"${n}": (${o}, "${c}")`).join(", ");
  return `Record(${r.size}, "${r.format}", {${fields}})`;
}

function pyDict(o) {
  return "{" + Object.entries(o).map(([k, v]) => `${k}: "${v}"`).join(", ") + "}";
}

// The Python module's text (after the banner).
function layoutModule(ksy) {
  const l = layout(ksy);
  const bits = Object.entries(l.bits).map(
    ([t, fs]) => `    "${t}": {${fs.map(([n, lo, w]) => `"${n}": (${lo}, ${w})`).join(", ")}},`
  );
  return [
    '"""The fixed-size records of sframe.ksy as struct formats, for decoding whole sections fast."""',
    "",
    "from typing import NamedTuple",
    "",
    "",
    "class Record(NamedTuple):",
    "    \"\"\"A fixed-size record: its size, struct format (no byte order) and each field's (offset, char).\"\"\"",
    "",
    "    size: int",
    "    format: str",
    "    fields: dict[str, tuple[int, str]]",
    "",
    "",
    `VERSIONS = (${l.versions.join(", ")},)`,
    `PREAMBLE = ${pyRecord(l.preamble)}`,
    `HEADER = ${pyRecord(l.header)}`,
    "FDE = {",
    ...Object.entries(l.fde).map(([v, r]) => `    ${v}: ${pyRecord(r)},`),
    "}",
    `FDE_ATTR = ${pyRecord(l.fde_attr)}`,
    "",
    "# The bit fields of each bit byte: name -> (lowest bit, width).",
    "BITS = {",
    ...bits,
    "}",
    "",
    "# FRE type (FDE info byte) -> struct char of each FRE's start address.",
    `FRE_START_ADDR = ${pyDict(l.fre_start_addr)}`,
    "# Offset size (FRE info byte) -> struct char of each stack offset.",
    `FRE_OFFSET = ${pyDict(l.fre_offset)}`,
    "",
  ].join("\n");
}

module.exports = { layoutModule };
